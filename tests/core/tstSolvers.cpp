// Solver quality on a simulated dataset, assembled in-process the way
// `ptyko reconstruct` does it (read_scan_layout -> load_local_data ->
// choose_probe_start -> initial_state -> Reconstruction -> step()) with the
// single-process LocalSync, and scored with the metric module (object_error
// against the simulation's truth over its illuminated region).
//
// Dataset: ptyko::simulate defaults (64 x 64 detector, 400 Fermat-spiral
// positions at 70 % overlap, 1e6 photons per frame, 2 probe modes, seed 1).
// Thresholds come from measurements on this data (Serial backend, Release);
// each assertion states the measured value it guards, with a margin for
// other backends' rounding (the solvers are nonlinear, so rounding changes
// the path a little). Runs that several tests look at are made once.
// Cost: ~1200 solver epochs and each run's probe-start trial (two sides
// times two diameters, 3 rPIE epochs each, here), 30-40 s of one core
// (Serial, Release, 2-core machine).
#include <ptyko/core/cxi.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/illumination.hpp>
#include <ptyko/core/metrics.hpp>
#include <ptyko/core/probe_focus.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/core/scan.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/core/solver.hpp>
#include <ptyko/core/sync.hpp>
#include <ptyko/kernels/update.hpp>

#include <gtest/gtest.h>

#include <test_files.hpp>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

using namespace ptyko;
using Exec = Kokkos::DefaultExecutionSpace;

/// A simulated CXI file on disk, its layout and the truth to score against.
struct Dataset {
  std::string path;
  ScanLayout layout;
  CxiTruth truth;
  HostRealImage illumination;  ///< of the true probe: the region of object_error
};

/// What a run leaves behind.
struct RunResult {
  std::vector<double> cost;            ///< mean cost per frame, per epoch
  double error = 0;                    ///< object NRMSE against the truth
  HostComplexImage object;             ///< final object, double on the host
  HostComplex3 probe;                  ///< final probe modes
  std::vector<double> mode_fractions;  ///< power fractions of the last epoch
  double seconds = 0;                  ///< of the epochs alone
  std::size_t isolated = 0;            ///< positions updated without object sums
  ProbeStartTrial start;               ///< the side of the focus and the diameter the probe started from
};

// Simulated files and finished runs are cached for the whole executable:
// several tests look at the same run. Both hold Kokkos Views, so they are
// released in the environment's TearDown, before Kokkos is finalised.
std::map<std::string, std::unique_ptr<Dataset>>& datasets() {
  static std::map<std::string, std::unique_ptr<Dataset>> d;
  return d;
}
std::map<std::string, std::unique_ptr<RunResult>>& runs() {
  static std::map<std::string, std::unique_ptr<RunResult>> r;
  return r;
}

class SolverEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    for (auto const& [key, d] : datasets()) std::filesystem::remove(d->path);
    runs().clear();
    datasets().clear();
  }
};
[[maybe_unused]] auto* const environment = ::testing::AddGlobalTestEnvironment(new SolverEnvironment);

SimulationOptions default_simulation() {
  SimulationOptions s;  // 400 positions, 64 x 64, 2 modes, 1e6 photons, 70 % overlap
  s.seed = 1;
  return s;
}

/// The simulation of `sim` as a file, cached by `key`; `alter` may change
/// the file's contents first (the truth is kept as simulated).
Dataset const& dataset(std::string const& key, SimulationOptions const& sim,
                       std::function<void(CxiContents&)> const& alter = {}) {
  auto& d = datasets()[key];
  if (!d) {
    d = std::make_unique<Dataset>();
    CxiContents contents = simulate(sim);
    if (alter) alter(contents);
    d->path = test::temp_path("solvers-" + key + ".cxi").string();
    cxi_write(d->path, contents);
    d->layout = read_scan_layout(d->path, LoadOptions{});
    d->truth = *contents.truth;
    d->illumination = illumination_map(d->truth.probe, d->truth.positions_px, d->layout.grid.height,
                                       d->layout.grid.width);
  }
  return *d;
}

Dataset const& default_dataset() { return dataset("default", default_simulation()); }

/// The device object tile as a double-precision host image.
template <class T>
HostComplexImage object_on_host(ComplexView2<T, Exec::memory_space> const& object) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), object);
  HostComplexImage out("object", h.extent(0), h.extent(1));
  for (std::size_t k = 0; k < h.span(); ++k) out.data()[k] = Complex<double>(h.data()[k].real(), h.data()[k].imag());
  return out;
}

template <class T>
HostComplex3 probe_on_host(ComplexView3<T, Exec::memory_space> const& probe) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probe);
  HostComplex3 out("probe", h.extent(0), h.extent(1), h.extent(2));
  for (std::size_t k = 0; k < h.span(); ++k) out.data()[k] = Complex<double>(h.data()[k].real(), h.data()[k].imag());
  return out;
}

/// Every frame of `d` on one rank, its tile the whole grid.
template <class T>
LocalData<T, Exec> all_frames(Exec const& space, Dataset const& d) {
  std::vector<std::size_t> ids(d.layout.info.frames);
  std::iota(ids.begin(), ids.end(), std::size_t(0));
  return load_local_data<T, Exec>(space, d.layout, ids, 0, 0, d.layout.grid.height, d.layout.grid.width,
                                  LoadOptions{});
}

/// Frames in other units than photons: every frame times `scale`, in units
/// of `adu_per_photon` each (0: not known).
struct Units {
  double scale = 1;
  double adu_per_photon = 1;
};

template <class T>
void convert_units(Exec const& space, LocalData<T, Exec>& data, Units const& units) {
  data.adu_per_photon = units.adu_per_photon;
  if (units.scale == 1) return;
  Kokkos::View<float***, Kokkos::LayoutRight, Exec::memory_space> scaled(
      Kokkos::view_alloc(space, "scaled frames"), data.frames.extent(0), data.frames.extent(1), data.frames.extent(2));
  float const s = float(units.scale);
  data.frames.visit([&](auto const& frames) {
    auto const* in = frames.data();
    float* out = scaled.data();
    Kokkos::parallel_for(
        "scale frames", Kokkos::RangePolicy<Exec>(space, 0, scaled.span()),
        KOKKOS_LAMBDA(std::size_t k) { out[k] = s * float(in[k]); });
  });
  data.frames = FrameStack<Exec::memory_space>(scaled);
}

/// The computed probe's diameter of a 70 % overlap scan (from the scan step).
double scan_probe_diameter(Dataset const& d) {
  return default_probe_diameter(typical_step(d.layout.positions_px), d.layout.info.ny);
}

/// The starts `ptyko reconstruct` tries without --probe-focus and
/// --probe-diameter: both sides, the diameters around the scan's.
std::vector<ProbeStart> default_starts(Dataset const& d) {
  return probe_starts(ProbeFocus::automatic, probe_diameter_candidates(scan_probe_diameter(d), d.layout.info.ny));
}

/// Both sides at the scan's diameter only.
std::vector<ProbeStart> both_sides(Dataset const& d) {
  return probe_starts(ProbeFocus::automatic, {scan_probe_diameter(d)});
}

/// Runs `options.epochs` epochs on `d` as `ptyko reconstruct` would on one
/// rank (all frames, tile = whole grid, no probe guess, the probe's side and
/// size from the trial of `starts`, by default the driver's) and scores the
/// final object. `ignore_mask` drops the file's
/// detector mask after loading (dead pixels then count as measured zeros).
template <class T>
RunResult reconstruct(Dataset const& d, SolverOptions const& options, bool ignore_mask = false,
                      std::vector<ProbeStart> starts = {}, Units const& units = {}) {
  Exec space;
  LocalSync<T, Exec> sync;
  auto const& layout = d.layout;
  int const H = layout.grid.height, W = layout.grid.width;
  auto data = all_frames<T>(space, d);
  if (ignore_mask) data.mask = MaskView<Exec::memory_space>();
  convert_units(space, data, units);
  // The side of the focus and the size as the driver picks them.
  if (starts.empty()) starts = default_starts(d);
  ProbeStartTrial const trial = choose_probe_start<T, Exec>(space, data, sync, H, W, options, starts,
                                                            layout.positions_px);
  auto state = initial_state<T, Exec>(space, data, sync, H, W, HostComplex3(), options.modes, options.seed,
                                      trial.start.diameter, trial.start.focus);
  Reconstruction<T, Exec> rec(space, std::move(data), std::move(state), options, sync, layout.positions_px);
  RunResult run;
  run.start = trial;
  auto const t0 = std::chrono::steady_clock::now();
  while (!rec.done()) run.mode_fractions = rec.step().mode_power_fractions;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.cost = rec.state().cost;
  run.isolated = rec.isolated_positions();
  run.object = object_on_host<T>(rec.state().object);
  run.probe = probe_on_host<T>(rec.state().probe);
  run.error = object_error(run.object, d.truth.object, d.illumination).nrmse;
  SolverOptions const& o = rec.options();
  std::printf("%s %s, %d epochs (batch %d, alpha %g, beta %g, %s noise%s, probe from %.3g px %s): %.1f s, error "
              "%.4f, cost %.6g -> %.6g\n",
              o.solver.c_str(), std::is_same_v<T, float> ? "float" : "double", o.epochs, o.batch_size, o.alpha,
              o.beta, o.noise == NoiseModel::gaussian ? "gaussian" : "poisson", ignore_mask ? ", mask ignored" : "",
              trial.start.diameter, to_string(trial.start.focus).c_str(), run.seconds, run.error, run.cost.front(),
              run.cost.back());
  std::fflush(stdout);
  return run;
}

SolverOptions solver_options(std::string const& solver, int epochs) {
  SolverOptions o;
  o.solver = solver;
  o.epochs = epochs;
  o.modes = 2;
  o.seed = 1;
  return o;
}

/// A cached run: the same key always means the same configuration.
template <class T>
RunResult const& cached_run(std::string const& key, Dataset const& d, SolverOptions const& options) {
  auto& r = runs()[key];
  if (!r) r = std::make_unique<RunResult>(reconstruct<T>(d, options));
  return *r;
}

double mean_of_last(std::vector<double> const& v, std::size_t n) {
  n = std::min(n, v.size());
  return std::accumulate(v.end() - long(n), v.end(), 0.0) / double(n);
}

/// || a - b || / || b || over all pixels (objects or probe modes).
template <class View>
double relative_difference(View const& a, View const& b) {
  double num = 0, den = 0;
  for (std::size_t k = 0; k < a.span(); ++k) {
    std::complex<double> const x(a.data()[k].real(), a.data()[k].imag()), y(b.data()[k].real(), b.data()[k].imag());
    num += std::norm(x - y);
    den += std::norm(y);
  }
  return std::sqrt(num / den);
}

/// The common claims about a finished run: finite costs, the mean cost of the
/// last 5 epochs below `max_cost_ratio` times the first, the object error
/// below `max_error`.
void expect_converged(RunResult const& run, double max_cost_ratio, double max_error) {
  ASSERT_FALSE(run.cost.empty());
  for (double c : run.cost) ASSERT_TRUE(std::isfinite(c));
  double const ratio = mean_of_last(run.cost, 5) / run.cost.front();
  EXPECT_LT(ratio, max_cost_ratio) << "mean cost of the last 5 epochs / first epoch";
  EXPECT_LT(run.error, max_error);
}

// ---------------------------------------------------------------------------
// Per-solver convergence.

// What the thresholds below compare with: the initial object (all ones)
// scored against the truth.
TEST(Baseline, InitialObjectIsFarOff) {
  Dataset const& d = default_dataset();
  HostComplexImage ones("ones", d.truth.object.extent(0), d.truth.object.extent(1));
  Kokkos::deep_copy(ones, Complex<double>(1));
  double const error = object_error(ones, d.truth.object, d.illumination).nrmse;
  std::printf("initial object (ones): error %.4f\n", error);
  EXPECT_GT(error, 0.3);
}

struct SolverCase {
  char const* solver;
  int epochs;
  double max_cost_ratio;  ///< mean cost of the last 5 epochs / cost of the first
  double max_error;       ///< object NRMSE after `epochs`
};

std::ostream& operator<<(std::ostream& os, SolverCase const& c) { return os << c.solver; }

// Thresholds (float, 2 modes, the defaults of resolve_solver_defaults). The
// initial object scores 0.354 (Baseline below). Measured on the Serial
// backend (2026-12-07; the probe starts at 29.1 px upstream, as the trial
// picks it; the descent solvers with their default momentum, without which
// rPIE gave 0.0426, LSQML 0.0448 and ePIE 0.1490):
//   rpie   100 epochs: error 0.0404, cost ratio 0.049
//   lsqml  100 epochs: error 0.0428, cost ratio 0.051
//   epie    25 epochs: error 0.1074, cost ratio 0.039
//   dm      60 epochs: error 0.0624, cost ratio 0.031
//   raar    60 epochs: error 0.0563, cost ratio 0.029
// The error limits hold the goals (LSQML and rPIE below 0.05 within 100
// epochs, DM below 0.08 within 100: here within 60) with ~15-25 % margin for
// other backends' rounding; ePIE, one position per update, is slow per epoch
// and only checked early on. Every cost ratio limit is 0.1 (measured <= 0.051).
SolverCase const solver_cases[] = {
    {"rpie", 100, 0.1, 0.05},
    {"lsqml", 100, 0.1, 0.05},
    {"epie", 25, 0.1, 0.13},
    {"dm", 60, 0.1, 0.075},
    {"raar", 60, 0.1, 0.07},
};

SolverOptions case_options(SolverCase const& c) { return solver_options(c.solver, c.epochs); }

RunResult const& solver_run(SolverCase const& c) {
  return cached_run<float>(std::string("solver_") + c.solver, default_dataset(), case_options(c));
}

class SolverConvergence : public ::testing::TestWithParam<SolverCase> {};

TEST_P(SolverConvergence, CostFallsAndObjectIsRecovered) {
  SolverCase const& c = GetParam();
  RunResult const& run = solver_run(c);
  std::printf("%s: cost ratio (last 5 / first) %.4f, object error %.4f after %d epochs\n", c.solver,
              mean_of_last(run.cost, 5) / run.cost.front(), run.error, c.epochs);
  expect_converged(run, c.max_cost_ratio, c.max_error);
}

INSTANTIATE_TEST_SUITE_P(Solvers, SolverConvergence, ::testing::ValuesIn(solver_cases),
                         [](::testing::TestParamInfo<SolverCase> const& info) {
                           return std::string(info.param.solver);
                         });

// DM's overlap projection alternates object and probe updates from the
// stored waves; one round per epoch by default (overlap_passes). Two rounds
// per epoch must meet the same limits (measured: error 0.0632 after 60
// epochs against one round's 0.0624) and must be a different run, or the
// option does not reach the solver.
TEST(SolverDefaults, DifferenceMapWithTwoOverlapPassesConvergesAlike) {
  SolverOptions o = solver_options("dm", 60);
  EXPECT_EQ(o.overlap_passes, 1);
  o.overlap_passes = 2;
  ASSERT_STREQ(solver_cases[3].solver, "dm");
  RunResult const& two = cached_run<float>("dm_two_overlap_passes", default_dataset(), o);
  RunResult const& one = solver_run(solver_cases[3]);
  double const difference = relative_difference(two.object, one.object);
  std::printf("dm, two overlap passes: cost ratio (last 5 / first) %.4f, object error %.4f after 60 epochs "
              "(one pass: %.4f); objects differ by %.2e\n",
              mean_of_last(two.cost, 5) / two.cost.front(), two.error, one.error, difference);
  expect_converged(two, 0.1, 0.075);
  EXPECT_GT(difference, 1e-3);
}

// rPIE one position at a time (--batch-size 1) takes the probe step of ePIE
// (beta 1) unless told otherwise: with the batches' beta 0.1 each update
// fitted the probe to one position and the run never settled (cost ratio
// above 1, error 0.31-0.33 on the simulated scans of docs/solvers.md).
// Measured: 0.0420 after 25 epochs (ePIE 0.1074; 0.1495 before momentum).
TEST(SolverDefaults, PerPositionRpieConvergesWithTheProbeStepOfEpie) {
  SolverOptions o = solver_options("rpie", 25);
  o.batch_size = 1;
  SolverOptions resolved = o;
  resolve_solver_defaults(resolved, 400);
  EXPECT_EQ(resolved.alpha, 0.1);
  EXPECT_EQ(resolved.beta, 1.0);
  SolverOptions batches = solver_options("rpie", 25);
  resolve_solver_defaults(batches, 400);
  EXPECT_EQ(batches.beta, 0.1);
  RunResult const& run = cached_run<float>("rpie_per_position", default_dataset(), o);
  std::printf("rpie, batch 1: cost ratio (last 5 / first) %.4f, object error %.4f after 25 epochs\n",
              mean_of_last(run.cost, 5) / run.cost.front(), run.error);
  expect_converged(run, 0.1, 0.055);
}

// Momentum across epochs (core/momentum.hpp) is on for the descent solvers
// by default; DM and RAAR take none. On this data it steps until the cost
// is down to the counting noise (about epoch 10), which carries the runs
// ahead by a quarter; the later epochs take no step, and the runs must end
// no worse. Measured (2 modes), without -> with: after 25 epochs LSQML
// 0.1076 -> 0.0848, rPIE 0.1127 -> 0.0853; after 100 LSQML 0.0448 -> 0.0428,
// rPIE 0.0426 -> 0.0404. (Its large gains, on probes that must travel far
// from their start, are measured on an independent simulator's scans in
// docs/solvers.md; the steps' arithmetic and rules are tstMomentum's.)
TEST(Momentum, DescentSolversReachTheTruthSooner) {
  for (SolverCase const& c : solver_cases) {
    SolverOptions resolved = case_options(c);
    resolve_solver_defaults(resolved, 400);
    bool const descent = std::string(c.solver) != "dm" && std::string(c.solver) != "raar";
    EXPECT_EQ(resolved.momentum, descent ? 0.9 : 0.0) << c.solver;
  }
  for (char const* solver : {"lsqml", "rpie"}) {
    for (int epochs : {25, 100}) {
      SolverOptions o = solver_options(solver, epochs);
      RunResult const& with = cached_run<float>(std::string(epochs == 100 ? "solver_" : "early_") + solver,
                                                default_dataset(), o);
      o.momentum = 0;
      RunResult const& without = cached_run<float>(std::string("no_momentum_") + solver + std::to_string(epochs),
                                                   default_dataset(), o);
      std::printf("%s, %d epochs: object error %.4f with momentum, %.4f without; final cost %.6g, %.6g\n", solver,
                  epochs, with.error, without.error, with.cost.back(), without.cost.back());
      EXPECT_LT(with.error, (epochs == 25 ? 0.85 : 1.0) * without.error) << solver << ", " << epochs << " epochs";
    }
  }
}

// ---------------------------------------------------------------------------
// Probe modes: after every epoch that updates the probe, Reconstruction
// orthogonalises the modes and sorts them by power. Checked on the final
// probe of every solver's run above.

TEST(ProbeModes, OrthogonalAndSortedByPower) {
  for (SolverCase const& c : solver_cases) {
    RunResult const& run = solver_run(c);
    HostComplex3 const& p = run.probe;
    int const M = int(p.extent(0));
    ASSERT_EQ(M, 2);
    std::size_t const n = p.extent(1) * p.extent(2);
    std::vector<double> power(M);
    double worst = 0;
    for (int a = 0; a < M; ++a)
      for (int b = 0; b < M; ++b) {
        std::complex<double> s = 0;
        for (std::size_t k = 0; k < n; ++k) {
          auto const x = p.data()[a * n + k], y = p.data()[b * n + k];
          s += std::conj(std::complex<double>(x.real(), x.imag())) * std::complex<double>(y.real(), y.imag());
        }
        if (a == b) power[a] = s.real();
        else worst = std::max(worst, std::abs(s));
      }
    double const overlap = worst / std::sqrt(power[0] * power[1]);
    std::printf("%s: |<P0,P1>| / (|P0| |P1|) = %.2e, mode powers %.4g %.4g (fractions reported %.4f %.4f)\n",
                c.solver, overlap, power[0], power[1], run.mode_fractions.at(0), run.mode_fractions.at(1));
    EXPECT_LT(overlap, 1e-4) << c.solver;  // measured 3e-8 .. 3e-7 (float rounding)
    EXPECT_GE(power[0], power[1]) << c.solver;
    ASSERT_EQ(run.mode_fractions.size(), 2u);
    EXPECT_NEAR(run.mode_fractions[0] + run.mode_fractions[1], 1.0, 1e-9) << c.solver;
    EXPECT_GE(run.mode_fractions[0], run.mode_fractions[1]) << c.solver;
    // The reported fractions are those of the final probe.
    EXPECT_NEAR(run.mode_fractions[0], power[0] / (power[0] + power[1]), 1e-5) << c.solver;
  }
}

// ---------------------------------------------------------------------------
// Precision: the same run in float and double.

TEST(Precision, FloatAndDoubleAgree) {
  // Measured after 25 epochs: error 0.0853 in both, ||O_f - O_d|| / ||O_d||
  // = 3.3e-6, final costs equal to 6 digits. Limits: 5 % on the error, 1e-3
  // on the objects (room for backends whose float sums run in another order).
  SolverOptions const o = solver_options("rpie", 25);
  RunResult const& f = cached_run<float>("precision_float", default_dataset(), o);
  RunResult const& d = cached_run<double>("precision_double", default_dataset(), o);
  double const difference = relative_difference(f.object, d.object);
  std::printf("rpie %d epochs: error float %.4f double %.4f, ||O_f - O_d|| / ||O_d|| = %.3e, cost %.6g vs %.6g\n",
              o.epochs, f.error, d.error, difference, f.cost.back(), d.cost.back());
  EXPECT_NEAR(f.error, d.error, 0.05 * d.error);
  EXPECT_LT(difference, 1e-3);
  EXPECT_NEAR(f.cost.back(), d.cost.back(), 1e-3 * d.cost.back());
}

// ---------------------------------------------------------------------------
// Determinism: the same seed twice gives the same result.

constexpr bool host_backend() { return is_host_space_v<Exec>; }

TEST(Determinism, SameSeedSameObject) {
  SolverOptions const o = solver_options("lsqml", 10);
  RunResult const a = reconstruct<float>(default_dataset(), o);
  RunResult const b = reconstruct<float>(default_dataset(), o);
  ASSERT_EQ(a.object.span(), b.object.span());
  if (host_backend()) {
    // Fixed batch order and probe seed, no atomics on host spaces (the
    // footprint scatter gives every pixel its adds in batch order at any
    // thread count), reductions in a fixed order for a given thread count:
    // bit-identical.
    std::size_t differing = 0;
    for (std::size_t k = 0; k < a.object.span(); ++k)
      differing += a.object.data()[k] != b.object.data()[k];
    for (std::size_t k = 0; k < a.probe.span(); ++k) differing += a.probe.data()[k] != b.probe.data()[k];
    EXPECT_EQ(differing, 0u);
    EXPECT_EQ(a.cost, b.cost);
  } else {
    // Device atomics sum in a varying order: equal up to rounding, which the
    // nonlinear iteration amplifies a little.
    EXPECT_LT(relative_difference(a.object, b.object), 1e-2);
    EXPECT_NEAR(a.error, b.error, 0.05 * a.error);
  }
}

// The cache-blocked pipeline: a batch run in chunks of one position gives
// the result of whole batches (the same sums in the same order; only the FFT
// plans' batch counts and the cost's summation order differ).
TEST(Pipeline, ChunksDoNotChangeTheResult) {
  for (char const* solver : {"rpie", "lsqml", "dm"}) {
    SolverOptions whole = solver_options(solver, 6);
    whole.pipeline_chunk = 100000;
    SolverOptions single = whole;
    single.pipeline_chunk = 1;
    RunResult const a = reconstruct<float>(default_dataset(), whole);
    RunResult const b = reconstruct<float>(default_dataset(), single);
    double const diff = relative_difference(b.object, a.object);
    std::printf("[ measured ] %s: chunks of 1 against whole batches, object difference %.2e\n", solver, diff);
    EXPECT_LT(diff, 1e-4) << solver;
    EXPECT_LT(relative_difference(b.probe, a.probe), 1e-4) << solver;
    EXPECT_NEAR(b.cost.back(), a.cost.back(), 1e-4 * a.cost.back()) << solver;
  }
}

// Isolated positions (footprints that meet no other of their batch) update
// the object straight from their patches on one rank (rPIE/ePIE), or take
// LSQML's object direction from them footprint by footprint. rPIE and LSQML
// with small sparse batches (many isolated positions) and ePIE (one
// position per batch: all isolated) must give the result of the
// object-shaped sums; only the order of the positions within a batch
// changes (isolated ones last), so the probe sums, the step sums and the
// cost add in another order. Double precision.
TEST(IsolatedPositions, DirectUpdatesGiveTheResultOfTheSums) {
  for (char const* solver : {"rpie", "epie", "lsqml"}) {
    SolverOptions direct = solver_options(solver, 6);
    if (std::string(solver) != "epie") direct.batch_size = 4;
    SolverOptions summed = direct;
    summed.isolated_updates = false;
    RunResult const a = reconstruct<double>(default_dataset(), summed);
    RunResult const b = reconstruct<double>(default_dataset(), direct);
    EXPECT_EQ(a.isolated, 0u) << solver;
    EXPECT_GT(b.isolated, 0u) << solver;
    double const diff = relative_difference(b.object, a.object);
    std::printf("[ measured ] %s: %zu of 400 positions isolated, object difference %.2e\n", solver, b.isolated, diff);
    EXPECT_LT(diff, 1e-9) << solver;
    EXPECT_LT(relative_difference(b.probe, a.probe), 1e-9) << solver;
    EXPECT_NEAR(b.cost.back(), a.cost.back(), 1e-9 * a.cost.back()) << solver;
  }
}

// DM keeps one exit wave per position and mode, and recombines them with the
// probe modes lazily (the pending recombination enters the overlap sums and
// each chunk's Fourier step). DM does not depend on the basis of the modes:
// rotating the probe by a unitary V (twice, so that pending recombinations
// compose) and telling the solver must give the run without the rotation,
// its probe rotated by the same V. Double precision: equal to rounding.
// Two DM runs a and b (double precision, the default dataset, identical
// starts), each one epoch in: the ModeBasis tests change b between epochs
// and compare it with a.
struct TwoDifferenceMaps {
  using T = double;
  Exec space;
  LocalSync<T, Exec> sync;
  SolverOptions o = solver_options("dm", 4);
  LocalData<T, Exec> data;
  State<T, Exec> a, b;
  std::unique_ptr<Solver<T, Exec>> solver_a = make_solver<T, Exec>("dm"), solver_b = make_solver<T, Exec>("dm");

  TwoDifferenceMaps() {
    Dataset const& d = default_dataset();
    int const H = d.layout.grid.height, W = d.layout.grid.width;
    std::vector<std::size_t> ids(d.layout.info.frames);
    std::iota(ids.begin(), ids.end(), std::size_t(0));
    data = load_local_data<T, Exec>(space, d.layout, ids, 0, 0, H, W, LoadOptions{});
    double const diameter = default_probe_diameter(typical_step(d.layout.positions_px), d.layout.info.ny);
    a = initial_state<T, Exec>(space, data, sync, H, W, HostComplex3(), o.modes, o.seed, diameter);
    b = initial_state<T, Exec>(space, data, sync, H, W, HostComplex3(), o.modes, o.seed, diameter);
    solver_a->setup(space, data, a, o, 64);
    solver_b->setup(space, data, b, o, 64);
    epochs(1);
  }
  /// `n` more epochs of both runs (updating the probe); the costs of the last.
  std::array<double, 2> epochs(int n) {
    std::vector<LocalBatch<Exec> const*> const unused;  // DM walks its own chunks
    std::array<double, 2> cost{0, 0};
    for (int e = 0; e < n; ++e) {
      cost[0] = solver_a->epoch(space, data, a, unused, sync, true);
      cost[1] = solver_b->epoch(space, data, b, unused, sync, true);
    }
    return cost;
  }
};

TEST(ModeBasis, DifferenceMapFollowsARecombinationOfTheModes) {
  using T = double;
  TwoDifferenceMaps r;
  auto& space = r.space;
  auto& b = r.b;
  auto& a = r.a;

  // new mode k = sum_m V(m, k) old mode m, for two unitary V.
  using C = std::complex<double>;
  auto rotate = [&](double theta, double phi) {
    std::vector<C> V{std::cos(theta), -std::sin(theta) * std::polar(1.0, phi), std::sin(theta),
                     std::cos(theta) * std::polar(1.0, phi)};
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.probe);  // device -> host: probe
    auto old = Kokkos::create_mirror(h);
    Kokkos::deep_copy(old, h);  // host -> host: the modes before
    for (std::size_t i = 0; i < h.extent(1); ++i)
      for (std::size_t j = 0; j < h.extent(2); ++j)
        for (int k = 0; k < 2; ++k) {
          C s = 0;
          for (int m = 0; m < 2; ++m) s += V[m * 2 + k] * C(old(m, i, j).real(), old(m, i, j).imag());
          h(k, i, j) = Complex<T>(s.real(), s.imag());
        }
    Kokkos::deep_copy(b.probe, h);  // host -> device: rotated probe
    r.solver_b->modes_recombined(space, V);
    return V;
  };
  auto const V1 = rotate(0.7, 0.3);
  auto const V2 = rotate(-0.4, 1.9);
  for (int e = 0; e < 2; ++e) {
    auto const [cost_a, cost_b] = r.epochs(1);
    EXPECT_NEAR(cost_b, cost_a, 1e-10 * cost_a) << "epoch " << e;
  }
  double const object_difference = relative_difference(object_on_host<T>(b.object), object_on_host<T>(a.object));
  // The probe of run a, rotated by V1 V2, against run b's.
  HostComplex3 pa = probe_on_host<T>(a.probe), pb = probe_on_host<T>(b.probe);
  HostComplex3 expected("expected", pa.extent(0), pa.extent(1), pa.extent(2));
  for (std::size_t i = 0; i < pa.extent(1); ++i)
    for (std::size_t j = 0; j < pa.extent(2); ++j)
      for (int k = 0; k < 2; ++k) {
        C s = 0;
        for (int m = 0; m < 2; ++m) {
          C const v = V1[m * 2 + 0] * V2[0 * 2 + k] + V1[m * 2 + 1] * V2[1 * 2 + k];  // (V1 V2)(m, k)
          s += v * C(pa(m, i, j).real(), pa(m, i, j).imag());
        }
        expected(k, i, j) = Complex<double>(s.real(), s.imag());
      }
  double const probe_difference = relative_difference(pb, expected);
  std::printf("[ measured ] dm after a recombination: object difference %.2e, probe difference %.2e\n",
              object_difference, probe_difference);
  EXPECT_LT(object_difference, 1e-10);
  EXPECT_LT(probe_difference, 1e-10);
}

// DM carries the next epoch's first object sums over from the Fourier step
// (formed with the probe of that step). A probe rescaled between epochs, as
// Reconstruction does every rescale_every epochs (P c, O / c: the same exit
// waves), must not reuse them: the run then follows the unscaled one up to
// the scale. With the stale sums the object comes out c times too large.
TEST(ModeBasis, DifferenceMapFollowsARescaledProbe) {
  using T = double;
  TwoDifferenceMaps r;
  ASSERT_FALSE(r.o.object_clip);  // a clip would not commute with the scale
  auto& space = r.space;
  auto& b = r.b;
  auto& a = r.a;
  double const c = 1.7;
  scale(space, b.probe, T(c));
  scale(space, b.object, T(1 / c));
  r.epochs(2);
  scale(space, b.probe, T(1 / c));
  scale(space, b.object, T(c));
  double const object_difference = relative_difference(object_on_host<T>(b.object), object_on_host<T>(a.object));
  double const probe_difference = relative_difference(probe_on_host<T>(b.probe), probe_on_host<T>(a.probe));
  std::printf("[ measured ] dm after a rescaled probe: object difference %.2e, probe difference %.2e\n",
              object_difference, probe_difference);
  EXPECT_LT(object_difference, 1e-10);
  EXPECT_LT(probe_difference, 1e-10);
}

// FFT planning: auto measures from 256 x 256 up; a measured plan computes the
// same transforms, so the reconstruction agrees with the estimated one up
// to float rounding (amplified a little by the iteration).
TEST(FFTPlanner, NamesAndEfforts) {
  EXPECT_EQ(parse_fft_planner("auto"), FFTPlanner::automatic);
  EXPECT_EQ(to_string(parse_fft_planner("measure")), "measure");
  EXPECT_EQ(plan_effort(FFTPlanner::automatic, 128), FFTPlanEffort::estimate);
  EXPECT_EQ(plan_effort(FFTPlanner::automatic, 256), FFTPlanEffort::measure);
  EXPECT_EQ(plan_effort(FFTPlanner::estimate, 512), FFTPlanEffort::estimate);
  EXPECT_EQ(plan_effort(FFTPlanner::measure, 64), FFTPlanEffort::measure);
  EXPECT_THROW(parse_fft_planner("fastest"), UserError);
}

TEST(FFTPlanner, MeasuredPlansReconstructTheSame) {
  SolverOptions estimate = solver_options("rpie", 10);
  estimate.fft_planner = FFTPlanner::estimate;
  SolverOptions measure = estimate;
  measure.fft_planner = FFTPlanner::measure;
  RunResult const a = reconstruct<float>(default_dataset(), estimate);
  RunResult const b = reconstruct<float>(default_dataset(), measure);
  EXPECT_LT(relative_difference(a.object, b.object), 1e-2);
  EXPECT_NEAR(a.error, b.error, 0.02 * a.error);
}

// ---------------------------------------------------------------------------
// Poisson noise model (LSQML and rPIE).

TEST(NoiseModel, PoissonConverges) {
  // Measured after 50 epochs: lsqml 0.0544, rpie 0.0521 (0.0647 and 0.0644
  // before momentum; gaussian: 0.0603, 0.0581); cost ratios 0.047 and 0.045. (LSQML took 0.0435
  // here while it fitted its steps to the whole Poisson gradient, twice the
  // modulus step: faster at these high counts, worse at low ones; see
  // PoissonMatchesGaussianAtLowCounts.)
  std::tuple<char const*, int, double> const cases[] = {{"lsqml", 50, 0.075}, {"rpie", 50, 0.08}};
  for (auto const& [solver, epochs, max_error] : cases) {
    SolverOptions o = solver_options(solver, epochs);
    o.noise = NoiseModel::poisson;
    RunResult const& run = cached_run<float>(std::string("poisson_") + solver, default_dataset(), o);
    std::printf("%s poisson: cost ratio %.4f, error %.4f after %d epochs\n", solver,
                mean_of_last(run.cost, 5) / run.cost.front(), run.error, epochs);
    SCOPED_TRACE(solver);
    expect_converged(run, 0.1, max_error);
  }
}

TEST(NoiseModel, PoissonMatchesGaussianAtLowCounts) {
  // 1e4 photons per frame (about 2.5 per pixel). The Poisson direction
  // d / I - 1 is twice the modulus step near the solution; exit_wave_update
  // halves it for every solver. LSQML fitted its step lengths to the whole
  // one before and overshot: 0.1495 against the Gaussian model's 0.1260
  // after 50 epochs (0.150-0.180 from 30 to 200 epochs, growing with 1
  // mode). Halved: 0.1272.
  SimulationOptions sim = default_simulation();
  sim.photons = 1e4;
  Dataset const& d = dataset("low_counts", sim);
  SolverOptions o = solver_options("lsqml", 50);
  RunResult const gaussian = reconstruct<float>(d, o);
  o.noise = NoiseModel::poisson;
  RunResult const poisson = reconstruct<float>(d, o);
  std::printf("lsqml at 1e4 photons per frame, 50 epochs: error %.4f poisson, %.4f gaussian\n", poisson.error,
              gaussian.error);
  expect_converged(poisson, 0.8, 0.14);  // at these counts the cost falls by 40 % only
  EXPECT_LT(poisson.error, 1.05 * gaussian.error);
}

// DM at 1e4 photons per frame. PtyPy's power bound, scaled to the brightest
// frame, is 0.007 of the counting noise per pixel there, and DM chased the
// noise: object error 0.266 after 100 epochs, the cost down to 0.72 of the
// first epoch's. Held at 0.1 of the noise or more (power_bound.hpp): 0.160
// and 0.35 (LSQML: 0.126 after 50 epochs, above).
TEST(NoiseModel, DifferenceMapAtLowCountsKeepsClearOfTheNoise) {
  SimulationOptions sim = default_simulation();
  sim.photons = 1e4;
  Dataset const& d = dataset("low_counts", sim);
  RunResult const run = reconstruct<float>(d, solver_options("dm", 100));
  std::printf("dm at 1e4 photons per frame, 100 epochs: error %.4f, cost ratio %.4f\n", run.error,
              mean_of_last(run.cost, 5) / run.cost.front());
  expect_converged(run, 0.5, 0.2);
}

// DM on frames in other units. Told their units per photon, DM runs as on
// the counts (the counting noise, and so the bound, scale with them): the
// same object to float rounding. Frames with fractions whose units are not
// known (adu_per_photon 0, as the driver finds normalised floats) take
// PtyPy's bound, which scales with the frames. Held to a floor computed as
// if they were photons, the frames times 1e-4 had ended at 0.356 after 60
// epochs of `ptyko simulate`'s scan, against 0.064 on its counts.
TEST(NoiseModel, DifferenceMapInOtherUnits) {
  Dataset const& d = default_dataset();
  SolverOptions const o = solver_options("dm", 40);
  RunResult const counts = reconstruct<float>(d, o);
  RunResult const told = reconstruct<float>(d, o, false, {}, Units{12.5, 12.5});
  RunResult const normalised = reconstruct<float>(d, o, false, {}, Units{1e-4, 0});
  RunResult const wrong = reconstruct<float>(d, o, false, {}, Units{1e-4, 1});
  std::printf("dm, 40 epochs: error %.4f on counts, %.4f x 12.5 told so, %.4f x 1e-4 units unknown, %.4f x 1e-4 "
              "taken for photons\n",
              counts.error, told.error, normalised.error, wrong.error);
  EXPECT_LT(std::abs(told.error - counts.error), 0.02 * counts.error);
  EXPECT_LT(normalised.error, 1.3 * counts.error);
  EXPECT_GT(wrong.error, 2 * counts.error);  // what the units are for
}

// ---------------------------------------------------------------------------
// Masked detector pixels: 5 % dead pixels (reading 0, masked in the file).

TEST(Mask, DeadPixelsAreIgnored) {
  SimulationOptions sim = default_simulation();
  sim.dead_pixel_fraction = 0.05;
  Dataset const& d = dataset("dead_pixels", sim);
  ASSERT_TRUE(d.layout.info.has_mask);
  SolverOptions const o = solver_options("rpie", 40);
  RunResult const& masked = cached_run<float>("mask_rpie", d, o);
  RunResult const& clean = cached_run<float>("mask_clean_rpie", default_dataset(), o);
  // The same data with the mask thrown away: dead pixels then read as
  // measured zeros, which the solver tries to fit.
  RunResult const unmasked = reconstruct<float>(d, o, true);
  std::printf("rpie %d epochs: error %.4f with 5 %% dead pixels masked, %.4f without dead pixels, %.4f with "
              "the mask ignored\n",
              o.epochs, masked.error, clean.error, unmasked.error);
  // Measured: 0.0700 masked, 0.0657 on the same scan without dead pixels,
  // 0.2548 when the mask is ignored (its cost stalls at ~9x the masked one;
  // before momentum 0.0874, 0.0783, 0.2641).
  expect_converged(masked, 0.1, 0.1);
  EXPECT_LT(masked.error, 1.25 * clean.error);
  EXPECT_GT(unmasked.error, 2 * masked.error);
}

// A masked centre (a beam stop, or a saturated direct beam masked) hides a
// large share of the beam's counts. The probe is scaled to the counts on the
// measured pixels and its start interpolates the hidden centre
// (masked_power.hpp), so its power stays what the whole detector gives.
TEST(Mask, MaskedCentreKeepsTheProbePower) {
  Dataset const& d = default_dataset();
  Exec space;
  LocalSync<float, Exec> sync;
  auto const& layout = d.layout;
  int const H = layout.grid.height, W = layout.grid.width, D = layout.info.ny;
  std::vector<std::size_t> ids(layout.info.frames);
  std::iota(ids.begin(), ids.end(), std::size_t(0));
  auto data = load_local_data<float, Exec>(space, layout, ids, 0, 0, H, W, LoadOptions{});
  double const diameter = default_probe_diameter(typical_step(layout.positions_px), D);
  auto const power_of_start = [&] {
    auto const state = initial_state<float, Exec>(space, data, sync, H, W, HostComplex3(), 2, 1, diameter);
    auto const p = mode_powers<float>(space, state.probe);
    return p[0] + p[1];
  };
  double const whole = power_of_start();
  // The 11 x 11 pixels around the beam (corner-centred): about 40 % of the
  // simulated pupil's disc.
  MaskView<Exec::memory_space> mask("mask", D, D);
  auto h = Kokkos::create_mirror_view(mask);
  for (int y = 0; y < D; ++y)
    for (int x = 0; x < D; ++x) {
      int const ky = y < D / 2 ? y : y - D, kx = x < D / 2 ? x : x - D;
      h(y, x) = std::abs(ky) <= 5 && std::abs(kx) <= 5 ? 0 : 1;
    }
  Kokkos::deep_copy(mask, h);
  data.mask = mask;
  double const hidden = power_of_start();
  std::printf("probe power of the start: %.6g on the whole detector, %.6g with its centre masked\n", whole, hidden);
  // Measured: 1.000e6 and 1.037e6; scaled to the measured counts alone, as
  // before 2026-12-05, 0.59e6.
  EXPECT_NEAR(hidden / whole, 1.0, 0.1);
}

// ---------------------------------------------------------------------------
// The computed initial probe (no probe guess in the file) must start on the
// side of the focus the data hold. A sample downstream of the focus sees the
// complex conjugate of the probe upstream (mirrored through its centre): the
// twin, which gives the same mean pattern. A start defocused to the wrong
// side stays with the twin; until 2026-12-05 the start assumed the upstream
// side, the side ptyko's simulator also used, so the defaults passed their
// own data and failed the other side's. choose_probe_start's trial picks
// the side; measured on the downstream data: rPIE 0.0304, LSQML 0.0339, DM
// 0.0614 (100, 100, 60 epochs), as on the upstream data.

TEST(ProbeStart, EitherSideOfTheFocusConverges) {
  SimulationOptions sim = default_simulation();
  sim.diverging_probe = true;
  Dataset const& downstream = dataset("diverging", sim);
  // Limits as SolverConvergence's on the upstream data (default_dataset).
  std::tuple<char const*, int, double> const cases[] = {
      {"rpie", 100, 0.05}, {"lsqml", 100, 0.05}, {"dm", 60, 0.075}};
  for (auto const& [solver, epochs, max_error] : cases) {
    RunResult const& run = cached_run<float>(std::string("diverging_") + solver, downstream,
                                             solver_options(solver, epochs));
    std::printf("%s, sample downstream of the focus: trial costs %.4g upstream, %.4g downstream; cost ratio %.4f, "
                "error %.4f after %d epochs\n",
                solver, run.start.upstream_cost, run.start.downstream_cost,
                mean_of_last(run.cost, 5) / run.cost.front(), run.error, epochs);
    SCOPED_TRACE(solver);
    EXPECT_EQ(run.start.start.focus, ProbeFocus::downstream);
    // Measured: the wrong side's trial ends 16-20 times higher (ptyko's start of
    // 2026-12-04, always upstream, reached rPIE 0.145 and DM 0.171 here).
    EXPECT_GT(run.start.upstream_cost, 3 * run.start.downstream_cost);
    expect_converged(run, 0.1, max_error);
  }
  // The upstream data pick the upstream side.
  RunResult const& upstream = solver_run(solver_cases[0]);
  std::printf("upstream data: trial costs %.4g upstream, %.4g downstream\n", upstream.start.upstream_cost,
              upstream.start.downstream_cost);
  EXPECT_EQ(upstream.start.start.focus, ProbeFocus::upstream);
  EXPECT_GT(upstream.start.downstream_cost, 3 * upstream.start.upstream_cost);
}

// A scan stepped far finer than a 70 % overlap design (4 px steps under a
// 38 px probe): the start sized for 70 % overlap is a third of the probe,
// and the trial's larger starts fit the first epochs better. ptyko's
// simulated probe still recovers from the small start here (on an
// independent simulator's 38 px probe it did not: object error 0.21 against
// 0.033, docs/solvers.md), but later. Measured (rPIE, 60 epochs): the trial
// picks 31.8 px upstream of the 12.7 px of 70 % overlap and reaches 0.0281;
// from the 12.7 px start alone 0.0370.
TEST(ProbeStart, AFinelySteppedScanChoosesALargerStart) {
  SimulationOptions sim = default_simulation();
  sim.step_px = 4;
  sim.probe_diameter_fraction = 0.6;
  Dataset const& d = dataset("fine_steps", sim);
  SolverOptions const options = solver_options("rpie", 60);
  RunResult const chosen = reconstruct<float>(d, options);
  RunResult const scan_sized = reconstruct<float>(d, options, false, both_sides(d));
  std::printf("fine steps: start %.3g px (%s) of %.3g px for 70 %% overlap; error %.4f, from the 70 %% start %.4f\n",
              chosen.start.start.diameter, to_string(chosen.start.start.focus).c_str(), scan_probe_diameter(d),
              chosen.error, scan_sized.error);
  EXPECT_GT(chosen.start.start.diameter, 1.5 * scan_probe_diameter(d));
  EXPECT_EQ(chosen.start.start.focus, ProbeFocus::upstream);
  EXPECT_LT(chosen.error, 0.04);
  EXPECT_LT(chosen.error, scan_sized.error);
}

// A scan of more frames than the trial takes tries a compact part of itself
// (core/probe_focus.hpp): the part tells the sides apart as the whole does
// (measured on 128 of the 400 frames: 4.5 and 5.7 times the cost from the
// wrong side after 3 epochs; 16-20 times on all of them).
TEST(ProbeStart, APartOfTheScanChoosesTheSide) {
  SimulationOptions sim = default_simulation();
  sim.diverging_probe = true;
  std::pair<Dataset const*, ProbeFocus> const cases[] = {{&default_dataset(), ProbeFocus::upstream},
                                                         {&dataset("diverging", sim), ProbeFocus::downstream}};
  Exec space;
  LocalSync<float, Exec> sync;
  for (auto const& [d, side] : cases) {
    auto const data = all_frames<float>(space, *d);
    int const part = 128;
    ASSERT_GT(data.local_frames(), part);
    ProbeStartTrial const trial =
        choose_probe_start<float, Exec>(space, data, sync, d->layout.grid.height, d->layout.grid.width,
                                        solver_options("rpie", 1), both_sides(*d), d->layout.positions_px, {}, part);
    std::printf("%s data, trial on %zu of %d frames: costs %.4g upstream, %.4g downstream after %d epochs\n",
                side == ProbeFocus::upstream ? "upstream" : "downstream", trial.frames, data.local_frames(),
                trial.upstream_cost, trial.downstream_cost, trial.epochs);
    SCOPED_TRACE(side == ProbeFocus::upstream ? "upstream data" : "downstream data");
    EXPECT_EQ(trial.frames, std::size_t(part));
    EXPECT_EQ(trial.start.focus, side);
    double const right = side == ProbeFocus::upstream ? trial.upstream_cost : trial.downstream_cost;
    double const wrong = side == ProbeFocus::upstream ? trial.downstream_cost : trial.upstream_cost;
    EXPECT_GT(wrong, 3 * right);
  }
}

// A part of the scan that holds nothing to tell the sides apart (its frames
// all the scan's mean pattern, as over a blank support film) leaves the
// choice to the whole scan.
TEST(ProbeStart, AnUndecidedPartLeavesTheChoiceToTheWholeScan) {
  SimulationOptions sim = default_simulation();
  sim.diverging_probe = true;
  int const part = 128;
  Dataset const& d = dataset("diverging_blank_middle", sim, [&](CxiContents& c) {
    std::size_t const n = c.frames.extent(0), pixels = c.frames.extent(1) * c.frames.extent(2);
    std::vector<std::size_t> all(n);
    std::iota(all.begin(), all.end(), std::size_t(0));
    std::vector<double> mean(pixels, 0.0);
    for (std::size_t f = 0; f < n; ++f)
      for (std::size_t k = 0; k < pixels; ++k) mean[k] += c.frames.data()[f * pixels + k] / double(n);
    for (std::size_t f : compact_frames(c.truth->positions_px, all, part))
      for (std::size_t k = 0; k < pixels; ++k) c.frames.data()[f * pixels + k] = float(std::round(mean[k]));
  });
  Exec space;
  LocalSync<float, Exec> sync;
  auto const data = all_frames<float>(space, d);
  ProbeStartTrial const trial =
      choose_probe_start<float, Exec>(space, data, sync, d.layout.grid.height, d.layout.grid.width,
                                      solver_options("rpie", 1), both_sides(d), d.layout.positions_px, {}, part);
  std::printf("blank middle: %zu frames undecided, then %zu frames: costs %.4g upstream, %.4g downstream after %d "
              "epochs\n",
              trial.undecided_frames, trial.frames, trial.upstream_cost, trial.downstream_cost, trial.epochs);
  EXPECT_EQ(trial.undecided_frames, std::size_t(part));
  EXPECT_EQ(trial.frames, std::size_t(data.local_frames()));
  EXPECT_EQ(trial.start.focus, ProbeFocus::downstream);
  EXPECT_GT(trial.upstream_cost, 2 * trial.downstream_cost);
}

}  // namespace
