#pragma once
// Moving the products of a batch's isolated positions between the ranks
// holding their pixels (core/shared_isolated.hpp): the owner packs the
// parts each other holder's pixels read into one message per holder, and
// each holder unpacks what it receives into its foreign slots. Both
// strategies that hold pixels on several ranks use it: exact
// neighbour-consensus (a footprint near a cut) and full-sync (every rank
// holds every pixel).

#include <ptyko/core/shared_isolated.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/types.hpp>
#include <ptyko/parallel/communicator.hpp>
#include <ptyko/parallel/impl/staging.hpp>

#include <Kokkos_Core.hpp>

#include <map>
#include <string>
#include <vector>

namespace ptyko::parallel::impl {

/// Copies the parts [first, first + count) of a SharedIsolated plan between
/// patch-shaped products (part: slot, row, col, rows, cols, offset) and a
/// packed buffer: into the buffer (pack) or out of it (unpack). A patch
/// row per work item on host spaces (the column loop vectorises), a pixel
/// on devices (consecutive work items on consecutive columns). Non-blocking.
template <bool Pack, class ExecSpace, class T, class Mem>
void copy_product_parts(ExecSpace const& space, char const* label,
                        typename SharedIsolated<Mem>::Parts const& parts, int first, int count,
                        ComplexView3<T, Mem> const& products, Kokkos::View<Complex<T>*, Mem> const& buffer) {
  int const D = int(products.extent(1));
  if (count == 0 || D == 0) return;
  auto P = parts;
  auto prod = products;
  auto buf = buffer;
  // Columns [j0, j1) of row i of part p.
  auto const copy = KOKKOS_LAMBDA(int p, int i, int j0, int j1) {
    int const cols = P(p, 4);
    if (i >= P(p, 3) || j0 >= cols) return;
    if (j1 > cols) j1 = cols;
    Complex<T>* packed = buf.data() + P(p, 5) + std::size_t(i) * cols;
    Complex<T>* row = &prod(P(p, 0), P(p, 1) + i, P(p, 2));
    if constexpr (Pack)
      for (int j = j0; j < j1; ++j) packed[j] = row[j];
    else
      for (int j = j0; j < j1; ++j) row[j] = packed[j];
  };
  if constexpr (ptyko::is_host_space_v<ExecSpace>)
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, count * D),
                         KOKKOS_LAMBDA(int r) { copy(first + r / D, r % D, 0, D); });
  else
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(count) * D * D),
                         KOKKOS_LAMBDA(std::size_t k) {
                           int const j = int(k % D), r = int(k / D);
                           copy(first + r / D, r % D, j, j + 1);
                         });
}

/// A strategy's message buffers for SharedProducts, one pair per peer rank,
/// grown to the largest batch's messages in the first epoch and kept. Use:
/// pack (queued), the caller's one wait for the device, post_receives and
/// post_sends beside the strategy's other messages, its wait for them,
/// unpack (queued).
template <class T, class ExecSpace>
class ProductMoves {
 public:
  using Mem = typename ExecSpace::memory_space;
  using Plan = SharedIsolated<Mem>;
  static constexpr bool direct = mpi_can_read_v<Mem>;
  static constexpr int tag = 4712;

  /// Queues the packing (and, where MPI cannot read Mem, the staging copy)
  /// of every message `plan` sends, from this rank's products `own`.
  /// Returns whether it queued anything. Non-blocking.
  bool pack(ExecSpace const& space, Plan const& plan, ComplexView3<T, Mem> const& own) {
    for (auto const& m : plan.sends) {
      Buffers& b = m_peers[m.rank];
      reserve(b.send, b.send_host, m.values, "ptyko::ProductMoves::send");
      copy_product_parts<true>(space, "ptyko::ProductMoves::pack", plan.parts, m.first, m.count, own, b.send);
      if (!direct)
        Kokkos::deep_copy(space, Kokkos::subview(b.send_host, std::make_pair(std::size_t(0), m.values)),
                          Kokkos::subview(b.send, std::make_pair(std::size_t(0), m.values)));  // device -> host: stage
    }
    return !plan.sends.empty();
  }
  /// After the caller's wait for the device (a staged receive must not
  /// overwrite a host buffer the last batch's unpack still copies from).
  void post_receives(Communicator const& comm, Plan const& plan, std::vector<Request>& requests) {
    for (auto const& m : plan.receives) {
      Buffers& b = m_peers[m.rank];
      reserve(b.recv, b.recv_host, m.values, "ptyko::ProductMoves::recv");
      Complex<T>* recv = direct ? b.recv.data() : b.recv_host.data();
      requests.push_back(comm.irecv(recv, 2 * m.values, datatype_of<T>(), m.rank, tag));
    }
  }
  /// After the caller's wait for the device that covers pack's work.
  void post_sends(Communicator const& comm, Plan const& plan, std::vector<Request>& requests) {
    for (auto const& m : plan.sends) {
      Buffers const& b = m_peers[m.rank];
      Complex<T> const* send = direct ? b.send.data() : b.send_host.data();
      requests.push_back(comm.isend(send, 2 * m.values, datatype_of<T>(), m.rank, tag));
    }
  }
  /// After the requests completed: the received parts into the foreign
  /// slots of `foreign`. Non-blocking.
  void unpack(ExecSpace const& space, Plan const& plan, ComplexView3<T, Mem> const& foreign) {
    for (auto const& m : plan.receives) {
      Buffers& b = m_peers[m.rank];
      if (!direct)
        Kokkos::deep_copy(space, Kokkos::subview(b.recv, std::make_pair(std::size_t(0), m.values)),
                          Kokkos::subview(b.recv_host, std::make_pair(std::size_t(0), m.values)));  // host -> device
      copy_product_parts<false>(space, "ptyko::ProductMoves::unpack", plan.parts, m.first, m.count, foreign, b.recv);
    }
  }

 private:
  using Buffer = Kokkos::View<Complex<T>*, Mem>;
  struct Buffers {
    Buffer send, recv;
    PinnedMirror<Buffer> send_host, recv_host;
  };
  // `view` (and its host buffer) with room for n values.
  static void reserve(Buffer& view, PinnedMirror<Buffer>& host, std::size_t n, char const* label) {
    if (view.extent(0) >= n) return;
    view = Buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
    host = create_pinned_mirror(view);
  }
  std::map<int, Buffers> m_peers;
};

}  // namespace ptyko::parallel::impl
