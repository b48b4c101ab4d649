#pragma once
// Moving View data through MPI: device buffers go to MPI directly when the
// MPI library is GPU-aware (PTYKO_ENABLE_GPU_AWARE_MPI, as ArborX does) or
// the memory is host memory; otherwise they are staged through a host
// buffer that is kept and reused, never reallocated per call.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/types.hpp>
#include <ptyko/parallel/communicator.hpp>

#include <Kokkos_Core.hpp>

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

/// Reusable host staging buffer.
class HostStaging {
 public:
  template <class V>
  V* get(std::size_t n) {
    std::size_t const bytes = n * sizeof(V);
    if (m_buffer.size() * sizeof(double) < bytes) m_buffer.resize((bytes + sizeof(double) - 1) / sizeof(double));
    return reinterpret_cast<V*>(m_buffer.data());
  }

 private:
  std::vector<double> m_buffer;
};

/// In-place all-reduce of a contiguous View on `comm`. MPI must see the
/// finished data: `space` is fenced before MPI reads the View, or, when the
/// data is staged, after the staging copy (queued behind the kernels that
/// wrote it: one wait for the device, not two). Blocking.
template <class ExecSpace, class View>
void allreduce_view(ExecSpace const& space, Communicator const& comm, View const& v, ReduceOp op,
                    HostStaging& staging) {
  using S = ScalarsOf<View>;
  using V = typename View::non_const_value_type;
  using Mem = typename View::memory_space;
  if (comm.size() == 1 || v.span() == 0) return;
  if constexpr (mpi_can_read_v<Mem>) {
    fence(space, "ptyko::parallel::allreduce_view::data_ready");
    comm.allreduce(v.data(), S::count(v), datatype_of<typename S::real_type>(), op);
  } else {
    V* host = staging.get<V>(v.span());
    Kokkos::View<V*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(host, v.span());
    Kokkos::View<V*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> d(v.data(), v.span());
    Kokkos::deep_copy(space, h, d);  // device -> host: stage for MPI
    fence(space, "ptyko::parallel::allreduce_view::staged");
    comm.allreduce(host, S::count(v), datatype_of<typename S::real_type>(), op);
    Kokkos::deep_copy(space, d, h);  // host -> device: reduced values back
  }
}

/// allreduce_view of `a` and then `b`, as one call when `b` starts where
/// `a` ends in memory (one allocation holding both, as the solvers' probe
/// sums: UpdateSums): one collective, and on a device one staging round
/// trip, instead of two. Blocking.
template <class ExecSpace, class ViewA, class ViewB>
void allreduce_views(ExecSpace const& space, Communicator const& comm, ViewA const& a, ViewB const& b, ReduceOp op,
                     HostStaging& staging) {
  using R = typename ScalarsOf<ViewA>::real_type;
  using Mem = typename ViewA::memory_space;
  static_assert(std::is_same_v<R, typename ScalarsOf<ViewB>::real_type>, "allreduce_views: one real type");
  static_assert(std::is_same_v<Mem, typename ViewB::memory_space>, "allreduce_views: one memory space");
  bool const adjacent = a.span() > 0 && b.span() > 0 &&
                        reinterpret_cast<R const*>(a.data()) + ScalarsOf<ViewA>::count(a) ==
                            reinterpret_cast<R const*>(b.data());
  if (!adjacent) {
    allreduce_view(space, comm, a, op, staging);
    allreduce_view(space, comm, b, op, staging);
    return;
  }
  Kokkos::View<R*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> both(reinterpret_cast<R*>(a.data()),
                                                                     ScalarsOf<ViewA>::count(a) +
                                                                         ScalarsOf<ViewB>::count(b));
  allreduce_view(space, comm, both, op, staging);
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
