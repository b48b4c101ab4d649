#pragma once
// Sub-commands of the `ptyko` executable. Each registers its options on a
// CLI11 sub-app and sets the action main() runs after parsing.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ptyko::parallel {
class Environment;
}

namespace ptyko::drivers {

/// What a sub-command runs once its options are parsed; returns the exit code.
using Action = std::function<int(parallel::Environment&)>;

/// Thrown, on every rank at once, by a sub-command that has already told the
/// user what happened (an error seen by one rank and agreed on by all, an
/// interruption): main() exits with `code` after a normal shutdown, without
/// MPI_Abort and without printing anything more.
struct Exit {
  int code;
};

/// The command line `ptyko` was started with (argv, before MPI and Kokkos
/// took their arguments), for messages saying how to run it again.
std::vector<std::string>& invocation();

void add_simulate(CLI::App& app, Action& action);
void add_info(CLI::App& app, Action& action);
void add_reconstruct(CLI::App& app, Action& action);
void add_view(CLI::App& app, Action& action);

}  // namespace ptyko::drivers
