#include <ptyko/core/scan.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace ptyko {

std::vector<double> nearest_neighbour_distances(std::vector<std::array<double, 2>> const& p) {
  std::size_t const n = p.size();
  std::vector<double> out(n, std::numeric_limits<double>::infinity());
  if (n < 2) return out;
  double ymin = p[0][0], ymax = ymin, xmin = p[0][1], xmax = xmin;
  for (auto const& q : p) {
    ymin = std::min(ymin, q[0]);
    ymax = std::max(ymax, q[0]);
    xmin = std::min(xmin, q[1]);
    xmax = std::max(xmax, q[1]);
  }
  // Cells holding ~2 positions each on average; search rings until the ring
  // is farther than the best distance found.
  double const area = std::max((ymax - ymin) * (xmax - xmin), 1e-300);
  double cell = std::sqrt(2 * area / double(n));
  if (!(cell > 0) || !std::isfinite(cell)) cell = 1;
  auto key = [&](long long cy, long long cx) { return (cy << 32) ^ (cx & 0xffffffffLL); };
  auto cell_of = [&](std::array<double, 2> const& q) {
    return std::array<long long, 2>{(long long)std::floor((q[0] - ymin) / cell),
                                    (long long)std::floor((q[1] - xmin) / cell)};
  };
  std::unordered_map<long long, std::vector<std::size_t>> grid;
  grid.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto c = cell_of(p[i]);
    grid[key(c[0], c[1])].push_back(i);
  }
  long long const max_ring = (long long)std::ceil(std::max(ymax - ymin, xmax - xmin) / cell) + 1;
  for (std::size_t i = 0; i < n; ++i) {
    auto c = cell_of(p[i]);
    double best = std::numeric_limits<double>::infinity();
    for (long long r = 0; r <= max_ring; ++r) {
      if ((r - 1) * cell > best) break;  // every cell of ring r is farther than best
      for (long long dy = -r; dy <= r; ++dy)
        for (long long dx = -r; dx <= r; ++dx) {
          if (std::max(std::llabs(dy), std::llabs(dx)) != r) continue;
          auto it = grid.find(key(c[0] + dy, c[1] + dx));
          if (it == grid.end()) continue;
          for (std::size_t j : it->second)
            if (j != i) best = std::min(best, std::hypot(p[i][0] - p[j][0], p[i][1] - p[j][1]));
        }
    }
    out[i] = best;
  }
  return out;
}

double typical_step(std::vector<std::array<double, 2>> const& positions) {
  auto d = nearest_neighbour_distances(positions);
  if (d.empty()) return 0;
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

double overlap_ratio(double step, double probe_diameter) {
  if (!(probe_diameter > 0)) return 0;
  return std::clamp(1 - step / probe_diameter, 0.0, 1.0);
}

}  // namespace ptyko
