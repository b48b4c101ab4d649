#include <ptyko/core/power_bound.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace ptyko {
namespace {

/// The mean of the measured (finite) costs of epochs [first, last); NaN if none.
double window_mean(std::vector<double> const& costs, std::size_t first, std::size_t last) {
  double sum = 0;
  int n = 0;
  for (std::size_t e = first; e < last; ++e)
    if (std::isfinite(costs[e])) sum += costs[e], ++n;
  return n > 0 ? sum / n : std::nan("");
}

}  // namespace

double power_bound(double ptypy_bound, double noise_floor, int measured_pixels, std::vector<double> const& costs,
                   PowerBoundRule const& rule) {
  if (!(ptypy_bound > 0)) return 0;
  if (!(noise_floor > 0) || measured_pixels <= 0) return ptypy_bound;
  double const noise = noise_floor / measured_pixels;  // per pixel
  double const ceiling = rule.ceiling_share * noise;
  double bound = std::clamp(ptypy_bound, rule.floor_share * noise, ceiling);
  // Replayed over the whole history, window by window: the same bound
  // whether the run went straight through or was resumed.
  std::size_t const w = std::size_t(std::max(1, rule.window));
  for (std::size_t end = 2 * w; end <= costs.size(); end += w) {
    double const before = window_mean(costs, end - 2 * w, end - w), now = window_mean(costs, end - w, end);
    if (now > rule.rise * before && now < rule.near_noise * noise_floor) bound = std::min(rule.loosen * bound, ceiling);
  }
  return bound;
}

}  // namespace ptyko
