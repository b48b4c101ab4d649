#pragma once
// The largest weight an overlap exchange leaves, found on the host from the
// messages themselves, so that a device need not reduce its summed weights
// and send the result back (one wait for it per batch less; item 70 of
// docs/performance.md).
//
// Exact neighbour-consensus adds to each pixel a link receives the weight
// the neighbour sent; every other pixel keeps this rank's own weight. With
// this rank's largest own weight over the tiles (queued on the device
// before the exchange, read behind the exchange's wait), the largest summed
// weight is the larger of that and the largest sum over the received
// pixels: weights are never negative, so a sum is never below its own part.
// Those sums are formed here as the device forms them, in float or double:
// own weight first (what this rank sent over the same link, or 0 where its
// positions touched no tile there), then each link's received weight in
// the order the unpacks add them. A pixel several links share (where the
// links' regions overlap, near a corner of the partition) collects every
// link's weight in a small buffer over those shared cells first.

#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/partition.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ptyko::parallel::impl {

/// A part of a link's pixels: {y, x, height, width, first packed pixel} in
/// the rank's tile coordinates (a whole region is one part packed at 0).
using HostPart = std::array<int, 5>;

/// One link's exchange as the host holds it after its messages arrived.
template <class T>
struct LinkWeights {
  HostPart const* out = nullptr;  ///< the parts this rank sent
  int n_out = 0;
  HostPart const* in = nullptr;  ///< the parts it received
  int n_in = 0;
  T const* sent = nullptr;      ///< the weights sent, packed over `out`
  T const* received = nullptr;  ///< the weights received, packed over `in`
};

template <class T>
class OverlapMaximum {
 public:
  OverlapMaximum() = default;
  /// `regions`: every link's region in tile coordinates, in the order the
  /// unpacks add the links' messages.
  explicit OverlapMaximum(std::vector<Box> const& regions) : m_cells_of(regions.size()) {
    std::vector<int> ys, xs;
    for (Box const& r : regions)
      if (!r.empty()) {
        ys.insert(ys.end(), {r.y, r.y + r.height});
        xs.insert(xs.end(), {r.x, r.x + r.width});
      }
    auto const unique_sorted = [](std::vector<int>& v) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    unique_sorted(ys);
    unique_sorted(xs);
    // The grid of every region's edges: each cell lies inside or outside
    // each region; cells inside two or more are the shared ones.
    std::size_t first = 0;
    for (std::size_t i = 0; i + 1 < ys.size(); ++i)
      for (std::size_t j = 0; j + 1 < xs.size(); ++j) {
        Box const cell{ys[i], xs[j], ys[i + 1] - ys[i], xs[j + 1] - xs[j]};
        std::vector<int> holders;
        for (std::size_t l = 0; l < regions.size(); ++l)
          if (intersect(cell, regions[l]) == cell) holders.push_back(int(l));
        if (holders.size() < 2) continue;
        for (int l : holders) m_cells_of[std::size_t(l)].push_back(int(m_cells.size()));
        m_cells.push_back(Cell{cell, first, holders.front()});
        first += cell.area();
      }
    m_sums.resize(first);
    m_active.resize(m_cells.size());
  }

  /// Pixels that two or more links share.
  std::size_t shared_pixels() const { return m_sums.size(); }

  /// The largest summed weight over the pixels `links` received (one entry
  /// per region of the constructor, in its order), 0 for none. Allocates
  /// nothing once its lookup has grown to the largest plan.
  double largest(std::vector<LinkWeights<T>> const& links) {
    PTYKO_ASSERT(links.size() == m_cells_of.size(), "OverlapMaximum: ", links.size(), " links for ",
                 m_cells_of.size(), " regions");
    // The shared cells some link received pixels of; their sums start
    // from this rank's own weights (sent over any link holding the cell,
    // the first one's here), 0 where it sent none.
    std::fill(m_active.begin(), m_active.end(), char(0));
    for (std::size_t l = 0; l < links.size(); ++l)
      for (int p = 0; p < links[l].n_in; ++p)
        for (int c : m_cells_of[l])
          if (!intersect(box(links[l].in[p]), m_cells[std::size_t(c)].box).empty()) m_active[std::size_t(c)] = 1;
    for (std::size_t c = 0; c < m_cells.size(); ++c) {
      if (!m_active[c]) continue;
      Cell const& cell = m_cells[c];
      auto const first = m_sums.begin() + std::ptrdiff_t(cell.first);
      std::fill(first, first + std::ptrdiff_t(cell.box.area()), T(0));
      LinkWeights<T> const& l = links[std::size_t(cell.first_holder)];
      for (int q = 0; q < l.n_out; ++q)
        for_each_row(l.out[q], cell.box, [&](std::size_t packed, int y, int x0, int x1) {
          std::copy(l.sent + packed, l.sent + packed + (x1 - x0), &m_sums[at(cell, y, x0)]);
        });
    }
    double best = 0;
    for (std::size_t l = 0; l < links.size(); ++l) {
      LinkWeights<T> const& link = links[l];
      index_parts(link);
      for (int p = 0; p < link.n_in; ++p) {
        HostPart const& part = link.in[p];
        T const* const own = own_weights(link, part);
        for (int i = 0; i < part[2]; ++i) {
          int const y = part[0] + i;
          std::size_t const row = std::size_t(part[4]) + std::size_t(i) * std::size_t(part[3]);
          // The row's pixels left to right: those of shared cells collect
          // this link's weight, the rest are summed here.
          int x = part[1];
          int const end = part[1] + part[3];
          auto const single = [&](int x1) {
            for (; x < x1; ++x) {
              std::size_t const k = row + std::size_t(x - part[1]);
              T const v = (own != nullptr ? own[k - std::size_t(part[4])] : T(0)) + link.received[k];
              best = v > best ? double(v) : best;
            }
          };
          for (int c : m_cells_of[l]) {
            Cell const& cell = m_cells[std::size_t(c)];
            Box const& b = cell.box;
            if (y < b.y || y >= b.y + b.height || b.x + b.width <= x || b.x >= end) continue;
            single(b.x);
            int const x1 = std::min(end, b.x + b.width);
            T* const sums = &m_sums[at(cell, y, x)];
            T const* const in = &link.received[row + std::size_t(x - part[1])];
            for (int j = 0; j < x1 - x; ++j) sums[j] += in[j];
            x = x1;
          }
          single(end);
        }
      }
    }
    for (std::size_t c = 0; c < m_cells.size(); ++c) {
      if (!m_active[c]) continue;
      Cell const& cell = m_cells[c];
      for (std::size_t k = 0; k < cell.box.area(); ++k) {
        T const v = m_sums[cell.first + k];
        best = v > best ? double(v) : best;
      }
    }
    return best;
  }

 private:
  struct Cell {
    Box box;
    std::size_t first = 0;  ///< its sums in m_sums, row-major
    int first_holder = 0;   ///< the first link whose region holds it
  };
  static Box box(HostPart const& p) { return Box{p[0], p[1], p[2], p[3]}; }
  static std::size_t at(Cell const& c, int y, int x) {
    return c.first + std::size_t(y - c.box.y) * std::size_t(c.box.width) + std::size_t(x - c.box.x);
  }
  /// fn(packed, y, x0, x1) over the rows of `part` inside `b`.
  template <class Fn>
  static void for_each_row(HostPart const& part, Box const& b, Fn const& fn) {
    Box const i = intersect(box(part), b);
    for (int y = i.y; y < i.y + i.height; ++y)
      fn(std::size_t(part[4]) + std::size_t(y - part[0]) * std::size_t(part[3]) + std::size_t(i.x - part[1]), y,
         i.x, i.x + i.width);
  }
  static std::int64_t key(HostPart const& p) { return (std::int64_t(p[0]) << 32) | std::uint32_t(p[1]); }
  /// Sorts the link's sent parts by origin for own_weights.
  void index_parts(LinkWeights<T> const& link) {
    m_index.clear();
    for (int q = 0; q < link.n_out; ++q) m_index.push_back({key(link.out[q]), q});
    std::sort(m_index.begin(), m_index.end());
  }
  /// The weights this rank sent at a received part's pixels, packed as the
  /// part is, or nullptr where it sent none there. Both ranks of a link cut
  /// the same tiles at its region, so a sent part covering these pixels has
  /// the same origin and shape.
  T const* own_weights(LinkWeights<T> const& link, HostPart const& part) const {
    auto const it = std::lower_bound(m_index.begin(), m_index.end(), std::pair<std::int64_t, int>{key(part), -1});
    if (it == m_index.end() || it->first != key(part)) return nullptr;
    HostPart const& q = link.out[it->second];
    PTYKO_ASSERT(q[2] == part[2] && q[3] == part[3], "OverlapMaximum: parts at one origin differ in shape");
    return link.sent + q[4];
  }

  std::vector<Cell> m_cells;                ///< the pixels two or more regions share, in grid cells
  std::vector<std::vector<int>> m_cells_of;  ///< each link's shared cells, left to right in each row of cells
  std::vector<T> m_sums;                    ///< the shared cells' sums
  std::vector<char> m_active;               ///< cells some link received pixels of this time
  std::vector<std::pair<std::int64_t, int>> m_index;
};

}  // namespace ptyko::parallel::impl
