#include <ptyko/core/noise_floor.hpp>

#include <algorithm>
#include <array>
#include <cmath>

namespace ptyko {
namespace {

// E over d ~ Poisson(l) of the cost of one pixel, by the series over d
// (pmf by recurrence in log space), as far as the pmf holds anything.
double series(double l, NoiseModel noise) {
  int const last = int(l + 12 * std::sqrt(l) + 30);
  double const log_l = std::log(l);
  double sum = 0, log_pmf = -l;  // d = 0
  for (int d = 0; d <= last; ++d) {
    if (d > 0) log_pmf += log_l - std::log(double(d));
    double const p = std::exp(log_pmf);
    double const c = noise == NoiseModel::gaussian
                         ? (std::sqrt(double(d)) - std::sqrt(l)) * (std::sqrt(double(d)) - std::sqrt(l))
                         : l - d - (d > 0 ? d * (log_l - std::log(double(d))) : 0.0);
    sum += p * c;
  }
  return sum;
}

// The series on a log grid of l from 1e-4 to 1e4 (a table, so that a
// pattern of a million pixels costs a lookup per pixel).
constexpr int k_points = 321;
constexpr double k_low = 1e-4, k_high = 1e4;

struct Table {
  std::array<double, k_points> value{};
  explicit Table(NoiseModel noise) {
    for (int k = 0; k < k_points; ++k)
      value[k] = series(k_low * std::pow(k_high / k_low, double(k) / (k_points - 1)), noise);
  }
};

}  // namespace

double counting_noise_cost(double l, NoiseModel noise) {
  if (!(l > 0)) return 0;
  if (l >= k_high) return noise == NoiseModel::gaussian ? 0.25 : 0.5;  // the limits, within 1e-5
  if (l <= k_low) return series(l, noise);
  static Table const gaussian(NoiseModel::gaussian), poisson(NoiseModel::poisson);
  Table const& t = noise == NoiseModel::gaussian ? gaussian : poisson;
  double const x = std::log(l / k_low) / std::log(k_high / k_low) * (k_points - 1);
  int const k = std::min(int(x), k_points - 2);
  double const w = x - k;
  return (1 - w) * t.value[k] + w * t.value[k + 1];
}

double counting_noise_floor(std::vector<double> const& pattern, NoiseModel noise) {
  double floor = 0;
  for (double l : pattern) floor += counting_noise_cost(l, noise);
  return floor;
}

double counting_noise_floor_of(std::vector<double> pattern, NoiseModel noise, double adu_per_photon) {
  if (!(adu_per_photon > 0)) return 0;
  for (double& l : pattern) l /= adu_per_photon;
  return adu_per_photon * counting_noise_floor(pattern, noise);
}

}  // namespace ptyko
