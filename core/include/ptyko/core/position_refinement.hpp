#pragma once
// Position refinement: scan positions as stages report them are off by
// fractions of a pixel to several pixels (drift, backlash, encoder errors),
// which blurs the object and leaves the cost high. Between epochs every
// position is moved by the least-squares shift that best explains its
// exit-wave update through the object's slope at the patch
// (kernels/position_gradient.hpp; Odstrcil et al. 2018, tike and
// PtychoShelves do the same). Solver-independent: after the solver's
// epoch, from sums the solver collected as it formed the same exit-wave
// updates (rPIE, LSQML: Solver::collect_position_sums), or from a pass of
// its own over the rank's positions (2 FFTs per position and mode: DM,
// RAAR).
//
// Every move is at most SolverOptions::positions_step pixels; the affine
// part of all ranks' displacements from the file's positions is removed (a
// common shift of all positions is a shift of the object, an ambiguity, and
// scale and rotation of the whole scan drift where no position's data pins
// them: the file's scan geometry stays, each position's own error is
// corrected); no position goes further than positions_max_shift from the
// file's, nor so far that its patch leaves the rank's object tile.
// Collective: three all-reduces (the fit's 12 sums, every position, the
// largest move).

#include <ptyko/core/solver.hpp>
#include <ptyko/core/state.hpp>
#include <ptyko/core/sync.hpp>
#include <ptyko/kernels/forward.hpp>
#include <ptyko/kernels/position_gradient.hpp>
#include <ptyko/kernels/types.hpp>

#include <array>
#include <memory>
#include <vector>

namespace ptyko {

struct PositionRefinementReport {
  double rms_move_px = 0;  ///< root-mean-square move of this refinement, all ranks
  double max_move_px = 0;  ///< the largest move, all ranks
};

template <class T, class ExecSpace>
class PositionRefiner {
 public:
  using Mem = typename ExecSpace::memory_space;

  /// Buffers for `data`'s positions in chunks, `modes` probe modes.
  PositionRefiner(ExecSpace const& space, LocalData<T, ExecSpace> const& data, int modes, SolverOptions const& options);
  ~PositionRefiner();

  /// Refines this rank's positions in place (data.positions, tile pixels)
  /// and writes every rank's refined positions into `positions` (global
  /// object pixels, indexed by data.frame_ids; the same vector on every
  /// rank afterwards). `reference` holds the file's positions (the same
  /// indexing): the limit of positions_max_shift is measured from them.
  /// With `sums_collected` the solver's epoch has filled sums() already
  /// (Solver::collect_position_sums) and no pass of its own is made.
  /// Collective.
  PositionRefinementReport refine(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                  State<T, ExecSpace> const& state, Sync<T, ExecSpace>& sync,
                                  std::vector<std::array<double, 2>>& positions,
                                  std::vector<std::array<double, 2>> const& reference, bool sums_collected = false);
  /// One row of sums per local frame, for a solver to fill.
  PositionSumsView<Mem> const& sums() const { return m_sums; }

 private:
  SolverOptions m_options;
  int m_chunk = 1;
  std::unique_ptr<ForwardModel<T, ExecSpace>> m_model;
  ComplexView4<T, Mem> m_waves;
  Kokkos::View<double, Mem> m_cost;  ///< where exit_wave_update leaves a cost refinement does not read
  PositionSumsView<Mem> m_sums;
  std::vector<IndexView<Mem>> m_chunks;
};

/// The shift (dy, dx) in pixels of one position from its five sums (Ayy,
/// Axx, Axy, by, bx; kernels/position_gradient.hpp): the 2 x 2 least-squares
/// solution with a small Tikhonov term (1e-3 of the mean diagonal, so that a
/// featureless patch does not move), shortened to at most `max_step`.
std::array<double, 2> position_shift(double const sums[5], double max_step);

/// Adds one position r = (y, x) and its displacement d = (dy, dx) to the
/// sums fit_affine reads.
inline void add_affine_sample(double sums[12], std::array<double, 2> const& r, std::array<double, 2> const& d) {
  double const ry = r[0], rx = r[1], dy = d[0], dx = d[1];
  double const terms[12] = {ry * ry, ry * rx, rx * rx, ry, rx, 1, dy * ry, dy * rx, dy, dx * ry, dx * rx, dx};
  for (int q = 0; q < 12; ++q) sums[q] += terms[q];
}

/// The least-squares affine map d = A r + b of displacements d on
/// positions r, from the sums (ry^2, ry rx, rx^2, ry, rx, n, dy ry, dy rx,
/// dy, dx ry, dx rx, dx): (A00, A01, b0, A10, A11, b1), rows y then x.
/// Fewer than three positions, or positions on a line: the mean
/// displacement only (A = 0).
std::array<double, 6> fit_affine(double const sums[12]);

}  // namespace ptyko
