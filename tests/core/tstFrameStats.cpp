// The whole-scan frame statistics a run starts from: frame_stats (each
// frame's total and the largest pixel) and mean_pattern (the mean
// diffraction pattern, which seeds the probe), for uint16 and float frames
// of an odd size (169 pixels: host lanes of 16 and a tail), against plain
// host loops.
#include <ptyko/core/frame_stats.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/core/sync.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace ptyko;
using Exec = test::ExecSpace;
using Mem = test::MemSpace;

constexpr int N = 7, D = 13;

/// Frames of random values (uint16 up to 60000, or floats with fractions
/// up to 1000) on `Mem`, and the same values on the host.
template <class V>
std::pair<Kokkos::View<V***, Kokkos::LayoutRight, Mem>, std::vector<double>> random_frames(unsigned seed) {
  Kokkos::View<V***, Kokkos::LayoutRight, Mem> frames("frames", N, D, D);
  auto h = Kokkos::create_mirror_view(frames);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0, std::is_integral_v<V> ? 60000 : 1000);
  std::vector<double> values(h.span());
  for (std::size_t k = 0; k < h.span(); ++k) {
    h.data()[k] = V(u(gen));
    values[k] = double(h.data()[k]);
  }
  Kokkos::deep_copy(frames, h);  // host -> device: test frames
  return {frames, values};
}

template <class V>
void check_statistics(unsigned seed) {
  auto [frames, values] = random_frames<V>(seed);
  Exec space;
  LocalData<float, Exec> data;
  data.frames = FrameStack<Mem>(frames);
  data.global_frames = N;
  FrameStats const stats = frame_stats(space, data);
  ASSERT_EQ(stats.counts.size(), std::size_t(N));
  double const tol = std::is_integral_v<V> ? 0.0 : 1e-9;  // integer counts sum exactly in double
  double largest = 0;
  for (int f = 0; f < N; ++f) {
    double sum = 0;
    for (int k = 0; k < D * D; ++k) sum += values[std::size_t(f) * D * D + k];
    EXPECT_NEAR(stats.counts[f], sum, tol * sum) << "frame " << f;
    largest = std::max(largest, *std::max_element(values.begin() + f * D * D, values.begin() + (f + 1) * D * D));
  }
  EXPECT_EQ(stats.max_value, largest);

  LocalSync<float, Exec> sync;
  auto const [pattern, counts] = mean_pattern(space, data, sync);
  ASSERT_EQ(pattern.size(), std::size_t(D * D));
  double total = 0;
  for (int k = 0; k < D * D; ++k) {
    double mean = 0;
    for (int f = 0; f < N; ++f) mean += values[std::size_t(f) * D * D + k];
    mean /= N;
    EXPECT_NEAR(pattern[k], mean, 1e-12 * mean) << "pixel " << k;
    total += mean;
  }
  EXPECT_NEAR(counts, total, 1e-12 * total);
}

TEST(FrameStats, Counts) { check_statistics<std::uint16_t>(1); }
TEST(FrameStats, Floats) { check_statistics<float>(2); }

// Frames of whole numbers count photons; floats with fractions do not
// (their photons per unit are then unknown). Counted over every pixel.
TEST(FrameStats, FractionalPixels) {
  Exec space;
  LocalData<float, Exec> data;
  data.frames = FrameStack<Mem>(random_frames<std::uint16_t>(3).first);
  EXPECT_EQ(count_fractional_pixels(space, data), 0u);

  Kokkos::View<float***, Kokkos::LayoutRight, Mem> frames("frames", N, D, D);
  auto h = Kokkos::create_mirror_view(frames);
  for (std::size_t k = 0; k < h.span(); ++k) h.data()[k] = float(k % 50000);  // whole numbers, 0 included
  h(0, 0, 0) = 0.5f;
  h(N - 1, D - 1, D - 1) = 70000.25f;
  h(3, 4, 5) = 1e-4f;
  Kokkos::deep_copy(frames, h);  // host -> device: test frames
  data.frames = FrameStack<Mem>(frames);
  EXPECT_EQ(count_fractional_pixels(space, data), 3u);
  for (std::size_t k = 0; k < h.span(); ++k) h.data()[k] = float(k % 7) * 1e5f;  // large whole numbers
  Kokkos::deep_copy(frames, h);  // host -> device: test frames
  EXPECT_EQ(count_fractional_pixels(space, data), 0u);
}

// The values' unit: the remainders that Euclid's algorithm over the frames
// takes, the values at measured pixels, and the rules that read a unit from
// them.
TEST(FrameStats, ValueUnits) {
  Exec space;
  Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, Mem> frames("frames", N, D, D);
  auto h = Kokkos::create_mirror_view(frames);
  for (std::size_t k = 0; k < h.span(); ++k) h.data()[k] = std::uint16_t(6 * (k % 40));  // multiples of 6, zeros
  h(2, 3, 4) = 9;
  Kokkos::deep_copy(frames, h);  // host -> device: test frames
  LocalData<float, Exec> data;
  data.frames = FrameStack<Mem>(frames);
  EXPECT_EQ(smallest_nonzero_remainder(space, data, 0), 6.0);
  EXPECT_EQ(smallest_nonzero_remainder(space, data, 6), 3.0);  // 9 mod 6
  EXPECT_EQ(smallest_nonzero_remainder(space, data, 3), 0.0);  // every value a multiple of 3
  EXPECT_EQ(count_measured_values(space, data), std::size_t(N * D * D));
  // Pixels (0, 0) and (4, 7) not measured.
  data.mask = MaskView<Mem>("mask", D, D);
  Kokkos::deep_copy(data.mask, std::uint8_t(1));
  Kokkos::deep_copy(Kokkos::subview(data.mask, 0, 0), std::uint8_t(0));
  Kokkos::deep_copy(Kokkos::subview(data.mask, 4, 7), std::uint8_t(0));
  EXPECT_EQ(count_measured_values(space, data), std::size_t(N * (D * D - 2)));

  ValueSurvey counts;
  counts.nonzero_values = 1e6;
  counts.zero_values = 1e5;
  counts.smallest_nonzero = 1;
  std::string why = "stale";
  EXPECT_EQ(adu_per_photon_implied(counts, &why), 1.0);
  EXPECT_EQ(why, "");
  ValueSurvey gained = counts;
  gained.unit_step = gained.smallest_nonzero = 6;
  EXPECT_EQ(adu_per_photon_implied(gained, &why), 6.0);
  EXPECT_NE(why.find("every value is a multiple of 6"), std::string::npos) << why;
  ValueSurvey thresholded = counts;
  thresholded.smallest_nonzero = 21;
  EXPECT_EQ(adu_per_photon_implied(thresholded, &why), 0.0);
  EXPECT_NE(why.find("no value lies between 1 and 20 while 9.09 % are 0"), std::string::npos) << why;
  ValueSurvey bright = thresholded;  // every pixel lit: photon counts may start at 21
  bright.zero_values = 0;
  EXPECT_EQ(adu_per_photon_implied(bright), 1.0);
  ValueSurvey few = gained;  // too few values to read a step from
  few.nonzero_values = 999;
  EXPECT_EQ(adu_per_photon_implied(few), 1.0);
  ValueSurvey fractions = counts;
  fractions.whole_numbers = false;
  EXPECT_EQ(adu_per_photon_implied(fractions), 0.0);
}

}  // namespace
