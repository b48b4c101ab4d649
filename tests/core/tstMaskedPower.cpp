// What the measured counts miss of the beam (core/masked_power.hpp): the
// share of the probe's far field on masked pixels, the probe power that
// gives the measured counts, and the interpolation of a masked pattern.
#include <ptyko/core/masked_power.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;

// A point probe has a flat far field, so the masked share is the masked
// pixels' share of the detector; two modes count alike; no mask, none.
TEST(MaskedPower, FractionOfAFlatFarFieldIsTheMaskedPixelsShare) {
  int const D = 16, M = 2;
  ComplexView3<double, MemSpace> probe("probe", M, D, D);
  auto h = Kokkos::create_mirror_view(probe);
  Kokkos::deep_copy(h, Complex<double>(0));
  h(0, D / 2, D / 2) = Complex<double>(3, 0);
  h(1, D / 2 + 1, D / 2) = Complex<double>(0, 1);  // elsewhere: the same flat |F P|^2
  Kokkos::deep_copy(probe, h);
  MaskView<MemSpace> mask("mask", D, D);
  auto hm = Kokkos::create_mirror_view(mask);
  int masked = 0;
  for (int y = 0; y < D; ++y)
    for (int x = 0; x < D; ++x) {
      bool const bad = (y < 3 || y > D - 3) && (x < 2 || x > D - 2);  // the corner-centred beam's pixels
      hm(y, x) = bad ? 0 : 1;
      masked += bad;
    }
  Kokkos::deep_copy(mask, hm);
  ExecSpace space;
  MaskedPower<double, ExecSpace> power(space, M, D);
  EXPECT_NEAR(power.fraction(space, probe, mask), double(masked) / (D * D), 1e-12);
  EXPECT_EQ(power.fraction(space, probe, MaskView<MemSpace>()), 0.0);
  // The measured counts are (1 - f) of the probe's power.
  EXPECT_NEAR(probe_power_for_counts(90, 0.1), 100, 1e-12);
  EXPECT_NEAR(probe_power_for_counts(90, 0), 90, 1e-12);
  EXPECT_NEAR(probe_power_for_counts(1, 1.0), 1000, 1e-9);  // capped: a mask over everything
}

// A hole in a linear ramp is filled with the ramp (the discrete Laplace
// equation's solution); measured pixels are kept; no mask, no change.
TEST(MaskedPower, FillUnmeasuredInterpolatesHarmonically) {
  int const D = 48;
  std::vector<double> pattern(D * D), truth(D * D);
  std::vector<std::uint8_t> mask(D * D, 1);
  for (int y = 0; y < D; ++y)
    for (int x = 0; x < D; ++x) {
      truth[y * D + x] = 3 + 0.5 * x + 0.25 * y;
      bool const hole = y >= 10 && y < 15 && x >= 20 && x < 27;
      mask[y * D + x] = hole ? 0 : 1;
      pattern[y * D + x] = hole ? -7 : truth[y * D + x];  // what a detector stores there
    }
  std::vector<double> const before = pattern;
  fill_unmeasured(pattern, {}, D);
  EXPECT_EQ(pattern, before);
  fill_unmeasured(pattern, mask, D);
  for (int k = 0; k < D * D; ++k) EXPECT_NEAR(pattern[k], truth[k], 1e-6) << k;
}

}  // namespace
