// Strategy benchmark under mpiexec: seconds and bytes per epoch for
// full-sync and neighbor (sync-every 1 and 4) at the rank count it is
// launched with, epochs to reach a fixed object error, and the
// communication model (comm_model.hpp) next to the bytes measured.
//
//   mpiexec -n P strategy_bench [--solvers lsqml,rpie,dm] [--epochs 30]
//       [--target-error 0.1] [--error-every 1] [--frames 400] [--detector 128]
//       [--modes 2] [--strategies full-sync,neighbor:1,neighbor:4] [--no-header]
//       [--verbose]   (per-epoch time, bytes and error on stderr)
//       [--breakdown] (per-kernel time, MPI calls and host waits per rank, epochs 3 and later: kernel_profiler.hpp)
//
// Dataset: the standard simulated one (bench_run.hpp), written once by rank 0
// to a temporary CXI file; every rank reads only its own frames. Single
// precision. A run is assembled like `ptyko reconstruct` (make_strategy ->
// load_local_data of the rank's frames and tile -> initial_state ->
// Reconstruction); setup traffic (mean pattern) is not counted.
//
// Per epoch: the time of the slowest rank (Reconstruction::step's wall time)
// and the bytes each rank moved (Communicator's count: ring all-reduce
// 4 (P-1)/P of the buffer, point-to-point messages at both ends). The error
// against the simulation's truth is measured after the epochs it is asked
// for (gather_object, outside the timing; its traffic is not counted).
// Output (rank 0): one markdown table row per (solver, strategy), with
//   s/epoch       median over epochs of the slowest rank's epoch time
//   MB/epoch      bytes per rank per epoch (mean over ranks; max in brackets),
//                 median over epochs
//   model         comm_model.hpp on the exact partition (partition_scan
//                 tiles and overlaps) and on the analytic geometry
//   tile          object pixels a rank holds (largest rank)
//   RSS           resident memory at the end of the run (largest rank)
//   epochs to err epochs until the object error first reaches --target-error
//
// With P = 4 on a 2-core machine the ranks share cores: times then show the
// oversubscription, bytes do not depend on it.

#include "bench_run.hpp"
#include "comm_model.hpp"
#include "exact_partition_model.hpp"
#include "kernel_profiler.hpp"

#include <ptyko/core/illumination.hpp>
#include <ptyko/core/metrics.hpp>
#include <ptyko/parallel/communicator.hpp>
#include <ptyko/parallel/environment.hpp>
#include <ptyko/parallel/strategy.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

static_assert(ptyko::bench::step_rows_limit == ptyko::lsqml_step_rows_limit,
              "comm_model.hpp models LSQML's step sums with core's limit");

namespace {

using namespace ptyko;
using namespace ptyko::bench;
using namespace ptyko::parallel;
using T = float;

std::vector<std::string> split(std::string const& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

struct Config {
  std::vector<std::string> solvers{"lsqml"};
  std::vector<std::string> strategies{"full-sync", "neighbor:1", "neighbor:4"};
  int epochs = 30, error_every = 1, frames = 400, detector = 128, modes = 2;
  double target_error = 0.1;
  bool header = true, verbose = false, breakdown = false;
};

struct Row {
  std::string solver, strategy;
  int sync_every = 1;
  double seconds = 0, bytes_mean = 0, bytes_max = 0, model_exact = 0, model_analytic = 0;
  double tile = 0, rss = 0;
  int epochs_to_target = -1;
  double final_error = std::nan("");
};

/// Object error against the truth (rank 0).
class Truth {
 public:
  Truth(ScanLayout const& layout, bool root) {
    if (!root) return;
    auto t = cxi_read_truth(layout.info);
    PTYKO_REQUIRE(t.has_value(), "strategy_bench: the dataset has no truth");
    m_truth = std::move(*t);
    m_illumination = illumination_map(m_truth.probe, m_truth.positions_px, layout.grid.height, layout.grid.width);
  }
  double error(HostComplex2 const& object) const { return object_error(object, m_truth.object, m_illumination).nrmse; }

 private:
  CxiTruth m_truth;
  HostRealImage m_illumination;
};

/// Rank 0 prints every rank's exclusive time per kernel and region (ms per
/// profiled epoch), the kernels that take at least 1 % of some rank's time,
/// then every rank's waits for the device (fences) per epoch by name: on a
/// GPU each is a round trip, and what several ranks sum over MPI goes
/// through the host.
void print_breakdown(Communicator const& world, KernelProfiler const& prof, int epochs, std::string const& what) {
  std::string mine;
  for (auto const& e : prof.entries()) mine += e.name + '\t' + std::to_string(1e3 * e.seconds / std::max(1, epochs)) + '\n';
  std::string const wait_tag = "[wait] ", calls_tag = "[calls] ", mpi = "[region] ptyko::MPI::";
  for (auto const& [name, count] : prof.fences())
    mine += wait_tag + name + '\t' + std::to_string(double(count) / std::max(1, epochs)) + '\n';
  for (auto const& e : prof.entries())
    if (e.name.compare(0, mpi.size(), mpi) == 0)
      mine += calls_tag + e.name.substr(mpi.size()) + '\t' + std::to_string(double(e.calls) / std::max(1, epochs)) + '\n';
  std::vector<char> bytes(mine.begin(), mine.end());
  std::vector<std::size_t> offsets;
  auto const all = world.gather_bytes(bytes, offsets, 0);
  if (world.rank() != 0) return;
  int const P = world.size();
  std::map<std::string, std::vector<double>> table;  // name -> ms per rank
  std::map<std::string, std::vector<double>> waits;  // fence name -> count per epoch and rank
  std::map<std::string, std::vector<double>> calls;  // MPI call -> count per epoch and rank
  std::vector<double> total(std::size_t(P), 0.0);
  for (int r = 0; r < P; ++r) {
    std::size_t const end = r + 1 < P ? offsets[r + 1] : all.size();
    std::stringstream ss(std::string(all.data() + offsets[r], all.data() + end));
    std::string line;
    while (std::getline(ss, line)) {
      auto const tab = line.rfind('\t');
      if (tab == std::string::npos) continue;
      double const ms = std::stod(line.substr(tab + 1));
      std::string const name = line.substr(0, tab);
      bool const wait = name.compare(0, wait_tag.size(), wait_tag) == 0;
      bool const call = name.compare(0, calls_tag.size(), calls_tag) == 0;
      auto& v = wait ? waits[name.substr(wait_tag.size())] : call ? calls[name.substr(calls_tag.size())] : table[name];
      v.resize(std::size_t(P), 0.0);
      v[std::size_t(r)] = ms;
      if (!wait && !call) total[std::size_t(r)] += ms;
    }
  }
  std::vector<std::pair<double, std::string>> order;
  for (auto const& [name, v] : table) {
    double share = 0;
    for (int r = 0; r < P; ++r) share = std::max(share, total[std::size_t(r)] > 0 ? v[std::size_t(r)] / total[std::size_t(r)] : 0);
    if (share >= 0.01) order.push_back({-*std::max_element(v.begin(), v.end()), name});
  }
  std::sort(order.begin(), order.end());
  std::printf("\n#### %s, P = %d: ms per epoch by kernel and rank (exclusive, %d epochs)\n\n| kernel / region |", what.c_str(),
              P, epochs);
  for (int r = 0; r < P; ++r) std::printf(" rank %d |", r);
  std::printf("\n|---|");
  for (int r = 0; r < P; ++r) std::printf("---:|");
  std::printf("\n");
  for (auto const& [key, name] : order) {
    std::printf("| %s |", name.c_str());
    for (double ms : table[name]) std::printf(" %.2f |", ms);
    std::printf("\n");
  }
  std::printf("| **profiled total** |");
  for (double t : total) std::printf(" %.2f |", t);
  std::printf("\n");
  // Every collective is a point where all ranks meet: at scale its latency,
  // not its bytes, is what a batch pays.
  std::printf("\nMPI calls per epoch and rank:");
  for (auto const& [name, v] : calls) {
    std::printf(" %s", name.c_str());
    for (double n : v) std::printf(" %.0f", n);
    std::printf(";");
  }
  std::printf("\n");
#if KOKKOS_VERSION < 30500
  std::printf("\nHost waits (fences) per epoch: not reported by Kokkos before 3.5\n");
#else
  std::vector<double> all_waits(std::size_t(P), 0.0);
  for (auto const& [name, v] : waits)
    for (int r = 0; r < P; ++r) all_waits[std::size_t(r)] += v[std::size_t(r)];
  std::printf("\nHost waits (fences) per epoch and rank:");
  for (double n : all_waits) std::printf(" %.0f", n);
  std::printf("\n");
  if (!waits.empty()) {
    std::printf("\n| fence | per epoch, by rank |\n|---|---|\n");
    for (auto const& [name, v] : waits) {
      std::printf("| %s |", name.c_str());
      for (double n : v) std::printf(" %.1f", n);
      std::printf(" |\n");
    }
  }
#endif
  std::fflush(stdout);
}

Row run(Config const& cfg, ScanLayout const& layout, Truth const& truth, std::string const& solver,
        std::string const& strategy_spec) {
  Exec space;
  auto world = Communicator::world();  // for the statistics; the strategy gets its own copy
  auto stats = Communicator::world();
  int const P = world.size();
  bool const root = world.rank() == 0;
  auto const parts = split(strategy_spec, ':');
  Row row;
  row.solver = solver;
  row.strategy = parts[0];
  row.sync_every = parts.size() > 1 ? std::stoi(parts[1]) : 1;

  StrategyOptions so;
  so.sync_every = row.sync_every;
  auto strategy = make_strategy<T, Exec>(row.strategy, world, layout, so);
  auto const& dec = strategy->decomposition();
  Share share{dec.frame_ids, dec.tile_y, dec.tile_x, dec.tile_height, dec.tile_width};
  auto opts = bench_options(solver, cfg.modes);
  opts.epochs = cfg.epochs;
  auto rec = assemble<T>(space, layout, share, *strategy, opts);
  strategy->take_bytes_moved();  // setup traffic is not an epoch's

  std::vector<double> seconds, bytes_mean, bytes_max;
  KernelProfiler prof;  // --breakdown: epochs 3 and later
  int profiled = 0;
  while (!rec->done()) {
    // The ranks start each epoch together: otherwise the others' first wait
    // for rank 0 (scoring the last epoch's object against the truth, 0.1 s
    // at 400 frames, seconds at 10 000) counts as their epoch time.
    stats.barrier();
    bool const profile = cfg.breakdown && rec->state().epoch >= 2;
    if (profile) prof.start();
    EpochReport const rep = rec->step();
    if (profile) prof.stop(), ++profiled;
    double v[2] = {rep.seconds, rep.bytes};
    double sum = rep.bytes;
    stats.allreduce(v, 2, Datatype::float64, ReduceOp::max);
    stats.allreduce(&sum, 1, Datatype::float64, ReduceOp::sum);
    seconds.push_back(v[0]);
    bytes_max.push_back(v[1]);
    bytes_mean.push_back(sum / P);
    bool const last = rec->done();
    if (last || (cfg.error_every > 0 && rep.epoch % cfg.error_every == 0)) {
      HostComplex2 object = strategy->gather_object(space, rec->state().object);  // collective
      strategy->take_bytes_moved();  // not an epoch's traffic
      if (root) {
        double const e = truth.error(object);
        if (row.epochs_to_target < 0 && e <= cfg.target_error) row.epochs_to_target = rep.epoch;
        if (last) row.final_error = e;
        if (cfg.verbose)
          std::fprintf(stderr, "%s %s P=%d epoch %d: %.3f s, %.3f MB, error %.4f\n", solver.c_str(),
                       strategy_spec.c_str(), P, rep.epoch, v[0], v[1] / 1e6, e);
      }
    }
  }
  if (cfg.breakdown) print_breakdown(world, prof, profiled, solver + " " + strategy_spec);
  row.seconds = median(seconds);
  row.bytes_mean = median(bytes_mean);
  row.bytes_max = median(bytes_max);
  double tr[2] = {double(dec.tile_height) * dec.tile_width, current_rss_bytes()};
  stats.allreduce(tr, 2, Datatype::float64, ReduceOp::max);
  row.tile = tr[0];
  row.rss = tr[1];

  // The model on the exact partition (mean over ranks, like bytes_mean) and
  // on the analytic geometry (rectangular tiles, estimated batch tiles).
  ModelInput in;
  in.frames = double(layout.positions_px.size());
  in.D = layout.info.ny;
  in.modes = cfg.modes;
  SolverOptions batch_options = opts;
  resolve_solver_defaults(batch_options, layout.positions_px.size());
  in.batch = batch_options.batch_size;
  in.precision = sizeof(T);
  in.height = layout.grid.height;
  in.width = layout.grid.width;
  in.ranks = P;
  in.solver = solver;
  in.sync_every = row.sync_every;
  row.model_exact = ExactPartitionModel<T>(layout, batch_options, in, row.strategy).bytes_per_epoch();
  auto const g = analytic_geometry(in);
  row.model_analytic = model(in, row.strategy, g.tile_area, g.overlap_area).bytes_per_epoch;
  world.barrier();
  return row;
}

std::string mb(double b) { return fixed(b / 1e6, 3); }

}  // namespace

int main(int argc, char** argv) {
  parallel::Environment env(argc, argv);
  Config cfg;
  cfg.solvers = split(take_flag(argc, argv, "solvers", "lsqml"), ',');
  cfg.strategies = split(take_flag(argc, argv, "strategies", "full-sync,neighbor:1,neighbor:4"), ',');
  cfg.epochs = std::stoi(take_flag(argc, argv, "epochs", "30"));
  cfg.error_every = std::stoi(take_flag(argc, argv, "error-every", "1"));
  cfg.frames = std::stoi(take_flag(argc, argv, "frames", "400"));
  cfg.detector = std::stoi(take_flag(argc, argv, "detector", "128"));
  cfg.modes = std::stoi(take_flag(argc, argv, "modes", "2"));
  cfg.target_error = std::stod(take_flag(argc, argv, "target-error", "0.1"));
  cfg.header = take_flag(argc, argv, "no-header", "no") == "no";
  cfg.verbose = take_flag(argc, argv, "verbose", "no") != "no";
  cfg.breakdown = take_flag(argc, argv, "breakdown", "no") != "no";
  if (argc > 1) {
    if (env.rank() == 0) std::fprintf(stderr, "strategy_bench: unknown argument %s\n", argv[1]);
    return 2;
  }
  auto world = Communicator::world();
  bool const root = world.rank() == 0;
  int rc = 0;
  try {
    std::optional<SimulatedFile> file;
    char path[512] = {0};
    if (root) {
      file.emplace(standard_simulation(cfg.frames, cfg.detector, cfg.modes));
      std::snprintf(path, sizeof(path), "%s", file->path().c_str());
    }
    world.broadcast(path, sizeof(path), Datatype::byte, 0);
    ScanLayout const layout = read_scan_layout(path, {});
    Truth const truth(layout, root);
    std::vector<Row> rows;
    for (auto const& solver : cfg.solvers)
      for (auto const& s : cfg.strategies) rows.push_back(run(cfg, layout, truth, solver, s));
    world.barrier();
    if (root) {
      if (cfg.header) {
        std::printf("\n### Strategies (%zu frames %dx%d, %d modes, float32, object %dx%d, %d epochs; "
                    "error target %.3g)\n\n",
                    layout.positions_px.size(), layout.info.ny, layout.info.nx, cfg.modes, layout.grid.height,
                    layout.grid.width, cfg.epochs, cfg.target_error);
        std::printf("| P | solver | strategy | s/epoch | MB/epoch/rank mean (max) | model exact | model analytic | "
                    "tile px (max) | RSS MB (max) | epochs to err | final err |\n");
        std::printf("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      }
      for (auto const& r : rows) {
        std::string const name = r.strategy == "neighbor" ? "neighbor k=" + std::to_string(r.sync_every) : r.strategy;
        std::printf("| %d | %s | %s | %.3f | %s (%s) | %s | %s | %.0f | %.0f | %s | %.4f |\n", world.size(),
                    r.solver.c_str(), name.c_str(), r.seconds, mb(r.bytes_mean).c_str(), mb(r.bytes_max).c_str(),
                    mb(r.model_exact).c_str(), mb(r.model_analytic).c_str(), r.tile, r.rss / 1e6,
                    r.epochs_to_target < 0 ? (">" + std::to_string(cfg.epochs)).c_str()
                                           : std::to_string(r.epochs_to_target).c_str(),
                    r.final_error);
      }
      std::fflush(stdout);
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "strategy_bench (rank %d): %s\n", world.rank(), e.what());
    parallel::Environment::abort_all(1);
  }
  return rc;
}
