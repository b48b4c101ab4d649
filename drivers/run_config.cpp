#include "run_config.hpp"
#include "toml_io.hpp"

#include <ptyko/core/probe_modes.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/strategy.hpp>

#include <Kokkos_Core.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <type_traits>

namespace ptyko::drivers {
namespace {

namespace fs = std::filesystem;

// ------------------------------------------------------------------ values
// How each C++ type of an option is read from TOML, written as a TOML
// literal, and described in messages.

std::string quoted(std::string const& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", int(c));
        else out += c;
    }
  }
  return out + "\"";
}

template <class V>
struct Value;

template <>
struct Value<int> {
  static constexpr char const* expected = "an integer";
  static std::optional<int> from(TomlNode const& n) {
    if (n.kind != TomlNode::Kind::integer || n.integer < INT_MIN || n.integer > INT_MAX) return std::nullopt;
    return int(n.integer);
  }
  static std::string literal(int v) { return std::to_string(v); }
};

template <>
struct Value<std::uint64_t> {
  static constexpr char const* expected = "an integer >= 0";
  static std::optional<std::uint64_t> from(TomlNode const& n) {
    if (n.kind != TomlNode::Kind::integer || n.integer < 0) return std::nullopt;
    return std::uint64_t(n.integer);
  }
  static std::string literal(std::uint64_t v) { return std::to_string(v); }
};

template <>
struct Value<double> {
  static constexpr char const* expected = "a number";
  static std::optional<double> from(TomlNode const& n) {
    if (n.kind == TomlNode::Kind::floating) return n.floating;
    if (n.kind == TomlNode::Kind::integer) return double(n.integer);
    return std::nullopt;
  }
  static std::string literal(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::string s = fmt::format("{}", v);  // shortest form that reads back exactly
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
  }
};

template <>
struct Value<bool> {
  static constexpr char const* expected = "true or false";
  static std::optional<bool> from(TomlNode const& n) {
    if (n.kind == TomlNode::Kind::boolean) return n.boolean;
    return std::nullopt;
  }
  static std::string literal(bool v) { return v ? "true" : "false"; }
};

template <>
struct Value<std::string> {
  static constexpr char const* expected = "a string";
  static std::optional<std::string> from(TomlNode const& n) {
    if (n.kind == TomlNode::Kind::string) return n.string;
    return std::nullopt;
  }
  static std::string literal(std::string const& v) { return quoted(v); }
};

template <>
struct Value<std::vector<std::string>> {
  static constexpr char const* expected = "a string or a list of strings";
  static std::optional<std::vector<std::string>> from(TomlNode const& n) {
    if (n.kind == TomlNode::Kind::string) return std::vector<std::string>{n.string};
    if (n.kind != TomlNode::Kind::array) return std::nullopt;
    std::vector<std::string> out;
    for (auto const& e : n.items) {
      if (e.kind != TomlNode::Kind::string) return std::nullopt;
      out.push_back(e.string);
    }
    return out;
  }
  static std::string literal(std::vector<std::string> const& v) {
    if (v.size() == 1) return quoted(v[0]);
    std::string s = "[";
    for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + quoted(v[k]);
    return s + "]";
  }
};

template <class V>
struct is_optional : std::false_type {};
template <class U>
struct is_optional<std::optional<U>> : std::true_type {};

// ------------------------------------------------------------------ the table

enum class Flag { none, sets_true, sets_false };

struct OptionDef {
  std::string section;  ///< "" for the top level
  std::string key;
  std::string cli;      ///< CLI11 names: "--epochs", "-o,--output", or "inputs" (positional)
  std::string help;      ///< in TOML comments
  std::string cli_help;  ///< in --help (differs for flags that set false)
  std::string example;  ///< shown commented out by --print-config when the option has no default value
  std::function<void(CLI::App&, ReconstructArgs&, OptionDef const&)> add_cli;
  std::function<void(RunConfig&, TomlNode const&, std::string const& where)> read;
  std::function<std::optional<std::string>(RunConfig const&)> literal;  ///< nullopt: no value
  std::function<void(RunConfig&, RunConfig const&)> copy;

  std::string id() const { return section.empty() ? key : section + "." + key; }
};

// One definition bound to a field of RunConfig through `get`. Strings are
// "no value" when empty (inputs, list, output, log file); std::optional
// fields when empty.
template <class Get>
OptionDef option(std::string section, std::string key, std::string cli, std::string help, Get get,
                 Flag flag = Flag::none, std::string example = "") {
  using V = std::remove_reference_t<decltype(get(std::declval<RunConfig&>()))>;
  OptionDef d;
  d.section = std::move(section);
  d.key = std::move(key);
  d.cli = std::move(cli);
  // "TOML help|command-line help" for flags that switch something off.
  auto const bar = help.find('|');
  d.help = help.substr(0, bar);
  d.cli_help = bar == std::string::npos ? d.help : help.substr(bar + 1);
  d.example = std::move(example);
  d.copy = [get](RunConfig& dst, RunConfig const& src) { get(dst) = get(const_cast<RunConfig&>(src)); };
  d.literal = [get](RunConfig const& c) -> std::optional<std::string> {
    auto const& v = get(const_cast<RunConfig&>(c));
    if constexpr (is_optional<V>::value) {
      if (!v) return std::nullopt;
      return Value<typename V::value_type>::literal(*v);
    } else if constexpr (std::is_same_v<V, std::string> || std::is_same_v<V, std::vector<std::string>>) {
      if (v.empty()) return std::nullopt;
      return Value<V>::literal(v);
    } else {
      return Value<V>::literal(v);
    }
  };
  if constexpr (is_optional<V>::value) {
    using U = typename V::value_type;
    d.read = [get](RunConfig& c, TomlNode const& n, std::string const& where) {
      auto v = Value<U>::from(n);
      PTYKO_REQUIRE(v.has_value(), where, " must be ", Value<U>::expected);
      get(c) = *v;
    };
  } else {
    d.read = [get](RunConfig& c, TomlNode const& n, std::string const& where) {
      auto v = Value<V>::from(n);
      PTYKO_REQUIRE(v.has_value(), where, " must be ", Value<V>::expected);
      get(c) = *v;
    };
  }
  d.add_cli = [get, flag](CLI::App& app, ReconstructArgs& args, OptionDef const& self) {
    std::string const id = self.id();
    RunConfig const defaults;
    auto const default_text = [&]() -> std::string {
      auto lit = self.literal(defaults);
      if (!lit) return "";
      if constexpr (std::is_same_v<V, std::string>) return get(const_cast<RunConfig&>(defaults));
      return *lit;
    };
    if constexpr (std::is_same_v<V, bool>) {
      bool const value = flag != Flag::sets_false;
      app.add_flag_function(
          self.cli,
          [&args, get, id, value](std::int64_t) {
            get(args.cli) = value;
            args.given.insert(id);
          },
          self.cli_help);
    } else if constexpr (std::is_same_v<V, std::optional<bool>>) {
      // "--name,!--no-name": CLI11 counts the negated name as -1.
      app.add_flag_function(
          self.cli,
          [&args, get, id](std::int64_t count) {
            get(args.cli) = count > 0;
            args.given.insert(id);
          },
          self.cli_help);
    } else if constexpr (is_optional<V>::value) {
      using U = typename V::value_type;
      app.add_option_function<U>(
             self.cli,
             [&args, get, id](U const& v) {
               get(args.cli) = v;
               args.given.insert(id);
             },
             self.cli_help)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    } else {
      auto* o = app.add_option_function<V>(
          self.cli,
          [&args, get, id](V const& v) {
            get(args.cli) = v;
            args.given.insert(id);
          },
          self.cli_help);
      std::string const text = default_text();
      if (!text.empty()) o->default_str(text);
      if constexpr (!std::is_same_v<V, std::vector<std::string>>) o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
  };
  return d;
}

std::vector<std::string> const& sections() {
  static std::vector<std::string> const s{"", "solver", "probe", "object", "positions", "intensities", "background", "parallel", "output"};
  return s;
}

std::vector<OptionDef> const& options() {
  static std::vector<OptionDef> const table = [] {
    std::vector<OptionDef> t;
    // clang-format off
    // -- the input
    t.push_back(option("", "input", "inputs", "CXI file(s) to reconstruct; several files are independent views",
        [](RunConfig& c) -> auto& { return c.inputs; }, Flag::none, "\"data.cxi\""));
    t.push_back(option("", "list", "--list", "Text file naming the input CXI files, one per line",
        [](RunConfig& c) -> auto& { return c.list_file; }, Flag::none, "\"inputs.txt\""));
    t.push_back(option("", "clip_negative", "--clip-negative",
        "Do not look for a detector's marks (a pixel with the same negative value, or the data type's largest, in "
        "every frame: -1 in a Pilatus's gaps, 65535 in a 16-bit Eiger's), whose pixels are otherwise masked: every "
        "negative value is read as 0 (the others, a subtracted background's noise, are anyway)",
        [](RunConfig& c) -> auto& { return c.load.clip_negative; }, Flag::sets_true));
    t.push_back(option("", "mask", "--mask",
        "Add the detector mask of FILE or FILE:DATASET (HDF5, nonzero = bad pixel; default dataset: the CXI "
        "mask, an Eiger master file's pixel_mask or /mask)",
        [](RunConfig& c) -> auto& { return c.load.mask.spec; }, Flag::none, "\"detector_mask.h5\""));
    t.push_back(option("", "mask_invert", "--mask-invert", "The --mask file marks measured pixels nonzero",
        [](RunConfig& c) -> auto& { return c.load.mask.invert; }, Flag::sets_true));
    t.push_back(option("", "mask_above", "--mask-above",
        "Mask every pixel that reaches this value in any frame (saturated or hot pixels; frames as read, after "
        "--crop and --bin; default: the largest value of the frames' integer type, 65535 for uint16; above it: "
        "none)",
        [](RunConfig& c) -> auto& { return c.mask_above; }, Flag::none, "60000"));
    t.push_back(option("", "dark", "--no-dark",
        "Subtract the file's dark frame (detector_1/dark)|Ignore the file's dark frame (dark = false)",
        [](RunConfig& c) -> auto& { return c.load.use_dark; }, Flag::sets_false));
    t.push_back(option("", "monitor", "--no-monitor",
        "Normalise the frames by the file's monitor (data_1/monitor)|Ignore the file's monitor (monitor = false)",
        [](RunConfig& c) -> auto& { return c.load.use_monitor; }, Flag::sets_false));
    t.push_back(option("", "crop", "--crop",
        "Use the N x N window of the frames around the beam (0: the whole frames, which must be square)",
        [](RunConfig& c) -> auto& { return c.load.crop.size; }));
    t.push_back(option("", "crop_centre_y", "--crop-centre-y",
        "With --crop: row of the beam (zero frequency) in the stored frames (default: rows / 2)",
        [](RunConfig& c) -> auto& { return c.load.crop.centre_y; }, Flag::none, "257"));
    t.push_back(option("", "crop_centre_x", "--crop-centre-x",
        "With --crop: column of the beam in the stored frames (default: columns / 2)",
        [](RunConfig& c) -> auto& { return c.load.crop.centre_x; }, Flag::none, "515"));
    t.push_back(option("", "find_beam", "--find-beam",
        "Centre the frames (the --crop window; without --crop the largest square the frames hold) on the "
        "direct beam found in them, instead of the frames' centre",
        [](RunConfig& c) -> auto& { return c.load.crop.find_beam; }, Flag::sets_true));
    t.push_back(option("", "bin", "--bin",
        "Sum B x B detector pixels into one (after --crop, which B must divide; oversampled data)",
        [](RunConfig& c) -> auto& { return c.load.crop.bin; }));
    t.push_back(option("", "energy_kev", "--energy-kev",
        "Photon energy in keV instead of the file's (a file without it, or holding it in other units)",
        [](RunConfig& c) -> auto& { return c.load.geometry.energy_kev; }, Flag::none, "8.0"));
    t.push_back(option("", "distance", "--distance",
        "Sample-detector distance in metres instead of the file's",
        [](RunConfig& c) -> auto& { return c.load.geometry.distance_m; }, Flag::none, "5.0"));
    t.push_back(option("", "pixel_size", "--pixel-size",
        "Detector pixel size in metres (both axes) instead of the file's",
        [](RunConfig& c) -> auto& { return c.load.geometry.pixel_size_m; }, Flag::none, "75e-6"));
    t.push_back(option("", "adu_per_photon", "--adu-per-photon",
        "Detector units per photon (an integrating detector's gain, frames scaled to a flux): the counting "
        "noise DM's power bound, momentum and the cost's report go by (default: read from the values: 1 for "
        "photon counts, G for whole numbers all multiples of G, unknown for frames with fractions or thresholded "
        "detector units)",
        [](RunConfig& c) -> auto& { return c.adu_per_photon; }, Flag::none, "12.5"));
    // -- [solver]
    t.push_back(option("solver", "name", "--solver", "lsqml, rpie, epie, dm or raar",
        [](RunConfig& c) -> auto& { return c.solver.solver; }));
    t.push_back(option("solver", "epochs", "--epochs", "Epochs (passes over all positions)",
        [](RunConfig& c) -> auto& { return c.solver.epochs; }));
    t.push_back(option("solver", "batch_size", "--batch-size",
        "Positions per mini-batch, >= 1 (default: per solver: 8 for lsqml, 16 for rpie, 1 for epie, 64 for dm/raar)",
        [](RunConfig& c) -> auto& { return c.batch_size; }, Flag::none, "8"));
    t.push_back(option("solver", "batching", "--batching", "sparse, compact or random",
        [](RunConfig& c) -> auto& { return c.batching; }));
    t.push_back(option("solver", "noise", "--noise", "Noise model: gaussian or poisson",
        [](RunConfig& c) -> auto& { return c.noise; }));
    t.push_back(option("solver", "alpha", "--alpha", "Object regularisation in [0, 1] (default: per solver)",
        [](RunConfig& c) -> auto& { return c.alpha; }, Flag::none, "0.1"));
    t.push_back(option("solver", "beta", "--beta",
        "Probe regularisation (rPIE, LSQML) or RAAR relaxation in [0, 1] (default: per solver)",
        [](RunConfig& c) -> auto& { return c.beta; }, Flag::none, "0.1"));
    t.push_back(option("solver", "momentum", "--momentum",
        "Momentum across epochs in [0, 1): the share of the object's and probe's last velocity each epoch keeps "
        "(0: none; default: 0.9 for rpie, epie and lsqml, none for dm and raar)",
        [](RunConfig& c) -> auto& { return c.momentum; }, Flag::none, "0.9"));
    t.push_back(option("solver", "illumination", "--illumination",
        "Preconditioner illumination: batch (current mini-batch) or all (all positions)",
        [](RunConfig& c) -> auto& { return c.illumination; }));
    t.push_back(option("solver", "cost_every", "--cost-every", "DM/RAAR: epochs between model-cost evaluations",
        [](RunConfig& c) -> auto& { return c.solver.cost_every; }));
    t.push_back(option("solver", "overlap_passes", "--overlap-passes",
        "DM/RAAR: rounds of object-then-probe updates from the exit waves per epoch, >= 1 (PtyPy's overlap loop)",
        [](RunConfig& c) -> auto& { return c.solver.overlap_passes; }));
    t.push_back(option("solver", "fourier_relax", "--fourier-relax",
        "DM/RAAR: power bound of the Fourier projection in [0, 1), PtyPy's fourier_relax_factor "
        "(0: the plain modulus projection; default: 0.02 for dm, 0 for raar), held between 0.1 and 1 times the "
        "counting noise",
        [](RunConfig& c) -> auto& { return c.fourier_relax; }, Flag::none, "0.02"));
    t.push_back(option("solver", "fft_planner", "--fft-planner",
        "FFTW planning: estimate (same plan every run), measure (timed once per shape; 6-10x faster "
        "FFTs at 256 x 256, results may differ at float rounding between runs) or auto (measure for "
        "frames of 256 and more)",
        [](RunConfig& c) -> auto& { return c.fft_planner; }));
    t.push_back(option("solver", "seed", "--seed", "Seed of batches, probe initialisation",
        [](RunConfig& c) -> auto& { return c.solver.seed; }));
    t.push_back(option("solver", "precision", "--precision", "single or double",
        [](RunConfig& c) -> auto& { return c.precision; }));
    // -- [probe]
    t.push_back(option("probe", "modes", "--modes", "Incoherent probe modes, 1 to 16 (0: the file's guess, else 1)",
        [](RunConfig& c) -> auto& { return c.solver.modes; }));
    t.push_back(option("probe", "update", "--no-probe-update", "Update the probe|Keep the initial probe (probe.update = false)",
        [](RunConfig& c) -> auto& { return c.solver.update_probe; }, Flag::sets_false));
    t.push_back(option("probe", "update_start", "--probe-update-start",
        "First epoch that updates the probe (default: 2 for dm/raar, else 0)",
        [](RunConfig& c) -> auto& { return c.probe_update_start; }, Flag::none, "0"));
    t.push_back(option("probe", "guess", "--probe",
        "Start from the probe of FILE or FILE:DATASET (an earlier result's /reconstruction/probe, a CXI "
        "file's illumination), instead of the input's guess or a computed one",
        [](RunConfig& c) -> auto& { return c.probe_guess; }, Flag::none, "\"reference_scan.h5\""));
    t.push_back(option("probe", "support", "--probe-support", "Probe support radius in pixels (0: none)",
        [](RunConfig& c) -> auto& { return c.solver.probe_support; }));
    t.push_back(option("probe", "diameter", "--probe-diameter",
        "Initial probe diameter in object pixels when the file has no probe guess (0: chosen by the trial of "
        "--probe-focus among step / 0.3, the probe of a 70 % overlap scan, and 1.6 and 2.5 times that)",
        [](RunConfig& c) -> auto& { return c.probe_diameter; }));
    t.push_back(option("probe", "focus", "--probe-focus",
        "Side of the focus the sample sits on, for a probe computed from the data (no guess): upstream "
        "(converging beam), downstream (diverging) or auto (3 rPIE epochs from each start, up to 10 where the "
        "sides stay close; the lowest cost wins)",
        [](RunConfig& c) -> auto& { return c.probe_focus; }));
    t.push_back(option("probe", "focus_frames", "--probe-focus-frames",
        "Frames the auto trial of --probe-focus runs on, over all ranks: a larger scan tries a compact part of "
        "each rank's frames (at least 64 of each; 0: every frame)",
        [](RunConfig& c) -> auto& { return c.probe_focus_frames; }));
    // -- [object]
    t.push_back(option("object", "clip", "--object-clip", "Clip the object amplitude at 1",
        [](RunConfig& c) -> auto& { return c.solver.object_clip; }, Flag::sets_true));
    t.push_back(option("object", "rescale_every", "--rescale-every",
        "Epochs between object/probe scale normalisations (0: never)",
        [](RunConfig& c) -> auto& { return c.solver.rescale_every; }));
    // -- [positions]
    t.push_back(option("positions", "flip_x", "--flip-x", "Negate x translations (files with the opposite sign)",
        [](RunConfig& c) -> auto& { return c.load.convention.flip_x; }, Flag::sets_true));
    t.push_back(option("positions", "flip_y", "--flip-y", "Negate y translations",
        [](RunConfig& c) -> auto& { return c.load.convention.flip_y; }, Flag::sets_true));
    t.push_back(option("positions", "swap_xy", "--swap-xy", "Exchange x and y translations",
        [](RunConfig& c) -> auto& { return c.load.convention.swap_xy; }, Flag::sets_true));
    t.push_back(option("positions", "refine", "--refine-positions",
        "Refine the scan positions from the data (stage drift and encoder errors; docs/solvers.md)",
        [](RunConfig& c) -> auto& { return c.solver.refine_positions; }, Flag::sets_true));
    t.push_back(option("positions", "refine_start", "--refine-start",
        "With --refine-positions: first epoch (from 0) that refines (default: epochs / 5, after the probe's start)",
        [](RunConfig& c) -> auto& { return c.solver.positions_start; }, Flag::none, "20"));
    t.push_back(option("positions", "refine_every", "--refine-every",
        "With --refine-positions: epochs between refinements (each adds a third of an rPIE or LSQML epoch, or a pass of about one LSQML epoch for DM and RAAR)",
        [](RunConfig& c) -> auto& { return c.solver.positions_every; }));
    t.push_back(option("positions", "refine_step", "--refine-step",
        "With --refine-positions: largest move of one refinement, object pixels",
        [](RunConfig& c) -> auto& { return c.solver.positions_step; }));
    t.push_back(option("positions", "refine_max_shift", "--refine-max-shift",
        "With --refine-positions: largest move from the file's position, object pixels (default: a quarter "
        "of the frame size)",
        [](RunConfig& c) -> auto& { return c.solver.positions_max_shift; }, Flag::none, "16"));
    // -- [intensities]
    t.push_back(option("intensities", "refine", "--refine-intensities",
        "Refine each frame's incident flux from the data (a beam whose flux varies between frames and no monitor "
        "in the file; docs/solvers.md)",
        [](RunConfig& c) -> auto& { return c.solver.refine_intensities; }, Flag::sets_true));
    t.push_back(option("intensities", "start", "--intensities-start",
        "With --refine-intensities: first epoch (from 0) that refines (default: epochs / 10, but not before epoch 10 or epochs / 5, whichever is earlier; after the probe's start)",
        [](RunConfig& c) -> auto& { return c.solver.intensities_start; }, Flag::none, "10"));
    t.push_back(option("intensities", "every", "--intensities-every",
        "With --refine-intensities: epochs between refinements (each adds a forward transform of every position, "
        "about a quarter of an epoch)",
        [](RunConfig& c) -> auto& { return c.solver.intensities_every; }));
    // -- [background]
    t.push_back(option("background", "refine", "--refine-background,!--no-refine-background",
        "Refine an incoherent background common to all frames (air scatter, fluorescence, a detector offset; "
        "docs/solvers.md); --no-refine-background: never (default: on when at least 1 % of the measured values "
        "were negative and read as 0, frames with a background subtracted, else off)",
        [](RunConfig& c) -> auto& { return c.refine_background; }, Flag::none, "true"));
    t.push_back(option("background", "start", "--background-start",
        "With --refine-background: first epoch (from 0) that refines (default: epochs / 10, but not before epoch 10 or epochs / 5, whichever is earlier; after the probe's start)",
        [](RunConfig& c) -> auto& { return c.solver.background_start; }, Flag::none, "10"));
    t.push_back(option("background", "every", "--background-every",
        "With --refine-background: epochs between refinements (each adds a forward transform of every position, "
        "about a quarter of an epoch)",
        [](RunConfig& c) -> auto& { return c.solver.background_every; }));
    // -- [parallel]
    t.push_back(option("parallel", "strategy", "--strategy", "Parallel strategy: neighbor or full-sync (the same result; neighbor moves fewer bytes)",
        [](RunConfig& c) -> auto& { return c.strategy; }));
    t.push_back(option("parallel", "sync_every", "--sync-every",
        "neighbor: batches between overlap exchanges (1: exact, >1: approximate consensus)",
        [](RunConfig& c) -> auto& { return c.sync_every; }));
    // -- [output]
    t.push_back(option("output", "path", "-o,--output", "Result file (HDF5); a folder when there are several inputs",
        [](RunConfig& c) -> auto& { return c.output; }, Flag::none, "\"out.h5\""));
    t.push_back(option("output", "images", "--no-images", "Write PNG pictures next to the result|Do not write PNG pictures next to the result (output.images = false)",
        [](RunConfig& c) -> auto& { return c.images; }, Flag::sets_false));
    t.push_back(option("output", "remove_phase_ramp", "--keep-phase-ramp",
        "Write the object without its mean phase gradient over the lit area, the probe with the opposite one (the "
        "ramp the data cannot determine)|Write object and probe with the phase ramp the solver left (the data cannot "
        "determine it; output.remove_phase_ramp = false)",
        [](RunConfig& c) -> auto& { return c.remove_phase_ramp; }, Flag::sets_false));
    t.push_back(option("output", "quiet", "-q,--quiet", "No progress lines on the terminal",
        [](RunConfig& c) -> auto& { return c.quiet; }, Flag::sets_true));
    t.push_back(option("output", "log_file", "--log-file", "Also append the progress lines and warnings to this file",
        [](RunConfig& c) -> auto& { return c.log_file; }, Flag::none, "\"run.log\""));
    t.push_back(option("output", "error_every", "--error-every",
        "Epochs between errors against the file's ground truth (0: only at the end)",
        [](RunConfig& c) -> auto& { return c.error_every; }));
    t.push_back(option("output", "checkpoint_every", "--checkpoint-every",
        "Epochs between checkpoints written to the result file (0: only at the end and when stopped)",
        [](RunConfig& c) -> auto& { return c.checkpoint_every; }));
    // clang-format on
    // An option in a section to_toml does not write would be lost from
    // every stored configuration (and a resumed run).
    for (auto const& d : t)
      PTYKO_ASSERT(std::find(sections().begin(), sections().end(), d.section) != sections().end(), "option ",
                   d.key, " lies in section [", d.section, "], which sections() does not list");
    return t;
  }();
  return table;
}

std::string keys_of(std::string const& section) {
  std::string s;
  for (auto const& d : options())
    if (d.section == section) s += (s.empty() ? "" : ", ") + d.key;
  return s;
}

std::string tables() {
  std::string s;
  for (auto const& t : sections())
    if (!t.empty()) s += (s.empty() ? "[" : ", [") + t + "]";
  return s;
}

std::string at_line(std::string const& source, TomlNode const& n) {
  auto const line = n.line;
  return line > 0 ? fmt::format("{}:{}", source, line) : source;
}

void apply_one(RunConfig& cfg, std::string const& section, std::string const& key, TomlNode const& node,
               std::string const& source) {
  std::string const id = section.empty() ? key : section + "." + key;
  for (auto const& d : options()) {
    if (d.section != section || d.key != key) continue;
    d.read(cfg, node, at_line(source, node) + ": " + id);
    return;
  }
  if (section.empty()) {
    PTYKO_FAIL(at_line(source, node), ": unknown key '", key, "': valid top-level keys are ", keys_of(""),
               ", and the tables ", tables());
  }
  PTYKO_FAIL(at_line(source, node), ": unknown key '", id, "': valid keys in [", section, "] are ", keys_of(section));
}

bool writable_folder(fs::path const& folder, std::string& why) {
  // access() says yes to root for read-only folders: create a file instead.
  // Host name and pid: ranks on several nodes may test one shared folder at once.
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  fs::path const probe = folder / (".ptyko-write-test-" + std::string(host) + "-" + std::to_string(::getpid()));
  int const fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    why = std::strerror(errno);
    return false;
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

fs::path folder_of(std::string const& path) {
  fs::path const p(path);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

bool same_file(std::string const& a, std::string const& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
}

// -o for one view: a file in an existing, writable folder.
void check_output_file(std::string const& out) {
  std::error_code ec;
  PTYKO_REQUIRE(!fs::is_directory(out, ec), "-o ", out, ": is a folder; give a file name (e.g. ",
                (fs::path(out) / "result.h5").string(), ")");
  fs::path const folder = folder_of(out);
  PTYKO_REQUIRE(fs::exists(folder, ec), "-o ", out, ": folder ", folder.string(),
                " does not exist: create it first (mkdir -p ", folder.string(), ") or choose another -o");
  PTYKO_REQUIRE(fs::is_directory(folder, ec), "-o ", out, ": ", folder.string(), " is not a folder");
  std::string why;
  PTYKO_REQUIRE(writable_folder(folder, why), "-o ", out, ": cannot write in folder ", folder.string(), " (", why,
                "): choose a writable folder");
}

// -o for several views: a writable folder, or one that can be created.
void check_output_folder(std::string const& out) {
  std::error_code ec;
  std::string why;
  if (fs::exists(out, ec)) {
    PTYKO_REQUIRE(fs::is_directory(out, ec), "-o ", out,
                  ": with several inputs the output must be a folder, but it is a file");
    PTYKO_REQUIRE(writable_folder(out, why), "-o ", out, ": cannot write in this folder (", why, ")");
    return;
  }
  fs::path const parent = folder_of(fs::path(out).lexically_normal().string());
  PTYKO_REQUIRE(fs::is_directory(parent, ec), "-o ", out, ": cannot create the folder: ", parent.string(),
                " does not exist");
  PTYKO_REQUIRE(writable_folder(parent, why), "-o ", out, ": cannot create the folder in ", parent.string(), " (",
                why, ")");
}

template <class V>
bool in(V const& v, std::vector<V> const& list) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

std::string joined(std::vector<std::string> const& v) {
  std::string s;
  for (std::size_t k = 0; k < v.size(); ++k) s += (k == 0 ? "" : k + 1 == v.size() ? " or " : ", ") + v[k];
  return s;
}

}  // namespace

void add_run_options(CLI::App& cmd, ReconstructArgs& args) {
  for (auto const& d : options()) d.add_cli(cmd, args, d);
  cmd.add_option("--config", args.config_file,
                 "TOML file with any of these options (see --print-config); command-line flags override it");
  cmd.add_option("--resume", args.resume,
                 "Continue from a checkpoint (a result of ptyko reconstruct); with several inputs, from their "
                 "output folder");
  cmd.add_flag("--print-config", args.print_config,
               "Print the configuration (defaults, --config file, flags) as TOML and exit");
}

void apply_toml(RunConfig& cfg, std::string const& text, std::string const& source) {
  TomlNode const root = parse_toml(text, source);
  for (std::size_t k = 0; k < root.keys.size(); ++k) {
    std::string const& key = root.keys[k];
    TomlNode const& node = root.items[k];
    bool const section = key != "" && in(key, sections());
    if (!section) {
      apply_one(cfg, "", key, node, source);
      continue;
    }
    PTYKO_REQUIRE(node.kind == TomlNode::Kind::table, at_line(source, node), ": '", key, "' must be a table ([", key,
                  "])");
    for (std::size_t k2 = 0; k2 < node.keys.size(); ++k2) apply_one(cfg, key, node.keys[k2], node.items[k2], source);
  }
}

void apply_toml_file(RunConfig& cfg, std::string const& path) {
  std::error_code ec;
  PTYKO_REQUIRE(fs::is_regular_file(path, ec), "--config ", path, ": no such file");
  std::ifstream in(path);
  PTYKO_REQUIRE(in.good(), "--config ", path, ": cannot read the file: check its permissions");
  std::stringstream text;
  text << in.rdbuf();
  apply_toml(cfg, text.str(), path);
}

void apply_command_line(RunConfig& cfg, ReconstructArgs const& args) {
  for (auto const& d : options())
    if (args.given.count(d.id())) d.copy(cfg, args.cli);
}

namespace {

// The options' names and ranges, turned into the solver's options: they
// need no file.
void check_options(RunConfig& c) {
  auto const solvers = solver_names();
  PTYKO_REQUIRE(in(c.solver.solver, solvers), "--solver '", c.solver.solver, "' is not a solver: use ",
                joined(solvers));
  auto const strategies = parallel::strategy_names();
  PTYKO_REQUIRE(in(c.strategy, strategies) || c.strategy == "neighbour", "--strategy '", c.strategy,
                "' is not a strategy: use ", joined(strategies));
  PTYKO_REQUIRE(c.noise == "gaussian" || c.noise == "poisson", "--noise '", c.noise,
                "' is not a noise model: use gaussian or poisson");
  PTYKO_REQUIRE(c.precision == "single" || c.precision == "double", "--precision '", c.precision,
                "' is not a precision: use single or double");
  PTYKO_REQUIRE(c.illumination == "batch" || c.illumination == "all", "--illumination '", c.illumination,
                "' is not valid: use batch or all");
  c.solver.batching = parse_batching(c.batching);
  c.solver.fft_planner = parse_fft_planner(c.fft_planner);
  c.solver.noise = c.noise == "gaussian" ? NoiseModel::gaussian : NoiseModel::poisson;
  c.solver.illumination = c.illumination == "batch" ? IlluminationNorm::batch : IlluminationNorm::all;
  c.double_precision = c.precision == "double";

  PTYKO_REQUIRE(c.solver.epochs >= 0, "--epochs must be >= 0, got ", c.solver.epochs);
  PTYKO_REQUIRE(!c.batch_size || *c.batch_size >= 1, "--batch-size must be >= 1, got ", c.batch_size.value_or(0),
                " (leave it out for the solver's default)");
  PTYKO_REQUIRE(!c.alpha || (*c.alpha >= 0 && *c.alpha <= 1), "--alpha must be in [0, 1], got ",
                c.alpha.value_or(0));
  PTYKO_REQUIRE(!c.beta || (*c.beta >= 0 && *c.beta <= 1), "--beta must be in [0, 1], got ", c.beta.value_or(0));
  PTYKO_REQUIRE(!c.momentum || (*c.momentum >= 0 && *c.momentum < 1), "--momentum must be in [0, 1), got ",
                c.momentum.value_or(0));
  PTYKO_REQUIRE(!c.probe_update_start || *c.probe_update_start >= 0, "--probe-update-start must be >= 0, got ",
                c.probe_update_start.value_or(0));
  PTYKO_REQUIRE(c.solver.cost_every >= 0, "--cost-every must be >= 0, got ", c.solver.cost_every);
  PTYKO_REQUIRE(c.solver.overlap_passes >= 1, "--overlap-passes must be >= 1, got ", c.solver.overlap_passes);
  PTYKO_REQUIRE(!c.fourier_relax || (*c.fourier_relax >= 0 && *c.fourier_relax < 1),
                "--fourier-relax must be in [0, 1) (0: the plain modulus projection), got ",
                c.fourier_relax.value_or(0));
  PTYKO_REQUIRE(c.probe_diameter >= 0, "--probe-diameter must be >= 0 pixels, got ", c.probe_diameter);
  parse_probe_focus(c.probe_focus);  // a UserError naming --probe-focus and its values
  PTYKO_REQUIRE(c.probe_focus_frames >= 0, "--probe-focus-frames must be >= 0 (0: every frame), got ",
                c.probe_focus_frames);
  PTYKO_REQUIRE(c.error_every >= 0, "--error-every must be >= 0, got ", c.error_every);
  PTYKO_REQUIRE(c.checkpoint_every >= 0, "--checkpoint-every must be >= 0, got ", c.checkpoint_every);
  PTYKO_REQUIRE(c.sync_every >= 1, "--sync-every must be >= 1, got ", c.sync_every);
  PTYKO_REQUIRE(c.sync_every == 1 || c.strategy == "neighbor" || c.strategy == "neighbour", "--sync-every ",
                c.sync_every, " is the approximate mode of --strategy neighbor, not of ", c.strategy,
                ": drop --sync-every or use --strategy neighbor");
  PTYKO_REQUIRE(c.solver.positions_start >= -1, "--refine-start must be >= 0 (an epoch, from 0), got ",
                c.solver.positions_start);
  PTYKO_REQUIRE(c.solver.positions_max_shift >= 0 || c.solver.positions_max_shift == -1,
                "--refine-max-shift must be >= 0 pixels, got ", c.solver.positions_max_shift);
  PTYKO_REQUIRE(c.load.crop.size >= 0, "--crop must be >= 0 pixels (0: no crop), got ", c.load.crop.size);
  PTYKO_REQUIRE(c.load.crop.bin >= 1, "--bin must be >= 1 (1: no binning), got ", c.load.crop.bin);
  PTYKO_REQUIRE(!c.adu_per_photon || (std::isfinite(*c.adu_per_photon) && *c.adu_per_photon > 0),
                "--adu-per-photon must be > 0 (detector units per photon), got ", c.adu_per_photon.value_or(0));
  PTYKO_REQUIRE(!c.mask_above || *c.mask_above > 0, "--mask-above must be > 0 counts, got ", c.mask_above.value_or(0));
  PTYKO_REQUIRE(c.load.crop.size > 0 || (!c.load.crop.centre_y && !c.load.crop.centre_x),
                "--crop-centre-y/-x place the --crop window: give --crop N too");
  PTYKO_REQUIRE(!c.load.crop.find_beam || (!c.load.crop.centre_y && !c.load.crop.centre_x),
                "--find-beam and --crop-centre-y/-x both place the window: give one of them");
  c.solver.batch_size = c.batch_size.value_or(0);
  c.solver.alpha = c.alpha.value_or(-1);
  c.solver.beta = c.beta.value_or(-1);
  c.solver.probe_update_start = c.probe_update_start.value_or(-1);
  c.solver.fourier_relax = c.fourier_relax.value_or(-1);
  c.solver.momentum = c.momentum.value_or(-1);
  c.solver.refine_background = c.refine_background.value_or(false);  // the frames may turn it on (view_run.cpp)
  {
    // The solver's own checks (modes, noise model per solver, ...), before
    // any file is read; the batch size against the frames comes later.
    SolverOptions check = c.solver;
    resolve_solver_defaults(check, std::numeric_limits<std::size_t>::max() / 2);
  }
}

// The inputs, --list's lines added (blank lines and # comments skipped).
void read_inputs(RunConfig& c) {
  if (!c.list_file.empty()) {
    std::ifstream in(c.list_file);
    PTYKO_REQUIRE(in.good(), "--list ", c.list_file, ": cannot read the file: check the path");
    for (std::string line; std::getline(in, line);) {
      auto const first = line.find_first_not_of(" \t\r");
      if (first == std::string::npos || line[first] == '#') continue;
      auto const last = line.find_last_not_of(" \t\r");
      c.inputs.push_back(line.substr(first, last - first + 1));
    }
    c.list_file.clear();  // read once (the list is now in inputs)
  }
  PTYKO_REQUIRE(!c.inputs.empty(), "no input: give a CXI file (or several, or --list FILE)");
}

// The result file (a folder with several inputs) and the --log-file can be
// written, and neither is an input: checked before any (possibly long) work.
void check_outputs(RunConfig const& c) {
  PTYKO_REQUIRE(!c.output.empty(), "no output: give -o OUT.h5 (a folder with several inputs)");
  for (auto const& in : c.inputs) {
    PTYKO_REQUIRE(!same_file(in, c.output), "-o ", c.output, " is the input file ", in,
                  ": choose another name, the input must stay untouched");
    PTYKO_REQUIRE(c.log_file.empty() || !same_file(in, c.log_file), "--log-file ", c.log_file,
                  " is the input file ", in, ": choose another name");
  }
  if (c.inputs.size() > 1) {
    check_output_folder(c.output);
    std::vector<std::string> stems;
    for (auto const& in : c.inputs) stems.push_back(fs::path(in).stem().string());
    std::sort(stems.begin(), stems.end());
    PTYKO_REQUIRE(std::adjacent_find(stems.begin(), stems.end()) == stems.end(),
                  "two inputs have the same file name: results would overwrite each other; rename one");
  } else {
    check_output_file(c.output);
  }
  if (!c.log_file.empty()) {
    std::error_code ec;
    fs::path const folder = folder_of(c.log_file);
    PTYKO_REQUIRE(fs::is_directory(folder, ec), "--log-file ", c.log_file, ": folder ", folder.string(),
                  " does not exist: create it first");
    PTYKO_REQUIRE(!fs::is_directory(c.log_file, ec), "--log-file ", c.log_file, ": is a folder; give a file name");
  }
}

}  // namespace

void finish_run_config(RunConfig& c) {
  check_options(c);
  read_inputs(c);
  check_outputs(c);
}

std::string to_toml(RunConfig const& c, bool comments) {
  std::string t;
  if (comments)
    t += "# ptyko reconstruct configuration (ptyko reconstruct --config FILE INPUT -o OUT).\n"
         "# Every key is optional; command-line flags override the file.\n";
  for (auto const& section : sections()) {
    if (!section.empty()) t += fmt::format("\n[{}]\n", section);
    for (auto const& d : options()) {
      if (d.section != section) continue;
      auto const lit = d.literal(c);
      if (comments) {
        std::string const flag = d.cli == "inputs" ? "arguments" : d.cli.substr(d.cli.rfind(',') + 1);
        t += fmt::format("# {} ({}{})\n", d.help, flag, d.help != d.cli_help ? " sets false" : "");
      }
      if (lit) {
        t += fmt::format("{} = {}\n", d.key, *lit);
      } else if (comments) {
        t += fmt::format("# {} = {}\n", d.key, d.example);
      }
    }
  }
  return t;
}

std::string absolute_file_spec(std::string const& spec) {
  if (spec.empty()) return spec;
  auto const [file, dataset] = split_file_dataset(spec);
  return fs::absolute(file).lexically_normal().string() + (dataset.empty() ? "" : ":" + dataset);
}

RunConfig resolved_config(RunConfig const& cfg, SolverOptions const& s, std::string const& input,
                          std::string const& output) {
  RunConfig r = cfg;
  r.inputs = {fs::absolute(input).lexically_normal().string()};
  r.list_file.clear();
  r.output = fs::absolute(output).lexically_normal().string();
  // A resumed run finds the mask and the probe from anywhere.
  r.load.mask.spec = absolute_file_spec(r.load.mask.spec);
  r.probe_guess = absolute_file_spec(r.probe_guess);
  r.solver = s;
  r.batching = to_string(s.batching);
  r.fft_planner = to_string(s.fft_planner);
  r.batch_size = s.batch_size;
  r.alpha = s.alpha >= 0 ? std::optional<double>(s.alpha) : std::nullopt;
  r.beta = s.beta >= 0 ? std::optional<double>(s.beta) : std::nullopt;
  r.probe_update_start = s.probe_update_start;
  r.fourier_relax = s.fourier_relax >= 0 ? std::optional<double>(s.fourier_relax) : std::nullopt;
  r.momentum = s.momentum >= 0 ? std::optional<double>(s.momentum) : std::nullopt;
  r.refine_background = s.refine_background;  // as the frames decided it: a resumed run keeps it
  return r;
}

std::vector<std::string> unused_options(RunConfig const& c, std::set<std::string> const& given) {
  auto const flag_of = [](std::string const& id) {  // the option table's long name
    for (OptionDef const& d : options())
      if (d.id() == id) return d.cli.substr(d.cli.rfind(',') + 1);
    return id;
  };
  std::vector<std::string> out;
  // Options that only some solvers take.
  std::vector<std::pair<char const*, std::vector<std::string>>> const takers = {
      {"solver.alpha", {"rpie", "epie", "lsqml"}},
      {"solver.beta", {"rpie", "epie", "lsqml", "raar"}},  // DM is RAAR with beta 1
      {"solver.illumination", {"rpie", "epie", "lsqml"}},
      {"solver.fourier_relax", {"dm", "raar"}},
      {"solver.cost_every", {"dm", "raar"}},
      {"solver.overlap_passes", {"dm", "raar"}},
  };
  for (auto const& [id, solvers] : takers)
    if (given.count(id) && !in(c.solver.solver, solvers))
      out.push_back(fmt::format("{} is not used by {} (only by {})", flag_of(id), c.solver.solver, joined(solvers)));
  // Options of a refinement or of the probe's update, without it.
  struct Needs {
    std::vector<char const*> ids;
    bool on;
    char const* what;
  };
  SolverOptions const& o = c.solver;
  std::vector<Needs> const needs = {
      {{"positions.refine_start", "positions.refine_every", "positions.refine_step", "positions.refine_max_shift"},
       o.refine_positions,
       "--refine-positions"},
      {{"intensities.start", "intensities.every"}, o.refine_intensities, "--refine-intensities"},
      {{"background.start", "background.every"}, c.refine_background.value_or(true), "--refine-background"},
      {{"probe.update_start", "probe.support"}, o.update_probe, "the probe's update (drop --no-probe-update)"},
  };
  for (Needs const& n : needs)
    for (char const* id : n.ids)
      if (given.count(id) && !n.on) out.push_back(fmt::format("{} is not used without {}", flag_of(id), n.what));
  return out;
}

void forget_solver_defaults(RunConfig& c) {
  c.batch_size.reset();
  c.alpha.reset();
  c.beta.reset();
  c.momentum.reset();
  c.probe_update_start.reset();
  c.fourier_relax.reset();
}

std::string view_output(RunConfig const& c, int v) {
  return (fs::path(c.output) / fs::path(c.inputs[v]).stem()).string() + ".h5";
}

std::string provenance(int ranks) {
  std::string backend = Kokkos::DefaultExecutionSpace::name();
  return fmt::format("ptyko 0.1.0\nkokkos {}.{}.{} ({})\nranks {}\n", KOKKOS_VERSION / 10000,
                     KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, backend, ranks);
}

}  // namespace ptyko::drivers
