// OverlapMaximum (parallel/src): the largest weight an overlap exchange
// leaves, found on the host from the messages, against the sums a device
// forms (own weights, then each link's received weights in link order) over
// a rank's whole tile. Layouts with one cut (links' regions apart) and with
// corners (regions overlapping, as a rank's links do in a 2-D partition),
// tiled parts from each side's own tile sets (as with the tiles' sources),
// the same parts both ways, and whole regions.

#include "overlap_maximum.hpp"

#include <ptyko/kernels/tiles.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace ptyko;
using namespace ptyko::parallel;
using namespace ptyko::parallel::impl;

namespace {

constexpr int H = 96, W = 80;

struct Message {
  std::vector<HostPart> parts;
  std::vector<float> values;
};

/// The parts of the grid tiles (tile_edge, tile coordinates) marked in
/// `touched` inside `region`, row-major, packed one after the other.
std::vector<HostPart> parts_of(std::vector<char> const& touched, Box const& region) {
  std::vector<HostPart> parts;
  int first = 0;
  int const tiles_x = (W + tile_edge - 1) / tile_edge;
  for (std::size_t t = 0; t < touched.size(); ++t) {
    if (!touched[t]) continue;
    Box const tile{int(t) / tiles_x * tile_edge, int(t) % tiles_x * tile_edge, tile_edge, tile_edge};
    Box const p = intersect(intersect(tile, Box{0, 0, H, W}), region);
    if (p.empty()) continue;
    parts.push_back({p.y, p.x, p.height, p.width, first});
    first += int(p.area());
  }
  return parts;
}

/// Checks one exchange: returns the largest summed weight over the tile,
/// and what OverlapMaximum and this rank's own largest weight give.
struct Outcome {
  float summed_max;
  double found;
  std::size_t shared_pixels;
};

Outcome exchange(std::vector<Box> const& regions, int mode, std::mt19937& rng) {
  int const tiles = ((H + tile_edge - 1) / tile_edge) * ((W + tile_edge - 1) / tile_edge);
  std::uniform_real_distribution<float> value(0.0f, 1.0f);
  std::bernoulli_distribution coin(0.5);
  // This rank's weights: on the tiles its positions touched (mode 0), on
  // every tile (1: the same parts both ways), or everywhere (2: whole regions).
  std::vector<char> own_touched(std::size_t(tiles), 1);
  if (mode == 0)
    for (auto& t : own_touched) t = coin(rng);
  std::vector<float> own(std::size_t(H) * W, 0.0f);
  int const tiles_x = (W + tile_edge - 1) / tile_edge;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      if (own_touched[std::size_t(y / tile_edge * tiles_x + x / tile_edge)]) own[std::size_t(y) * W + x] = value(rng);
  std::vector<Message> sent(regions.size()), received(regions.size());
  std::vector<float> summed = own;
  for (std::size_t l = 0; l < regions.size(); ++l) {
    Box const& r = regions[l];
    std::vector<char> theirs(std::size_t(tiles), 1);
    if (mode == 0)
      for (auto& t : theirs) t = coin(rng);
    if (mode == 2) {
      sent[l].parts = received[l].parts = {HostPart{r.y, r.x, r.height, r.width, 0}};
    } else {
      sent[l].parts = parts_of(own_touched, r);
      received[l].parts = parts_of(theirs, r);
    }
    for (HostPart const& p : sent[l].parts)
      for (int y = p[0]; y < p[0] + p[2]; ++y)
        for (int x = p[1]; x < p[1] + p[3]; ++x) sent[l].values.push_back(own[std::size_t(y) * W + x]);
    // The device's unpack, in link order.
    for (HostPart const& p : received[l].parts)
      for (int y = p[0]; y < p[0] + p[2]; ++y)
        for (int x = p[1]; x < p[1] + p[3]; ++x) {
          float const v = value(rng);
          received[l].values.push_back(v);
          summed[std::size_t(y) * W + x] += v;
        }
  }
  OverlapMaximum<float> overlap(regions);
  std::vector<LinkWeights<float>> links;
  for (std::size_t l = 0; l < regions.size(); ++l)
    links.push_back({sent[l].parts.data(), int(sent[l].parts.size()), received[l].parts.data(),
                     int(received[l].parts.size()), sent[l].values.data(), received[l].values.data()});
  double const own_max = *std::max_element(own.begin(), own.end());
  double const found = std::max(own_max, overlap.largest(links));
  return {*std::max_element(summed.begin(), summed.end()), found, overlap.shared_pixels()};
}

// Two links on opposite sides: no pixel shared.
std::vector<Box> const one_cut = {{0, 0, H, 20}, {0, W - 18, H, 18}};
// A rank in a 2-D partition: bands along two sides and the corner boxes of
// its diagonal neighbours, overlapping the bands, one region off the grid.
std::vector<Box> const corners = {{0, 0, H, 21},  {0, 0, 27, W},          {0, 0, 27, 21},
                                  {H - 10, 0, 10, W}, {H - 10, W - 19, 10, 19}, {5, W - 19, H - 5, 19}};

}  // namespace

TEST(OverlapMaximum, EqualsTheLargestSumOverOneCut) {
  std::mt19937 rng(7);
  for (int mode = 0; mode < 3; ++mode)
    for (int trial = 0; trial < 50; ++trial) {
      Outcome const o = exchange(one_cut, mode, rng);
      EXPECT_EQ(o.shared_pixels, 0u);
      ASSERT_EQ(o.found, double(o.summed_max)) << "mode " << mode << ", trial " << trial;
    }
}

// With corners the largest sum mostly lies where three or four links'
// weights meet: missing one link's there fails this test.
TEST(OverlapMaximum, EqualsTheLargestSumWhereLinksShareCorners) {
  std::mt19937 rng(11);
  OverlapMaximum<float> const overlap(corners);
  // The pixels two or more regions hold: the top left corner (3 regions),
  // where the top band meets the right one (2), the bottom left (2) and
  // the bottom right (3).
  EXPECT_EQ(overlap.shared_pixels(), std::size_t(27 * 21 + 22 * 19 + 10 * 21 + 10 * 19));
  for (int mode = 0; mode < 3; ++mode)
    for (int trial = 0; trial < 50; ++trial) {
      Outcome const o = exchange(corners, mode, rng);
      ASSERT_EQ(o.found, double(o.summed_max)) << "mode " << mode << ", trial " << trial;
    }
}

TEST(OverlapMaximum, NothingReceivedGivesZero) {
  OverlapMaximum<float> overlap(corners);
  std::vector<LinkWeights<float>> links(corners.size());
  EXPECT_EQ(overlap.largest(links), 0.0);
}
