#pragma once
// `ptyko info`: what a CXI file holds, in the numbers a beamline scientist
// checks before a reconstruction. Works on files from any program.

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/frame_stats.hpp>
#include <ptyko/core/geometry.hpp>

#include <string>

namespace ptyko {

struct DatasetSummary {
  CxiInfo info;
  bool geometry_ok = false;
  std::string geometry_problem;  ///< why the geometry is unusable, if it is
  Geometry geometry;
  // Counts per frame over measured pixels.
  double counts_mean = 0, counts_min = 0, counts_max = 0, max_pixel = 0;
  std::size_t empty_frames = 0;
  std::size_t invalid_frames = 0;  ///< of the empty frames, those read as zeros (no intensity in most pixels)
  std::size_t nonfinite_pixels = 0;  ///< measured pixels with NaN or Inf in some frame (masked by reconstruct)
  /// Measured pixels at the data type's largest value in some frame
  /// (saturated counters; masked by reconstruct unless --mask-above says otherwise).
  std::size_t saturated_pixels = 0;
  /// The largest value below the type's largest and how many values hold it
  /// (looks_clipped: frames clipped there).
  double top_value = 0;
  std::size_t at_top_value = 0;
  /// Negative values at measured pixels (a subtracted background's noise),
  /// read as 0, and the most negative (0: none). A detector's marks are
  /// masked (CxiInfo::marked_pixels), not counted here.
  std::size_t negative_values = 0;
  double most_negative = 0;
  /// Measured pixel values that are not whole numbers (frames normalised or
  /// corrected as floats: not photon counts, --adu-per-photon).
  std::size_t fractional_pixels = 0, measured_values = 0;
  ValueSurvey values;  ///< what the values say about their unit (adu_per_photon_implied)
  double mask_coverage = 1;  ///< fraction of detector pixels measured
  /// Centre of intensity of all frames (measured pixels), stored (y, x)
  /// pixels: where the beam is, for --crop-centre-y/-x (CXI files centre it
  /// at (ny / 2, nx / 2)). NaN for files without counts.
  double centroid_y = 0, centroid_x = 0;
  // Scan, in metres and object pixels (when the geometry is usable).
  double scan_extent_y_m = 0, scan_extent_x_m = 0;
  std::size_t unplaced_frames = 0;  ///< frames without a finite translation (reconstruct skips them)
  int object_height = 0, object_width = 0;
  double step_px = 0;
  double probe_diameter_px = 0;
  bool probe_from_file = false;  ///< the file has a probe guess (else diameter/overlap unknown)
  double overlap = 0;
};

/// Reads `path` (all frames, in chunks) and computes the summary. Throws
/// UserError for files that cannot be read as CXI at all.
/// `mask`: a detector mask from another file (--mask) added to the file's.
DatasetSummary summarize_cxi(std::string const& path, PositionConvention const& conv = {},
                             FrameCrop const& crop = {}, MaskFile const& mask = {},
                             GeometryOverride const& geometry = {});

/// Multi-line human-readable report.
std::string format_summary(DatasetSummary const& s);

}  // namespace ptyko
