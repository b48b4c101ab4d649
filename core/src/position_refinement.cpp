#include "solvers/pie_common.hpp"

#include <ptyko/core/position_refinement.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/position_gradient.hpp>

#include <algorithm>
#include <cmath>

namespace ptyko {

std::array<double, 2> position_shift(double const sums[5], double max_step) {
  double const ayy = sums[0], axx = sums[1], axy = sums[2], by = sums[3], bx = sums[4];
  double const lambda = 1e-3 * 0.5 * (ayy + axx);
  double const a = ayy + lambda, c = axx + lambda;
  double const det = a * c - axy * axy;
  if (!(det > 0) || !std::isfinite(det)) return {0, 0};
  double dy = (c * by - axy * bx) / det, dx = (a * bx - axy * by) / det;
  if (!std::isfinite(dy) || !std::isfinite(dx)) return {0, 0};
  double const length = std::hypot(dy, dx);
  if (length > max_step) {
    dy *= max_step / length;
    dx *= max_step / length;
  }
  return {dy, dx};
}

std::array<double, 6> fit_affine(double const sums[12]) {
  // Normal equations [ryy ryx ry; ryx rxx rx; ry rx n] c = [d ry, d rx, d]
  // per displacement axis; with fewer than three positions, or all on one
  // line, only the mean displacement is removed.
  double const n = sums[5];
  std::array<double, 6> out{0, 0, 0, 0, 0, 0};
  if (!(n > 0)) return out;
  double const a[3][3] = {{sums[0], sums[1], sums[3]}, {sums[1], sums[2], sums[4]}, {sums[3], sums[4], n}};
  double const det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                     a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                     a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  // The determinant is n^3 times that of the positions' covariance: small
  // against n^3 times (spread^2)^2 means a degenerate (collinear) scan.
  double const var_y = sums[0] / n - (sums[3] / n) * (sums[3] / n), var_x = sums[2] / n - (sums[4] / n) * (sums[4] / n);
  if (n < 3 || !(det > 1e-9 * n * n * n * var_y * var_x) || !(var_y > 0) || !(var_x > 0)) {
    out[2] = sums[8] / n;
    out[5] = sums[11] / n;
    return out;
  }
  for (int axis = 0; axis < 2; ++axis) {
    double const b[3] = {sums[6 + 3 * axis], sums[7 + 3 * axis], sums[8 + 3 * axis]};
    // Cramer's rule on the 3 x 3 system.
    for (int k = 0; k < 3; ++k) {
      double m[3][3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) m[i][j] = j == k ? b[i] : a[i][j];
      double const dk = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                        m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                        m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
      out[3 * axis + k] = dk / det;
    }
  }
  return out;
}

template <class T, class ExecSpace>
PositionRefiner<T, ExecSpace>::PositionRefiner(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                               int modes, SolverOptions const& options)
    : m_options(options) {
  int const D = data.detector(), n = data.local_frames();
  // The pipeline's chunk (cache-sized on hosts), at most 64 positions on
  // devices: a pass of its own, not worth a batch's worth of waves.
  m_chunk = std::max(1, std::min(impl::pipeline_chunk<T>(space, D, modes, std::max(1, n)), 64));
  // The model and its waves are made on the first refinement that needs a
  // pass of its own (a solver that collects the sums needs none).
  m_sums = Kokkos::View<double* [5], Kokkos::LayoutRight, Mem>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::PositionRefiner::sums"), std::max(1, n));
  // Every position in a walk over the object (impl::walking_order): each
  // position's sums are its own, so the order changes only the speed.
  m_chunks = impl::walking_chunks<Mem>(data.positions, D, m_chunk);
}

template <class T, class ExecSpace>
PositionRefiner<T, ExecSpace>::~PositionRefiner() = default;

template <class T, class ExecSpace>
PositionRefinementReport PositionRefiner<T, ExecSpace>::refine(ExecSpace const& space,
                                                               LocalData<T, ExecSpace> const& data,
                                                               State<T, ExecSpace> const& state,
                                                               Sync<T, ExecSpace>& sync,
                                                               std::vector<std::array<double, 2>>& positions,
                                                               std::vector<std::array<double, 2>> const& reference,
                                                               bool sums_collected) {
  ScopedRegion region("ptyko::PositionRefiner::refine");
  int const n = data.local_frames(), D = data.detector();
  // 1. Per position: the exit-wave update of the current object and probe,
  //    and the five sums of its shift.
  //    (Unless the solver's epoch collected them from its own waves.)
  if (!sums_collected) {
    if (!m_model) {
      m_model = std::make_unique<ForwardModel<T, ExecSpace>>(space, m_chunk, int(state.probe.extent(0)), D,
                                                             plan_effort(m_options.fft_planner, D));
      m_waves = ComplexView4<T, Mem>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::PositionRefiner::waves"), m_chunk,
          int(state.probe.extent(0)), D, D);
      m_cost = Kokkos::View<double, Mem>(Kokkos::view_alloc(space, "ptyko::PositionRefiner::cost"));
    }
    for (auto const& idx : m_chunks) {
      int const B = int(idx.extent(0));
      impl::exit_wave_update(space, *m_model, data, state, idx, m_options.noise, m_waves, m_model->patches(),
                             m_cost);
      position_shift_sums(space, B, state.probe, m_model->patches(), m_waves, m_sums, idx);
    }
  }
  auto const sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_sums);  // device -> host: 5 sums per position
  auto h_pos = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data.positions);  // device -> host: positions

  // 2. The moves, and the affine part (shift, scale, rotation, shear) of
  //    every rank's displacements from the file's positions, which is
  //    removed: a common shift is an ambiguity (it moves the object
  //    instead), and scale and rotation of the whole scan drift (measured:
  //    a 0.8 % shrink over 80 refinements of a scan with random errors)
  //    where nothing in one position's data pins them. What refinement
  //    corrects is each position's own error.
  std::vector<std::array<double, 2>> target(static_cast<std::size_t>(n)), ref(static_cast<std::size_t>(n));
  // Sums of the least-squares fit d = A r + b over all ranks (r relative to
  // the frames' centre would be better conditioned, but the sums are
  // doubles and objects are at most ~1e5 pixels across).
  double fit[12] = {};  // ry^2, ry rx, rx^2, ry, rx, n, dy ry, dy rx, dy, dx ry, dx rx, dx
  for (int f = 0; f < n; ++f) {
    // (A Poisson direction arrives halved, as a step: impl::exit_wave_update.)
    auto const move = position_shift(&sums(f, 0), m_options.positions_step);
    std::size_t const id = data.frame_ids[std::size_t(f)];
    ref[f] = {reference[id][0] - state.tile_y, reference[id][1] - state.tile_x};
    target[f] = {double(h_pos(f, 0)) + move[0], double(h_pos(f, 1)) + move[1]};
    add_affine_sample(fit, reference[id], {target[f][0] - ref[f][0], target[f][1] - ref[f][1]});
  }
  sync.sum(fit, 12);
  auto const affine = fit_affine(fit);

  // 3. Limits: the distance from the file's position, and the tile (the
  //    patch and the column / row bilinear sampling reads past it).
  double const max_shift = m_options.positions_max_shift >= 0 ? m_options.positions_max_shift : D / 4.0;
  double const H = double(state.object.extent(0)), W = double(state.object.extent(1));
  double const lo = D / 2, hi_y = H - D / 2 - 1 - 1e-3, hi_x = W - D / 2 - 1 - 1e-3;
  // Every position (2 per frame), then the sum of squared moves.
  std::vector<double> gathered(2 * positions.size() + 1, 0.0);
  double largest = 0;  // move
  for (int f = 0; f < n; ++f) {
    std::size_t const id = data.frame_ids[std::size_t(f)];
    double const old_y = h_pos(f, 0), old_x = h_pos(f, 1);
    double const gy = reference[id][0], gx = reference[id][1];
    double y = target[f][0] - (affine[0] * gy + affine[1] * gx + affine[2]);
    double x = target[f][1] - (affine[3] * gy + affine[4] * gx + affine[5]);
    double const ry = ref[f][0], rx = ref[f][1];
    y = std::clamp(y, std::max(lo, ry - max_shift), std::min(hi_y, ry + max_shift));
    x = std::clamp(x, std::max(lo, rx - max_shift), std::min(hi_x, rx + max_shift));
    h_pos(f, 0) = T(y);
    h_pos(f, 1) = T(x);
    double const d = std::hypot(double(h_pos(f, 0)) - old_y, double(h_pos(f, 1)) - old_x);
    gathered.back() += d * d;
    largest = std::max(largest, d);
    gathered[2 * id] = double(h_pos(f, 0)) + state.tile_y;
    gathered[2 * id + 1] = double(h_pos(f, 1)) + state.tile_x;
  }
  Kokkos::deep_copy(space, data.positions, h_pos);  // host -> device: refined positions

  // 4. Every rank's positions on every rank (each frame lives on one rank:
  //    a sum is the gather), for the next epoch's batch tiles.
  sync.sum(gathered.data(), int(gathered.size()));
  for (std::size_t id = 0; id < positions.size(); ++id) positions[id] = {gathered[2 * id], gathered[2 * id + 1]};
  fence(space, "ptyko::PositionRefiner::refine");
  PositionRefinementReport report;
  report.rms_move_px = positions.empty() ? 0 : std::sqrt(gathered.back() / double(positions.size()));
  report.max_move_px = sync.max(largest);
  return report;
}

template class PositionRefiner<float, Kokkos::DefaultExecutionSpace>;
template class PositionRefiner<double, Kokkos::DefaultExecutionSpace>;

}  // namespace ptyko
