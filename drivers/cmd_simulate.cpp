// `ptyko simulate`: writes a simulated CXI dataset with its ground truth.

#include "commands.hpp"

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/scan.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/environment.hpp>

#include <fmt/format.h>

#include <chrono>
#include <memory>

namespace ptyko::drivers {

void add_simulate(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("simulate", "Simulate a ptychography dataset (CXI) with its ground truth");
  cmd->footer(
      "Example:\n  ptyko simulate -o sim.cxi --frames 400 --detector 64 --modes 2 --photons 1e6\n"
      "The truth is stored in /entry_1/ptyko_truth/{object,probe,positions_px}.");
  auto opts = std::make_shared<SimulationOptions>();
  auto out = std::make_shared<std::string>();
  auto scan = std::make_shared<std::string>("fermat");
  auto precision = std::make_shared<std::string>("single");
  cmd->add_option("-o,--output", *out, "CXI file to write")->required();
  cmd->add_option("--frames", opts->frames, "Number of scan positions")->capture_default_str();
  cmd->add_option("--detector", opts->detector, "Detector frame edge D (frames are D x D)")->capture_default_str();
  cmd->add_option("--modes", opts->modes, "Incoherent probe modes")->capture_default_str();
  cmd->add_option("--photons", opts->photons, "Mean counts per frame")->capture_default_str();
  cmd->add_option("--scan", *scan, "Scan pattern: fermat or raster")->capture_default_str();
  cmd->add_option("--step", opts->step_px, "Scan step in object pixels (0: 70 % overlap)")->capture_default_str();
  cmd->add_option("--seed", opts->seed, "Random seed (scan jitter, phantom, noise)")->capture_default_str();
  cmd->add_option("--precision", *precision, "Forward-model precision: single or double")->capture_default_str();
  cmd->add_option("--energy-kev", opts->energy_kev, "Photon energy, keV")->capture_default_str();
  cmd->add_option("--distance", opts->distance_m, "Sample-detector distance, m")->capture_default_str();
  cmd->add_option("--pixel-size", opts->pixel_size_m, "Detector pixel size, m")->capture_default_str();
  cmd->add_option("--dead-pixels", opts->dead_pixel_fraction, "Fraction of masked (dead) detector pixels")
      ->capture_default_str();
  cmd->add_option("--flux-jitter", opts->flux_jitter,
                  "Relative rms of each frame's incident flux (a beam that varies between frames; no monitor is "
                  "written, the truth keeps the fluxes)")
      ->capture_default_str();
  cmd->add_option("--background", opts->background,
                  "Mean counts per pixel of an incoherent background in every frame (air scatter's fall-off from "
                  "the centre; the truth keeps it)")
      ->capture_default_str();
  cmd->add_flag("--diverging", opts->diverging_probe,
                "The beam diverges at the sample (the sample downstream of the probe's focus; default: upstream, "
                "converging)");
  action = nullptr;
  cmd->callback([&action, opts, out, scan, precision] {
    action = [opts, out, scan, precision](parallel::Environment& env) {
      PTYKO_REQUIRE(*precision == "single" || *precision == "double", "--precision '", *precision,
                    "' is not a precision: use single or double");
      opts->double_precision = *precision == "double";
      opts->scan = parse_scan_pattern(*scan);
      auto const t0 = std::chrono::steady_clock::now();
      CxiContents contents = simulate(*opts);
      if (env.rank() == 0) {
        cxi_write(*out, contents);
        double const secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double const step = typical_step(contents.truth->positions_px);
        fmt::print("simulate: wrote {} ({} frames of {}x{}, {} mode(s), object {}x{}, step {:.2f} px, "
                   "overlap {:.0f} %) in {:.2f} s\n",
                   *out, opts->frames, opts->detector, opts->detector, opts->modes,
                   contents.truth->object.extent(0), contents.truth->object.extent(1), step,
                   100 * overlap_ratio(step, probe_diameter_px(contents.truth->probe)), secs);
      }
      return 0;
    };
  });
}

}  // namespace ptyko::drivers
