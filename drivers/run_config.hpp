#pragma once
// The options of `ptyko reconstruct`: one table of definitions (section, key,
// command-line flag, help, type) from which the command line is registered,
// TOML configuration files are read, and the resolved configuration is
// written (printed at start, stored in every result), so that the three can
// never drift apart.
//
// Precedence, lowest first: built-in defaults, the configuration stored in a
// checkpoint (--resume; but not its --quiet, which was that run's terminal),
// the --config file, the command line.

#include <ptyko/core/dataset.hpp>
#include <ptyko/core/probe_focus.hpp>
#include <ptyko/core/solver.hpp>

#include <CLI/CLI.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ptyko::drivers {

struct RunConfig {
  // -- input (top level of the TOML file)
  std::vector<std::string> inputs;  ///< one CXI file per view
  std::string list_file;            ///< a text file of inputs, one per line
  LoadOptions load;                 ///< position convention, --clip-negative, --crop, --mask
  std::optional<double> mask_above;  ///< --mask-above: pixels reaching it in any frame are bad
  std::optional<double> adu_per_photon;  ///< detector units per photon; absent: 1 for whole numbers, else unknown
  // -- [solver]
  SolverOptions solver;  ///< name, epochs, seed, ... (the fields below are optional in files)
  std::optional<int> batch_size;          ///< absent: the solver's default
  std::optional<double> alpha, beta;      ///< absent: the solver's default
  std::optional<int> probe_update_start;  ///< absent: the solver's default
  std::optional<double> fourier_relax;    ///< DM/RAAR power bound; absent: the solver's default
  std::optional<double> momentum;         ///< momentum across epochs; absent: the solver's default
  /// --refine-background / --no-refine-background; absent: on when at least
  /// 1 % of the frames' measured values were negative (a subtracted
  /// background's noise, read as 0: the zeros bias the dark pixels up as a
  /// background would), else off (view_run.cpp).
  std::optional<bool> refine_background;
  std::string precision = "single", batching = "sparse", noise = "gaussian", illumination = "batch";
  std::string fft_planner = "auto";
  // -- [probe]
  double probe_diameter = 0;  ///< initial probe size without a guess (0: from the scan step)
  std::string probe_focus = "auto";  ///< side of the focus of a computed probe: auto, upstream, downstream
  int probe_focus_frames = probe_focus_trial_frames;  ///< frames of the auto trial (0: all)
  std::string probe_guess;    ///< --probe FILE[:DATASET]: the initial probe (else the input's guess)
  // -- [parallel]
  std::string strategy = "neighbor";  ///< exact, and on every scan measured faster than full-sync at P > 1
  int sync_every = 1;
  // -- [output]
  std::string output;  ///< result file, or folder for several views
  int error_every = 10;  ///< epochs between errors against a known truth
  int checkpoint_every = 0;  ///< epochs between checkpoints (0: only at the end and when stopped)
  std::string log_file;
  bool quiet = false;
  bool images = true;  ///< write PNG pictures next to the result
  bool remove_phase_ramp = true;  ///< the result's object without its mean phase gradient (core/phase_ramp.hpp)

  // Derived by finish_run_config.
  bool double_precision = false;
  /// With --resume: the solver the checkpoint ran (another --solver then
  /// starts from its own defaults: forget_solver_defaults).
  std::string resumed_solver;
};

/// What `ptyko reconstruct` reads from its command line.
struct ReconstructArgs {
  RunConfig cli;                ///< values of the options given on the command line
  std::set<std::string> given;  ///< "section.key" of each option given on the command line
  std::string config_file;      ///< --config
  std::string resume;           ///< --resume (a checkpoint, or the output folder of several views)
  bool print_config = false;    ///< --print-config
};

/// Registers every option of the table, plus --config, --resume and
/// --print-config, on `cmd`, writing into `args`.
void add_run_options(CLI::App& cmd, ReconstructArgs& args);

/// Applies the TOML document `text` onto `cfg`. `source` names it in
/// messages (a file name, or "FILE:/reconstruction/config"). Throws UserError
/// naming the source, the key and its line for syntax errors, unknown tables
/// or keys, and values of the wrong type.
void apply_toml(RunConfig& cfg, std::string const& text, std::string const& source);
/// Reads `path` and applies it; UserError when it cannot be read.
void apply_toml_file(RunConfig& cfg, std::string const& path);
/// Copies the options given on the command line over `cfg`.
void apply_command_line(RunConfig& cfg, ReconstructArgs const& args);

/// Checks the options and everything that can be checked before touching the
/// inputs: names (solver, strategy, noise model, ...), ranges (explicit batch
/// size >= 1, epochs >= 0, ...), the --list file, output path distinct from
/// every input, and the output folder writable (a file is created and
/// removed there). Parses the string options into `cfg.solver`. Throws
/// UserError naming the option.
void finish_run_config(RunConfig& cfg);

/// The configuration as TOML, in the table's order. With `comments`, each
/// key is preceded by its help text and absent optional values appear as
/// commented-out lines (what --print-config shows); without, absent optional
/// values are left out.
std::string to_toml(RunConfig const& cfg, bool comments);

/// FILE[:DATASET] with FILE absolute and normalised (empty stays empty).
std::string absolute_file_spec(std::string const& spec);

/// The configuration of one view as it ran: its input and output (absolute),
/// and the solver options with every default resolved.
RunConfig resolved_config(RunConfig const& cfg, SolverOptions const& resolved, std::string const& input,
                          std::string const& output);

/// One line for each option given on the command line (`given`, as
/// ReconstructArgs holds them) that the run does not use: one its solver
/// does not take ("--alpha is not used by dm (only by rpie, epie or
/// lsqml)"), or one of a refinement or of the probe's update without it.
std::vector<std::string> unused_options(RunConfig const& cfg, std::set<std::string> const& given);

/// Makes the options whose defaults depend on the solver (batch size, alpha,
/// beta, momentum, the probe's first update, the Fourier power bound) absent
/// again. A checkpoint stores them resolved for the solver it ran; a run
/// resumed with another solver takes that solver's own defaults for those
/// not given again, not the batch of 64 and the beta of 1 that suit DM but
/// not LSQML.
void forget_solver_defaults(RunConfig& cfg);

/// Result file of view `v` when several views run: <output folder>/<input stem>.h5.
std::string view_output(RunConfig const& cfg, int v);
/// Version, Kokkos backend and rank count, one line each.
std::string provenance(int ranks);

}  // namespace ptyko::drivers
