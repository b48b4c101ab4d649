// Probe resampling (resample_probe): a probe given on one sampling (pixel,
// frame size) moved onto another. Checked against the same analytic
// band-limited field (a Gaussian beam with a defocus-like quadratic phase
// and a tilt) sampled directly on the target grid: coarser and finer pixels,
// a smaller and a larger field, odd sizes, a ratio of pixels that is not
// one of whole numbers (the grid then keeps the field, and the pixel used
// is reported), several modes; and the refusals.
#include <ptyko/core/probe_resample.hpp>
#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>

namespace {

using namespace ptyko;
using C = std::complex<double>;

// Mode m of the test beam at (y, x) pixels of size `pixel` from the centre:
// wide enough to be band-limited on every grid below, small enough to vanish
// at their edges. Mode 1 is smaller, with another phase.
C beam(int m, double y, double x) {
  double const sigma = m == 0 ? 3.0 : 2.2;
  double const r2 = y * y + x * x;
  double const phase = (m == 0 ? 0.02 : -0.03) * r2 + 0.15 * x - 0.1 * y;
  return std::polar(std::exp(-r2 / (2 * sigma * sigma)) * (m == 0 ? 1.0 : 0.5), phase);
}

// The beam on an (M, n, n) grid of pixels `pixel`, its centre on (n/2, n/2).
HostComplex3 sampled(int M, int ny, int nx, double py, double px) {
  HostComplex3 p("beam", M, ny, nx);
  for (int m = 0; m < M; ++m)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        C const v = beam(m, (y - ny / 2) * py, (x - nx / 2) * px);
        p(m, y, x) = Complex<double>(v.real(), v.imag());
      }
  return p;
}

// Largest |a - b| over the largest |b|.
double max_difference(HostComplex3 const& a, HostComplex3 const& b) {
  EXPECT_EQ(a.extent(0), b.extent(0));
  EXPECT_EQ(a.extent(1), b.extent(1));
  EXPECT_EQ(a.extent(2), b.extent(2));
  double diff = 0, peak = 0;
  for (std::size_t k = 0; k < b.span(); ++k) {
    diff = std::max(diff, Kokkos::abs(a.data()[k] - b.data()[k]));
    peak = std::max(peak, Kokkos::abs(b.data()[k]));
  }
  return diff / peak;
}

// --crop of half the frames: pixels twice as large, the same field.
TEST(ProbeResample, CoarserPixelsKeepTheField) {
  auto const from = sampled(2, 96, 96, 0.5, 0.5);
  auto const r = resample_probe(from, {0.5, 0.5}, 48, 48, {1.0, 1.0}, "test");
  EXPECT_EQ(r.scale_error, 0.0);
  EXPECT_LT(max_difference(r.probe, sampled(2, 48, 48, 1.0, 1.0)), 1e-9);
}

// The reverse: finer pixels (frequencies the source lacks are zero).
TEST(ProbeResample, FinerPixelsInterpolate) {
  auto const from = sampled(2, 48, 48, 1.0, 1.0);
  auto const r = resample_probe(from, {1.0, 1.0}, 96, 96, {0.5, 0.5}, "test");
  EXPECT_LT(max_difference(r.probe, sampled(2, 96, 96, 0.5, 0.5)), 1e-9);
}

// --bin: the same pixels, a smaller field: exactly the centred window.
// A larger field pads with zeros.
TEST(ProbeResample, SamePixelsCropOrPadTheField) {
  auto const from = sampled(1, 64, 64, 1.0, 1.0);
  auto const crop = resample_probe(from, {1.0, 1.0}, 32, 32, {1.0, 1.0}, "test");
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 32; ++x) ASSERT_EQ(crop.probe(0, y, x), from(0, y + 16, x + 16)) << y << ", " << x;
  auto const pad = resample_probe(crop.probe, {1.0, 1.0}, 40, 40, {1.0, 1.0}, "test");
  for (int y = 0; y < 40; ++y)
    for (int x = 0; x < 40; ++x) {
      bool const inside = y >= 4 && y < 36 && x >= 4 && x < 36;
      ASSERT_EQ(pad.probe(0, y, x), inside ? crop.probe(0, y - 4, x - 4) : Complex<double>(0)) << y << ", " << x;
    }
}

// Pixels and field both change, on odd and oblong grids: the centre
// (n/2) stays the centre.
TEST(ProbeResample, OddAndOblongGrids) {
  auto const from = sampled(2, 121, 151, 0.5, 0.6);
  ProbePixel const to = {121 * 0.5 / 81, 151 * 0.6 / 99};  // 81 x 99 points over the field
  auto const r = resample_probe(from, {0.5, 0.6}, 33, 35, to, "test");
  EXPECT_LT(r.scale_error, 1e-12);
  EXPECT_LT(max_difference(r.probe, sampled(2, 33, 35, to[0], to[1])), 1e-9);
}

// A ratio of pixels that is not one of whole numbers: the field is kept on
// a whole number of points (64 * 1 / 1.3 = 49.2 -> 49), so the pixel used is
// 64 / 49, 0.47 % off the one asked for, and reported.
TEST(ProbeResample, UnevenRatioReportsTheScaleLeft) {
  auto const from = sampled(1, 64, 64, 1.0, 1.0);
  auto const r = resample_probe(from, {1.0, 1.0}, 40, 40, {1.3, 1.3}, "test");
  double const exact = 64 / 1.3;
  EXPECT_NEAR(r.scale_error, std::abs(49 - exact) / exact, 1e-12);
  double const used = 64.0 / 49;
  EXPECT_LT(max_difference(r.probe, sampled(1, 40, 40, used, used)), 1e-9);
  EXPECT_GT(max_difference(r.probe, sampled(1, 40, 40, 1.3, 1.3)), 1e-3);  // the test can tell the two apart
}

// The same sampling is a copy.
TEST(ProbeResample, SameSamplingIsACopy) {
  auto const from = sampled(2, 32, 32, 1.0, 1.0);
  auto const r = resample_probe(from, {1e-8, 1e-8}, 32, 32, {1e-8 * (1 + 1e-9), 1e-8}, "test");
  EXPECT_EQ(max_difference(r.probe, from), 0.0);
  EXPECT_TRUE(same_pixel({1.0, 2.0}, {1.0, 2.0}));
  EXPECT_FALSE(same_pixel({1.0, 2.0}, {1.0, 2.001}));
}

// Pixels of different units (metres against nanometres) or not positive
// are refused, naming the source.
TEST(ProbeResample, AbsurdPixelsAreRefused) {
  auto const from = sampled(1, 32, 32, 1.0, 1.0);
  auto refused = [&](ProbePixel const& a, ProbePixel const& b) {
    try {
      resample_probe(from, a, 32, 32, b, "--probe x.h5");
      ADD_FAILURE() << "accepted " << a[0] << " -> " << b[0];
    } catch (UserError const& e) {
      EXPECT_NE(std::string(e.what()).find("--probe x.h5"), std::string::npos) << e.what();
    }
  };
  refused({1e-8, 1e-8}, {1e-11, 1e-11});  // 32 000 points
  refused({1e-8, 1e-8}, {1e-5, 1e-5});    // less than one point
  refused({0.0, 1.0}, {1.0, 1.0});
}

}  // namespace
