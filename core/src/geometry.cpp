#include <ptyko/core/geometry.hpp>
#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ptyko {

double Geometry::object_pixel_size_y() const {
  return wavelength_m * distance_m / (double(detector_size) * pixel_size_y_m);
}

double Geometry::object_pixel_size_x() const {
  return wavelength_m * distance_m / (double(detector_size) * pixel_size_x_m);
}

void Geometry::validate(char const* source) const {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  PTYKO_REQUIRE(positive(wavelength_m), source, ": wavelength is ", wavelength_m,
                " m: give a positive energy (J) or wavelength (m)");
  PTYKO_REQUIRE(positive(distance_m), source, ": detector distance is ", distance_m,
                " m: it must be a positive number of metres");
  PTYKO_REQUIRE(positive(pixel_size_x_m) && positive(pixel_size_y_m), source,
                ": detector pixel size is ", pixel_size_y_m, " x ", pixel_size_x_m,
                " m: both must be positive numbers of metres");
  PTYKO_REQUIRE(detector_size > 1, source, ": frames are ", detector_size, " pixels wide: need at least 2");
}

std::vector<std::array<double, 2>> probe_positions_from_translations(
    std::vector<std::array<double, 3>> const& translations, PositionConvention const& conv) {
  std::vector<std::array<double, 2>> out;
  out.reserve(translations.size());
  for (auto const& t : translations) {
    double tx = t[0], ty = t[1];
    if (conv.swap_xy) std::swap(tx, ty);
    if (conv.flip_x) tx = -tx;
    if (conv.flip_y) ty = -ty;
    // CXI: the sample moves by t relative to the beam, so the beam sits at -t
    // in the sample's frame.
    out.push_back({-ty, -tx});
  }
  return out;
}

std::vector<std::size_t> stand_in_missing_positions(std::vector<std::array<double, 2>>& positions_m,
                                                    std::string const& source) {
  std::size_t const N = positions_m.size();
  std::vector<char> finite(N);
  std::vector<std::size_t> missing;
  for (std::size_t n = 0; n < N; ++n) {
    finite[n] = std::isfinite(positions_m[n][0]) && std::isfinite(positions_m[n][1]);
    if (!finite[n]) missing.push_back(n);
  }
  auto placed = [&](std::size_t n) { return finite[n] != 0; };  // in the file, not by a stand-in
  PTYKO_REQUIRE(missing.size() < N || N == 0, source, ": none of the ", N,
                " translations is a finite number: the scan's positions are missing");
  for (std::size_t n : missing)
    for (std::size_t d = 1;; ++d) {  // ends: some frame is placed
      if (n >= d && placed(n - d)) {
        positions_m[n] = positions_m[n - d];
        break;
      }
      if (n + d < N && placed(n + d)) {
        positions_m[n] = positions_m[n + d];
        break;
      }
    }
  return missing;
}

std::vector<std::array<double, 2>> positions_except(std::vector<std::array<double, 2>> const& positions,
                                                   std::vector<std::size_t> const& skipped) {
  std::vector<std::array<double, 2>> out;
  out.reserve(positions.size());
  std::size_t next = 0;
  for (std::size_t n = 0; n < positions.size(); ++n) {
    if (next < skipped.size() && skipped[next] == n) {
      ++next;
      continue;
    }
    out.push_back(positions[n]);
  }
  return out;
}

std::vector<std::array<double, 3>> translations_from_probe_positions(
    std::vector<std::array<double, 2>> const& positions_m) {
  std::vector<std::array<double, 3>> out;
  out.reserve(positions_m.size());
  for (auto const& p : positions_m) out.push_back({-p[1], -p[0], 0.0});
  return out;
}

namespace {

// The sub-pixel offset f in [0, 1) that brings `pixels - f` closest to whole
// numbers: the circular mean of their fractional parts. Patches are sampled
// bilinearly, which at a fractional position averages neighbouring object
// pixels: at half a pixel it halves the highest spatial frequency the model
// can hold, and the reconstruction then amplifies that frequency to make up
// for it (an independent simulator's scan at half-pixel positions gave twice
// the object error after 300 epochs). Scans on a pixel-commensurate grid,
// the usual simulated one and a raster whose step is a whole number of object
// pixels, so land on whole pixels wherever the file's origin puts them; for
// fractional parts spread evenly the offset is arbitrary and costs nothing.
double whole_pixel_offset(std::vector<std::array<double, 2>> const& positions_m, int axis, double pixel_size) {
  double constexpr two_pi = 6.283185307179586;
  double c = 0, s = 0;
  for (auto const& p : positions_m) {
    double const fraction = p[axis] / pixel_size - std::floor(p[axis] / pixel_size);
    c += std::cos(two_pi * fraction);
    s += std::sin(two_pi * fraction);
  }
  double const f = std::atan2(s, c) / two_pi;  // in [-1/2, 1/2]
  return f < 0 ? f + 1 : f;
}

}  // namespace

ObjectGrid make_object_grid(std::vector<std::array<double, 2>> const& positions_m,
                            Geometry const& geometry, int margin, std::size_t max_pixels) {
  PTYKO_REQUIRE(!positions_m.empty(), "no scan positions: the file holds no frames");
  ObjectGrid grid;
  grid.pixel_size_y = geometry.object_pixel_size_y();
  grid.pixel_size_x = geometry.object_pixel_size_x();
  double ymin = std::numeric_limits<double>::infinity(), xmin = ymin;
  double ymax = -ymin, xmax = -ymin;
  for (std::size_t n = 0; n < positions_m.size(); ++n) {
    double const y = positions_m[n][0] / grid.pixel_size_y;
    double const x = positions_m[n][1] / grid.pixel_size_x;
    PTYKO_REQUIRE(std::isfinite(y) && std::isfinite(x), "scan position ", n,
                  " is not a finite number (NaN or Inf in the translations)");
    ymin = std::min(ymin, y);
    ymax = std::max(ymax, y);
    xmin = std::min(xmin, x);
    xmax = std::max(xmax, x);
  }
  int const D = geometry.detector_size;
  // The lowest probe centre sits at D/2 + margin or up to a pixel further, so
  // that its patch starts at `margin`, with the origin's fraction putting the
  // positions on whole pixels where they can be; one extra pixel on the far
  // side serves bilinear interpolation.
  double const fy = whole_pixel_offset(positions_m, 0, grid.pixel_size_y);
  double const fx = whole_pixel_offset(positions_m, 1, grid.pixel_size_x);
  grid.origin_y = std::ceil(D / 2 + margin - ymin + fy) - fy;
  grid.origin_x = std::ceil(D / 2 + margin - xmin + fx) - fx;
  double const h = std::ceil(ymax - ymin) + D + 2.0 * margin + 2;
  double const w = std::ceil(xmax - xmin) + D + 2.0 * margin + 2;
  PTYKO_REQUIRE(h * w <= double(max_pixels), "the scan spans ", ymax - ymin, " x ", xmax - xmin,
                " object pixels (", h, " x ", w,
                " object): too large for memory; check the translation units (metres) and the "
                "geometry (energy, distance, pixel size)");
  grid.height = int(h);
  grid.width = int(w);
  return grid;
}

}  // namespace ptyko
