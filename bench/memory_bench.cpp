// Peak resident memory per rank of a reconstruction (issue 6: a 10 000-frame,
// 128 x 128 dataset), measured with getrusage(RUSAGE_SELF).ru_maxrss at each
// phase of a run assembled like `ptyko reconstruct`.
//
//   mpiexec -n P memory_bench [--frames 10000] [--detector 128] [--modes 2]
//       [--solver lsqml] [--strategy full-sync|neighbor] [--epochs 1]
//       [--dataset PATH] [--prepare]
//   --prepare   only simulate and write the dataset (when missing), then exit:
//               run it first, so that the simulation's memory stays out of the
//               measured process
//
// The dataset is simulated once and kept (default
// $PTYKO_BENCH_TMPDIR or /tmp, ptyko-bench-<frames>x<D>-m<M>.cxi) so that
// later runs only read it; it is never part of the repository. One solver
// per process: ru_maxrss is a high-water mark of the whole process.
// Prints one markdown table row per phase with the largest rank's peak RSS
// and the model of comm_model.hpp for the device buffers.

#include "bench_run.hpp"
#include "comm_model.hpp"

#include <ptyko/parallel/communicator.hpp>
#include <ptyko/parallel/environment.hpp>
#include <ptyko/parallel/strategy.hpp>

#include <cstdio>

namespace {

using namespace ptyko;
using namespace ptyko::bench;
using namespace ptyko::parallel;
using T = float;

}  // namespace

int main(int argc, char** argv) {
  parallel::Environment env(argc, argv);
  int const frames = std::stoi(take_flag(argc, argv, "frames", "10000"));
  int const detector = std::stoi(take_flag(argc, argv, "detector", "128"));
  int const modes = std::stoi(take_flag(argc, argv, "modes", "2"));
  std::string const solver = take_flag(argc, argv, "solver", "lsqml");
  std::string const strategy_name = take_flag(argc, argv, "strategy", "full-sync");
  int const epochs = std::stoi(take_flag(argc, argv, "epochs", "1"));
  std::string dataset = take_flag(argc, argv, "dataset", "");
  bool const prepare = take_flag(argc, argv, "prepare", "no") != "no";
  if (argc > 1) {
    if (env.rank() == 0) std::fprintf(stderr, "memory_bench: unknown argument %s\n", argv[1]);
    return 2;
  }
  if (dataset.empty())
    dataset = temp_dir() + "/ptyko-bench-" + std::to_string(frames) + "x" + std::to_string(detector) + "-m" +
              std::to_string(modes) + ".cxi";

  auto world = Communicator::world();
  auto stats = Communicator::world();
  bool const root = world.rank() == 0;
  struct Phase {
    std::string name;
    double rss, seconds;
  };
  std::vector<Phase> phases;
  auto const t0 = Clock::now();
  auto mark = [&](std::string name) {
    double v = peak_rss_bytes();
    stats.allreduce(&v, 1, Datatype::float64, ReduceOp::max);
    phases.push_back({std::move(name), v, std::chrono::duration<double>(Clock::now() - t0).count()});
  };
  try {
    if (prepare) {
      if (root && !std::filesystem::exists(dataset)) {
        SimulatedFile::cached(standard_simulation(frames, detector, modes), dataset);
        std::fprintf(stderr, "memory_bench: wrote %s\n", dataset.c_str());
      }
      world.barrier();
      return 0;
    }
    mark("start (MPI + Kokkos)");
    if (root && !std::filesystem::exists(dataset)) {
      // The simulation's own memory then shows in rank 0's high-water mark:
      // run once with --prepare first for a clean measurement.
      SimulatedFile::cached(standard_simulation(frames, detector, modes), dataset);
      std::fprintf(stderr, "memory_bench: wrote %s (its peak is included: use --prepare first)\n", dataset.c_str());
    }
    world.barrier();
    Exec space;
    ScanLayout const layout = read_scan_layout(dataset, {});
    mark("scan layout read");
    StrategyOptions so;
    auto strategy = make_strategy<T, Exec>(strategy_name, world, layout, so);
    auto const& dec = strategy->decomposition();
    Share share{dec.frame_ids, dec.tile_y, dec.tile_x, dec.tile_height, dec.tile_width};
    auto opts = bench_options(solver, modes);
    opts.epochs = epochs;
    auto data = load_share<T>(space, layout, share);
    mark("frames loaded");
    auto rec = assemble<T>(space, layout, share, std::move(data), *strategy, opts);
    mark("probe, object and solver set up");
    while (!rec->done()) rec->step();
    mark("after " + std::to_string(epochs) + " epoch(s)");

    ModelInput in;
    in.frames = frames;
    in.D = detector;
    in.modes = modes;
    in.batch = rec->options().batch_size;
    in.precision = sizeof(T);
    in.height = layout.grid.height;
    in.width = layout.grid.width;
    in.ranks = world.size();
    in.solver = solver;
    double const tile = double(dec.tile_height) * dec.tile_width;
    auto const m = model(in, strategy_name, tile, 0);
    if (root) {
      std::printf("\n### Peak resident memory per rank: %d frames %dx%d, %d modes, %s, %s, P = %d, object %dx%d\n\n",
                  frames, detector, detector, modes, solver.c_str(), strategy_name.c_str(), world.size(),
                  layout.grid.height, layout.grid.width);
      std::printf("| phase | peak RSS (largest rank) | elapsed s |\n|---|---:|---:|\n");
      for (auto const& p : phases)
        std::printf("| %s | %s | %.2f |\n", p.name.c_str(), si(p.rss, "B").c_str(), p.seconds);
      std::printf("\nmodel of the device buffers per rank (comm_model.hpp): %s; frames alone %s (uint16 counts)\n",
                  si(m.memory, "B").c_str(),
                  si(double(in.frame_bytes) * frames / world.size() * detector * detector, "B").c_str());
      std::printf("peak-rss %s %d %.0f\n", solver.c_str(), world.size(), phases.back().rss);
      std::fflush(stdout);
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "memory_bench (rank %d): %s\n", world.rank(), e.what());
    parallel::Environment::abort_all(1);
  }
  return 0;
}
