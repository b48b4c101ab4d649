#pragma once
// The options of `ptyko reconstruct`, their command-line form, and their
// TOML text (stored in every result file).

#include <ptyko/core/dataset.hpp>
#include <ptyko/core/solver.hpp>

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace ptyko::drivers {

struct RunConfig {
  std::vector<std::string> inputs;  ///< one CXI file per view
  std::string list_file;            ///< a text file of inputs, one per line
  std::string output;               ///< result file, or folder for several views
  SolverOptions solver;
  LoadOptions load;
  std::string strategy = "full-sync";
  int sync_every = 1;
  bool double_precision = false;
  double probe_diameter = 0;  ///< initial probe size without a guess (0: from the scan step)
  int error_every = 10;  ///< epochs between errors against a known truth
  bool quiet = false;
  bool images = true;    ///< write PNG pictures next to the result
  // Raw strings parsed in finish_run_config.
  std::string precision = "single", batching = "sparse", noise = "gaussian", illumination = "batch";
};

/// Registers every option on `cmd`, bound to `cfg`.
void add_run_options(CLI::App& cmd, RunConfig& cfg);
/// Parses the string options and checks cross-option rules; throws UserError.
void finish_run_config(RunConfig& cfg);
/// The resolved configuration of one view as TOML.
std::string to_toml(RunConfig const& cfg, SolverOptions const& resolved, std::string const& input,
                    std::string const& output);
/// Result file of view `v` when several views run: <output folder>/<input stem>.h5.
std::string view_output(RunConfig const& cfg, int v);
/// Version, Kokkos backend and rank count, one line each.
std::string provenance(int ranks);

}  // namespace ptyko::drivers
