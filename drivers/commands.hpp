#pragma once
// Sub-commands of the `ptyko` executable. Each registers its options on a
// CLI11 sub-app and sets the action main() runs after parsing.

#include <CLI/CLI.hpp>

#include <functional>

namespace ptyko::parallel {
class Environment;
}

namespace ptyko::drivers {

/// What a sub-command runs once its options are parsed; returns the exit code.
using Action = std::function<int(parallel::Environment&)>;

void add_simulate(CLI::App& app, Action& action);
void add_info(CLI::App& app, Action& action);
void add_reconstruct(CLI::App& app, Action& action);
void add_view(CLI::App& app, Action& action);

}  // namespace ptyko::drivers
