#include <ptyko/core/scan.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/core/frame_stats.hpp>
#include <ptyko/core/summary.hpp>
#include <ptyko/kernels/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ptyko {

DatasetSummary summarize_cxi(std::string const& path, PositionConvention const& conv, FrameCrop const& crop,
                             MaskFile const& mask_file, GeometryOverride const& given) {
  DatasetSummary s;
  s.info = cxi_inspect(path, crop);
  if (!mask_file.spec.empty()) cxi_add_mask_file(s.info, mask_file);
  cxi_mask_marked_pixels(s.info);  // as reconstruct does by default
  cxi_override_geometry(s.info, given);
  CxiInfo const& info = s.info;
  int const D = info.ny;
  try {
    s.geometry = info.geometry();
    s.geometry_ok = true;
  } catch (UserError const& e) {
    s.geometry_problem = e.what();
  }

  HostMask mask = cxi_read_mask(info);
  std::size_t measured = 0;
  for (std::size_t k = 0; k < mask.span(); ++k) measured += mask.data()[k] != 0;
  s.mask_coverage = double(measured) / double(mask.span());

  // Frames in chunks: counts per frame.
  s.counts_min = std::numeric_limits<double>::infinity();
  std::size_t const chunk = 256;
  double total = 0, moment_y = 0, moment_x = 0;
  std::uint64_t step = 0;  // gcd of the whole nonzero values so far (0: none yet)
  double smallest = std::numeric_limits<double>::infinity();
  std::size_t zeros = 0;
  std::vector<char> nonfinite(std::size_t(D) * std::size_t(info.nx), 0);  // pixels with NaN or Inf somewhere
  std::vector<char> saturated(nonfinite.size(), 0);  // pixels at the data type's largest value somewhere
  double const ceiling = data_type_ceiling(info.data_type);
  FrameReadBuffer read;  // every chunk in the same memory
  for (std::size_t first = 0; first < info.frames; first += chunk) {
    std::size_t const n = std::min(chunk, info.frames - first);
    std::vector<std::size_t> idx(n);
    std::iota(idx.begin(), idx.end(), first);
    HostFrames frames = cxi_read_frames(info, idx, read);
    s.invalid_frames += read.invalid_frames.size();
    s.negative_values += read.negative_values;
    s.most_negative = std::min(s.most_negative, double(read.most_negative));
    for (std::size_t f = 0; f < n; ++f) {
      double counts = 0;
      for (int y = 0; y < D; ++y)
        for (int x = 0; x < info.nx; ++x) {
          if (!mask(y, x)) continue;
          double const v = frames(f, y, x);
          if (!std::isfinite(v)) {  // reconstruct masks the pixel
            nonfinite[std::size_t(y) * std::size_t(info.nx) + std::size_t(x)] = 1;
            continue;
          }
          if (ceiling > 0 && v >= ceiling) saturated[std::size_t(y) * std::size_t(info.nx) + std::size_t(x)] = 1;
          counts += v;
          moment_y += v * y;
          moment_x += v * x;
          s.max_pixel = std::max(s.max_pixel, v);
          if (!(ceiling > 0 && v >= ceiling)) {  // the largest value below the type's: a clip?
            if (v > s.top_value) {
              s.top_value = v;
              s.at_top_value = 0;
            }
            s.at_top_value += v == s.top_value;
          }
          bool const fraction = v != std::floor(v);
          s.fractional_pixels += fraction;
          ++s.measured_values;
          if (v == 0) {
            ++zeros;
          } else if (!fraction) {
            smallest = std::min(smallest, v);
            // The common step, by gcd only where it changes (photon counts: at once 1).
            auto const u = std::uint64_t(v);
            if (step != 1 && (step == 0 || u % step != 0)) step = std::gcd(step, u);
          }
        }
      s.counts_min = std::min(s.counts_min, counts);
      s.counts_max = std::max(s.counts_max, counts);
      s.empty_frames += counts == 0;
      total += counts;
    }
  }
  s.counts_mean = total / double(info.frames);
  s.nonfinite_pixels = std::size_t(std::count(nonfinite.begin(), nonfinite.end(), 1));
  s.saturated_pixels = std::size_t(std::count(saturated.begin(), saturated.end(), 1));
  s.values.whole_numbers = is_integer_type(info.data_type) || s.fractional_pixels == 0;
  s.values.unit_step = s.fractional_pixels == 0 ? std::max<double>(1.0, double(step)) : 1.0;
  s.values.smallest_nonzero = s.fractional_pixels == 0 && std::isfinite(smallest) ? smallest : 0.0;
  s.values.zero_values = double(zeros);
  s.values.fractional_values = double(s.fractional_pixels);
  s.values.nonzero_values = double(s.measured_values - zeros);
  // In stored pixels, as --crop-centre-y/-x take them (NaN without counts).
  auto const centroid = info.stored_position(moment_y / total, moment_x / total);
  s.centroid_y = centroid[0];
  s.centroid_x = centroid[1];

  if (!s.geometry_ok) return s;
  auto positions_m = probe_positions_from_translations(cxi_read_translations(info), conv);
  auto const unplaced = stand_in_missing_positions(positions_m, path + ": " + info.translation_path);
  s.unplaced_frames = unplaced.size();
  positions_m = positions_except(positions_m, unplaced);  // the grid and step of the placed frames
  double ymin = std::numeric_limits<double>::infinity(), ymax = -ymin, xmin = ymin, xmax = -ymin;
  for (auto const& p : positions_m) {
    ymin = std::min(ymin, p[0]);
    ymax = std::max(ymax, p[0]);
    xmin = std::min(xmin, p[1]);
    xmax = std::max(xmax, p[1]);
  }
  s.scan_extent_y_m = ymax - ymin;
  s.scan_extent_x_m = xmax - xmin;
  ObjectGrid const grid = make_object_grid(positions_m, s.geometry);
  s.object_height = grid.height;
  s.object_width = grid.width;
  std::vector<std::array<double, 2>> px;
  px.reserve(positions_m.size());
  for (auto const& p : positions_m) px.push_back(grid.to_pixels(p));
  s.step_px = typical_step(px);

  HostComplex3 illumination = cxi_read_illumination(info);
  if (illumination.extent(0) > 0) {
    s.probe_diameter_px = probe_diameter_px(illumination);
    s.probe_from_file = true;
    s.overlap = overlap_ratio(s.step_px, s.probe_diameter_px);
  }
  return s;
}

std::string format_summary(DatasetSummary const& s) {
  auto const& i = s.info;
  std::string out;
  auto line = [&](std::string const& k, std::string const& v) { out += fmt::format("  {:<22} {}\n", k, v); };
  out += fmt::format("{}\n", i.path);
  line("frames", fmt::format("{} of {} x {} pixels ({}, at {})", i.frames, i.stored_ny, i.stored_nx, i.data_type,
                             i.data_path));
  if (i.resampled()) {
    int const wy = i.ny * i.bin, wx = i.nx * i.bin;
    line("crop", fmt::format("{}{} x {} pixels from row {}, column {} (beam at {}, {}){}; everything below describes {}",
                             i.auto_crop ? "the frames are not square: " : "", wy, wx, i.window_y, i.window_x,
                             i.window_y + wy / 2, i.window_x + wx / 2,
                             i.bin > 1 ? fmt::format(", binned {} x {} into {} x {}", i.bin, i.bin, i.ny, i.nx) : "",
                             i.bin > 1 ? "the binned frames" : "them"));
  }
  line("counts per frame", fmt::format("mean {:.4g}, min {:.4g}, max {:.4g}", s.counts_mean, s.counts_min, s.counts_max));
  line("brightest pixel", fmt::format("{:.6g}", s.max_pixel));
  double const fractional = double(s.fractional_pixels) / double(std::max<std::size_t>(1, s.measured_values));
  std::string why;
  double const adu = adu_per_photon_implied(s.values, &why);
  line("photons", !s.values.whole_numbers
                      ? fmt::format("unknown: {:.3g} % of the values hold fractions; --adu-per-photon G if G units "
                                    "make one photon",
                                    100.0 * fractional)
                  : adu == 1 ? std::string("taken as counts (whole numbers); --adu-per-photon G for G detector "
                                           "units each")
                  : adu > 1  ? fmt::format("{}; --adu-per-photon G to say otherwise", why)
                             : fmt::format("unknown: {}; --adu-per-photon G if G units make one photon", why));
  line("intensity centre", fmt::format("(y, x) = ({:.1f}, {:.1f}) of the stored frames (their centre: {}, {})",
                                       s.centroid_y, s.centroid_x, i.stored_ny / 2, i.stored_nx / 2));
  if (s.empty_frames)
    line("empty frames", s.invalid_frames == 0 ? fmt::format("{}", s.empty_frames)
                                               : fmt::format("{} ({} of them hold no intensity in most pixels: NaN, "
                                                             "infinity, or negative values and no counts)",
                                                             s.empty_frames, s.invalid_frames));
  if (s.nonfinite_pixels)
    line("invalid pixels", fmt::format("{} hold NaN or infinity in some frame: reconstruct masks them",
                                       s.nonfinite_pixels));
  if (s.saturated_pixels)
    line("saturated pixels", fmt::format("{} reach {:.0f}, the largest {} value, in some frame: reconstruct masks them "
                                         "(--mask-above above it keeps them)",
                                         s.saturated_pixels, data_type_ceiling(i.data_type), i.data_type));
  if (looks_clipped(s.top_value, double(s.at_top_value), i.frames))
    line("clipped values", fmt::format("{} share the largest value {:.6g}: a detector (or a program) clipping there; "
                                       "reconstruct masks the pixels that reach it",
                                       s.at_top_value, s.top_value));
  if (!i.marked_pixels.empty())
    line("marked pixels", fmt::format("{} hold the same mark ({}) in every frame looked at (a negative value or "
                                      "the data type's largest: a detector's marks of gaps and bad pixels): masked",
                                      i.marked_pixels.size(), fmt::join(i.mark_values, ", ")));
  if (s.negative_values) {
    double const share = double(s.negative_values) / double(std::max<std::size_t>(1, s.measured_values));
    line("negative values", fmt::format("{} ({:.3g} % of the measured values, down to {:.6g}; a subtracted "
                                        "background's noise): read as 0{}",
                                        s.negative_values, 100.0 * share, s.most_negative,
                                        share >= k_negative_share_for_background
                                            ? "; reconstruct refines the background (--no-refine-background: not)"
                                            : ""));
  }
  std::string const sources = i.mask_file.empty() ? (i.has_mask ? "" : " (no mask in file)")
                              : fmt::format(" ({}{}:{}{})", i.has_mask ? "the file's and " : "", i.mask_file,
                                            i.mask_dataset, i.mask_invert ? ", inverted" : "");
  line("mask", fmt::format("{:.2f} % of pixels measured{}", 100 * s.mask_coverage, sources));
  if (i.beam_found)
    line("beam (found)", fmt::format("(y, x) = ({}, {}) of the stored frames: the window is centred there",
                                     (*i.beam_found)[0], (*i.beam_found)[1]));
  if (i.beam_from_corner)
    line("beam (corner_position)", fmt::format("(y, x) = ({:.1f}, {:.1f}) of the stored frames",
                                                (*i.beam_from_corner)[0], (*i.beam_from_corner)[1]));
  if (!i.orientation.is_default() || i.orientation.rotation_deg > 0)
    line("detector orientation",
         fmt::format("{} against CXI's default (basis_vectors){}", i.orientation.describe(),
                     i.orientation.rotation_deg > 0
                         ? fmt::format("; turned {:.2f} degrees about the beam (not corrected)", i.orientation.rotation_deg)
                         : std::string()));
  if (i.has_dark) line("dark frame", fmt::format("subtracted from every frame ({})", i.dark_path));
  if (!i.monitor_scale.empty()) {
    auto const beamless = std::count(i.monitor_scale.begin(), i.monitor_scale.end(), 0.0);
    line("monitor", fmt::format("frames normalised to the median flux (/entry_1/data_1/monitor){}",
                                beamless > 0 ? fmt::format("; {} frame(s) below a tenth of it: skipped", beamless)
                                             : std::string()));
  }
  if (!s.geometry_ok) {
    line("geometry", "unusable: " + s.geometry_problem);
    return out;
  }
  auto const& g = s.geometry;
  line("energy", fmt::format("{:.4f} keV ({:.6g} J){}", g.energy_joule() / (1e3 * electron_volt), g.energy_joule(),
                             i.energy_given ? " (--energy-kev)" : i.energy_joule ? "" : " (from wavelength)"));
  line("wavelength", fmt::format("{:.6g} m{}", g.wavelength_m, i.wavelength_m ? "" : " (from energy)"));
  line("detector distance", fmt::format("{:.6g} m{}", g.distance_m, i.distance_given ? " (--distance)" : ""));
  line("detector pixel", fmt::format("{:.6g} x {:.6g} m (y x){}", g.pixel_size_y_m, g.pixel_size_x_m,
                                     i.pixel_size_given ? " (--pixel-size)" : ""));
  line("object pixel", fmt::format("{:.6g} x {:.6g} m (y x)", g.object_pixel_size_y(), g.object_pixel_size_x()));
  line("scan extent", fmt::format("{:.6g} x {:.6g} m (y x)", s.scan_extent_y_m, s.scan_extent_x_m));
  if (s.unplaced_frames)
    line("unplaced frames", fmt::format("{} (their translations are not finite numbers): reconstruct skips "
                                                "them", s.unplaced_frames));
  line("object size", fmt::format("{} x {} pixels", s.object_height, s.object_width));
  line("scan step", fmt::format("{:.3f} pixels (median nearest neighbour)", s.step_px));
  if (s.probe_from_file) {
    line("probe diameter", fmt::format("{:.2f} pixels (90 % power of the file's illumination)", s.probe_diameter_px));
    line("overlap", fmt::format("{:.1f} % (1 - step / probe diameter)", 100 * s.overlap));
  } else {
    // The data alone do not fix the probe's size (the exit wave's
    // autocorrelation mixes probe and object); reconstruct reports it.
    line("overlap", "unknown: the file has no probe guess (ptyko reconstruct reports it from the result)");
  }
  line("probe guess", i.illumination_modes ? fmt::format("{} mode(s)", i.illumination_modes) : "none");
  line("ground truth", i.has_truth ? "yes (/entry_1/ptyko_truth)" : "no");
  return out;
}

}  // namespace ptyko
