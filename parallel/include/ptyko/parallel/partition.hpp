#pragma once
// Spatial partitioning of a scan over P ranks: equal-count, compact groups of
// positions (recursive coordinate bisection), each rank's object tile (the
// bounding box of its positions' patch footprints) and the tiles it shares
// pixels with (its neighbours). Pure geometry: no MPI, identical on every rank.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ptyko::parallel {

/// A rectangle of global object pixels: rows [y, y + height), columns [x, x + width).
struct Box {
  int y = 0, x = 0, height = 0, width = 0;
  bool empty() const { return height <= 0 || width <= 0; }
  std::size_t area() const { return empty() ? 0 : std::size_t(height) * std::size_t(width); }
  bool operator==(Box const& o) const {
    return y == o.y && x == o.x && height == o.height && width == o.width;
  }
};

/// Intersection of two boxes (empty when they do not overlap).
Box intersect(Box const& a, Box const& b);

struct Partition {
  /// frames[r]: the frame indices of rank r, sorted.
  std::vector<std::vector<std::size_t>> frames;
  /// tiles[r]: the object pixels rank r holds: every pixel its patches touch
  /// (the D+1 footprint that bilinear interpolation reads), plus one pixel of
  /// safety on each side, clipped to the object.
  std::vector<Box> tiles;
  /// neighbours[r]: ranks whose tiles share pixels with rank r's, ascending.
  std::vector<std::vector<int>> neighbours;

  /// The rank of every frame, indexed by frame (the inverse of `frames`).
  std::vector<int> frame_ranks() const {
    std::size_t n = 0;
    for (auto const& f : frames) n += f.size();
    std::vector<int> out(n, -1);
    for (std::size_t r = 0; r < frames.size(); ++r)
      for (std::size_t id : frames[r]) out[id] = int(r);
    return out;
  }
};

/// Partitions `positions` (probe centres, global object pixels) of a scan
/// with D x D frames on an object of `height` x `width` pixels over `ranks`
/// ranks. Throws UserError when there are more ranks than positions.
/// `held` (empty, or one per position): other positions of the same frames
/// whose footprints the tiles must hold too, a resumed run's refined ones.
/// The frames are split by `positions` alone, and a tile grows only where a
/// held footprint lies outside it: a run resumed on as many ranks gets the
/// tiles it had (its refinement kept every footprint inside them).
/// `margin`: pixels the positions may move (refinement's largest shift),
/// which the tiles hold beyond the footprints, within the object.
Partition partition_scan(std::vector<std::array<double, 2>> const& positions, int D, int height, int width,
                         int ranks, std::vector<std::array<double, 2>> const& held = {}, int margin = 0);

/// How many footprints cover each pixel of a height x width box, written to
/// `out` (height x width values, row-major): the footprint with top-left
/// corner {y, x} (box pixels; may lie partly or wholly outside) is the
/// (D + 1)^2 pixels [y, y + D] x [x, x + D] that bilinear interpolation
/// reads. O(footprints log footprints + height width) with O(width + footprints)
/// scratch: a sweep down the rows keeps each column's change of the count
/// from one pixel to the next, to which footprints add at their first row
/// and which they leave after their last.
template <class V>
void footprint_counts(std::vector<std::array<int, 2>> const& corners, int D, int height, int width, V* out) {
  struct Event {
    int row, x0, x1, change;
    bool operator<(Event const& o) const { return row < o.row; }
  };
  std::vector<Event> events;
  events.reserve(2 * corners.size());
  for (auto const& c : corners) {
    int const y0 = std::max(c[0], 0), x0 = std::max(c[1], 0);
    int const y1 = std::min(c[0] + D + 1, height), x1 = std::min(c[1] + D + 1, width);  // exclusive
    if (y0 >= y1 || x0 >= x1) continue;
    events.push_back({y0, x0, x1, 1});
    events.push_back({y1, x0, x1, -1});
  }
  std::sort(events.begin(), events.end());
  std::vector<std::int64_t> step(std::size_t(std::max(width, 0)) + 1, 0);  // count(x) - count(x - 1) on this row
  std::size_t e = 0;
  for (int y = 0; y < height; ++y) {
    for (; e < events.size() && events[e].row == y; ++e) {
      step[std::size_t(events[e].x0)] += events[e].change;
      step[std::size_t(events[e].x1)] -= events[e].change;
    }
    std::int64_t count = 0;
    for (int x = 0; x < width; ++x) {
      count += step[std::size_t(x)];
      out[std::size_t(y) * std::size_t(width) + std::size_t(x)] = V(count);
    }
  }
}

}  // namespace ptyko::parallel
