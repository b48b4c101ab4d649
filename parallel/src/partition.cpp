#include <ptyko/core/batching.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/parallel/partition.hpp>

#include <algorithm>
#include <climits>
#include <cmath>

namespace ptyko::parallel {

Box intersect(Box const& a, Box const& b) {
  Box r;
  r.y = std::max(a.y, b.y);
  r.x = std::max(a.x, b.x);
  r.height = std::min(a.y + a.height, b.y + b.height) - r.y;
  r.width = std::min(a.x + a.width, b.x + b.width) - r.x;
  if (r.empty()) r = Box{};
  return r;
}

Partition partition_scan(std::vector<std::array<double, 2>> const& positions, int D, int height, int width,
                         int ranks, std::vector<std::array<double, 2>> const& held, int margin) {
  PTYKO_REQUIRE(ranks >= 1 && std::size_t(ranks) <= positions.size(), ranks, " MPI ranks for ",
                positions.size(), " frames: run with at most ", positions.size(), " ranks");
  PTYKO_ASSERT(held.empty() || held.size() == positions.size(), held.size(), " held positions for ",
               positions.size(), " frames");
  PTYKO_ASSERT(margin >= 0, "a margin of ", margin, " pixels");
  Partition p;
  auto groups = compact_groups(positions, ranks);
  p.frames.resize(ranks);
  p.tiles.resize(ranks);
  for (int r = 0; r < ranks; ++r) {
    p.frames[r].assign(groups[r].begin(), groups[r].end());
    std::sort(p.frames[r].begin(), p.frames[r].end());
    int y0 = INT_MAX, x0 = INT_MAX, y1 = INT_MIN, x1 = INT_MIN;
    for (std::size_t id : p.frames[r]) {
      // Patch corner as the kernels compute it (ptyko::PatchCorner); the
      // footprint is D + 1 pixels wide for bilinear interpolation.
      int const cy = int(std::floor(positions[id][0] - D / 2));
      int const cx = int(std::floor(positions[id][1] - D / 2));
      y0 = std::min(y0, cy);
      x0 = std::min(x0, cx);
      y1 = std::max(y1, cy + D + 1);
      x1 = std::max(x1, cx + D + 1);
    }
    // `margin` pixels for positions that move (refinement), and one pixel
    // of safety: device positions are rounded to the working precision.
    // Origins on the object tile grid (multiples of tile_edge): then every
    // rank's batch tiles lie on one global grid, and neighbours
    // agree on the tiles they share (neighbour-consensus exchanges only the
    // batch tiles inside an overlap).
    y0 = std::max(0, y0 - margin - 1);
    x0 = std::max(0, x0 - margin - 1);
    y0 -= y0 % tile_edge;
    x0 -= x0 % tile_edge;
    y1 = std::min(height, y1 + margin + 1);
    x1 = std::min(width, x1 + margin + 1);
    for (std::size_t id : p.frames[r]) {
      if (held.empty()) break;
      int const cy = int(std::floor(held[id][0] - D / 2)), cx = int(std::floor(held[id][1] - D / 2));
      if (cy < y0) y0 = std::max(0, cy - 1) / tile_edge * tile_edge;
      if (cx < x0) x0 = std::max(0, cx - 1) / tile_edge * tile_edge;
      if (cy + D + 1 > y1) y1 = std::min(height, cy + D + 2);
      if (cx + D + 1 > x1) x1 = std::min(width, cx + D + 2);
    }
    p.tiles[r] = Box{y0, x0, y1 - y0, x1 - x0};
  }
  p.neighbours.resize(ranks);
  for (int r = 0; r < ranks; ++r)
    for (int s = 0; s < ranks; ++s)
      if (s != r && !intersect(p.tiles[r], p.tiles[s]).empty()) p.neighbours[r].push_back(s);
  return p;
}

}  // namespace ptyko::parallel
