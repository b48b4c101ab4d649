// Batching: mini-batches, compact groups, the batches' order per epoch, and
// the walking order DM, RAAR and position refinement visit positions in.
#include <ptyko/core/batching.hpp>
#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <scan_positions.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace {

using namespace ptyko;
using Positions = std::vector<std::array<double, 2>>;
using test::fermat_spiral;

/// Every index 0..n-1 exactly once.
void expect_permutation(std::vector<int> order, int n) {
  ASSERT_EQ(int(order.size()), n);
  std::sort(order.begin(), order.end());
  for (int k = 0; k < n; ++k) EXPECT_EQ(order[k], k);
}

double mean_jump(Positions const& p, std::vector<int> const& order) {
  double sum = 0;
  for (std::size_t k = 1; k < order.size(); ++k)
    sum += std::hypot(p[order[k]][0] - p[order[k - 1]][0], p[order[k]][1] - p[order[k - 1]][1]);
  return sum / double(order.size() - 1);
}

// A 3 x 4 raster listed column by column: bands of one row each, walked
// left to right, then right to left, then left to right again.
TEST(Batching, WalkingOrderSnakesThroughBands) {
  Positions p;
  for (int x = 0; x < 4; ++x)
    for (int y = 0; y < 3; ++y) p.push_back({10.0 * y + 2, 10.0 * x + 2});  // index 3 x + y
  std::vector<int> const order = walking_order(p, 10);
  std::vector<int> const expected{0, 3, 6, 9, 10, 7, 4, 1, 2, 5, 8, 11};
  EXPECT_EQ(order, expected);
}

// On a spiral scan the walk's steps are short: consecutive positions share
// most of their object window. Non-finite positions come last, in order.
TEST(Batching, WalkingOrderShortensTheStepsOfASpiralScan) {
  Positions p = fermat_spiral(400, 8.7);
  std::vector<int> file(p.size());
  std::iota(file.begin(), file.end(), 0);
  std::vector<int> const walk = walking_order(p, 32);
  expect_permutation(walk, 400);
  double const before = mean_jump(p, file), after = mean_jump(p, walk);
  std::printf("[ measured ] mean step between consecutive positions: file order %.1f px, walk %.1f px\n", before,
              after);
  EXPECT_GT(before, 80);  // the spiral jumps across the object
  EXPECT_LT(after, 25);   // measured 18.5: a band of 32 rows, a few pixels to the side, some rows up or down

  p[5][0] = std::numeric_limits<double>::quiet_NaN();
  p[2][1] = std::numeric_limits<double>::infinity();
  std::vector<int> const with_unplaced = walking_order(p, 32);
  expect_permutation(with_unplaced, 400);
  EXPECT_EQ(with_unplaced[398], 2);
  EXPECT_EQ(with_unplaced[399], 5);
  EXPECT_THROW(walking_order(p, 0), UserError);
}

TEST(Batching, CompactGroupsAreEqualAndCoverEveryPosition) {
  Positions const p = fermat_spiral(103, 8.7);
  auto const groups = compact_groups(p, 10);
  ASSERT_EQ(groups.size(), 10u);
  std::vector<int> all;
  for (auto const& g : groups) {
    EXPECT_TRUE(g.size() == 10 || g.size() == 11) << g.size();
    all.insert(all.end(), g.begin(), g.end());
  }
  expect_permutation(all, 103);
}

TEST(Batching, EverySchemeBatchesEveryPositionOnce) {
  Positions const p = fermat_spiral(103, 8.7);
  for (BatchingScheme s : {BatchingScheme::sparse, BatchingScheme::compact, BatchingScheme::random}) {
    auto const batches = make_batches(p, 16, s, 7);
    EXPECT_EQ(batches.size(), 7u) << to_string(s);  // ceil(103 / 16)
    std::vector<int> all;
    for (auto const& b : batches) all.insert(all.end(), b.begin(), b.end());
    expect_permutation(all, 103);
  }
}

// A resumed run repeats an epoch's order exactly; epochs differ.
TEST(Batching, BatchOrderDependsOnlyOnSeedAndEpoch) {
  auto const a = batch_order(25, 1, 3);
  expect_permutation(a, 25);
  EXPECT_EQ(a, batch_order(25, 1, 3));
  EXPECT_NE(a, batch_order(25, 1, 4));
  EXPECT_NE(a, batch_order(25, 2, 3));
}

}  // namespace
