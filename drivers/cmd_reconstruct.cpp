// `ptyko reconstruct INPUT.cxi -o OUT.h5`: solver and parallel strategy
// picked at run time; one progress line per epoch on rank 0; warnings about
// suspicious data; checkpoints (every K epochs, on SIGINT/SIGTERM/SIGUSR1, at
// the end) from which `--resume` continues.
//
// This file holds the command: its options, the configuration (file, flags,
// checkpoint), and the views over the ranks. One view runs in view_run.cpp.

#include "agreed.hpp"
#include "commands.hpp"
#include "run_config.hpp"
#include "run_log.hpp"
#include "stop_signals.hpp"
#include "view_run.hpp"

#include <ptyko/core/checkpoint.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/communicator.hpp>
#include <ptyko/parallel/environment.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace ptyko::drivers {
namespace {

namespace fs = std::filesystem;
using parallel::Communicator;
using parallel::Datatype;
using parallel::ReduceOp;

// ------------------------------------------------------------------ views

// Several views (e.g. the angles of a tomography series): with P >= V ranks
// the ranks form V groups (MPI_Comm_split), one view each; with P < V every
// rank reconstructs whole views in turn on its own.
template <class T>
int run(RunConfig const& cfg, std::string const& resume_file, std::string const& resume_dir) {
  auto world = Communicator::world();
  int const P = world.size(), V = int(cfg.inputs.size());
  auto job_of = [&](int v) {
    ViewJob j;
    j.input = cfg.inputs[v];
    j.single = V == 1;
    j.output = j.single ? cfg.output : view_output(cfg, v);
    if (j.single) {
      j.resume = resume_file;
    } else {
      j.label = fs::path(j.input).stem().string();
      if (!resume_dir.empty() && is_checkpoint(j.output)) j.resume = j.output;
    }
    return j;
  };
  if (V == 1) {
    run_view<T>(world, cfg, job_of(0));
    return 0;
  }
  auto attempt = [&](Communicator const& comm, int v) {
    try {
      run_view<T>(comm, cfg, job_of(v));
      return 0;
    } catch (Exit const& e) {
      return e.code;
    }
  };
  int code = 0;
  if (P >= V) {
    int const view = int((long(world.rank()) * V) / P);  // contiguous groups, sizes differ by <= 1
    auto group = world.split(view, world.rank());
    code = attempt(group, view);
  } else {
    auto self = world.split(world.rank(), 0);
    for (int view = world.rank(); view < V; view += P) {
      code = std::max(code, attempt(self, view));
      if (code >= 128) break;  // stopped: the remaining views start on --resume
    }
  }
  world.allreduce(&code, 1, Datatype::int32, ReduceOp::max);
  if (code >= 128 && world.rank() == 0) {
    // The original command line with --resume FOLDER: finished views are
    // skipped, stopped ones continue, the others start.
    auto const& argv = invocation();
    std::vector<std::string> args;
    for (std::size_t k = 2; k < argv.size(); ++k) {
      if (argv[k] == "--resume") {
        ++k;
        continue;
      }
      if (argv[k].rfind("--resume=", 0) == 0) continue;
      args.push_back(argv[k]);
    }
    fmt::print(stderr, "ptyko: resume with: {}\n", resume_command(P, args, cfg.output));
  }
  if (code) throw Exit{code};
  return 0;
}

int reconstruct(parallel::Environment& env, ReconstructArgs const& args) {
  auto world = Communicator::world();
  RunConfig cfg;
  std::string resume_file, resume_dir, ignored_probe;
  agreed(world, [&] {
    std::error_code ec;
    if (!args.resume.empty()) {
      if (fs::is_directory(args.resume, ec)) {
        resume_dir = args.resume;
      } else {
        PTYKO_REQUIRE(fs::exists(args.resume, ec), "--resume ", args.resume, ": no such file");
        PTYKO_REQUIRE(is_checkpoint(args.resume), "--resume ", args.resume,
                      ": not a ptyko checkpoint (a result of ptyko reconstruct): nothing to resume from");
        resume_file = args.resume;
        Checkpoint const c = read_checkpoint(args.resume);
        apply_toml(cfg, c.result.config, args.resume + ":/reconstruction/config");
        cfg.output = args.resume;  // where it is now, not where it was written
        cfg.quiet = RunConfig().quiet;  // the terminal is this run's: only its own -q silences it
        if (!fs::exists(cfg.inputs.empty() ? std::string() : cfg.inputs[0], ec) && fs::exists(c.input, ec))
          cfg.inputs = {c.input};
        cfg.resumed_solver = cfg.solver.solver;
      }
    }
    auto const override_with_file_and_flags = [&](RunConfig& c) {
      if (!args.config_file.empty()) apply_toml_file(c, args.config_file);
      apply_command_line(c, args);
    };
    std::string const stored_probe = cfg.probe_guess;
    if (!resume_file.empty()) {  // another solver (DM, then LSQML) starts from its own defaults
      RunConfig next = cfg;
      override_with_file_and_flags(next);
      if (next.solver.solver != cfg.resumed_solver) forget_solver_defaults(cfg);
    }
    override_with_file_and_flags(cfg);
    // A resumed run continues the checkpoint's probe (--modes may change its
    // modes); another --probe would be silently unused, and stored as if used.
    if (!resume_file.empty() && absolute_file_spec(cfg.probe_guess) != absolute_file_spec(stored_probe)) {
      ignored_probe = cfg.probe_guess;
      cfg.probe_guess = stored_probe;
    }
    if (!resume_dir.empty() && cfg.output.empty()) cfg.output = resume_dir;
    if (args.print_config) return;
    finish_run_config(cfg);
    PTYKO_REQUIRE(resume_dir.empty() || cfg.inputs.size() > 1, "--resume ", resume_dir,
                  " is a folder: give the checkpoint file of the view to continue (or several inputs)");
    PTYKO_REQUIRE(resume_file.empty() || cfg.inputs.size() == 1, "--resume ", resume_file,
                  " is the checkpoint of one view: give one input");
  });
  if (args.print_config) {
    if (env.rank() == 0) fmt::print("{}", to_toml(cfg, true));
    return 0;
  }
  if (env.rank() == 0)
    for (auto const& line : unused_options(cfg, args.given)) fmt::print(stderr, "ptyko: warning: {}\n", line);
  if (!ignored_probe.empty() && env.rank() == 0)
    fmt::print(stderr,
               "ptyko: warning: --probe {}: not used: a resumed run continues the probe of {} (--modes may add or "
               "drop modes); to start from that probe, begin a new run without --resume\n",
               ignored_probe, resume_file);
  StopSignals signals(env.rank());
  // Ranks bound to fewer CPUs than their threads (said before any file is read).
  if (!env.cpu_warning().empty()) {
    fmt::print(stderr, "ptyko: warning: {}\n", env.cpu_warning());
    std::fflush(stderr);
  }
  return cfg.double_precision ? run<double>(cfg, resume_file, resume_dir) : run<float>(cfg, resume_file, resume_dir);
}

}  // namespace

void add_reconstruct(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("reconstruct", "Reconstruct object and probe from a CXI file");
  cmd->footer(
      "Every option can also sit in a TOML file (--config; --print-config writes one to start from); flags\n"
      "override it. The result OUT.h5 is also a checkpoint: --resume continues it. SIGINT, SIGTERM or SIGUSR1\n"
      "stop after the current epoch with a checkpoint (exit code 128 + signal).\n"
      "Examples:\n"
      "  ptyko reconstruct data.cxi -o out.h5\n"
      "  ptyko reconstruct data.cxi -o out.h5 --solver rpie --epochs 200 --batch-size 16\n"
      "  ptyko reconstruct --print-config > run.toml\n"
      "  ptyko reconstruct --config run.toml data.cxi -o out.h5 --checkpoint-every 20\n"
      "  ptyko reconstruct --resume out.h5 --epochs 400\n"
      "  mpiexec -n 4 ptyko reconstruct data.cxi -o out.h5 --sync-every 4   (approximate neighbour consensus)\n"
      "  mpiexec -n 8 ptyko reconstruct angle_*.cxi -o results/   (one result per view, 8 ranks shared)\n"
      "See docs/usage.md.");
  auto args = std::make_shared<ReconstructArgs>();
  add_run_options(*cmd, *args);
  cmd->callback([&action, args] {
    action = [args](parallel::Environment& env) { return reconstruct(env, *args); };
  });
}

}  // namespace ptyko::drivers
