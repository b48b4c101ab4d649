#include "view_checks.hpp"

#include <ptyko/core/scan.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/kernels/error.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <cmath>

namespace ptyko::drivers {

void check_object_memory(ScanLayout const& layout, parallel::Decomposition const& d, std::size_t real_bytes) {
  double const area = double(d.tile_height) * double(d.tile_width);
  // object + two complex sums + two real weights (the "all" illumination)
  double const bytes = area * double(real_bytes) * (3 * 2 + 2);
  long const pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  double const memory = double(pages) * double(page);
  PTYKO_REQUIRE(bytes < 0.5 * memory, layout.info.path, ": ", layout.info.translation_path, ": the scan spans an ",
                layout.grid.height, " x ", layout.grid.width, " pixel object, which needs about ",
                fmt::format("{:.1f}", bytes / (1 << 30)), " GiB per rank, more than half of this machine's ",
                fmt::format("{:.1f}", memory / (1 << 30)),
                " GiB: check the translations' units (metres) and the geometry (energy, distance, pixel size), "
                "or run on more ranks with --strategy neighbor (the default)");
}

void check_checkpoint_matches(Checkpoint const& c, ScanLayout const& layout, std::string const& path) {
  auto const& r = c.result;
  bool same = int(r.object.extent(0)) == layout.grid.height && int(r.object.extent(1)) == layout.grid.width &&
              int(r.probe.extent(1)) == layout.info.ny && r.positions_px.size() == layout.positions_px.size();
  // A run that refined its positions kept the file's apart.
  auto const& given = r.file_positions_px.empty() ? r.positions_px : r.file_positions_px;
  same = same && given.size() == layout.positions_px.size() &&
         (r.relative_flux.empty() || r.relative_flux.size() == layout.positions_px.size());
  for (std::size_t n = 0; same && n < given.size(); ++n)
    same = std::abs(given[n][0] - layout.positions_px[n][0]) < 1e-6 &&
           std::abs(given[n][1] - layout.positions_px[n][1]) < 1e-6;
  PTYKO_REQUIRE(same, path, ": this checkpoint (object ", r.object.extent(0), " x ", r.object.extent(1), ", ",
                r.positions_px.size(), " positions) does not belong to ", layout.info.path, " (object ",
                layout.grid.height, " x ", layout.grid.width, ", ", layout.positions_px.size(),
                " positions) with these position options: resume with the input and --flip/--swap options it was "
                "made with");
}

std::string frame_list(std::vector<std::size_t> const& ids) {
  std::string s;
  for (std::size_t k = 0; k < ids.size() && k < 8; ++k) s += (k ? ", " : "") + std::to_string(ids[k]);
  if (ids.size() > 8) s += fmt::format(", ... ({} more)", ids.size() - 8);
  return s;
}

void warn_detector_placement(Log& log, std::string const& input, CxiInfo const& info) {
  if (info.orientation.rotation_deg > 1.0)
    log.warn(fmt::format("{}: basis_vectors turn the detector {:.1f} degrees about the beam; the frames are read "
                         "along the nearest axes and this rotation is not corrected",
                         input, info.orientation.rotation_deg));
  if (!info.beam_from_corner) return;
  auto const [by, bx] = *info.beam_from_corner;
  int const wy = info.ny * info.bin, wx = info.nx * info.bin;
  double const cy = info.window_y + wy / 2, cx = info.window_x + wx / 2;
  bool const on_detector = by >= 0 && bx >= 0 && by <= info.stored_ny - 1 && bx <= info.stored_nx - 1;
  if (on_detector && std::hypot(by - cy, bx - cx) > 2.0)
    log.warn(fmt::format("{}: corner_position puts the direct beam at stored pixel (y, x) = ({:.1f}, {:.1f}), but "
                         "the frames are read around ({:.0f}, {:.0f}); if the diffraction is centred on the beam, "
                         "give --crop N --crop-centre-y {:.0f} --crop-centre-x {:.0f} (`ptyko info` shows the "
                         "intensity centre)",
                         input, by, bx, cy, cx, std::round(by), std::round(bx)));
}

void warn_low_overlap(Log& log, std::string const& input, double step, HostComplex3 const& probe, char const* which,
                      char const* risk) {
  double const d = probe_diameter_px(probe);
  double const overlap = overlap_ratio(step, d);
  if (overlap < 0.5)
    log.warn(fmt::format("{}: the scan overlap is only {:.0f} % (step {:.3g} px, {} {:.3g} px across): below 50 % "
                         "{}; scan with smaller steps",
                         input, 100 * overlap, step, which, d, risk));
}

}  // namespace ptyko::drivers
