#pragma once
// The small synchronisation interface solvers call for every sum that spans
// more than one rank's positions. Solvers never call MPI: parallel/ provides
// the full-sync and neighbour-consensus implementations, core/ the
// single-process one (LocalSync) used when everything lives in one process.
//
// Object-shaped fields are the rank's local object tile (the whole object for
// full-sync, the rank's domain plus halo for neighbour-consensus); after
// sum_object every pixel of the tile holds the sum over all ranks of the
// contributions to that pixel.

#include <ptyko/core/shared_isolated.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ptyko {

/// The products of a batch's isolated positions whose pixels other ranks
/// hold too (SharedIsolated): what sum_batch sends and where it puts what
/// it receives.
template <class T, class Mem>
struct SharedProducts {
  SharedIsolated<Mem> const* plan = nullptr;  ///< none: nothing to move
  ComplexView3<T, Mem> own;                   ///< this rank's products, at their batch slots
  ComplexView3<T, Mem> foreign;               ///< the others' parts, at their foreign index
};

/// The batch's largest object weight over all ranks, found inside
/// sum_batch when the strategy can fold it into the probe sums' all-reduce
/// it makes anyway (one collective per batch less): each rank writes its
/// own largest weight into its slot and zeroes the others, so the sum
/// leaves every rank's value, exactly, in every rank's slots.
template <class T, class Mem>
struct FoldedMaximum {
  RealView1<T, Mem> slots;  ///< ranks() reals right after the probe weight, in its allocation; none: no fold
  double outside = 0;       ///< this rank's largest weight outside `weight` (isolated positions), on the host
  bool outside_in_space = false;  ///< more of it lies in the space's memory (devices): after_sums reads it
  /// This rank's largest summed weight over the tiles, the outside part in
  /// the space's memory included, for when sum_batch's `local_max` is
  /// unknown (devices): called after the sums (blocking).
  std::function<double()> after_sums;
  /// The same without a wait of its own, for strategies that tell the
  /// largest their sums add from what reaches the host anyway
  /// (neighbour-consensus, from the messages): queue_own, before the sums,
  /// queues this rank's largest own weight over the tiles (and the outside
  /// part in the space's memory) to the host (non-blocking); own_queued
  /// reads it after the strategy's next wait for the device.
  std::function<void()> queue_own;
  std::function<double()> own_queued;
};

/// What sum_batch knows of the largest summed object weight over the tiles.
struct BatchMaximum {
  double value = -1;    ///< negative: unknown
  bool global = false;  ///< `value` is the largest over all ranks, FoldedMaximum::outside included: no max() after
};

template <class T, class ExecSpace>
class Sync {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using ComplexField = ComplexView2<T, memory_space>;
  using RealField = RealView2<T, memory_space>;
  using ProbeField = ComplexView3<T, memory_space>;

  virtual ~Sync() = default;

  /// Sums a complex and a real object-shaped field (numerator and weight of
  /// an object update) over all ranks' contributions, in place. Collective.
  virtual void sum_object(ExecSpace const& space, ComplexField const& numerator,
                          RealField const& weight) = 0;
  /// The same when every rank's contributions lie inside `tiles` (the
  /// batch's footprint tiles, identical on ranks that share an object
  /// grid): strategies may then move only those tiles, and, given the
  /// tiles' sources (reads_tile_sources), only those the sender's positions
  /// touched. Pixels outside the tiles must stay as they are (zero), and so
  /// must a rank's sums outside the tiles its positions touched. `local_max`
  /// is the largest value of `weight` over the tiles before the sum (this
  /// rank's own sums), or negative when the caller does not know it.
  /// Returns the largest summed weight over the tiles when the strategy can
  /// tell without a pass of its own (the caller then needs none), else a
  /// negative value. Weights are never negative, so a sum never lowers a
  /// pixel's weight. Collective.
  virtual double sum_object(ExecSpace const& space, ComplexField const& numerator, RealField const& weight,
                            MirroredTileList<memory_space> const& /*tiles*/, double local_max) {
    sum_object(space, numerator, weight);
    return ranks() == 1 ? local_max : -1;  // one rank: the sums are already this rank's own
  }
  /// Sums probe-shaped fields (M, D, D) and a (D, D) weight, in place. Collective.
  virtual void sum_probe(ExecSpace const& space, ProbeField const& numerator,
                         RealField const& weight) = 0;
  /// A batch's sums in one call: the tiled sum_object and, with `probe`,
  /// sum_probe of `probe_numerator` and `probe_weight`, and the moves of
  /// `shared` (only strategies with held_boxes plan any). Strategies may
  /// let all reach MPI behind one wait for the device (on a GPU each wait
  /// drains its queue). Returns what the tiled sum_object returns, global
  /// where the strategy knows the largest weight over all ranks: its sums
  /// leave it on every rank, or it folded `fold` into the probe sums.
  /// Collective.
  virtual BatchMaximum sum_batch(ExecSpace const& space, ComplexField const& numerator, RealField const& weight,
                                 MirroredTileList<memory_space> const& tiles, double local_max,
                                 ProbeField const& probe_numerator, RealField const& probe_weight, bool probe,
                                 SharedProducts<T, memory_space> const& shared,
                                 FoldedMaximum<T, memory_space> const& /*fold*/) {
    PTYKO_ASSERT(shared.plan == nullptr, "this strategy moves no isolated positions' products");
    double const largest = sum_object(space, numerator, weight, tiles, local_max);
    if (probe) sum_probe(space, probe_numerator, probe_weight);
    return {largest, false};
  }
  /// Sums / maximises host scalars over ranks, in place. Collective.
  virtual void sum(double* values, int count) = 0;
  virtual void max(double* values, int count) = 0;

  /// Called after each batch's update: strategies that sum only every k
  /// batches reconcile the object here (tike-style consensus). The batch's
  /// illumination is zero outside `tiles` (the batch's TileList). Collective.
  virtual void after_batch(ExecSpace const&, ComplexField const& /*object*/, RealField const& /*illumination*/,
                           MirroredTileList<memory_space> const& /*tiles*/) {}
  /// Whether after_batch reads the batch's illumination. When it does not,
  /// a solver may clear the illumination in the pass that reads it last
  /// (saving a zeroing pass per batch). Conservatively true.
  virtual bool reads_batch_illumination() const { return true; }
  /// Whether the pixels of `box` ({y0, x0, y1, x1}, inclusive, in global
  /// object pixels: a footprint_box), and the object tiles around them, are
  /// held by one rank only, on which they lie: a solver may then update
  /// them without any sum over ranks (isolated positions). The same answer
  /// on every rank. One rank: always.
  virtual bool footprint_private(std::array<double, 4> const& /*box*/) const { return ranks() == 1; }
  /// The object pixels each rank holds, {y, x, height, width} in global
  /// object pixels (its tile), when the strategy moves the products of
  /// isolated positions whose pixels several ranks hold (sum_batch's
  /// `shared`), so that every holder updates its copy: then a solver takes
  /// every isolated position apart, private or not. Empty otherwise. The
  /// same on every rank.
  virtual std::vector<std::array<int, 4>> held_boxes() const { return {}; }
  /// Whether the tiled sum_object sends each rank's own contributions only
  /// and therefore reads the batch tiles' sources (MirroredTileList::
  /// sources, labelled by rank()); when it does not, the batches carry
  /// none. The same answer on every rank.
  virtual bool reads_tile_sources() const { return false; }
  /// Called after the positions moved (position refinement), on every rank
  /// with its own frames' positions (global object pixels, in the order of
  /// its frames): strategies that keep the footprints (neighbour-consensus's
  /// stitching and consensus weights) follow them. Not collective.
  virtual void positions_moved(std::vector<std::array<double, 2>> const& /*own_positions*/) {}
  /// Called at the end of every epoch: every rank must leave with the same
  /// probe. Collective.
  virtual void end_epoch(ExecSpace const&, ComplexField const& /*object*/,
                         ProbeField const& /*probe*/, RealField const& /*illumination*/) {}

  /// Bytes this rank sent and received since the last call (for progress).
  virtual std::size_t take_bytes_moved() { return 0; }
  /// Number of ranks taking part, and this one's number (0 .. ranks() - 1).
  virtual int ranks() const { return 1; }
  virtual int rank() const { return 0; }
  virtual std::string name() const = 0;

  /// Convenience for one scalar.
  double sum(double v) {
    sum(&v, 1);
    return v;
  }
  double max(double v) {
    max(&v, 1);
    return v;
  }
};

/// Single-process synchronisation: every sum is already global.
template <class T, class ExecSpace>
class LocalSync final : public Sync<T, ExecSpace> {
 public:
  using typename Sync<T, ExecSpace>::ComplexField;
  using typename Sync<T, ExecSpace>::RealField;
  using typename Sync<T, ExecSpace>::ProbeField;
  using Sync<T, ExecSpace>::sum;
  using Sync<T, ExecSpace>::max;
  using Sync<T, ExecSpace>::sum_object;
  void sum_object(ExecSpace const&, ComplexField const&, RealField const&) override {}
  void sum_probe(ExecSpace const&, ProbeField const&, RealField const&) override {}
  void sum(double*, int) override {}
  void max(double*, int) override {}
  bool reads_batch_illumination() const override { return false; }
  std::string name() const override { return "local"; }
};

}  // namespace ptyko
