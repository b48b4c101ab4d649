// Partitioning: equal counts, compact domains, tiles covering every
// footprint, neighbours exactly the ranks whose tiles share pixels, and the
// rule "more ranks than frames" refused.
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/partition.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <vector>

namespace {

using namespace ptyko;
using namespace ptyko::parallel;

std::vector<std::array<double, 2>> raster(int rows, int cols, double step, double origin) {
  std::vector<std::array<double, 2>> p;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) p.push_back({origin + r * step, origin + c * step});
  return p;
}

std::vector<std::array<double, 2>> spiral(int n, double step, double centre) {
  std::vector<std::array<double, 2>> p;
  double const a = step / std::sqrt(M_PI), golden = M_PI * (3 - std::sqrt(5.0));
  for (int k = 0; k < n; ++k) {
    double const r = a * std::sqrt(k + 0.5);
    p.push_back({centre + r * std::sin(k * golden), centre + r * std::cos(k * golden)});
  }
  return p;
}

void check(std::vector<std::array<double, 2>> const& pos, int D, int H, int W, int P) {
  Partition p = partition_scan(pos, D, H, W, P);
  ASSERT_EQ(int(p.frames.size()), P);
  // Every frame exactly once; counts differ by at most one.
  std::set<std::size_t> seen;
  std::size_t lo = pos.size(), hi = 0;
  for (auto const& f : p.frames) {
    lo = std::min(lo, f.size());
    hi = std::max(hi, f.size());
    for (auto id : f) EXPECT_TRUE(seen.insert(id).second) << "frame " << id << " twice";
  }
  EXPECT_EQ(seen.size(), pos.size());
  EXPECT_LE(hi - lo, 1u) << "P = " << P;
  double full_area = 0;
  {
    double y0 = 1e30, x0 = 1e30, y1 = -1e30, x1 = -1e30;
    for (auto const& q : pos) {
      y0 = std::min(y0, q[0]); y1 = std::max(y1, q[0]);
      x0 = std::min(x0, q[1]); x1 = std::max(x1, q[1]);
    }
    full_area = (y1 - y0) * (x1 - x0);
  }
  for (int r = 0; r < P; ++r) {
    Box const& t = p.tiles[r];
    // The tile holds every footprint pixel (bilinear: D + 1) of its frames.
    double y0 = 1e30, x0 = 1e30, y1 = -1e30, x1 = -1e30;
    for (auto id : p.frames[r]) {
      int const cy = int(std::floor(pos[id][0] - D / 2)), cx = int(std::floor(pos[id][1] - D / 2));
      EXPECT_GE(cy, t.y);
      EXPECT_GE(cx, t.x);
      EXPECT_LE(cy + D + 1, t.y + t.height);
      EXPECT_LE(cx + D + 1, t.x + t.width);
      y0 = std::min(y0, pos[id][0]); y1 = std::max(y1, pos[id][0]);
      x0 = std::min(x0, pos[id][1]); x1 = std::max(x1, pos[id][1]);
    }
    // Compact: the domain's box of positions covers no more than ~2.5x its
    // share of the scan (thin stripes would fail this for P >= 4).
    EXPECT_LE((y1 - y0) * (x1 - x0), 2.5 * full_area / P + 1e-9) << "rank " << r << " of " << P;
    // Aspect ratio of the domain stays moderate (no stripes).
    double const ar = std::max(y1 - y0, x1 - x0) / std::max(1.0, std::min(y1 - y0, x1 - x0));
    if (P > 1) EXPECT_LE(ar, 4.0) << "rank " << r << " of " << P;
    // Neighbours: exactly the ranks whose tiles share a pixel, symmetric.
    for (int s = 0; s < P; ++s) {
      if (s == r) continue;
      bool const shares = !intersect(t, p.tiles[s]).empty();
      bool const listed = std::count(p.neighbours[r].begin(), p.neighbours[r].end(), s) == 1;
      EXPECT_EQ(shares, listed) << r << " / " << s;
      bool const back = std::count(p.neighbours[s].begin(), p.neighbours[s].end(), r) == 1;
      EXPECT_EQ(listed, back);
      // Exactness needs: any two frames of r and s whose footprints share a
      // pixel make r and s neighbours.
      for (auto a : p.frames[r])
        for (auto b : p.frames[s])
          if (std::abs(pos[a][0] - pos[b][0]) < D + 1 && std::abs(pos[a][1] - pos[b][1]) < D + 1)
            EXPECT_TRUE(listed) << "frames " << a << " and " << b << " overlap";
    }
  }
}

TEST(Partition, RasterScans) {
  auto pos = raster(12, 15, 6.0, 20.0);
  for (int P : {1, 2, 3, 4, 6, 8}) check(pos, 32, 160, 160, P);
}

TEST(Partition, SpiralScans) {
  auto pos = spiral(400, 8.0, 150.0);
  for (int P : {1, 2, 3, 4, 5, 7, 16}) check(pos, 64, 300, 300, P);
}

TEST(Partition, NeighboursOnARasterGrid) {
  // 4 ranks on a square raster: a 2 x 2 layout, each rank sees the 3 others
  // (diagonals included, since patches are wider than the step).
  auto pos = raster(10, 10, 5.0, 20.0);
  Partition p = partition_scan(pos, 16, 90, 90, 4);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(p.neighbours[r].size(), 3u);
  // 9 ranks... 8 on a 4 x 2 layout: corners see 3, middles 5.
  auto wide = raster(8, 16, 6.0, 20.0);
  Partition q = partition_scan(wide, 8, 80, 130, 8);
  std::size_t most = 0;
  for (auto const& n : q.neighbours) most = std::max(most, n.size());
  EXPECT_LE(most, 8u);
}

TEST(Partition, FrameRanksInvertTheFrameLists) {
  auto pos = spiral(400, 8.0, 150.0);
  Partition const p = partition_scan(pos, 64, 300, 300, 5);
  std::vector<int> const ranks = p.frame_ranks();
  ASSERT_EQ(ranks.size(), pos.size());
  for (int r = 0; r < 5; ++r)
    for (std::size_t id : p.frames[r]) EXPECT_EQ(ranks[id], r) << id;
}

// A resumed run's refined positions (`held`) and refinement's reach
// (`margin`): the frames are split by the positions alone; the tiles hold
// the held footprints and the margin, and stay as they were where the held
// positions lie inside them (a run resumed on as many ranks continues on
// the same tiles).
TEST(Partition, HeldPositionsAndTheMarginWidenOnlyTheTiles) {
  auto pos = spiral(400, 8.0, 150.0);
  int const D = 64, H = 300, W = 300, P = 4;
  Partition const plain = partition_scan(pos, D, H, W, P);
  auto inside = pos;  // moved by at most the tile's spare pixel: no change
  for (auto& p : inside) p = {std::floor(p[0]) + 0.25, std::floor(p[1]) + 0.75};
  Partition const same = partition_scan(pos, D, H, W, P, inside);
  EXPECT_EQ(same.frames, plain.frames);
  for (int r = 0; r < P; ++r) EXPECT_EQ(same.tiles[r], plain.tiles[r]) << r;
  auto moved = pos;  // every position 9 pixels towards the lower right
  for (auto& p : moved) p = {p[0] + 9, p[1] + 9};
  Partition const held = partition_scan(pos, D, H, W, P, moved);
  Partition const margin = partition_scan(pos, D, H, W, P, {}, 9);
  EXPECT_EQ(held.frames, plain.frames);
  EXPECT_EQ(margin.frames, plain.frames);
  Box const object{0, 0, H, W};
  auto holds = [&](Box const& tile, Box const& b) {
    Box const in = intersect(b, object);
    return intersect(tile, in) == in;
  };
  bool grew = false;
  for (int r = 0; r < P; ++r) {
    Box const& t = plain.tiles[r];
    for (std::size_t id : plain.frames[r]) {
      // the held footprint (D + 1 wide), and the file's widened by 9 on
      // every side, inside the object
      Box const f{int(std::floor(moved[id][0] - D / 2)), int(std::floor(moved[id][1] - D / 2)), D + 1, D + 1};
      Box const g{int(std::floor(pos[id][0] - D / 2)) - 9, int(std::floor(pos[id][1] - D / 2)) - 9, D + 19, D + 19};
      EXPECT_TRUE(holds(held.tiles[r], f)) << id;
      EXPECT_TRUE(holds(margin.tiles[r], g)) << id;
    }
    EXPECT_TRUE(holds(held.tiles[r], t)) << r;  // only ever larger
    EXPECT_TRUE(holds(margin.tiles[r], t)) << r;
    grew = grew || !(held.tiles[r] == t);
  }
  EXPECT_TRUE(grew);
}

TEST(Partition, MoreRanksThanFramesIsRefused) {
  auto pos = raster(2, 2, 5.0, 20.0);
  EXPECT_THROW(partition_scan(pos, 8, 50, 50, 5), UserError);
  EXPECT_NO_THROW(partition_scan(pos, 8, 50, 50, 4));
}

TEST(Partition, IntersectBoxes) {
  Box a{0, 0, 10, 10}, b{5, 8, 10, 10}, c{20, 20, 1, 1};
  EXPECT_EQ(intersect(a, b), (Box{5, 8, 5, 2}));
  EXPECT_TRUE(intersect(a, c).empty());
  EXPECT_EQ(intersect(a, b).area(), 10u);
}

// Footprint counts against a walk over every footprint pixel: footprints
// inside the box, across each of its edges and corners, wholly outside,
// several on one place; D odd and even, a box narrower than a footprint.
TEST(Partition, FootprintCountsEqualAWalkOverEveryFootprintPixel) {
  for (auto const& [D, H, W] : std::vector<std::array<int, 3>>{{6, 40, 31}, {7, 23, 40}, {9, 5, 12}}) {
    std::vector<std::array<int, 2>> corners;
    unsigned state = 12345;
    auto const next = [&](int lo, int hi) {  // a fixed pseudo-random integer in [lo, hi]
      state = state * 1103515245u + 12345u;
      return lo + int((state >> 8) % unsigned(hi - lo + 1));
    };
    for (int k = 0; k < 60; ++k) corners.push_back({next(-D - 4, H + 2), next(-D - 4, W + 2)});
    corners.push_back({0, 0});
    corners.push_back({0, 0});
    corners.push_back({H - 1, W - 1});
    corners.push_back({-D, -D});    // its last row and column only
    corners.push_back({H, W});      // outside
    corners.push_back({-D - 1, 0});  // outside, just
    std::vector<int> walked(std::size_t(H) * W, 0);
    for (auto const& c : corners)
      for (int i = 0; i <= D; ++i)
        for (int j = 0; j <= D; ++j) {
          int const y = c[0] + i, x = c[1] + j;
          if (y >= 0 && x >= 0 && y < H && x < W) ++walked[std::size_t(y) * W + x];
        }
    std::vector<float> counts(walked.size(), -1.0f);
    footprint_counts(corners, D, H, W, counts.data());
    int wrong = 0, covered = 0;
    for (std::size_t k = 0; k < walked.size(); ++k) {
      wrong += counts[k] != float(walked[k]);
      covered += walked[k] > 0;
    }
    EXPECT_EQ(wrong, 0) << "D " << D << ", " << H << " x " << W;
    EXPECT_GT(covered, H * W / 2);
  }
}

}  // namespace
