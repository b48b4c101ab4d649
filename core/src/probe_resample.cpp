#include <ptyko/core/fftshift.hpp>
#include <ptyko/core/probe_resample.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/fft.hpp>

#include <algorithm>
#include <cmath>

namespace ptyko {

namespace {

using HostExec = Kokkos::DefaultHostExecutionSpace;
using HostGrid = ComplexView3<double, Kokkos::HostSpace>;

// The bin of signed frequency f in an n-point DFT; -1 when it has none.
int frequency_bin(int f, int n) { return f < -(n / 2) || f > (n - 1) / 2 ? -1 : (f + n) % n; }

// Index in a grid of n points whose centre (n / 2) sits at index 0 (the
// DFT's origin) of the point `offset` pixels from that centre; -1 when the
// grid has no such point.
int origin_index(int offset, int n) { return offset < -(n / 2) || offset > (n - 1) - n / 2 ? -1 : (offset + n) % n; }

// Whole number of target pixels over the source's m pixels, and how far
// the exact number was from it.
int interpolated_points(int m, double from, double to, double& error) {
  double const exact = m * from / to;
  int const k = int(std::lround(exact));
  error = std::max(error, k > 0 ? std::abs(k - exact) / exact : 1.0);
  return k;
}

}  // namespace

bool same_pixel(ProbePixel const& a, ProbePixel const& b) {
  for (int d = 0; d < 2; ++d)
    if (!(std::abs(a[d] - b[d]) <= 1e-6 * std::max(std::abs(a[d]), std::abs(b[d])))) return false;
  return true;
}

ResampledProbe resample_probe(HostComplex3 const& probe, ProbePixel const& from, int ny, int nx,
                              ProbePixel const& to, std::string const& source) {
  int const M = int(probe.extent(0)), my = int(probe.extent(1)), mx = int(probe.extent(2));
  PTYKO_REQUIRE(from[0] > 0 && from[1] > 0 && to[0] > 0 && to[1] > 0 && std::isfinite(from[0] / to[0]) &&
                    std::isfinite(from[1] / to[1]),
                source, ": probe pixel ", from[0], " x ", from[1], " cannot be resampled to ", to[0], " x ", to[1]);
  ResampledProbe out;
  bool const interpolate = !same_pixel(from, to);
  int const ky = interpolate ? interpolated_points(my, from[0], to[0], out.scale_error) : my;
  int const kx = interpolate ? interpolated_points(mx, from[1], to[1], out.scale_error) : mx;
  // The probe's field on the new pixels: more than a few times the frames
  // (or less than a pixel) means pixel sizes of different units, not optics.
  int const limit = 8 * std::max({my, mx, ny, nx});
  PTYKO_REQUIRE(ky >= 1 && kx >= 1 && ky <= limit && kx <= limit, source, ": the probe's ", my, " x ", mx,
                " pixels of ", from[0], " x ", from[1], " would span ", from[0] * my / to[0], " x ",
                from[1] * mx / to[1], " pixels of ", to[0], " x ", to[1],
                ": its pixel size does not fit this data (another energy, distance or detector, or wrong units)");

  // The probe with its centre at the origin (index 0).
  HostGrid grid("ptyko::resample_probe::source", M, my, mx);
  for (int m = 0; m < M; ++m) ifftshift2(&probe(m, 0, 0), &grid(m, 0, 0), my, mx);

  if (interpolate) {
    // Same field, new pixels: keep the frequencies both grids hold.
    HostExec space;
    BatchedFFT2D<double, HostExec>(space, M, my, mx).forward(space, grid, grid, FFTNorm::none);
    HostGrid spectrum("ptyko::resample_probe::interpolated", M, ky, kx);  // zeros: frequencies the source lacks
    fence(space, "ptyko::resample_probe::forward");
    for (int m = 0; m < M; ++m)
      for (int v = 0; v < ky; ++v) {
        int const sy = frequency_bin(signed_frequency(v, ky), my);
        if (sy < 0) continue;
        for (int u = 0; u < kx; ++u) {
          int const sx = frequency_bin(signed_frequency(u, kx), mx);
          if (sx >= 0) spectrum(m, v, u) = grid(m, sy, sx);
        }
      }
    BatchedFFT2D<double, HostExec>(space, M, ky, kx).inverse(space, spectrum, spectrum, FFTNorm::none);
    fence(space, "ptyko::resample_probe::inverse");
    // Unscaled inverse of the unscaled forward: the source's points were
    // summed, so divide by their number to keep the values.
    double const scale = 1.0 / (double(my) * mx);
    for (std::size_t k = 0; k < spectrum.span(); ++k) spectrum.data()[k] *= scale;
    grid = spectrum;
  }

  // The centred ny x nx window of the (ky, kx) grid.
  out.probe = HostComplex3("ptyko::resample_probe::probe", M, ny, nx);  // zeros outside the field
  for (int m = 0; m < M; ++m)
    for (int y = 0; y < ny; ++y) {
      int const gy = origin_index(y - ny / 2, ky);
      if (gy < 0) continue;
      for (int x = 0; x < nx; ++x) {
        int const gx = origin_index(x - nx / 2, kx);
        if (gx >= 0) out.probe(m, y, x) = grid(m, gy, gx);
      }
    }
  return out;
}

}  // namespace ptyko
