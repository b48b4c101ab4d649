// illumination_map (core/illumination.hpp): the summed probe intensity of
// every position, patches clipped where they leave the object.
#include <ptyko/core/illumination.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using namespace ptyko;

// Patches inside, across each edge and corner, and wholly outside, with
// several at the same place; against a pixel-by-pixel sum that checks every
// pixel of every patch (in the same order, so the doubles agree exactly).
TEST(Illumination, PatchesAreSummedAndClippedAtEveryEdge) {
  int const M = 2, D = 6, H = 13, W = 17;
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0, 1);
  HostComplex3 probe("probe", M, D, D);
  for (std::size_t k = 0; k < probe.span(); ++k) probe.data()[k] = Complex<double>(n(rng), n(rng));
  std::vector<std::array<double, 2>> const positions = {
      {6.2, 8.4}, {6.2, 8.4}, {0.0, 8.0},  {12.6, 8.0}, {6.0, -1.3}, {6.0, 17.4}, {-2.0, -2.0},
      {14.0, 18.0}, {1.0, 16.0}, {-3.0, 8.0}, {40.0, 8.0}, {6.0, -30.0}, {6.0, 30.0}, {2.49, 3.51}};
  HostRealImage const lit = illumination_map(probe, positions, H, W);
  ASSERT_EQ(int(lit.extent(0)), H);
  ASSERT_EQ(int(lit.extent(1)), W);
  std::vector<double> expected(std::size_t(H) * W, 0.0);
  for (auto const& pos : positions) {
    int const y0 = int(std::lround(pos[0])) - D / 2, x0 = int(std::lround(pos[1])) - D / 2;
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) {
        int const y = y0 + i, x = x0 + j;
        if (y < 0 || y >= H || x < 0 || x >= W) continue;
        double p = 0;
        for (int m = 0; m < M; ++m) p += std::norm(std::complex<double>(probe(m, i, j).real(), probe(m, i, j).imag()));
        expected[std::size_t(y) * W + x] += p;
      }
  }
  int edges[4] = {0, 0, 0, 0};  // lit pixels in the first and last row and column: clipped there
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      EXPECT_NEAR(lit(y, x), expected[std::size_t(y) * W + x], 1e-12) << y << ", " << x;
      bool const on = lit(y, x) > 0;
      edges[0] += on && y == 0;
      edges[1] += on && y == H - 1;
      edges[2] += on && x == 0;
      edges[3] += on && x == W - 1;
    }
  for (int e = 0; e < 4; ++e) EXPECT_GT(edges[e], 0) << "edge " << e;
}

}  // namespace
