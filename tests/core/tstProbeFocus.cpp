// The frames the probe-focus trial runs on (core/probe_focus.hpp): each
// rank's share of a large scan, and a compact part of its frames. The trial
// itself (the side it picks, on the whole scan or a part) is checked on
// simulated data in tstSolvers and, through `ptyko reconstruct` on one and
// two ranks, in tstReconstructRun.
#include <ptyko/core/probe_focus.hpp>

#include <gtest/gtest.h>

#include <scan_positions.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <vector>

namespace {

using namespace ptyko;
using Positions = std::vector<std::array<double, 2>>;
using test::fermat_spiral;

std::vector<std::size_t> range(std::size_t from, std::size_t to) {
  std::vector<std::size_t> ids(to - from);
  std::iota(ids.begin(), ids.end(), from);
  return ids;
}

double distance(std::array<double, 2> const& a, std::array<double, 2> const& b) {
  return std::hypot(a[0] - b[0], a[1] - b[1]);
}

double widest_pair(Positions const& p, std::vector<std::size_t> const& ids) {
  double widest = 0;
  for (std::size_t a : ids)
    for (std::size_t b : ids) widest = std::max(widest, distance(p[a], p[b]));
  return widest;
}

TEST(ProbeFocusQuota, ScansUpToTheLimitTryEveryFrame) {
  EXPECT_EQ(probe_focus_quota(400, 400, probe_focus_trial_frames), 400u);
  EXPECT_EQ(probe_focus_quota(200, 400, probe_focus_trial_frames), 200u);  // one of two ranks
  EXPECT_EQ(probe_focus_quota(1024, 1024, 1024), 1024u);
  EXPECT_EQ(probe_focus_quota(10000, 10000, 0), 10000u);  // 0: no limit
}

TEST(ProbeFocusQuota, LargerScansTryEachRanksShare) {
  EXPECT_EQ(probe_focus_quota(10000, 10000, 1024), 1024u);
  EXPECT_EQ(probe_focus_quota(5000, 10000, 1024), 512u);
  EXPECT_EQ(probe_focus_quota(2500, 10000, 1024), 256u);
  // Uneven ranks: the shares are rounded up, so they cover the limit.
  std::size_t const own[3] = {3333, 3333, 3334};
  std::size_t total = 0;
  for (std::size_t n : own) total += probe_focus_quota(n, 10000, 1024);
  EXPECT_GE(total, 1024u);
  EXPECT_LE(total, 1027u);
}

TEST(ProbeFocusQuota, EveryRankTriesAtLeastItsMinimum) {
  // 64 ranks of a 10 000-frame scan: a share of 16 frames would barely
  // overlap itself.
  EXPECT_EQ(probe_focus_quota(156, 10000, 1024), std::size_t(probe_focus_rank_frames));
  EXPECT_EQ(probe_focus_quota(20, 10000, 1024), 20u);  // all a small rank holds
  EXPECT_EQ(probe_focus_quota(0, 10000, 1024), 0u);
}

TEST(CompactFrames, ADiscAroundTheFrameNearestTheCentroid) {
  Positions const p = fermat_spiral(2000, 10);
  std::size_t const count = 300;
  auto const part = compact_frames(p, range(0, p.size()), count);
  ASSERT_EQ(part.size(), count);
  EXPECT_TRUE(std::is_sorted(part.begin(), part.end()));
  // The spiral's centre frame is the nearest to the centroid: every chosen
  // frame lies nearer it than every frame left out.
  EXPECT_TRUE(std::binary_search(part.begin(), part.end(), std::size_t(0)));
  double farthest_in = 0, nearest_out = 1e300;
  for (std::size_t id = 0; id < p.size(); ++id) {
    double const d = distance(p[id], p[0]);
    if (std::binary_search(part.begin(), part.end(), id))
      farthest_in = std::max(farthest_in, d);
    else
      nearest_out = std::min(nearest_out, d);
  }
  EXPECT_LE(farthest_in, nearest_out);
  // A disc holding 15 % of the scan's frames: sqrt(0.15) of its radius.
  EXPECT_LT(farthest_in, 1.1 * std::sqrt(double(count) / double(p.size())) * 10 * std::sqrt(2000.0));
}

TEST(CompactFrames, ARingOfFramesGivesAnArcOfIt) {
  // One rank holding the spiral's outer ring (a contiguous block of the
  // file's frames): its centroid lies in the hole, and the part grows
  // around the ring's frame nearest it rather than around the hole.
  Positions const p = fermat_spiral(2000, 10);
  auto const ring = range(1500, 2000);
  auto const part = compact_frames(p, ring, 50);
  ASSERT_EQ(part.size(), 50u);
  EXPECT_GE(part.front(), 1500u);
  double const diameter = widest_pair(p, ring);
  EXPECT_LT(widest_pair(p, part), 0.4 * diameter);
  // The ring's first 50 frames, taken in file order, lie all around it.
  EXPECT_GT(widest_pair(p, range(1500, 1550)), 0.8 * diameter);
}

TEST(CompactFrames, TheOrderOfTheIdsDoesNotMatter) {
  // A raster: many frames at equal distances, decided by their numbers.
  Positions p;
  for (int y = 0; y < 20; ++y)
    for (int x = 0; x < 20; ++x) p.push_back({10.0 * y, 10.0 * x});
  auto ids = range(0, p.size());
  auto const forward = compact_frames(p, ids, 37);
  std::reverse(ids.begin(), ids.end());
  EXPECT_EQ(compact_frames(p, ids, 37), forward);
  EXPECT_EQ(forward.size(), 37u);
}

TEST(CompactFrames, AllOrNone) {
  Positions const p = fermat_spiral(100, 5);
  std::vector<std::size_t> const ids = {7, 3, 50, 12};
  EXPECT_EQ(compact_frames(p, ids, 4), (std::vector<std::size_t>{3, 7, 12, 50}));
  EXPECT_EQ(compact_frames(p, ids, 10), (std::vector<std::size_t>{3, 7, 12, 50}));
  EXPECT_TRUE(compact_frames(p, ids, 0).empty());
  EXPECT_TRUE(compact_frames(p, {}, 5).empty());
}

}  // namespace
