// The phase ramp the result is written without (core/phase_ramp.hpp): found
// exactly on a ramped object, removed so that every exit wave changes by a
// constant phase only, and the gauge it leaves.
#include <ptyko/core/illumination.hpp>
#include <ptyko/core/phase_ramp.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using namespace ptyko;
using Cplx = Complex<double>;

Cplx expi(double phase) { return Cplx(std::cos(phase), std::sin(phase)); }

// A rough object (random amplitude and phase in smooth blobs) times a ramp.
HostComplex2 ramped_object(int H, int W, double ay, double ax, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  HostComplex2 o("object", H, W);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) o(y, x) = (0.6 + 0.4 * u(rng)) * expi(ay * y + ax * x);
  return o;
}

HostComplex3 random_probe(int M, int D, std::mt19937& rng) {
  std::normal_distribution<double> n(0, 1);
  HostComplex3 p("probe", M, D, D);
  for (int m = 0; m < M; ++m)
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) {
        double const r2 = (i - D / 2) * (i - D / 2) + (j - D / 2) * (j - D / 2);
        p(m, i, j) = std::exp(-r2 / (D * D / 8.0)) * Cplx(n(rng), n(rng));
      }
  return p;
}

TEST(PhaseRamp, FindsTheRampOfAnObjectWhoseOnlyPhaseItIs) {
  std::mt19937 rng(3);
  int const H = 70, W = 90;
  HostComplex2 o("object", H, W);
  std::uniform_real_distribution<double> u(0.2, 1);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) o(y, x) = u(rng) * expi(0.031 * y - 0.047 * x + 1.3);
  HostReal2 lit("lit", H, W);
  for (int y = 10; y < 60; ++y)
    for (int x = 20; x < 80; ++x) lit(y, x) = 1 + u(rng);
  PhaseRamp const r = object_phase_ramp(o, lit);
  EXPECT_NEAR(r.y_rad_per_px, 0.031, 1e-12);
  EXPECT_NEAR(r.x_rad_per_px, -0.047, 1e-12);
  // Phase wraps do not matter: 2.5 rad per pixel (wrapping every 2.5 pixels).
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) o(y, x) = expi(2.5 * y - 0.4 * x);
  PhaseRamp const steep = object_phase_ramp(o, lit);
  EXPECT_NEAR(steep.y_rad_per_px, 2.5, 1e-12);
  EXPECT_NEAR(steep.x_rad_per_px, -0.4, 1e-12);
}

TEST(PhaseRamp, RemovalChangesEachExitWaveByAConstantPhaseOnly) {
  std::mt19937 rng(5);
  int const H = 80, W = 76, D = 16, M = 2;
  HostComplex2 object = ramped_object(H, W, 0.02, -0.035, rng);
  HostComplex3 probe = random_probe(M, D, rng);
  std::vector<std::array<double, 2>> positions;
  for (int k = 0; k < 25; ++k) positions.push_back({12.0 + 2.3 * k, 10.0 + 2.1 * ((k * 7) % 25)});
  // Exit waves at whole-pixel patch corners (the phase factor is the same
  // for the bilinear neighbours of a sub-pixel position).
  auto exit_wave = [&](HostComplex2 const& o, HostComplex3 const& p, int n, int m, int i, int j) {
    int const y0 = int(std::floor(positions[n][0])) - D / 2, x0 = int(std::floor(positions[n][1])) - D / 2;
    return o(y0 + i, x0 + j) * p(m, i, j);
  };
  HostComplex2 o2("o2", H, W);
  HostComplex3 p2("p2", M, D, D);
  Kokkos::deep_copy(o2, object);  // host -> host: the object before
  Kokkos::deep_copy(p2, probe);   // host -> host: the probe before
  PhaseRamp const removed = remove_object_phase_ramp(o2, p2, positions);
  EXPECT_NEAR(removed.y_rad_per_px, 0.02, 0.01);
  EXPECT_NEAR(removed.x_rad_per_px, -0.035, 0.01);
  double worst = 0;
  for (std::size_t n = 0; n < positions.size(); ++n) {
    Cplx const c = exit_wave(o2, p2, int(n), 0, D / 2, D / 2) / exit_wave(object, probe, int(n), 0, D / 2, D / 2);
    EXPECT_NEAR(Kokkos::abs(c), 1.0, 1e-12);
    for (int m = 0; m < M; ++m)
      for (int i = 0; i < D; ++i)
        for (int j = 0; j < D; ++j)
          worst = std::max(worst, Kokkos::abs(exit_wave(o2, p2, int(n), m, i, j) - c * exit_wave(object, probe, int(n), m, i, j)));
  }
  EXPECT_LT(worst, 1e-12);
  // The gauge left: no mean gradient over the lit object.
  HostReal2 const lit = illumination_map(p2, positions, H, W);
  PhaseRamp const after = object_phase_ramp(o2, lit);
  EXPECT_LT(std::abs(after.y_rad_per_px), 1e-12);
  EXPECT_LT(std::abs(after.x_rad_per_px), 1e-12);
  // The object keeps its phase at the scan's centre.
  EXPECT_NEAR(Kokkos::abs(o2(40, 38) / object(40, 38) - Cplx(1, 0)), 0.0, 0.1);
}

}  // namespace
