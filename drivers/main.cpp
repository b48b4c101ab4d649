// `ptyko`: performance-portable ptychography. Sub-commands:
//   simulate, info, reconstruct, view.
// Exit codes: 0 success, 1 internal error, 2 bad input or options,
// 128 + signal when a reconstruction stopped on SIGINT/SIGTERM/SIGUSR1 after
// writing a checkpoint.

#include "commands.hpp"

#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/environment.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <exception>

namespace {

// One line on stderr; with several ranks, every rank is then stopped so that
// none waits forever in a collective the failing one never reaches.
[[noreturn]] void fail(ptyko::parallel::Environment const* env, int code, char const* what) {
  if (!env || env->rank() == 0 || env->size() > 1) {
    std::fprintf(stderr, "ptyko: error: %s\n", what);
    std::fflush(stderr);
  }
  if (env && env->size() > 1) ptyko::parallel::Environment::abort_all(code);
  std::exit(code);
}

}  // namespace

std::vector<std::string>& ptyko::drivers::invocation() {
  static std::vector<std::string> args;
  return args;
}

int main(int argc, char** argv) {
  ptyko::drivers::invocation().assign(argv, argv + argc);
  std::unique_ptr<ptyko::parallel::Environment> env;
  try {
    env = std::make_unique<ptyko::parallel::Environment>(argc, argv);
    CLI::App app{"ptyko: performance-portable ptychography reconstruction (Kokkos + MPI)", "ptyko"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "ptyko 0.1.0");
    ptyko::drivers::Action action;
    ptyko::drivers::add_simulate(app, action);
    ptyko::drivers::add_info(app, action);
    ptyko::drivers::add_reconstruct(app, action);
    ptyko::drivers::add_view(app, action);
    try {
      app.parse(argc, argv);
    } catch (CLI::ParseError const& e) {
      if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
      // One line, like every other error; every rank parsed the same line.
      if (env->rank() == 0) {
        std::string where = "ptyko";
        for (auto const* sub : app.get_subcommands()) where += " " + sub->get_name();
        std::fprintf(stderr, "ptyko: error: %s (see %s --help)\n", e.what(), where.c_str());
      }
      return 2;
    }
    try {
      return action(*env);
    } catch (ptyko::drivers::Exit const& e) {
      return e.code;  // already reported, on every rank
    }
  } catch (ptyko::UserError const& e) {
    fail(env.get(), 2, e.what());
  } catch (std::exception const& e) {
    fail(env.get(), 1, (std::string("internal: ") + e.what()).c_str());
  }
}
