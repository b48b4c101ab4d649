#pragma once
// Moving View data through MPI: device buffers go to MPI directly when the
// MPI library is GPU-aware (PTYKO_ENABLE_GPU_AWARE_MPI, as ArborX does) or
// the memory is host memory; otherwise they are staged through a host
// buffer that is kept and reused, never reallocated per call.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/pinned_mirror.hpp>
#include <ptyko/kernels/types.hpp>
#include <ptyko/parallel/communicator.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace ptyko::parallel::impl {

template <class V>
struct RealOf {
  using type = V;
};
template <class R>
struct RealOf<Kokkos::complex<R>> {
  using type = R;
};

/// Real type and count of the scalars in a View of real or Kokkos::complex.
template <class View>
struct ScalarsOf {
  using value_type = typename View::non_const_value_type;
  static constexpr bool is_complex = !std::is_arithmetic_v<value_type>;
  using real_type = typename RealOf<value_type>::type;
  static std::size_t count(View const& v) { return v.span() * (is_complex ? 2 : 1); }
};

template <class Mem>
inline constexpr bool mpi_can_read_v =
#if defined(PTYKO_ENABLE_GPU_AWARE_MPI)
    true;
#else
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
#endif

/// Reusable host staging buffer, page-locked where the build has a device
/// (HostPinnedSpace: the staging copies then stay queued until the
/// caller's one fence instead of each draining the device's queue). It
/// grows to the largest request and stays.
class HostStaging {
 public:
  template <class V>
  V* get(std::size_t n) {
    std::size_t const words = (n * sizeof(V) + sizeof(double) - 1) / sizeof(double);
    if (m_buffer.extent(0) < words) {
      // The last call's copies back to the device may still read the old
      // buffer (they are queued, not waited for): let them finish before
      // it is released. Only while the buffer grows, in the first batches.
      if (m_buffer.extent(0) > 0) fence_all("ptyko::parallel::HostStaging::grow");
      m_buffer = Buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::parallel::staging"), words);
    }
    return reinterpret_cast<V*>(m_buffer.data());
  }

 private:
  using Buffer = Kokkos::View<double*, HostPinnedSpace>;
  Buffer m_buffer;
};

/// An in-place all-reduce of up to two contiguous runs of reals R in memory
/// space Mem, split around one wait for the device that the caller makes
/// (fence(space)) after stage(), so that one wait covers it and any other
/// transfer queued before: stage() queues the copy of each run MPI cannot
/// read into one host buffer (MPI reads host memory, or device memory when
/// PTYKO_ENABLE_GPU_AWARE_MPI), finish() runs the collective (one for runs
/// adjacent in the memory MPI reads, else one per run) and queues the
/// copies back.
template <class R, class Mem>
class StagedAllreduce {
 public:
  static constexpr bool direct = mpi_can_read_v<Mem>;

  /// Adds n reals at `data` (a run that starts where the last one ends
  /// extends it).
  void add(R* data, std::size_t n) {
    if (n == 0) return;
    if (m_count > 0 && m_runs[m_count - 1].data + m_runs[m_count - 1].n == data) {
      m_runs[m_count - 1].n += n;
      return;
    }
    PTYKO_ASSERT(m_count < 2, "StagedAllreduce: at most two runs");
    m_runs[m_count++] = Run{data, n};
  }
  template <class View>
  void add(View const& v) {
    add(reinterpret_cast<R*>(v.data()), ScalarsOf<View>::count(v));
  }
  bool empty() const { return m_count == 0; }

  /// stage, one wait for the device, finish. Blocking (collective).
  template <class ExecSpace>
  void run(ExecSpace const& space, Communicator const& comm, ReduceOp op, HostStaging& staging) {
    if (empty()) return;
    stage(space, staging);
    fence(space, "ptyko::parallel::allreduce_view::data_ready");
    finish(space, comm, op);
  }

  /// Queues the staging copies (nothing when MPI reads Mem). Non-blocking.
  template <class ExecSpace>
  void stage(ExecSpace const& space, HostStaging& staging) {
    if constexpr (!direct) {
      std::size_t total = 0;
      for (int k = 0; k < m_count; ++k) total += m_runs[k].n;
      m_host = staging.get<R>(total);
      std::size_t at = 0;
      for (int k = 0; k < m_count; ++k) {
        Kokkos::deep_copy(space, host_run(at, m_runs[k].n), device_run(k));  // device -> host: stage for MPI
        at += m_runs[k].n;
      }
    }
  }

  /// After the caller's fence(space): the collective(s), and the staged
  /// values' copies back queued. Blocking (collective).
  template <class ExecSpace>
  void finish(ExecSpace const& space, Communicator const& comm, ReduceOp op) {
    if constexpr (direct) {
      for (int k = 0; k < m_count; ++k) comm.allreduce(m_runs[k].data, m_runs[k].n, datatype_of<R>(), op);
    } else {
      std::size_t total = 0;
      for (int k = 0; k < m_count; ++k) total += m_runs[k].n;
      if (total > 0) comm.allreduce(m_host, total, datatype_of<R>(), op);
      std::size_t at = 0;
      for (int k = 0; k < m_count; ++k) {
        Kokkos::deep_copy(space, device_run(k), host_run(at, m_runs[k].n));  // host -> device: reduced values
        at += m_runs[k].n;
      }
    }
  }

  /// Between the caller's fence after stage() and finish(): writes the n
  /// `values` over the last n reals of the runs where MPI reads them (the
  /// host staging buffer, else the runs themselves; on a device MPI reads,
  /// a blocking copy).
  template <class ExecSpace>
  void write_last(ExecSpace const& space, R const* values, std::size_t n) {
    R* const last = last_reals(n);
    if constexpr (direct && !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible) {
      Kokkos::deep_copy(space, DeviceRun(last, n), HostRun(const_cast<R*>(values), n));  // host -> device: the slots
      fence(space, "ptyko::parallel::StagedAllreduce::write_last");
    } else {
      std::copy(values, values + n, last);
    }
  }
  /// After finish(): the last n reduced reals (on a device MPI reads, a
  /// blocking copy).
  template <class ExecSpace>
  void read_last(ExecSpace const& space, R* values, std::size_t n) const {
    R const* const last = last_reals(n);
    if constexpr (direct && !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible) {
      Kokkos::deep_copy(space, HostRun(values, n), DeviceRun(const_cast<R*>(last), n));  // device -> host: the slots
      fence(space, "ptyko::parallel::StagedAllreduce::read_last");
    } else {
      std::copy(last, last + n, values);
    }
  }

  /// After finish(): the reduced reals [first, first + n) of the runs
  /// (counted over the runs in order) where the host reads them without
  /// waiting for the device (the host staging buffer, or host memory MPI
  /// read); nullptr where they are in device memory only (GPU-aware MPI).
  R const* reduced_on_host(std::size_t first, std::size_t n) const {
    std::size_t total = 0;
    for (int k = 0; k < m_count; ++k) total += m_runs[k].n;
    PTYKO_ASSERT(first + n <= total, "StagedAllreduce: reals ", first, " + ", n, " of ", total);
    if constexpr (!direct) {
      return m_host + first;
    } else if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible) {
      for (int k = 0; k < m_count; ++k) {
        if (first + n <= m_runs[k].n) return m_runs[k].data + first;
        PTYKO_ASSERT(first >= m_runs[k].n, "StagedAllreduce: reals across two runs");
        first -= m_runs[k].n;
      }
      return nullptr;
    } else {
      return nullptr;
    }
  }

 private:
  /// Where MPI reads the last n reals of the runs.
  R* last_reals(std::size_t n) const {
    PTYKO_ASSERT(m_count > 0 && m_runs[m_count - 1].n >= n, "StagedAllreduce: fewer reals than asked for");
    if constexpr (direct) {
      return m_runs[m_count - 1].data + m_runs[m_count - 1].n - n;
    } else {
      std::size_t total = 0;
      for (int k = 0; k < m_count; ++k) total += m_runs[k].n;
      return m_host + total - n;
    }
  }
  struct Run {
    R* data = nullptr;
    std::size_t n = 0;
  };
  using DeviceRun = Kokkos::View<R*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostRun = Kokkos::View<R*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  DeviceRun device_run(int k) const { return DeviceRun(m_runs[k].data, m_runs[k].n); }
  HostRun host_run(std::size_t at, std::size_t n) const { return HostRun(m_host + at, n); }
  Run m_runs[2];
  int m_count = 0;
  R* m_host = nullptr;
};

/// The largest of every rank's `mine`, through the last comm.size() reals
/// of `sums` (staged, and fenced by the caller): each rank writes its value
/// into its own slot and zeroes the others, the sum then leaves every
/// rank's value, exactly, in every slot, and the same collective reduces
/// the rest of `sums`. `mine` must be a value of R (>= 0). `slots`: host
/// scratch, kept by the caller. Blocking (collective).
template <class ExecSpace, class R, class Mem>
double allreduce_maximum_in_slots(ExecSpace const& space, StagedAllreduce<R, Mem>& sums, Communicator const& comm,
                                  double mine, std::vector<R>& slots) {
  std::size_t const P = std::size_t(comm.size());
  slots.assign(P, R(0));
  slots[std::size_t(comm.rank())] = R(mine);
  sums.write_last(space, slots.data(), P);
  sums.finish(space, comm, ReduceOp::sum);
  sums.read_last(space, slots.data(), P);
  return double(*std::max_element(slots.begin(), slots.end()));
}

/// In-place all-reduce of the contiguous Views `a` and, when given, `b` (of
/// one real type) on `comm`, with one wait for the device: MPI must see the
/// finished data, so `space` is fenced before MPI reads them, after their
/// staging copies when they are staged (StagedAllreduce). Views adjacent in
/// memory (one allocation holding both, as the solvers' probe sums:
/// UpdateSums) go in one collective, staged ones too. Blocking.
template <class ExecSpace, class ViewA, class ViewB = ViewA>
void allreduce_views(ExecSpace const& space, Communicator const& comm, ViewA const& a, ViewB const& b, ReduceOp op,
                     HostStaging& staging) {
  using R = typename ScalarsOf<ViewA>::real_type;
  using Mem = typename ViewA::memory_space;
  static_assert(std::is_same_v<R, typename ScalarsOf<ViewB>::real_type>, "allreduce_views: one real type");
  static_assert(std::is_same_v<Mem, typename ViewB::memory_space>, "allreduce_views: one memory space");
  if (comm.size() == 1) return;
  StagedAllreduce<R, Mem> sums;
  sums.add(a);
  sums.add(b);
  sums.run(space, comm, op, staging);
}

/// allreduce_views of one View. Blocking.
template <class ExecSpace, class View>
void allreduce_view(ExecSpace const& space, Communicator const& comm, View const& v, ReduceOp op,
                    HostStaging& staging) {
  allreduce_views(space, comm, v, View(), op, staging);
}

/// Broadcast of a contiguous View from `root`. Blocking.
template <class ExecSpace, class View>
void broadcast_view(ExecSpace const& space, Communicator const& comm, View const& v, int root,
                    HostStaging& staging) {
  using S = ScalarsOf<View>;
  using V = typename View::non_const_value_type;
  using Mem = typename View::memory_space;
  if (comm.size() == 1 || v.span() == 0) return;
  fence(space, "ptyko::parallel::broadcast_view::data_ready");
  if constexpr (mpi_can_read_v<Mem>) {
    comm.broadcast(v.data(), S::count(v), datatype_of<typename S::real_type>(), root);
  } else {
    V* host = staging.get<V>(v.span());
    Kokkos::View<V*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(host, v.span());
    Kokkos::View<V*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> d(v.data(), v.span());
    if (comm.rank() == root) {
      Kokkos::deep_copy(space, h, d);  // device -> host: stage for MPI
      fence(space, "ptyko::parallel::broadcast_view::staged");
    }
    comm.broadcast(host, S::count(v), datatype_of<typename S::real_type>(), root);
    if (comm.rank() != root) Kokkos::deep_copy(space, d, h);  // host -> device: received values
  }
}

}  // namespace ptyko::parallel::impl
