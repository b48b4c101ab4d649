#pragma once
// Experimental geometry and the mapping from metres (files) to object pixels
// (inside ptyko). See docs/conventions.md.
//
//   wavelength  lambda = h c / E
//   object pixel        dx = lambda z / (D p_x),  dy = lambda z / (D p_y)
//   probe position      r = -translation (CXI: translation of the sample
//                       relative to the beam), then r / (dy, dx) in pixels.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ptyko {

/// Planck constant times the speed of light, in J m.
inline constexpr double planck_times_c = 6.62607015e-34 * 299792458.0;

/// The electronvolt, in J.
inline constexpr double electron_volt = 1.602176634e-19;

inline double wavelength_from_energy(double energy_joule) { return planck_times_c / energy_joule; }
inline double energy_from_wavelength(double wavelength_m) { return planck_times_c / wavelength_m; }

/// How positions in a file map onto the object's (y, x) axes. Defaults follow
/// the CXI specification; the flags adapt files written with other habits.
struct PositionConvention {
  bool flip_x = false;   ///< negate the x translations
  bool flip_y = false;   ///< negate the y translations
  bool swap_xy = false;  ///< exchange the x and y translations
};

struct Geometry {
  double wavelength_m = 0;    ///< X-ray wavelength
  double distance_m = 0;      ///< sample-detector distance
  double pixel_size_y_m = 0;  ///< detector pixel along rows
  double pixel_size_x_m = 0;  ///< detector pixel along columns
  int detector_size = 0;      ///< D: frames are D x D pixels

  double energy_joule() const { return energy_from_wavelength(wavelength_m); }
  /// Object pixel size along y (rows) and x (columns), metres.
  double object_pixel_size_y() const;
  double object_pixel_size_x() const;
  /// Throws UserError naming `source` when a value is missing or not positive.
  void validate(char const* source) const;
};

/// Probe positions in metres, (y, x), from CXI translations (N rows of
/// x, y, z metres): r = -t after applying the convention flags.
std::vector<std::array<double, 2>> probe_positions_from_translations(
    std::vector<std::array<double, 3>> const& translations, PositionConvention const& conv);

/// Frames without a finite probe position (the file holds NaN where the
/// encoders gave no reading), in increasing order. Each takes the position
/// of the nearest frame by number that has one (the scan's neighbour), so
/// that the object grid and the ranks' partition treat it as an ordinary
/// frame until the run skips it. UserError naming `source` when no frame has
/// a position.
std::vector<std::size_t> stand_in_missing_positions(std::vector<std::array<double, 2>>& positions_m,
                                                    std::string const& source);

/// `positions` without the frames `skipped` (increasing): the placed
/// frames, from which the object grid is made (stand-ins would shift it).
std::vector<std::array<double, 2>> positions_except(std::vector<std::array<double, 2>> const& positions,
                                                   std::vector<std::size_t> const& skipped);

/// The inverse: CXI translations (x, y, 0) for probe positions (y, x) metres.
std::vector<std::array<double, 3>> translations_from_probe_positions(
    std::vector<std::array<double, 2>> const& positions_m);

/// Where the scan lands on the object grid: the object's shape, and the pixel
/// coordinates of every probe centre (the object pixel under probe pixel
/// (D/2, D/2)), with `margin` pixels of object kept beyond the outermost
/// patches. Pixel coordinates are sub-pixel (floating point).
struct ObjectGrid {
  int height = 0, width = 0;
  double pixel_size_y = 0, pixel_size_x = 0;  ///< metres
  /// Pixel coordinate of position 0 m: pixel = metres / pixel_size + origin.
  double origin_y = 0, origin_x = 0;

  std::array<double, 2> to_pixels(std::array<double, 2> const& metres) const {
    return {metres[0] / pixel_size_y + origin_y, metres[1] / pixel_size_x + origin_x};
  }
};

/// Builds the object grid holding every patch of `positions_m` with `margin`
/// spare pixels on each side. Throws UserError when the object would need more
/// than `max_pixels` pixels (positions spanning an absurd range, wrong units).
ObjectGrid make_object_grid(std::vector<std::array<double, 2>> const& positions_m,
                            Geometry const& geometry, int margin = 8,
                            std::size_t max_pixels = std::size_t(1) << 32);

}  // namespace ptyko
