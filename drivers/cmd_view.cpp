// `ptyko view OUT.h5`: the pictures of a result file again (into another
// folder, after changing how they are drawn, for a result copied from a
// cluster) and, on request, its arrays for other programs (.npy, TIFF).

#include "commands.hpp"

#include <ptyko/core/array_export.hpp>
#include <ptyko/core/images.hpp>
#include <ptyko/core/result_file.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/environment.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace ptyko::drivers {
namespace {

struct ViewOptions {
  std::string input;
  std::string out_dir;               ///< empty: next to the input
  std::vector<std::string> exports;  ///< "npy", "tiff"
};

bool wants(ViewOptions const& o, char const* format) {
  return std::find(o.exports.begin(), o.exports.end(), format) != o.exports.end();
}

// Paths are formed from this name: the input itself, or its file name
// inside --out-dir (created when missing, as -o folders are not).
std::string output_base(ViewOptions const& o) {
  namespace fs = std::filesystem;
  if (o.out_dir.empty()) return o.input;
  std::error_code ec;
  PTYKO_REQUIRE(!fs::exists(o.out_dir, ec) || fs::is_directory(o.out_dir, ec), "--out-dir ", o.out_dir,
                ": is a file, not a folder");
  fs::create_directories(o.out_dir, ec);
  PTYKO_REQUIRE(!ec, "--out-dir ", o.out_dir, ": cannot create the folder (", ec.message(), ")");
  return (fs::path(o.out_dir) / fs::path(o.input).filename()).string();
}

int run_view(ViewOptions const& o) {
  ResultContents const r = read_result(o.input);
  std::string const base = output_base(o);
  std::vector<std::string> written =
      write_result_pictures(base, r.object, r.probe, r.mode_power_fractions, r.cost, r.noise_model,
                            r.file_positions_px, r.file_positions_px.empty() ? r.file_positions_px : r.positions_px,
                            r.relative_flux, r.background);
  std::string const stem = result_output_stem(base);
  if (wants(o, "npy")) {
    write_npy(stem + "_object.npy", r.object);
    write_npy(stem + "_probe.npy", r.probe);
    written.insert(written.end(), {stem + "_object.npy", stem + "_probe.npy"});
  }
  if (wants(o, "tiff")) {
    int const h = int(r.object.extent(0)), w = int(r.object.extent(1));
    write_tiff(stem + "_object_amplitude.tiff", h, w, amplitude_of(r.object).data());
    write_tiff(stem + "_object_phase.tiff", h, w, phase_of(r.object).data());
    written.insert(written.end(), {stem + "_object_amplitude.tiff", stem + "_object_phase.tiff"});
  }
  // One path per line, nothing else: easy to read and to feed to scripts.
  for (auto const& p : written) fmt::print("{}\n", p);
  return 0;
}

}  // namespace

void add_view(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("view", "Write the pictures of a result file (PNG) and export its arrays");
  cmd->footer(
      "Writes OUT_object_phase.png, OUT_object_amplitude.png, OUT_probe.png and OUT_convergence.png for\n"
      "OUT.h5; --export npy adds OUT_object.npy and OUT_probe.npy (complex64), --export tiff adds\n"
      "OUT_object_amplitude.tiff and OUT_object_phase.tiff (32-bit float).\n"
      "Examples:\n  ptyko view out.h5\n  ptyko view out.h5 --out-dir pictures --export npy,tiff");
  auto opts = std::make_shared<ViewOptions>();
  cmd->add_option("file", opts->input, "Result file written by `ptyko reconstruct`")->required();
  cmd->add_option("--out-dir", opts->out_dir, "Folder for the files (created if missing); default: the result's");
  cmd->add_option("--export", opts->exports, "Also write the arrays: npy, tiff, or npy,tiff (repeatable)")
      ->delimiter(',')
      ->allow_extra_args(false)  // `--export npy out.h5` must leave out.h5 to the file argument
      ->check(CLI::IsMember({"npy", "tiff"}));
  cmd->callback([&action, opts] {
    action = [opts](parallel::Environment& env) {
      // Host-only file work: one rank is enough (and two would race on the
      // same output names).
      return env.rank() == 0 ? run_view(*opts) : 0;
    };
  });
}

}  // namespace ptyko::drivers
