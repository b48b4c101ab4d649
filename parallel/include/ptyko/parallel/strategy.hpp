#pragma once
// Parallel strategies: how the frames of a scan are split over the ranks of a
// communicator, which object tile each rank holds, and how the solvers' sums
// are completed (the Sync interface of core/). Picked at run time by name:
//  * full-sync: every rank holds the whole object; every batch's sums are
//    all-reduced (P ranks reproduce 1 rank to float rounding);
//  * neighbor: every rank holds its domain plus a halo; sums are completed by
//    exchanging only the overlaps with neighbouring ranks.

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/sync.hpp>
#include <ptyko/parallel/communicator.hpp>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace ptyko::parallel {

/// One rank's share: its frames and its object tile in global pixels.
struct Decomposition {
  std::vector<std::size_t> frame_ids;
  int tile_y = 0, tile_x = 0, tile_height = 0, tile_width = 0;
};

struct StrategyOptions {
  int sync_every = 1;  ///< neighbor: batches between overlap exchanges (1: exact)
  /// neighbor: the refined positions of a resumed run (one per frame, global
  /// object pixels), whose footprints the tiles must hold too; the frames
  /// are still split by the layout's (the file's) positions, as the run
  /// that wrote the checkpoint split them (partition_scan's `held`).
  std::vector<std::array<double, 2>> held_positions;
  /// neighbor: pixels a position may move from where it starts (position
  /// refinement's largest shift): the tiles hold the footprints that far
  /// out, so that refinement moves a position as far on any rank count.
  int footprint_margin = 0;
};

template <class T, class ExecSpace>
class Strategy : public Sync<T, ExecSpace> {
 public:
  using typename Sync<T, ExecSpace>::ComplexField;
  using typename Sync<T, ExecSpace>::RealField;

  virtual Decomposition const& decomposition() const = 0;
  /// The whole object on rank 0 of the communicator (empty View elsewhere),
  /// stitched from the ranks' tiles. Collective.
  virtual HostComplex2 gather_object(ExecSpace const& space, ComplexField const& object) = 0;
  /// The probe as every rank holds it (identical after each epoch), on the host.
  HostComplex3 probe_on_host(ExecSpace const& space,
                             ComplexView3<T, typename ExecSpace::memory_space> const& probe) const {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probe);  // device -> host: probe
    HostComplex3 out("ptyko::probe_on_host", probe.extent(0), probe.extent(1), probe.extent(2));
    for (std::size_t k = 0; k < h.span(); ++k) out.data()[k] = Complex<double>(h.data()[k]);
    (void)space;
    return out;
  }
  virtual Communicator const& communicator() const = 0;
};

std::vector<std::string> strategy_names();

/// Builds the named strategy for `layout` on `comm`. Throws UserError for an
/// unknown name (listing the valid ones) or more ranks than frames.
template <class T, class ExecSpace>
std::unique_ptr<Strategy<T, ExecSpace>> make_strategy(std::string const& name, Communicator const& comm,
                                                      ScanLayout const& layout, StrategyOptions const& options);

}  // namespace ptyko::parallel
