// Solver registry and per-solver defaults.

#include <ptyko/core/solver.hpp>
#include <ptyko/kernels/error.hpp>

#include <algorithm>

namespace ptyko {
namespace impl {
template <class T, class ExecSpace>
std::unique_ptr<Solver<T, ExecSpace>> make_rpie(std::string const& name);
template <class T, class ExecSpace>
std::unique_ptr<Solver<T, ExecSpace>> make_lsqml();
template <class T, class ExecSpace>
std::unique_ptr<Solver<T, ExecSpace>> make_dm(std::string const& name);
}  // namespace impl

std::vector<std::string> solver_names() { return {"lsqml", "rpie", "epie", "dm", "raar"}; }

namespace {
std::string joined_names() {
  std::string s;
  for (auto const& n : solver_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}
}  // namespace

void resolve_solver_defaults(SolverOptions& o, std::size_t frames) {
  auto const names = solver_names();
  PTYKO_REQUIRE(std::find(names.begin(), names.end(), o.solver) != names.end(), "--solver '", o.solver,
                "' is not a solver: use one of ", joined_names());
  PTYKO_REQUIRE(o.epochs >= 0, "--epochs must be >= 0, got ", o.epochs);
  PTYKO_REQUIRE(o.batch_size >= 0, "--batch-size must be >= 1, got ", o.batch_size);
  bool const projection = o.solver == "dm" || o.solver == "raar";
  if (o.batch_size == 0) {
    // Small batches converge in the fewest epochs (docs/solvers.md); DM's
    // "batch" only bounds the work buffers. LSQML (alpha = beta = 0.1): 8
    // rather than 16 takes the object error after 100 epochs from 0.050 to
    // 0.043 (0.033 after 200) on the 1e6-photon test data, for ~20 % more time
    // per epoch (0.096 s against 0.081 s on one core; batch 4: 0.035, 0.119 s).
    o.batch_size = o.solver == "epie" ? 1 : projection ? 64 : o.solver == "lsqml" ? 8 : 16;
    o.batch_size = int(std::min<std::size_t>(std::size_t(o.batch_size), frames));
  }
  PTYKO_REQUIRE(std::size_t(o.batch_size) <= frames, "--batch-size ", o.batch_size,
                " is larger than the number of frames (", frames, "): use at most ", frames);
  if (o.solver == "epie") {
    if (o.alpha < 0) o.alpha = 1;
    if (o.beta < 0) o.beta = 1;
  } else if (o.solver == "rpie") {
    // One position per update (the original rPIE) with beta 0.1 fits the
    // probe to each position in turn and never settles: object error
    // 0.31-0.33 after 30 epochs on three simulated scans, against
    // 0.043-0.088 with beta 1 (the probe step of ePIE) and 0.07-0.14 for
    // batches of 16 with 0.1, whose sums average the positions.
    if (o.alpha < 0) o.alpha = 0.1;
    if (o.beta < 0) o.beta = o.batch_size == 1 ? 1 : 0.1;
  } else if (o.solver == "lsqml") {
    // With batches of 8, alpha = beta = 0.05 / 0.1 / 0.2 give object errors
    // 0.044 / 0.043 / 0.043 after 100 epochs (0.038 / 0.033 / - after 200);
    // beta alone hardly matters.
    if (o.alpha < 0) o.alpha = 0.1;
    if (o.beta < 0) o.beta = 0.1;
  } else if (o.solver == "dm") {
    o.beta = 1;  // DM is RAAR with beta = 1
  } else if (o.solver == "raar") {
    // beta 0.5 / 0.75 / 0.85 / 0.9 / 0.95: object error 0.170 / 0.087 /
    // 0.054 / 0.045 / 0.046 after 100 epochs; 0.85-0.95 all end near 0.044
    // after 200 (the plateau of RAAR's biased fixed point).
    if (o.beta < 0) o.beta = 0.9;
  }
  // DM is not a descent method: on noisy data the full modulus projection
  // keeps chasing the photon noise and the object error wanders (0.06-0.13
  // between epochs 50 and 200 on the 1e6-photon test data). A power bound of
  // relax 0.02 damps that (0.046 after 100 epochs, 0.045 after 200; PtyPy's
  // 0.05 is too loose there: 0.13). RAAR's beta < 1 already relaxes, and the
  // bound only slows it, so it stays off there (docs/solvers.md). DM holds
  // the bound to the counting noise (power_bound.hpp).
  if (o.fourier_relax < 0) o.fourier_relax = o.solver == "dm" ? 0.02 : 0.0;
  // Momentum: 0.9 (with momentum_gain 0.5) took an aberrated-probe scan's
  // object error from 0.15 to 0.08 in 200 epochs and the 2-mode test scan's
  // from 0.108 to 0.085 in 25 (LSQML; docs/solvers.md).
  if (o.momentum < 0) o.momentum = projection ? 0.0 : 0.9;
  PTYKO_REQUIRE(o.momentum < 1, "--momentum must be in [0, 1), got ", o.momentum);
  PTYKO_REQUIRE(!projection || o.momentum == 0, "--momentum is for rpie, epie and lsqml: ", o.solver,
                " takes none (use --momentum 0, or a descent solver)");
  if (o.probe_update_start < 0) o.probe_update_start = projection ? 2 : 0;
  // Positions are refined once the object has formed: against a blank
  // object every slope is zero and the first epochs' moves are noise.
  if (o.positions_start < 0) o.positions_start = std::max(o.probe_update_start + 1, o.epochs / 5);
  // Fluxes and a background are measured against the model: from a tenth
  // of the run on, but not before epoch 10 unless the run is short. With
  // momentum the object converges sooner and a refinement from epoch 6 of
  // 60 left clean data's object error at 0.0132 against 0.0096 unrefined
  // (0.0100 from epoch 10).
  int const refinements_start = std::max(o.probe_update_start + 1, std::max(o.epochs / 10, std::min(10, o.epochs / 5)));
  if (o.intensities_start < 0) o.intensities_start = refinements_start;
  PTYKO_REQUIRE(o.intensities_every >= 1, "--intensities-every must be >= 1, got ", o.intensities_every);
  if (o.background_start < 0) o.background_start = refinements_start;
  PTYKO_REQUIRE(o.background_every >= 1, "--background-every must be >= 1, got ", o.background_every);
  PTYKO_REQUIRE(o.positions_every >= 1, "--refine-every must be >= 1, got ", o.positions_every);
  PTYKO_REQUIRE(o.positions_step > 0, "--refine-step must be > 0 pixels, got ", o.positions_step);
  PTYKO_REQUIRE(o.alpha < 0 || (o.alpha >= 0 && o.alpha <= 1), "--alpha must be in [0, 1], got ", o.alpha);
  PTYKO_REQUIRE(o.beta >= 0 && o.beta <= 1, "--beta must be in [0, 1], got ", o.beta);
  PTYKO_REQUIRE(o.overlap_passes >= 1, "--overlap-passes must be >= 1, got ", o.overlap_passes);
  PTYKO_REQUIRE(o.fourier_relax >= 0 && o.fourier_relax < 1,
                "the DM/RAAR power bound fourier_relax must be in [0, 1), got ", o.fourier_relax);
  PTYKO_REQUIRE(!projection || o.noise == NoiseModel::gaussian, "--noise poisson is not available for ",
                o.solver, ": DM and RAAR use the modulus projection (Gaussian); use lsqml or rpie");
  PTYKO_REQUIRE(o.modes >= 0 && o.modes <= max_probe_modes, "--modes must be in [1, ", max_probe_modes, "], got ", o.modes);
  PTYKO_REQUIRE(o.rescale_every >= 0, "--rescale-every must be >= 0, got ", o.rescale_every);
  PTYKO_REQUIRE(o.probe_support >= 0, "--probe-support must be >= 0 pixels, got ", o.probe_support);
}

FFTPlanner parse_fft_planner(std::string const& name) {
  if (name == "auto") return FFTPlanner::automatic;
  if (name == "estimate") return FFTPlanner::estimate;
  if (name == "measure") return FFTPlanner::measure;
  PTYKO_FAIL("--fft-planner '", name, "' is not an FFT planner: use auto, estimate or measure");
}

std::string to_string(FFTPlanner p) {
  switch (p) {
    case FFTPlanner::estimate: return "estimate";
    case FFTPlanner::measure: return "measure";
    default: return "auto";
  }
}

FFTPlanEffort plan_effort(FFTPlanner p, int D) {
  if (p == FFTPlanner::measure || (p == FFTPlanner::automatic && D >= 256)) return FFTPlanEffort::measure;
  return FFTPlanEffort::estimate;
}

template <class T, class ExecSpace>
std::unique_ptr<Solver<T, ExecSpace>> make_solver(std::string const& name) {
  if (name == "rpie" || name == "epie") return impl::make_rpie<T, ExecSpace>(name);
  if (name == "lsqml") return impl::make_lsqml<T, ExecSpace>();
  if (name == "dm" || name == "raar") return impl::make_dm<T, ExecSpace>(name);
  PTYKO_FAIL("--solver '", name, "' is not a solver: use one of ", joined_names());
}

template std::unique_ptr<Solver<float, Kokkos::DefaultExecutionSpace>>
make_solver<float, Kokkos::DefaultExecutionSpace>(std::string const&);
template std::unique_ptr<Solver<double, Kokkos::DefaultExecutionSpace>>
make_solver<double, Kokkos::DefaultExecutionSpace>(std::string const&);

}  // namespace ptyko
