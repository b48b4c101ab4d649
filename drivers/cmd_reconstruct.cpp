// `ptyko reconstruct INPUT.cxi -o OUT.h5`: solver and parallel strategy
// picked at run time; one progress line per epoch on rank 0.

#include "commands.hpp"
#include "run_config.hpp"

#include <ptyko/core/dataset.hpp>
#include <ptyko/core/illumination.hpp>
#include <ptyko/core/images.hpp>
#include <ptyko/core/metrics.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/core/result_file.hpp>
#include <ptyko/core/scan.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/environment.hpp>
#include <ptyko/parallel/strategy.hpp>

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>

namespace ptyko::drivers {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;

std::string format_duration(double s) {
  if (!std::isfinite(s)) return "?";
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{:.0f} min {:02.0f} s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f} h {:02.0f} min", std::floor(s / 3600), std::fmod(s / 60, 60));
}

std::string format_bytes(double b) {
  if (b < 1024) return fmt::format("{:.0f} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
  if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / 1024 / 1024);
  return fmt::format("{:.2f} GiB", b / 1024 / 1024 / 1024);
}

// Error of the gathered object against the file's truth (rank 0 only).
class TruthScore {
 public:
  TruthScore(ScanLayout const& layout, int rank) {
    if (rank != 0 || !layout.info.has_truth) return;
    m_truth = cxi_read_truth(layout.info);
    if (!m_truth) return;
    auto const& t = *m_truth;
    if (int(t.object.extent(0)) != layout.grid.height || int(t.object.extent(1)) != layout.grid.width) {
      fmt::print(stderr, "ptyko: warning: the truth object ({} x {}) is not on the reconstruction grid ({} x {}); "
                 "no error against it is reported\n", t.object.extent(0), t.object.extent(1), layout.grid.height,
                 layout.grid.width);
      m_truth.reset();
      return;
    }
    m_illumination = illumination_map(t.probe, t.positions_px, layout.grid.height, layout.grid.width);
  }
  bool active() const { return m_truth.has_value(); }
  double error(HostComplex2 const& object) const {
    return object_error(object, m_truth->object, m_illumination).nrmse;
  }

 private:
  std::optional<CxiTruth> m_truth;
  HostRealImage m_illumination;
};

// Reconstructs one view (one CXI file) on the ranks of `comm`.
template <class T>
void run_view(parallel::Communicator const& comm, RunConfig const& cfg, std::string const& input,
              std::string const& output) {
  Exec space;
  bool const root = comm.rank() == 0;
  ScanLayout const layout = read_scan_layout(input, cfg.load);
  parallel::StrategyOptions sopts;
  sopts.sync_every = cfg.sync_every;
  auto strategy = parallel::make_strategy<T, Exec>(cfg.strategy, comm, layout, sopts);
  auto const& dec = strategy->decomposition();

  auto data = load_local_data<T, Exec>(space, layout, dec.frame_ids, dec.tile_y, dec.tile_x, dec.tile_height,
                                       dec.tile_width, cfg.load);
  HostComplex3 guess = cxi_read_illumination(layout.info);
  double const diameter = cfg.probe_diameter > 0
                              ? cfg.probe_diameter
                              : default_probe_diameter(typical_step(layout.positions_px), layout.info.ny);
  auto state = initial_state<T, Exec>(space, data, *strategy, dec.tile_height, dec.tile_width, guess,
                                      cfg.solver.modes, cfg.solver.seed, diameter);
  state.tile_y = dec.tile_y;
  state.tile_x = dec.tile_x;
  Reconstruction<T, Exec> rec(space, std::move(data), std::move(state), cfg.solver, *strategy, layout.positions_px);
  SolverOptions const& opts = rec.options();

  TruthScore truth(layout, comm.rank());
  if (root && !cfg.quiet) {
    fmt::print("reconstruct: {} frames of {}x{} from {}, {} on {} rank(s) ({}), {} precision, {} mode(s)\n",
               layout.info.frames, layout.info.ny, layout.info.nx, input, opts.solver, comm.size(),
               strategy->name(), sizeof(T) == 4 ? "single" : "double", rec.state().modes());
    fmt::print("reconstruct: object {} x {} pixels of {:.4g} m, batch size {} ({}), noise {}\n", layout.grid.height,
               layout.grid.width, layout.grid.pixel_size_x, opts.batch_size, to_string(opts.batching),
               opts.noise == NoiseModel::gaussian ? "gaussian" : "poisson");
  }

  std::vector<double> errors;
  EpochReport last;
  double elapsed = 0;
  while (!rec.done()) {
    last = rec.step();
    elapsed += last.seconds;
    double error = std::nan("");
    // Every rank must take the same decision: gather_object is collective.
    bool const measure = layout.info.has_truth;
    bool const final_epoch = rec.done();
    if (measure && (final_epoch || (cfg.error_every > 0 && last.epoch % cfg.error_every == 0))) {
      HostComplex2 object = strategy->gather_object(space, rec.state().object);  // collective
      if (root && truth.active()) error = truth.error(object);
    }
    errors.push_back(error);
    if (root && !cfg.quiet) {
      double const eta = elapsed / last.epoch * (opts.epochs - last.epoch);
      std::string line = fmt::format("epoch {:>4}/{}  cost {:<11.5g} {:6.3f} s/epoch  ETA {}", last.epoch, opts.epochs,
                                     last.cost, last.seconds, format_duration(eta));
      if (comm.size() > 1) line += fmt::format("  moved {}", format_bytes(last.bytes));
      if (std::isfinite(error)) line += fmt::format("  error {:.4f}", error);
      fmt::print("{}\n", line);
      std::fflush(stdout);
    }
  }

  HostComplex2 object = strategy->gather_object(space, rec.state().object);
  HostComplex3 probe = strategy->probe_on_host(space, rec.state().probe);
  if (root) {
    ResultContents r;
    r.object = object;
    r.probe = probe;
    r.positions_px = layout.positions_px;
    r.object_pixel_size_m = {layout.grid.pixel_size_y, layout.grid.pixel_size_x};
    r.cost = rec.state().cost;
    r.noise_model = opts.noise == NoiseModel::gaussian ? "gaussian" : "poisson";
    r.epoch_seconds = rec.state().epoch_seconds;
    r.bytes_moved = rec.state().bytes_moved;
    r.mode_power_fractions = last.mode_power_fractions;
    if (truth.active()) r.object_error = errors;
    r.config = to_toml(cfg, opts, input, output);
    r.provenance = provenance(comm.size());
    write_result(output, r);
    std::vector<std::string> pictures;
    if (cfg.images)
      pictures = write_result_pictures(output, object, probe, r.mode_power_fractions, r.cost, r.noise_model);
    if (!cfg.quiet) {
      fmt::print("reconstruct: wrote {} after {} epochs in {}, final cost {:.5g}", output, rec.state().epoch,
                 format_duration(elapsed), rec.state().cost.empty() ? std::nan("") : rec.state().cost.back());
      if (truth.active() && !errors.empty() && std::isfinite(errors.back()))
        fmt::print(", error against the truth {:.4f}", errors.back());
      fmt::print("\n");
      for (auto const& p : pictures) fmt::print("reconstruct: wrote {}\n", p);
    }
  }
}

// Several views (e.g. the angles of a tomography series): with P >= V ranks
// the ranks form V groups (MPI_Comm_split), one view each; with P < V every
// rank reconstructs whole views in turn on its own.
template <class T>
int run(RunConfig const& cfg) {
  auto world = parallel::Communicator::world();
  int const P = world.size(), V = int(cfg.inputs.size());
  if (V == 1) {
    run_view<T>(world, cfg, cfg.inputs[0], cfg.output);
    return 0;
  }
  if (P >= V) {
    int const view = int((long(world.rank()) * V) / P);  // contiguous groups, sizes differ by <= 1
    auto group = world.split(view, world.rank());
    run_view<T>(group, cfg, cfg.inputs[view], view_output(cfg, view));
  } else {
    auto self = world.split(world.rank(), 0);
    for (int view = world.rank(); view < V; view += P) run_view<T>(self, cfg, cfg.inputs[view], view_output(cfg, view));
  }
  world.barrier();
  return 0;
}

}  // namespace

void add_reconstruct(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("reconstruct", "Reconstruct object and probe from a CXI file");
  cmd->footer(
      "Examples:\n"
      "  ptyko reconstruct data.cxi -o out.h5\n"
      "  ptyko reconstruct data.cxi -o out.h5 --solver rpie --epochs 200 --batch-size 16\n"
      "  mpiexec -n 4 ptyko reconstruct data.cxi -o out.h5 --strategy neighbor\n"
      "  mpiexec -n 8 ptyko reconstruct angle_*.cxi -o results/   (one result per view, 8 ranks shared)");
  auto cfg = std::make_shared<RunConfig>();
  add_run_options(*cmd, *cfg);
  cmd->callback([&action, cfg] {
    action = [cfg](parallel::Environment& env) {
      finish_run_config(*cfg);
      (void)env;
      return cfg->double_precision ? run<double>(*cfg) : run<float>(*cfg);
    };
  });
}

}  // namespace ptyko::drivers
