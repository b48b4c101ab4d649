#pragma once
// Scan positions shared by the tests of batching and of the probe-focus
// trial's parts.

#include <array>
#include <cmath>
#include <vector>

namespace ptyko::test {

/// A Fermat spiral of n positions (y, x) about (centre, centre), the k-th
/// at radius step * sqrt(k) (the simulator's scan): neighbouring indices lie
/// far apart on the object.
inline std::vector<std::array<double, 2>> fermat_spiral(int n, double step, double centre = 500) {
  std::vector<std::array<double, 2>> p;
  double const golden = M_PI * (3 - std::sqrt(5.0));
  for (int k = 0; k < n; ++k) {
    double const r = step * std::sqrt(double(k)), a = k * golden;
    p.push_back({centre + r * std::sin(a), centre + r * std::cos(a)});
  }
  return p;
}

}  // namespace ptyko::test
