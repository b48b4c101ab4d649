#pragma once
// Internal declarations shared by the strategy implementations.

#include <ptyko/core/batching.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/partition.hpp>
#include <ptyko/parallel/strategy.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>

namespace ptyko::parallel::impl {

/// Throws UserError, naming the file, for more ranks than frames.
inline void require_a_frame_per_rank(ScanLayout const& layout, Communicator const& comm) {
  std::size_t const n = layout.positions_px.size();
  PTYKO_REQUIRE(std::size_t(comm.size()) <= n, layout.info.path, ": ", comm.size(), " MPI ranks for ", n,
                " frames: run with at most ", n, " ranks");
}

/// The frames of `comm.rank()`: equal-count, spatially compact groups (RCB),
/// the same split for every strategy. Throws UserError for more ranks than frames.
inline std::vector<std::size_t> frames_of_rank(ScanLayout const& layout, Communicator const& comm) {
  require_a_frame_per_rank(layout, comm);
  return partition_scan(layout.positions_px, layout.info.ny, layout.grid.height, layout.grid.width, comm.size())
      .frames[comm.rank()];
}

/// A device object tile as a double-precision host array.
template <class ExecSpace, class View>
HostComplex2 to_host_complex(ExecSpace const&, View const& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);  // device -> host: object tile
  HostComplex2 out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::object_on_host"), v.extent(0),
                   v.extent(1));  // every pixel written below
  for (std::size_t k = 0; k < h.span(); ++k) out.data()[k] = Complex<double>(h.data()[k]);
  return out;
}

template <class T, class ExecSpace>
std::unique_ptr<Strategy<T, ExecSpace>> make_full_sync(Communicator const& comm, ScanLayout const& layout);
template <class T, class ExecSpace>
std::unique_ptr<Strategy<T, ExecSpace>> make_neighbor(Communicator const& comm, ScanLayout const& layout,
                                                      StrategyOptions const& options);

}  // namespace ptyko::parallel::impl
