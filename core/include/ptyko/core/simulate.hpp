#pragma once
// Built-in simulated ptychography datasets (`ptyko simulate`): a phantom
// object (Siemens star in amplitude, smooth blobs in phase), a defocused-
// aperture probe with M orthogonal incoherent modes, a Fermat-spiral or
// raster scan, the forward model of ptyko and Poisson noise. The result is a
// CXI file's contents, with the ground truth attached.

#include <ptyko/core/cxi.hpp>

#include <cstdint>
#include <string>

namespace ptyko {

enum class ScanPattern { fermat, raster };

struct SimulationOptions {
  int frames = 400;            ///< N scan positions
  int detector = 64;           ///< D: frames are D x D
  int modes = 2;               ///< incoherent probe modes
  double photons = 1e6;        ///< mean total counts per frame
  ScanPattern scan = ScanPattern::fermat;
  double step_px = 0;          ///< scan step in object pixels; 0: 70 % overlap
  std::uint64_t seed = 1;
  bool double_precision = false;  ///< precision of the forward model
  double energy_kev = 8.0;
  double distance_m = 3.0;
  double pixel_size_m = 75e-6;
  double probe_diameter_fraction = 0.45;  ///< probe diameter / D (90 % power)
  /// The beam diverges at the sample (the sample sits downstream of the
  /// probe's focus); false: it converges (upstream). The two probes are each
  /// other's complex conjugates, and a reconstruction must not favour either.
  bool diverging_probe = false;
  double dead_pixel_fraction = 0;         ///< masked random pixels (0: no mask)
  /// Relative rms of each frame's incident flux about the mean (log-normal;
  /// 0: every frame sees the same beam). The truth keeps the fluxes; the file
  /// has no monitor, as when none was recorded.
  double flux_jitter = 0;
  /// Mean counts per pixel and frame of an incoherent background added to
  /// every frame before the noise (0: none): air scatter's shape, falling
  /// from the centre as 1 / (1 + (r / (D / 4))^2). The truth keeps it.
  double background = 0;
};

/// Probe diameter (object pixels) of the smallest centred disc that holds 90 %
/// of the power of all modes; the overlap of two positions a step s apart is
/// 1 - s / diameter (docs/conventions.md).
double probe_diameter_px(HostComplex3 const& probe);

/// Runs the simulation; throws UserError on invalid options.
CxiContents simulate(SimulationOptions const& options);

ScanPattern parse_scan_pattern(std::string const& name);

}  // namespace ptyko
