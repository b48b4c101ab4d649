#pragma once
// The communication model (comm_model.hpp) evaluated on a run's exact
// partition, for strategy_bench: partition_scan's tiles and overlaps, the
// tiles each global batch's footprints touch (as Reconstruction makes them),
// the isolated positions' products moved between ranks, and the approximate
// mode's reconciles over the first epoch's batch order.

#include "comm_model.hpp"

#include <ptyko/core/batching.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/shared_isolated.hpp>
#include <ptyko/core/solver.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/parallel/partition.hpp>

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ptyko::bench {

template <class T>
class ExactPartitionModel {
 public:
  using Box = parallel::Box;

  /// `in` describes the run (ModelInput; its batch_tiles_pixels is ignored);
  /// `batch_options` the solver's options with its defaults resolved.
  ExactPartitionModel(ScanLayout const& layout, SolverOptions const& batch_options, ModelInput const& in,
                      std::string const& strategy)
      : m_layout(layout), m_in(in), m_strategy(strategy), m_seed(batch_options.seed),
        m_batches(make_batches(layout.positions_px, batch_options.batch_size, batch_options.batching,
                               batch_options.seed)),
        m_part(parallel::partition_scan(layout.positions_px, in.D, layout.grid.height, layout.grid.width, in.ranks)),
        m_rank_of(m_part.frame_ranks()), m_full(strategy == "full-sync"),
        // rPIE, ePIE and LSQML under full-sync and exact neighbour-consensus
        // take a batch's isolated positions apart on several ranks
        // (Reconstruction): out of the tiles, their products' parts moved to
        // the other ranks holding their pixels (core/shared_isolated.hpp):
        // under full-sync every other rank, the whole product.
        m_isolates(in.ranks > 1 && (m_full || in.sync_every == 1) && !is_projection(in.solver) &&
                   batch_options.isolated_updates && batch_options.illumination == IlluminationNorm::batch &&
                   !batch_options.object_clip),
        m_whole_object{0, 0, layout.grid.height, layout.grid.width} {
    m_in.batch_tiles_pixels = mean_batch_tiles_pixels();
  }

  /// Bytes per epoch and rank, the mean over ranks.
  double bytes_per_epoch() const {
    double sum = 0;
    for (int r = 0; r < m_in.ranks; ++r) sum += rank_bytes_per_epoch(r);
    return sum / m_in.ranks;
  }

 private:
  using Batch = std::vector<int>;
  using Tiles = std::vector<std::array<int, 2>>;

  // The exact A_b: the mean over the global batches of their tiles' pixels.
  double mean_batch_tiles_pixels() const {
    double pixels = 0;
    Box const whole{0, 0, int(m_in.height), int(m_in.width)};
    for (auto const& batch : m_batches) pixels += double(batch_tiles(batch, whole).size()) * tile_edge * tile_edge;
    return m_batches.empty() ? 0 : pixels / double(m_batches.size());
  }

  double rank_bytes_per_epoch(int r) const {
    Box const& t = m_part.tiles[r];
    double ov = 0, batch_ov = 0, batch_shared = 0;
    for (int s : m_part.neighbours[r]) ov += double(intersect(t, m_part.tiles[s]).area());
    // The exact A_ov,b, as neighbour-consensus packs the batch tiles inside
    // each overlap: those this rank's positions touched, sent, and those
    // the neighbour's touched, received (the model counts 2 A_ov,b).
    for (auto const& batch : m_batches) {
      if (m_isolates) batch_shared += shared_values(batch, r);
      auto const own = batch_tiles(batch, t, r);
      for (int s : m_part.neighbours[r]) {
        Box const region = intersect(t, m_part.tiles[s]);
        batch_ov += 0.5 * (pixels_inside(own, t, region) + pixels_inside(batch_tiles(batch, t, s), t, region));
      }
    }
    if (!m_batches.empty()) batch_ov /= double(m_batches.size());
    if (!m_batches.empty()) batch_shared /= double(m_batches.size());
    double const reconciled = m_in.sync_every > 1 ? reconciled_pixels(r) : -1;
    return model(m_in, m_strategy, double(t.area()), ov, batch_ov, reconciled, batch_shared).bytes_per_epoch;
  }

  // The approximate mode's reconciles over an epoch (the first epoch's
  // batch order): per link, the union of the tiles this rank's positions
  // touched since the last reconcile, sent, and of those the neighbour's
  // touched, received, inside the overlap, every k batches and at the end
  // (the model counts 2 x this area).
  double reconciled_pixels(int r) const {
    Box const& t = m_part.tiles[r];
    double reconciled = 0;
    std::map<int, std::set<std::array<int, 2>>> since;  // this rank's and its neighbours' touched tiles
    auto reconcile = [&] {
      for (int s : m_part.neighbours[r]) {
        Box const region = intersect(t, m_part.tiles[s]);
        Tiles const own(since[r].begin(), since[r].end()), theirs(since[s].begin(), since[s].end());
        reconciled += 0.5 * (pixels_inside(own, t, region) + pixels_inside(theirs, t, region));
      }
      since.clear();
    };
    auto const order = batch_order(int(m_batches.size()), m_seed, 0);
    for (std::size_t j = 0; j < order.size(); ++j) {
      auto const& batch = m_batches[std::size_t(order[j])];
      for (auto const& o : batch_tiles(batch, t, r)) since[r].insert(o);
      for (int s : m_part.neighbours[r])
        for (auto const& o : batch_tiles(batch, t, s)) since[s].insert(o);
      if ((j + 1) % std::size_t(m_in.sync_every) == 0) reconcile();
    }
    reconcile();
    return reconciled;
  }

  Box const& held(int q) const { return m_full ? m_whole_object : m_part.tiles[q]; }

  std::vector<char> isolated_in(Batch const& batch) const {
    std::vector<std::array<double, 2>> centres;
    for (int id : batch) centres.push_back(m_layout.positions_px[id]);
    return m_isolates ? isolated_footprints(centres, m_in.D) : std::vector<char>(batch.size(), 0);
  }

  // The tiles of a global batch in the frame of an object whose origin is
  // (y0, x0), as Reconstruction makes them. With `rank` >= 0, of that
  // rank's positions only (the tiles it sends).
  Tiles batch_tiles(Batch const& batch, Box const& object, int rank = -1) const {
    auto const alone = isolated_in(batch);
    std::vector<std::array<double, 2>> centres;
    for (std::size_t k = 0; k < batch.size(); ++k) {
      int const id = batch[k];
      if (!alone[k] && (rank < 0 || m_rank_of[std::size_t(id)] == rank))
        centres.push_back({m_layout.positions_px[id][0] - object.y, m_layout.positions_px[id][1] - object.x});
    }
    return footprint_tiles(centres, m_in.D, object.height, object.width);
  }

  // V_b of `rank` for one batch: the complex values of its isolated
  // positions' products it sends, and of the others' it receives (the patch
  // rows and columns the receiver's pixels of the footprint read).
  double shared_values(Batch const& batch, int rank) const {
    auto const alone = isolated_in(batch);
    double values = 0;
    for (std::size_t k = 0; k < batch.size(); ++k) {
      if (!alone[k]) continue;
      int const id = batch[k], owner = m_rank_of[std::size_t(id)];
      Box const& home = held(owner);
      auto const corner = owner_footprint_corner<T>(m_layout.positions_px[id], {home.y, home.x}, m_in.D);
      for (int q = 0; q < m_in.ranks; ++q) {
        if (q == owner || (rank != owner && rank != q)) continue;
        Box const& b = held(q);
        auto const rect = product_part_read_by(corner, {b.y, b.x, b.height, b.width}, m_in.D);
        values += double(rect[2]) * double(rect[3]);
      }
    }
    return values;
  }

  // Pixels of `tiles` (origins in the frame of `t`) inside `region`.
  static double pixels_inside(Tiles const& tiles, Box const& t, Box const& region) {
    double n = 0;
    for (auto const& o : tiles) n += double(intersect(Box{t.y + o[0], t.x + o[1], tile_edge, tile_edge}, region).area());
    return n;
  }

  ScanLayout const& m_layout;
  ModelInput m_in;
  std::string m_strategy;
  std::uint64_t m_seed;
  std::vector<Batch> m_batches;
  parallel::Partition m_part;
  std::vector<int> m_rank_of;
  bool m_full, m_isolates;
  Box m_whole_object;
};

}  // namespace ptyko::bench
