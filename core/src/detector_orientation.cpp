#include <ptyko/core/detector_orientation.hpp>
#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ptyko {

namespace {

constexpr double k_degrees = 57.29577951308232;

// Row index after reversing an axis of `size` pixels about its centre pixel
// size / 2 (the zero frequency); the outermost row of an even size, the
// Nyquist frequency, maps onto itself.
inline int reversed(int i, int size) {
  int const r = 2 * (size / 2) - i;
  return r >= size ? r - size : r;
}

}  // namespace

std::string DetectorOrientation::describe() const {
  if (is_default()) return "default";
  std::string s;
  auto add = [&](char const* what) { s += (s.empty() ? "" : ", ") + std::string(what); };
  if (transpose) add("transposed");
  if (flip_y) add("rows reversed");
  if (flip_x) add("columns reversed");
  return s;
}

DetectorOrientation orientation_from_basis(std::vector<double> const& values, std::vector<std::size_t> const& dims,
                                           std::string const& where) {
  bool const spec = dims.size() == 2 && dims[0] == 2 && dims[1] == 3;
  bool const transposed = dims.size() == 2 && dims[0] == 3 && dims[1] == 2;  // cdtools
  PTYKO_REQUIRE(spec || transposed, where, " has ", dims.size(), " dimension(s) of ",
                dims.empty() ? 0 : dims.back(),
                " values; expected a (2, 3) basis: one (x, y, z) step in metres per frame dimension");
  double b[2][3];
  for (int d = 0; d < 2; ++d)
    for (int c = 0; c < 3; ++c) {
      b[d][c] = spec ? values[std::size_t(d) * 3 + c] : values[std::size_t(c) * 2 + d];
      PTYKO_REQUIRE(std::isfinite(b[d][c]), where, " holds ", b[d][c], ": the steps must be finite numbers (metres)");
    }
  bool along_x[2];
  double angle[2], length[2];
  for (int d = 0; d < 2; ++d) {
    double const x = std::abs(b[d][0]), y = std::abs(b[d][1]);
    length[d] = std::hypot(x, y);
    PTYKO_REQUIRE(length[d] > 0, where, ": the step along frame dimension ", d,
                  " has no x or y part: the detector must face the beam");
    along_x[d] = x >= y;
    angle[d] = std::atan2(std::min(x, y), std::max(x, y)) * k_degrees;
  }
  PTYKO_REQUIRE(along_x[0] != along_x[1], where, ": both frame dimensions step along ", along_x[0] ? "x" : "y",
                ": the basis must give one dimension along x and one along y");
  DetectorOrientation o;
  o.transpose = along_x[0];
  int const dy = o.transpose ? 1 : 0, dx = 1 - dy;  // the stored dimensions along y and x
  // The default steps are -y (rows) and -x (columns).
  o.flip_y = b[dy][1] > 0;
  o.flip_x = b[dx][0] > 0;
  o.pixel_y_m = length[dy];
  o.pixel_x_m = length[dx];
  o.rotation_deg = std::max(angle[0], angle[1]);
  for (int d = 0; d < 2; ++d) o.basis.insert(o.basis.end(), b[d], b[d] + 3);
  return o;
}

std::optional<std::array<double, 2>> beam_from_corner(std::array<double, 3> const& corner,
                                                      std::vector<double> const& basis_2x3) {
  // The beam meets the detector where corner + (i + 1/2) b0 + (j + 1/2) b1
  // has x = y = 0 (the corner is the first pixel's outer corner, pixel
  // centres lie half a step inside).
  double const b0x = basis_2x3[0], b0y = basis_2x3[1], b1x = basis_2x3[3], b1y = basis_2x3[4];
  double const det = b0x * b1y - b1x * b0y;
  double const scale = std::hypot(b0x, b0y) * std::hypot(b1x, b1y);
  if (!(std::abs(det) > 1e-6 * scale)) return std::nullopt;
  double const rx = -corner[0], ry = -corner[1];
  double const u = (rx * b1y - b1x * ry) / det, v = (b0x * ry - rx * b0y) / det;
  return std::array<double, 2>{u - 0.5, v - 0.5};
}

template <class T>
void orient_images(T* images, std::size_t n, int size, DetectorOrientation const& o) {
  if (o.is_default()) return;
  std::size_t const pixels = std::size_t(size) * size;
  std::vector<T> stored(pixels);
  std::vector<int> ry(size), rx(size);
  for (int i = 0; i < size; ++i) {
    ry[i] = o.flip_y ? reversed(i, size) : i;
    rx[i] = o.flip_x ? reversed(i, size) : i;
  }
  for (std::size_t k = 0; k < n; ++k) {
    T* image = images + k * pixels;
    std::copy(image, image + pixels, stored.begin());
    for (int i = 0; i < size; ++i)
      for (int j = 0; j < size; ++j) {
        std::size_t const from = o.transpose ? std::size_t(rx[j]) * size + ry[i] : std::size_t(ry[i]) * size + rx[j];
        image[std::size_t(i) * size + j] = stored[from];
      }
  }
}

std::array<double, 2> unorient_position(double y, double x, int size, DetectorOrientation const& o) {
  double const c2 = 2 * (size / 2);
  double const ty = o.flip_y ? c2 - y : y, tx = o.flip_x ? c2 - x : x;
  return o.transpose ? std::array<double, 2>{tx, ty} : std::array<double, 2>{ty, tx};
}

template void orient_images<float>(float*, std::size_t, int, DetectorOrientation const&);
template void orient_images<std::uint8_t>(std::uint8_t*, std::size_t, int, DetectorOrientation const&);

}  // namespace ptyko
