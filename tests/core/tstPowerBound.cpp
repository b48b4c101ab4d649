// DM's power bound (core/power_bound.hpp): PtyPy's bound held between 0.1
// and 1 times the counting noise per pixel, loosened by half for each window
// of 10 epochs whose mean cost rose by more than 3 % while below twice the
// noise floor, never above the noise; the plain projection stays plain.
#include <ptyko/core/power_bound.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using namespace ptyko;

constexpr int pixels = 4096;
constexpr double floor_per_frame = 409.6;  ///< 0.1 per pixel
constexpr double noise = floor_per_frame / pixels;

/// `epochs` epochs at `cost` per frame appended to `h`.
void add(std::vector<double>& h, int epochs, double cost) { h.insert(h.end(), std::size_t(epochs), cost); }

TEST(PowerBound, PlainProjectionStaysPlain) {
  std::vector<double> rising;
  add(rising, 10, floor_per_frame);
  add(rising, 10, 1.5 * floor_per_frame);
  EXPECT_EQ(power_bound(0, floor_per_frame, pixels, {}), 0);
  EXPECT_EQ(power_bound(0, floor_per_frame, pixels, rising), 0);
}

TEST(PowerBound, WithoutANoiseFloorPtyPysBoundStays) {
  EXPECT_DOUBLE_EQ(power_bound(0.0123, 0, pixels, {}), 0.0123);
  EXPECT_DOUBLE_EQ(power_bound(0.0123, floor_per_frame, 0, {}), 0.0123);
}

TEST(PowerBound, HeldWithinTheCountingNoise) {
  EXPECT_DOUBLE_EQ(power_bound(0.03, floor_per_frame, pixels, {}), 0.03);            // within: kept
  EXPECT_DOUBLE_EQ(power_bound(3e-4, floor_per_frame, pixels, {}), 0.1 * noise);     // dim frames
  EXPECT_DOUBLE_EQ(power_bound(2.6, floor_per_frame, pixels, {}), noise);            // bright frames
}

TEST(PowerBound, LoosensWhileTheCostRisesNearTheNoise) {
  std::vector<double> h;
  add(h, 10, 1.20 * floor_per_frame);
  add(h, 9, 1.25 * floor_per_frame);
  double const start = power_bound(0.03, floor_per_frame, pixels, h);
  EXPECT_DOUBLE_EQ(start, 0.03);  // the second window is not complete
  add(h, 1, 1.25 * floor_per_frame);
  EXPECT_DOUBLE_EQ(power_bound(0.03, floor_per_frame, pixels, h), 0.045);  // rose by 4 %
  add(h, 10, 1.35 * floor_per_frame);
  EXPECT_DOUBLE_EQ(power_bound(0.03, floor_per_frame, pixels, h), 0.0675);
  add(h, 10, 1.5 * floor_per_frame);
  EXPECT_DOUBLE_EQ(power_bound(0.03, floor_per_frame, pixels, h), noise);  // 0.101: held at the noise
  add(h, 10, 1.5 * floor_per_frame);  // flat: no further change
  EXPECT_DOUBLE_EQ(power_bound(0.03, floor_per_frame, pixels, h), noise);
}

TEST(PowerBound, KeptWhereTheCostFallsRisesSlightlyOrIsFarFromTheNoise) {
  std::vector<double> falling, slight, far;
  add(falling, 10, 1.5 * floor_per_frame);
  add(falling, 10, 1.2 * floor_per_frame);
  add(slight, 10, 1.20 * floor_per_frame);
  add(slight, 10, 1.23 * floor_per_frame);  // 2.5 %
  add(far, 10, 3.0 * floor_per_frame);      // rising, but the model misses more than noise
  add(far, 10, 4.0 * floor_per_frame);
  for (auto const* h : {&falling, &slight, &far})
    EXPECT_DOUBLE_EQ(power_bound(0.03, floor_per_frame, pixels, *h), 0.03);
}

TEST(PowerBound, EpochsWithoutACostAreSkipped) {
  // DM's cost_every 5: one measured epoch in five.
  std::vector<double> h(30, std::nan(""));
  for (int e = 0; e < 10; e += 5) h[std::size_t(e)] = 1.2 * floor_per_frame;
  for (int e = 10; e < 20; e += 5) h[std::size_t(e)] = 1.3 * floor_per_frame;
  EXPECT_DOUBLE_EQ(power_bound(0.03, floor_per_frame, pixels, h), 0.045);
  // A window with no measured epoch decides nothing.
  std::vector<double> gap(20, std::nan(""));
  gap[15] = 1.9 * floor_per_frame;
  EXPECT_DOUBLE_EQ(power_bound(0.03, floor_per_frame, pixels, gap), 0.03);
}

}  // namespace
