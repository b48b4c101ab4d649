// Whole-epoch benchmark per solver, against the FFT floor (Google Benchmark).
//
// Dataset: ptyko::simulate, 128 x 128 detector, 2 probe modes, 400
// Fermat-spiral positions at 70 % overlap (bench_run.hpp), written once to a
// temporary CXI file; single precision; one process, LocalSync; each
// solver's default batch size (rPIE/LSQML 16, DM/RAAR chunks of 64) unless
// --batch gives one (a device wants larger batches than a CPU core).
//
// Timing: --timer=auto|wall|cpu as in kernel_bench (auto: process CPU time
// on the Serial backend, wall time otherwise).
// Each benchmark iteration is one Reconstruction::step() (the epoch as
// `ptyko reconstruct` runs it, including mode orthogonalisation and the
// probe/object rescaling), fenced and manually timed, after 3 warm-up
// epochs (DM starts updating the probe at epoch 2). Interleaved with each
// epoch, the FFT floor of that epoch is measured in the same process: the
// same number of batched FFTs (one forward and one inverse per frame per
// mode) with the same library (BatchedFFT2D, FFTNorm::none), in the epoch's
// batches and in the pipeline's chunks, the faster (FftFloor). Counters
// (medians over the iterations of a run):
//   epoch_s       seconds per epoch
//   floor_s       seconds of the FFT floor of an epoch
//   floor_ratio   median over iterations of epoch time / floor time
//   us/position   epoch time per scan position, microseconds
//   positions/s   rate
// DM evaluates its model cost every epoch by default (a third FFT per frame
// and mode): it is benchmarked with cost_every = 0 ("dm", which then reports
// the Fourier error of its projection) and with the default ("dm/cost_every:1").
//
//   epoch_bench [--frames N] [--detector D] [--modes M] [--epochs K] [--batch B]
//               [--all-solvers] [--solvers lsqml,rpie,dm,dm/cost_every:1,dm/overlap_passes:2,raar,epie,
//                                          lsqml/momentum:0,rpie/momentum:0]
//               [--dataset FILE.cxi] [--timer auto|wall|cpu] [--markdown] [--breakdown]
//               [Google Benchmark flags]
//   --batch       positions per batch (rPIE/LSQML) or per chunk (DM/RAAR);
//                 0: each solver's default
//   --dataset     a CXI file (e.g. memory_bench's 10 000-frame one) instead of the simulation
//   --breakdown   instead of the benchmarks: per-kernel exclusive time per epoch
//                 of each solver (Kokkos Tools callbacks, kernel_profiler.hpp)
//   --markdown    one markdown table, then one line per solver:
//                 floor-ratio <solver> <epoch time / FFT floor>

#include "bench_run.hpp"
#include "kernel_profiler.hpp"

#include <ptyko/core/sync.hpp>
#include <ptyko/kernels/kokkos_scope.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace {

using namespace ptyko;
using namespace ptyko::bench;
using T = float;

struct Config {
  int frames = 400, detector = 128, modes = 2, epochs = 5, warmup = 3;
  int batch = 0;                      ///< SolverOptions::batch_size; 0: the solver's default
  bool all_solvers = false;
  std::string dataset;                ///< a CXI file instead of the simulated one
  std::vector<std::string> only;      ///< variants to run (labels); empty: all
};
Config g_config;
std::unique_ptr<SimulatedFile> g_file;
std::unique_ptr<ScanLayout> g_layout;

struct Variant {
  std::string label, solver;
  int cost_every = 1;
  int overlap_passes = 1;  ///< DM/RAAR
  double momentum = -1;    ///< SolverOptions::momentum; < 0: the solver's default
};

SolverOptions options_of(Variant const& v) {
  auto opts = bench_options(v.solver, g_config.modes, v.cost_every);
  opts.batch_size = g_config.batch;
  opts.overlap_passes = v.overlap_passes;
  opts.momentum = v.momentum;
  return opts;
}

/// Per variant: every (epoch, floor) ratio measured over all repetitions.
std::map<std::string, std::vector<double>>& all_ratios() {
  static std::map<std::string, std::vector<double>> r;
  return r;
}

void BM_epoch(benchmark::State& state, Variant const& v) {
  Exec space;
  LocalSync<T, Exec> sync;
  auto const& layout = *g_layout;
  auto const opts = options_of(v);
  auto rec = assemble<T>(space, layout, Share::everything(layout), sync, opts);
  int const N = int(layout.positions_px.size());
  auto floor = epoch_fft_floor<T>(space, layout, opts, std::size_t(N), g_config.modes);
  for (int e = 0; e < g_config.warmup; ++e) rec->step();

  std::vector<double> epochs, floors, ratios;
  for (auto _ : state) {
    FencedTimer t(space);
    rec->step();
    double const s = t.stop();
    state.SetIterationTime(s);
    double const f = floor.run(space);
    epochs.push_back(s);
    floors.push_back(f);
    ratios.push_back(s / f);
  }
  auto& keep = all_ratios()[v.label];
  keep.insert(keep.end(), ratios.begin(), ratios.end());
  using C = benchmark::Counter;
  double const epoch_s = median(epochs);
  state.counters["epoch_s"] = epoch_s;
  state.counters["floor_s"] = median(floors);
  state.counters["floor_ratio"] = median(ratios);
  state.counters["us/position"] = 1e6 * epoch_s / N;
  state.counters["positions/s"] = C(N, C::kIsIterationInvariantRate);
  state.counters["ffts/epoch"] = double(floor.transforms());
  state.SetLabel(std::to_string(N) + " frames " + std::to_string(layout.info.ny) + "^2, " +
                 std::to_string(g_config.modes) + " modes, batch " + std::to_string(rec->options().batch_size));
}

std::vector<Variant> variants() {
  std::vector<Variant> v{{"lsqml", "lsqml", 1}, {"rpie", "rpie", 1}, {"dm", "dm", 0}, {"dm/cost_every:1", "dm", 1}};
  // Run with --all-solvers or when named in --solvers.
  std::vector<Variant> const more{
      {"dm/overlap_passes:2", "dm", 0, 2},  // DM's default before docs/performance.md item 56
      {"raar", "raar", 0},
      {"epie", "epie", 1},
      {"lsqml/momentum:0", "lsqml", 1, 1, 0.0},  // without momentum (docs/performance.md item 80)
      {"rpie/momentum:0", "rpie", 1, 1, 0.0}};
  if (g_config.all_solvers || !g_config.only.empty()) v.insert(v.end(), more.begin(), more.end());
  if (!g_config.only.empty()) {
    std::vector<Variant> keep;
    for (auto const& x : v)
      if (std::find(g_config.only.begin(), g_config.only.end(), x.label) != g_config.only.end()) keep.push_back(x);
    v = keep;
  }
  return v;
}

// Per-kernel exclusive time per epoch for each solver.
void breakdown() {
  Exec space;
  auto const& layout = *g_layout;
  int const N = int(layout.positions_px.size());
  int const K = g_config.epochs;
  std::printf("\n### Time per epoch by kernel (exclusive; %d frames %dx%d, %d modes, float32, %d epochs after %d warm-up)\n",
              N, layout.info.ny, layout.info.nx, g_config.modes, K, g_config.warmup);
  std::printf("\n`[region] ptyko::FFT::*` is the FFT library itself; `[region] ptyko::Reconstruction::epoch` is host "
              "code of the solver between kernels.\n");
  for (auto const& v : variants()) {
    LocalSync<T, Exec> sync;
    auto const opts = options_of(v);
    auto rec = assemble<T>(space, layout, Share::everything(layout), sync, opts);
    auto floor = epoch_fft_floor<T>(space, layout, opts, std::size_t(N), g_config.modes);
    for (int e = 0; e < g_config.warmup; ++e) rec->step();
    std::vector<double> floors;
    for (int e = 0; e < K; ++e) floors.push_back(floor.run(space));
    KernelProfiler prof;
    FencedTimer t(space);
    prof.start();
    for (int e = 0; e < K; ++e) rec->step();
    prof.stop();
    double const total = t.stop() / K;
    double const fl = median(floors);
    std::printf("\n#### %s, batch %d: %.1f ms/epoch, FFT floor %.1f ms, ratio %.2f (profiled; %s)\n\n",
                v.label.c_str(), rec->options().batch_size, 1e3 * total, 1e3 * fl, total / fl,
                device_launches_v ? "the device fenced at every kernel: serialised" : "callbacks add a little");
    std::printf("| kernel / region | calls/epoch | ms/epoch | %% of epoch |\n|---|---:|---:|---:|\n");
    double shown = 0;
    for (auto const& e : prof.entries()) {
      double const ms = 1e3 * e.seconds / K;
      if (e.seconds / K < 0.002 * total) continue;
      shown += e.seconds / K;
      std::printf("| %s | %.0f | %.2f | %.1f |\n", e.name.c_str(), double(e.calls) / K, ms, 100 * e.seconds / K / total);
    }
    std::printf("| (others, each < 0.2 %%) | | %.2f | %.1f |\n", 1e3 * (prof.total_seconds() / K - shown),
                100 * (prof.total_seconds() / K - shown) / total);
    // Where the host waits for the device: on a GPU each is a round trip.
#if KOKKOS_VERSION < 30500
    std::printf("\nHost waits (fences) per epoch: not reported by Kokkos before 3.5\n");
#else
    std::printf("\nHost waits (fences) per epoch: %.0f\n\n", double(prof.fence_count()) / K);
#endif
    if (prof.fence_count() > 0) {
      std::printf("| fence | calls/epoch |\n|---|---:|\n");
      for (auto const& [name, count] : prof.fences()) std::printf("| %s | %.1f |\n", name.c_str(), double(count) / K);
    }
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  ptyko::KokkosScope kokkos(argc, argv);  // a Threads build takes OMP_NUM_THREADS too
  g_config.frames = std::stoi(take_flag(argc, argv, "frames", "400"));
  g_config.detector = std::stoi(take_flag(argc, argv, "detector", "128"));
  g_config.modes = std::stoi(take_flag(argc, argv, "modes", "2"));
  g_config.epochs = std::stoi(take_flag(argc, argv, "epochs", "5"));
  g_config.warmup = std::stoi(take_flag(argc, argv, "warmup", "3"));
  g_config.batch = std::stoi(take_flag(argc, argv, "batch", "0"));
  g_config.all_solvers = take_flag(argc, argv, "all-solvers", "no") != "no";
  g_config.dataset = take_flag(argc, argv, "dataset", "");
  {
    std::string const only = take_flag(argc, argv, "solvers", "");
    std::stringstream ss(only);
    std::string item;
    while (std::getline(ss, item, ',')) if (!item.empty()) g_config.only.push_back(item);
  }
  set_timer(bench::take_flag(argc, argv, "timer", "auto"));
  bool const markdown = take_flag(argc, argv, "markdown", "no") != "no";
  bool const do_breakdown = take_flag(argc, argv, "breakdown", "no") != "no";
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  int rc = 0;
  try {
    if (g_config.dataset.empty())
      g_file = std::make_unique<SimulatedFile>(standard_simulation(g_config.frames, g_config.detector, g_config.modes));
    g_layout = std::make_unique<ScanLayout>(
        read_scan_layout(g_config.dataset.empty() ? g_file->path() : g_config.dataset, {}));
    g_config.frames = int(g_layout->positions_px.size());
    g_config.detector = g_layout->info.ny;
    if (do_breakdown) {
      breakdown();
    } else {
      add_context();
      benchmark::AddCustomContext("dataset", std::to_string(g_config.frames) + " frames " +
                                                 std::to_string(g_config.detector) + "x" +
                                                 std::to_string(g_config.detector) + ", " +
                                                 std::to_string(g_config.modes) + " modes, object " +
                                                 std::to_string(g_layout->grid.height) + "x" +
                                                 std::to_string(g_layout->grid.width));
      benchmark::AddCustomContext("precision", "float32");
      for (auto const& v : variants()) {
        benchmark::RegisterBenchmark(("epoch/" + v.label).c_str(), [v](benchmark::State& s) { BM_epoch(s, v); })
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond)
            ->Iterations(g_config.epochs);
      }
      if (markdown) {
        MarkdownReporter md("Epochs (" + std::to_string(g_config.frames) + " frames " +
                            std::to_string(g_config.detector) + "x" + std::to_string(g_config.detector) + ", " +
                            std::to_string(g_config.modes) + " modes, float32; median of repetitions)");
        benchmark::RunSpecifiedBenchmarks(&md);
        std::printf("\n");
        for (auto const& [label, r] : all_ratios())
          if (label.find('/') == std::string::npos) std::printf("floor-ratio %s %.3f\n", label.c_str(), median(r));
      } else {
        benchmark::RunSpecifiedBenchmarks();
      }
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "epoch_bench: %s\n", e.what());
    rc = 1;
  }
  g_layout.reset();
  g_file.reset();
  benchmark::Shutdown();
  return rc;
}
