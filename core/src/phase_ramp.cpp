#include <ptyko/core/illumination.hpp>
#include <ptyko/core/phase_ramp.hpp>

#include <algorithm>
#include <cmath>
#include <complex>

namespace ptyko {
namespace {

std::complex<double> to_std(Complex<double> v) { return {v.real(), v.imag()}; }

}  // namespace

PhaseRamp object_phase_ramp(HostComplex2 const& object, HostReal2 const& illumination, double threshold) {
  int const H = int(object.extent(0)), W = int(object.extent(1));
  double peak = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) peak = std::max(peak, illumination(y, x));
  double const floor = threshold * peak;
  // Weight of a pair: the smaller illumination, zero below the threshold.
  auto weight = [&](int y0, int x0, int y1, int x1) {
    double const w = std::min(illumination(y0, x0), illumination(y1, x1));
    return w >= floor && w > 0 ? w : 0.0;
  };
  std::complex<double> along_y = 0, along_x = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      std::complex<double> const here = std::conj(to_std(object(y, x)));
      if (y + 1 < H) along_y += weight(y, x, y + 1, x) * to_std(object(y + 1, x)) * here;
      if (x + 1 < W) along_x += weight(y, x, y, x + 1) * to_std(object(y, x + 1)) * here;
    }
  return {std::arg(along_y), std::arg(along_x)};
}

void remove_phase_ramp(HostComplex2 const& object, HostComplex3 const& probe, PhaseRamp ramp,
                       std::array<double, 2> centre) {
  auto phasor = [](double phase) { return Complex<double>(std::cos(phase), std::sin(phase)); };
  for (std::size_t y = 0; y < object.extent(0); ++y)
    for (std::size_t x = 0; x < object.extent(1); ++x)
      object(y, x) *= phasor(-(ramp.y_rad_per_px * (double(y) - centre[0]) + ramp.x_rad_per_px * (double(x) - centre[1])));
  // Probe pixel (i, j) lies on object pixel position + (i, j) - D/2: the
  // product keeps e^{i k.(centre - position)}, the same over the patch.
  int const D = int(probe.extent(1));
  for (std::size_t m = 0; m < probe.extent(0); ++m)
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < int(probe.extent(2)); ++j)
        probe(m, i, j) *= phasor(ramp.y_rad_per_px * (i - D / 2) + ramp.x_rad_per_px * (j - int(probe.extent(2)) / 2));
}

PhaseRamp remove_object_phase_ramp(HostComplex2 const& object, HostComplex3 const& probe,
                                   std::vector<std::array<double, 2>> const& positions_px) {
  if (positions_px.empty() || object.extent(0) == 0) return {};
  HostRealImage const lit = illumination_map(probe, positions_px, int(object.extent(0)), int(object.extent(1)));
  PhaseRamp const ramp = object_phase_ramp(object, lit);
  std::array<double, 2> centre{0, 0};
  for (auto const& p : positions_px) {
    centre[0] += p[0] / double(positions_px.size());
    centre[1] += p[1] / double(positions_px.size());
  }
  remove_phase_ramp(object, probe, ramp, centre);
  return ramp;
}

}  // namespace ptyko
