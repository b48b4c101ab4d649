#pragma once
// How a file's detector frames sit in the laboratory, from CXI's
// detector_1/basis_vectors and corner_position (CXI 1.6, section
// "The orientation of pixel detectors"), and the reorientation that brings
// them into CXI's default orientation, the one ptyko's model uses.
//
// CXI's frame: z along the beam (downstream), y up, x horizontal (right
// handed). basis_vectors row d is the step in metres from one pixel to the
// next along data dimension d; without it the default is
//   [[0, -y_pixel_size, 0], [-x_pixel_size, 0, 0]]:
// rows step along -y and columns along -x. A file whose basis differs (a
// detector mounted turned by 90 degrees, or read out mirrored) stores its
// frames transposed and/or reversed against that; ptyko turns them back on
// reading, so that a pixel's far-field frequency is the same whatever the
// mounting. corner_position is the (x, y, z) of the outer corner of the
// first pixel, which places the direct beam on the detector.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ptyko {

/// Maps stored frames onto CXI's default orientation: first the transpose,
/// then the reversals, each about the frames' centre pixel (size / 2), the
/// zero frequency, which stays in place. A reversed axis sends pixel i to
/// (2 (size / 2) - i) mod size: for even sizes the outermost row, the
/// Nyquist frequency, maps onto itself.
struct DetectorOrientation {
  bool transpose = false;  ///< stored rows step along x (and columns along y)
  bool flip_y = false;     ///< after the transpose, rows step along +y
  bool flip_x = false;     ///< after the transpose, columns step along +x
  /// In-plane angle (degrees) between the basis and the nearest lab axes;
  /// ptyko cannot rotate frames by it and leaves it (a warning names it).
  double rotation_deg = 0;
  /// Pixel sizes along the lab's x and y as the basis gives them (metres).
  double pixel_x_m = 0, pixel_y_m = 0;
  /// The basis as read, in the specification's (2, 3) layout (row d: the
  /// step of frame dimension d), metres; empty without one.
  std::vector<double> basis;

  bool is_default() const { return !transpose && !flip_y && !flip_x; }
  /// "transposed, rows reversed" and the like; "default" when nothing is done.
  std::string describe() const;
};

/// The orientation of a basis: `values` as stored with `dims` (2, 3), as the
/// specification gives it, or (3, 2), the transposed form cdtools writes.
/// `where` names the file and dataset in messages. Throws UserError for
/// other shapes, non-finite values, a zero step, or both dimensions along
/// one lab axis.
DetectorOrientation orientation_from_basis(std::vector<double> const& values, std::vector<std::size_t> const& dims,
                                           std::string const& where);

/// The direct beam's position in stored pixels (y, x; pixel centres at whole
/// numbers) from corner_position (x, y, z metres) and the orientation's
/// basis, or nothing when the beam misses the detector's plane (a basis
/// with no x-y extent).
std::optional<std::array<double, 2>> beam_from_corner(std::array<double, 3> const& corner,
                                                      std::vector<double> const& basis_2x3);

/// Reorients `n` size x size images in place (row-major, centred).
template <class T>
void orient_images(T* images, std::size_t n, int size, DetectorOrientation const& o);

/// Where a position (y, x) in a reoriented size x size frame lies in the
/// frame as stored (same pixel units; the inverse of orient_images, without
/// the wrap-around of the Nyquist row).
std::array<double, 2> unorient_position(double y, double x, int size, DetectorOrientation const& o);

}  // namespace ptyko
