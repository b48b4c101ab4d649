#include "run_config.hpp"

#include <ptyko/kernels/error.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>

namespace ptyko::drivers {

void add_run_options(CLI::App& cmd, RunConfig& c) {
  cmd.add_option("inputs", c.inputs, "CXI file(s) to reconstruct; several files are independent views");
  cmd.add_option("--list", c.list_file, "Text file naming the input CXI files, one per line");
  cmd.add_option("-o,--output", c.output, "Result file (HDF5); a folder when there are several inputs")->required();
  cmd.add_option("--solver", c.solver.solver, "lsqml, rpie, epie, dm or raar")->capture_default_str();
  cmd.add_option("--epochs", c.solver.epochs, "Epochs (passes over all positions)")->capture_default_str();
  cmd.add_option("--batch-size", c.solver.batch_size, "Positions per mini-batch (0: solver default)")
      ->capture_default_str();
  cmd.add_option("--batching", c.batching, "sparse, compact or random")->capture_default_str();
  cmd.add_option("--modes", c.solver.modes, "Incoherent probe modes (0: the file's guess, else 1)")
      ->capture_default_str();
  cmd.add_option("--noise", c.noise, "Noise model: gaussian or poisson")->capture_default_str();
  cmd.add_option("--alpha", c.solver.alpha, "Object regularisation in [0, 1] (default per solver)");
  cmd.add_option("--beta", c.solver.beta, "Probe regularisation (rPIE, LSQML) or RAAR relaxation in [0, 1]");
  cmd.add_option("--probe-update-start", c.solver.probe_update_start, "First epoch that updates the probe");
  cmd.add_flag("--no-probe-update", [&c](std::int64_t) { c.solver.update_probe = false; },
               "Keep the initial probe");
  cmd.add_option("--probe-support", c.solver.probe_support, "Probe support radius in pixels (0: none)")
      ->capture_default_str();
  cmd.add_option("--probe-diameter", c.probe_diameter,
                 "Initial probe diameter in object pixels when the file has no probe guess "
                 "(0: step / 0.3, a 70 % overlap scan)")
      ->capture_default_str();
  cmd.add_flag("--object-clip", c.solver.object_clip, "Clip the object amplitude at 1");
  cmd.add_option("--illumination", c.illumination,
                 "Preconditioner illumination: batch (current mini-batch) or all (all positions)")
      ->capture_default_str();
  cmd.add_option("--rescale-every", c.solver.rescale_every, "Epochs between object/probe scale normalisations")
      ->capture_default_str();
  cmd.add_option("--cost-every", c.solver.cost_every, "DM/RAAR: epochs between model-cost evaluations")
      ->capture_default_str();
  cmd.add_option("--seed", c.solver.seed, "Seed of batches, probe initialisation")->capture_default_str();
  cmd.add_option("--precision", c.precision, "single or double")->capture_default_str();
  cmd.add_option("--strategy", c.strategy, "Parallel strategy: full-sync or neighbor")->capture_default_str();
  cmd.add_option("--sync-every", c.sync_every,
                 "neighbor: batches between overlap exchanges (1: exact, >1: approximate consensus)")
      ->capture_default_str();
  cmd.add_flag("--flip-x", c.load.convention.flip_x, "Negate x translations (files with the opposite sign)");
  cmd.add_flag("--flip-y", c.load.convention.flip_y, "Negate y translations");
  cmd.add_flag("--swap-xy", c.load.convention.swap_xy, "Exchange x and y translations");
  cmd.add_flag("--clip-negative", c.load.clip_negative, "Clamp negative intensities to zero instead of failing");
  cmd.add_option("--error-every", c.error_every,
                 "Epochs between errors against the file's ground truth (0: only at the end)")
      ->capture_default_str();
  cmd.add_flag("-q,--quiet", c.quiet, "No progress lines");
  cmd.add_flag("--no-images", [&c](std::int64_t) { c.images = false; }, "Do not write PNG pictures next to the result");
}

void finish_run_config(RunConfig& c) {
  if (!c.list_file.empty()) {
    std::ifstream in(c.list_file);
    PTYKO_REQUIRE(in.good(), c.list_file, ": cannot read the --list file: check the path");
    for (std::string line; std::getline(in, line);) {
      auto const first = line.find_first_not_of(" \t\r");
      if (first == std::string::npos || line[first] == '#') continue;
      auto const last = line.find_last_not_of(" \t\r");
      c.inputs.push_back(line.substr(first, last - first + 1));
    }
  }
  PTYKO_REQUIRE(!c.inputs.empty(), "no input: give a CXI file (or several, or --list FILE)");
  for (auto const& in : c.inputs)
    PTYKO_REQUIRE(std::filesystem::absolute(in) != std::filesystem::absolute(c.output), "the output ", c.output,
                  " is the input file: choose another name, the input must stay untouched");
  if (c.inputs.size() > 1) {
    std::error_code ec;
    std::filesystem::create_directories(c.output, ec);
    PTYKO_REQUIRE(std::filesystem::is_directory(c.output), "-o ", c.output,
                  ": with several inputs the output must be a folder, and it cannot be created there");
    std::vector<std::string> stems;
    for (auto const& in : c.inputs) stems.push_back(std::filesystem::path(in).stem().string());
    std::sort(stems.begin(), stems.end());
    PTYKO_REQUIRE(std::adjacent_find(stems.begin(), stems.end()) == stems.end(),
                  "two inputs have the same file name: results would overwrite each other; rename one");
  }
  PTYKO_REQUIRE(c.precision == "single" || c.precision == "double", "--precision '", c.precision,
                "' is not a precision: use single or double");
  c.double_precision = c.precision == "double";
  c.solver.batching = parse_batching(c.batching);
  PTYKO_REQUIRE(c.noise == "gaussian" || c.noise == "poisson", "--noise '", c.noise,
                "' is not a noise model: use gaussian or poisson");
  c.solver.noise = c.noise == "gaussian" ? NoiseModel::gaussian : NoiseModel::poisson;
  PTYKO_REQUIRE(c.illumination == "batch" || c.illumination == "all", "--illumination '", c.illumination,
                "' is not valid: use batch or all");
  c.solver.illumination = c.illumination == "batch" ? IlluminationNorm::batch : IlluminationNorm::all;
  PTYKO_REQUIRE(c.probe_diameter >= 0, "--probe-diameter must be >= 0 pixels, got ", c.probe_diameter);
  PTYKO_REQUIRE(c.error_every >= 0, "--error-every must be >= 0, got ", c.error_every);
}

std::string view_output(RunConfig const& c, int v) {
  return (std::filesystem::path(c.output) / std::filesystem::path(c.inputs[v]).stem()).string() + ".h5";
}

std::string to_toml(RunConfig const& c, SolverOptions const& s, std::string const& input, std::string const& output) {
  std::string t;
  t += fmt::format("input = \"{}\"\noutput = \"{}\"\nprecision = \"{}\"\n\n", input, output, c.precision);
  t += fmt::format("[solver]\nname = \"{}\"\nepochs = {}\nbatch_size = {}\nbatching = \"{}\"\nnoise = \"{}\"\n"
                   "alpha = {}\nbeta = {}\nseed = {}\nillumination = \"{}\"\ncost_every = {}\n\n",
                   s.solver, s.epochs, s.batch_size, to_string(s.batching), c.noise, s.alpha, s.beta, s.seed,
                   c.illumination, s.cost_every);
  t += fmt::format("[probe]\nmodes = {}\nupdate = {}\nupdate_start = {}\nsupport = {}\ndiameter = {}\n\n",
                   s.modes, s.update_probe, s.probe_update_start, s.probe_support, c.probe_diameter);
  t += fmt::format("[object]\nclip = {}\nrescale_every = {}\n\n", s.object_clip, s.rescale_every);
  t += fmt::format("[positions]\nflip_x = {}\nflip_y = {}\nswap_xy = {}\nclip_negative = {}\n\n",
                   c.load.convention.flip_x, c.load.convention.flip_y, c.load.convention.swap_xy,
                   c.load.clip_negative);
  t += fmt::format("[parallel]\nstrategy = \"{}\"\nsync_every = {}\n\n", c.strategy, c.sync_every);
  t += fmt::format("[output]\nerror_every = {}\nquiet = {}\nimages = {}\n", c.error_every, c.quiet, c.images);
  return t;
}

std::string provenance(int ranks) {
  std::string backend = Kokkos::DefaultExecutionSpace::name();
  return fmt::format("ptyko 0.1.0\nkokkos {}.{}.{} ({})\nranks {}\n", KOKKOS_VERSION / 10000,
                     KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, backend, ranks);
}

}  // namespace ptyko::drivers
