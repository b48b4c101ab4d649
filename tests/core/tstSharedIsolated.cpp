// The parts of an isolated position's product that another rank needs
// (core/shared_isolated.hpp): exactly the patch pixels that the bilinear
// adjoint reads on the footprint pixels inside that rank's tile, found
// here by walking every footprint pixel; and the footprint's corner as its
// owner's kernels place it.
#include <ptyko/core/shared_isolated.hpp>

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace {

using namespace ptyko;

// The patch pixels (i, j) read by footprint pixels inside `box`, as a
// rectangle {row, col, rows, cols} (rows 0: none).
std::array<int, 4> walked_part(std::array<int, 2> corner, std::array<int, 4> const& box, int D) {
  int r0 = D, r1 = -1, c0 = D, c1 = -1;
  for (int u = 0; u <= D; ++u)
    for (int v = 0; v <= D; ++v) {
      int const y = corner[0] + u, x = corner[1] + v;
      if (y < box[0] || y >= box[0] + box[2] || x < box[1] || x >= box[1] + box[3]) continue;
      for (int i : {u - 1, u})
        for (int j : {v - 1, v}) {
          if (i < 0 || i >= D || j < 0 || j >= D) continue;
          r0 = std::min(r0, i), r1 = std::max(r1, i), c0 = std::min(c0, j), c1 = std::max(c1, j);
        }
    }
  if (r1 < 0) return {0, 0, 0, 0};
  return {r0, c0, r1 - r0 + 1, c1 - c0 + 1};
}

TEST(SharedIsolated, PartsAreThePatchPixelsTheBoxReads) {
  int const D = 12;
  std::array<int, 2> const corner{40, 70};  // footprint rows 40..52, columns 70..82
  std::vector<std::array<int, 4>> const boxes{
      {0, 0, 41, 200},    // the footprint's first row only
      {52, 0, 100, 200},  // its last row only
      {0, 76, 200, 3},    // three middle columns
      {45, 60, 4, 11},    // a corner piece: rows 45..48, columns 70 (the box starts left of it)
      {0, 0, 40, 200},    // above it: nothing
      {0, 83, 200, 10},   // right of it: nothing
      {0, 0, 500, 500},   // all of it
  };
  for (auto const& box : boxes) {
    auto const want = walked_part(corner, box, D);
    auto const got = product_part_read_by(corner, box, D);
    EXPECT_EQ(got[2] == 0, want[2] == 0) << box[0] << "," << box[1];
    if (want[2] > 0) EXPECT_EQ(got, want) << box[0] << "," << box[1];
  }
  EXPECT_EQ(product_part_read_by(corner, {0, 0, 500, 500}, D), (std::array<int, 4>{0, 0, D, D}));
}

// The owner casts its tile-local position to T before the corner is taken:
// a position whose float cast crosses an integer keeps the owner's corner.
TEST(SharedIsolated, CornerIsTheOwnersAfterTheCast) {
  int const D = 16;
  // Tile-local 991.999999999: float rounds it to 992, so the float owner's
  // corner is 992 - 8 = 984 (global 1000), the double owner's 983 (999).
  std::array<double, 2> const global{1008.0 - 1e-9, 2000.25};
  auto const c = owner_footprint_corner<float>(global, {16, 32}, D);
  auto const d = owner_footprint_corner<double>(global, {16, 32}, D);
  EXPECT_EQ(c[0], 1000);
  EXPECT_EQ(d[0], 999);
  EXPECT_EQ(c[1], 1992);  // 2000.25 - 32 - 8 = 1960.25: column 1960, global 1992
  EXPECT_EQ(d[1], 1992);
}

}  // namespace
