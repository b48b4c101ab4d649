#pragma once
// Communication-volume and memory model of ptyko's parallel strategies
// (docs/performance.md, "Communication model"). Bytes are counted the way
// ptyko::parallel::Communicator counts them: per rank, sent plus received;
// an all-reduce of n bytes as a ring all-reduce moves it, 2 (P-1)/P n sent
// and as much received (factor r = 4 (P-1)/P); a broadcast as n per rank;
// point-to-point messages as their size at both ends.
//
// Per batch (rPIE, LSQML; s = bytes of a real, 4 or 8; A = H x W object
// pixels; A_ov = pixels this rank's tile shares with its neighbours' tiles,
// summed over the neighbours):
//   full-sync:     r * 3 s A_b                    object numerator (complex) + weight over the
//                                                 batch's tiles: A_b = 16^2 x (tiles the global
//                                                 batch's footprints touch)
//                  + 2 s V_b                      with isolated positions (rPIE, ePIE, LSQML): their
//                                                 footprints are left out of A_b, and each one's
//                                                 whole product (D^2 complex values) goes from its
//                                                 owner to every other rank (V_b sent plus received)
//   neighbor k=1:  2 * 3 s A_ov,b                 the batch's tiles inside the overlaps: those the
//                                                 rank's own positions touched sent, those its
//                                                 neighbour's touched received (2 A_ov,b pixels);
//                                                 where the batches are not known, A_ov,b ~ A_ov A_b
//                                                 / A (every batch tile both ways: an overestimate)
//   neighbor k>1:  2 * 3 s A_ov,k / k             weighted object + weight of the tiles the last k
//                                                 batches touched inside the overlaps (this rank's
//                                                 own sent, its neighbour's received), every k
//                                                 batches (and the batches left at the end of an
//                                                 epoch): A_ov,k ~ A_ov (1 - (1 - A_b / A)^k), the
//                                                 batches' tiles taken as independent draws
//                  + 2 s V_b                      with isolated positions (rPIE, ePIE, LSQML): their
//                                                 footprints are left out of the batch tiles above,
//                                                 and the patch rows and columns of their products
//                                                 that another rank's pixels read move from the
//                                                 owner to that rank (V_b complex values sent plus
//                                                 received; core/shared_isolated.hpp)
//   all:           r * (2M + 1) s D^2             probe numerator (M complex modes) + weight
//                  r * s P                        the object weight's largest value: each rank's
//                                                 in its own of P slots after the probe sums, in
//                                                 their all-reduce (FoldedMaximum; the probe's is
//                                                 the same on every rank; full-sync's unpack finds
//                                                 the summed tiles', the slots carry the isolated
//                                                 positions')
//                  r * 48 b (LSQML)               the step sizes' six sums of each of the batch's
//                                                 b positions (doubles), each rank's in its rows;
//                                                 r * 32 for b > 4096 (two sums of two doubles:
//                                                 core's lsqml_step_rows_limit)
// Estimate of A_b where the batches are not known: each footprint (edge
// D + 3) touches (1 + (D + 2) / 16)^2 tiles on average, batches are sparse
// (footprints of a batch rarely share tiles), at most the whole object in
// tiles.
// DM/RAAR per epoch (whole object, A): overlap_passes rounds (default one),
// each one object and one probe reduction and two maxima (neighbor k > 1:
// the objects are reconciled once at the end of the epoch).
// All-reduces per epoch and rank (collectives: each a meeting of all ranks,
// whose latency grows as log2 P whatever its bytes): per batch one (the
// probe sums with the largest weight; full-sync's tiles with them, as one
// collective where they are staged through the host, as on a GPU without
// GPU-aware MPI), LSQML one more (its step sums; two for batches above
// step_rows_limit); DM/RAAR per round the probe
// sums and two maxima, and full-sync its object sums; per epoch the cost and
// the probe broadcast.
// Per epoch, all: r * 8 (cost) + 2 M s D^2 (probe broadcast).
//
// Memory per rank (device; bytes): object tile 2 s A_t, update sums 3 s A_t
// (numerator, weight), frames 4 n D^2 (float32 as loaded; n = frames of the
// rank), batch work buffers ~ (2 M + 3) 2 s b D^2 with b = batch / P (waves, patches,
// products, update products, LSQML direction patches), DM's exit waves
// 2 s M n D^2; neighbor adds 2 * 3 s A_ov of message buffers (plus host
// mirrors) and for k > 1 the consensus fields 4 s A_t (weights, summed
// weights, weighted object; DM also the footprint counts s A_t).
// A_t = A (full-sync) or the rank's tile (neighbor).
//
// Analytic geometry (for extrapolation): P equal rectangular domains in a
// g_y x g_x grid (recursive bisection of a square: g_y = 2^ceil(k/2),
// g_x = 2^floor(k/2) for P = 2^k), each tile its domain plus w/2 on each
// side, w = D + 3 (the D + 1 bilinear footprint and a pixel of safety on each
// side): adjacent tiles share a strip w wide, diagonal ones a w x w corner.

#include <algorithm>
#include <cmath>
#include <string>

namespace ptyko::bench {

struct ModelInput {
  double frames = 400;       ///< N, all ranks
  int D = 128;               ///< detector edge
  int modes = 2;             ///< M
  int batch = 16;            ///< global batch size (positions per batch)
  int precision = 4;         ///< bytes per real: 4 (float32) or 8 (float64)
  double height = 0, width = 0;  ///< object pixels
  int ranks = 1;             ///< P
  std::string solver = "lsqml";
  int sync_every = 1;        ///< neighbor's k
  /// Mean over the global batches of A_b, the pixels of the tiles (16 x 16)
  /// the batch's footprints touch; 0: estimated (batch_tile_pixels()).
  double batch_tiles_pixels = 0;
  /// Bytes per stored frame pixel: 2 for counts (uint16, FrameStack), 4 for float32.
  int frame_bytes = 2;
  /// DM/RAAR: overlap rounds per epoch (SolverOptions::overlap_passes).
  int overlap_passes = 1;
};

/// A_b: the given mean, else the estimate of the header comment.
inline double batch_tile_pixels(ModelInput const& in) {
  if (in.batch_tiles_pixels > 0) return in.batch_tiles_pixels;
  constexpr double edge = 16;  // ptyko::tile_edge (kernels/tiles.hpp)
  double const per_footprint = std::pow(1 + (in.D + 2) / edge, 2) * edge * edge;
  double const object = std::ceil(in.height / edge) * std::ceil(in.width / edge) * edge * edge;
  return std::min(object, in.batch * per_footprint);
}

struct ModelGeometry {
  double tile_area = 0;      ///< A_t of a rank (mean)
  double overlap_area = 0;   ///< A_ov of a rank (mean)
  double max_overlap_area = 0;
};

inline bool is_projection(std::string const& solver) { return solver == "dm" || solver == "raar"; }

inline double ring_factor(int P) { return P > 1 ? 4.0 * (P - 1) / P : 0.0; }

/// Grid of the analytic geometry.
inline void rcb_grid(int P, int& gy, int& gx) {
  gy = 1;
  gx = 1;
  // Cut the longer side in two until P domains (P not a power of two: the
  // nearest grid with gy * gx >= P, the last row short; good enough for a model).
  while (gy * gx < P) {
    if (gy <= gx) gy *= 2; else gx *= 2;
  }
}

inline ModelGeometry analytic_geometry(ModelInput const& in) {
  ModelGeometry g;
  int const P = in.ranks;
  double const w = in.D + 3.0;
  if (P == 1) {
    g.tile_area = in.height * in.width;
    return g;
  }
  int gy, gx;
  rcb_grid(P, gy, gx);
  double const Ly = in.height / gy, Lx = in.width / gx;
  g.tile_area = std::min(Ly + w, in.height) * std::min(Lx + w, in.width);
  // pairs: horizontal neighbours share a (Ly + w) x w strip, vertical ones
  // w x (Lx + w), diagonal ones w x w.
  double const horizontal = double(gy) * (gx - 1), vertical = double(gy - 1) * gx,
               diagonal = 2.0 * (gy - 1) * (gx - 1);
  double const total = horizontal * (Ly + w) * w + vertical * (Lx + w) * w + diagonal * w * w;
  g.overlap_area = 2 * total / (double(gy) * gx);
  // an interior rank: 2 of each edge kind and 4 corners
  g.max_overlap_area = (gx > 1 ? (gx > 2 ? 2 : 1) : 0) * (Ly + w) * w + (gy > 1 ? (gy > 2 ? 2 : 1) : 0) * (Lx + w) * w +
                       ((gx > 1 && gy > 1) ? ((gx > 2 ? 2 : 1) * (gy > 2 ? 2 : 1)) : 0) * w * w;
  return g;
}

struct ModelResult {
  double bytes_per_epoch = 0;  ///< per rank
  double object_bytes = 0;     ///< of which object sums / overlaps
  double memory = 0;           ///< device bytes per rank
  double collectives = 0;      ///< all-reduces and broadcasts per epoch (every rank takes part)
};

inline double batches_per_epoch(ModelInput const& in) { return std::ceil(in.frames / in.batch); }

/// A_ov,j: pixels of the overlaps (A_ov) inside the union of the tiles of j
/// batches, the batches' tiles taken as independent draws of A_b of the A
/// object pixels.
inline double union_overlap_area(ModelInput const& in, double overlap_area, double j) {
  double const A = in.height * in.width;
  double const f = std::min(1.0, batch_tile_pixels(in) / A);
  return j <= 0 ? 0 : overlap_area * (1 - std::pow(1 - f, j));
}

/// `strategy`: "full-sync" or "neighbor"; `overlap_area`/`tile_area` of the
/// rank; `batch_overlap_area`: mean pixels of a batch's tiles inside the
/// rank's overlaps, half those sent and received (A_ov,b; < 0: estimated
/// as A_ov A_b / A);
/// `reconciled_area`: neighbor k > 1, the overlap pixels its reconciles of
/// one epoch average, summed (< 0: estimated with union_overlap_area);
/// `shared_values`: full-sync and neighbor k = 1, V_b, the mean complex
/// values of isolated positions' products a batch sends and receives.
/// core/solver.hpp's lsqml_step_rows_limit (strategy_bench checks they agree).
inline constexpr int step_rows_limit = 4096;

inline ModelResult model(ModelInput const& in, std::string const& strategy, double tile_area, double overlap_area,
                         double batch_overlap_area = -1, double reconciled_area = -1, double shared_values = 0) {
  ModelResult out;
  int const P = in.ranks;
  double const s = in.precision, r = ring_factor(P), D2 = double(in.D) * in.D, M = in.modes;
  double const A = in.height * in.width;
  bool const full = strategy == "full-sync";
  double const probe = r * (2 * M + 1) * s * D2;
  double const per_epoch = r * 8 + (P > 1 ? 2 * M * s * D2 : 0);
  double const nb = batches_per_epoch(in);
  double object = 0, other = per_epoch;
  if (is_projection(in.solver)) {
    // rounds of (object sums, max, probe sums, max)
    double const rounds = in.overlap_passes;
    if (full) object = rounds * r * 3 * s * A;
    else if (in.sync_every == 1) object = rounds * 2 * 3 * s * overlap_area;
    else object = 2 * 3 * s * overlap_area;  // one reconcile per epoch
    other += rounds * (probe + 2 * r * 8);
  } else {
    double per_batch_object = 0;
    if (full) per_batch_object = r * 3 * s * batch_tile_pixels(in) + 2 * s * shared_values;
    else if (in.sync_every == 1)
      per_batch_object = 2 * 3 * s *
                         (batch_overlap_area >= 0 ? batch_overlap_area
                                                  : overlap_area * std::min(1.0, batch_tile_pixels(in) / A)) +
                         2 * s * shared_values;
    object = nb * per_batch_object;
    if (!full && in.sync_every > 1) {
      double const k = in.sync_every, left = nb - k * std::floor(nb / k);
      if (reconciled_area < 0)
        reconciled_area = std::floor(nb / k) * union_overlap_area(in, overlap_area, k) +
                          union_overlap_area(in, overlap_area, left);
      object = 2 * 3 * s * reconciled_area;
    }
    other += nb * (probe + r * s * P);
    if (in.solver == "lsqml") other += in.batch <= step_rows_limit ? r * 48 * in.frames : nb * r * 32;
  }
  out.object_bytes = P > 1 ? object : 0;
  out.bytes_per_epoch = P > 1 ? object + other : 0;
  if (P > 1)
    out.collectives = 2 + (is_projection(in.solver) ? in.overlap_passes * (3 + (full ? 1 : 0))
                           : nb * (1 + (in.solver != "lsqml" ? 0 : in.batch <= step_rows_limit ? 1 : 2)));

  double const At = full ? A : tile_area;
  double const n = in.frames / P;
  // A rank holds about batch / P positions of each (sparse) global batch.
  double const b = std::min<double>(std::ceil(double(in.batch) / P), n);
  double mem = 2 * s * At + 3 * s * At + in.frame_bytes * n * D2 + (2 * M + 3) * 2 * s * b * D2;
  if (is_projection(in.solver)) mem += 2 * s * M * n * D2;
  if (!full) {
    mem += 2 * 3 * s * overlap_area;
    if (in.sync_every > 1) mem += (is_projection(in.solver) ? 5 : 4) * s * At;
  }
  out.memory = mem;
  return out;
}

}  // namespace ptyko::bench
