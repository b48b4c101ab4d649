// The counting-noise floor (core/noise_floor.hpp): each pixel's expected cost
// against Poisson draws about its expected counts, its limits, and the sum
// over a pattern.
#include <ptyko/core/noise_floor.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace ptyko;

double cost(double d, double l, NoiseModel noise) {
  if (noise == NoiseModel::gaussian) return (std::sqrt(d) - std::sqrt(l)) * (std::sqrt(d) - std::sqrt(l));
  return l - d - (d > 0 ? d * std::log(l / d) : 0.0);
}

// The mean cost of 400 000 Poisson draws, within 4 standard errors.
TEST(NoiseFloor, MatchesPoissonDraws) {
  std::mt19937_64 rng(7);
  for (NoiseModel noise : {NoiseModel::gaussian, NoiseModel::poisson})
    for (double l : {0.003, 0.05, 0.7, 3.0, 40.0, 900.0}) {
      std::poisson_distribution<long> draw(l);
      int const n = 400000;
      double sum = 0, sum2 = 0;
      for (int k = 0; k < n; ++k) {
        double const c = cost(double(draw(rng)), l, noise);
        sum += c;
        sum2 += c * c;
      }
      double const mean = sum / n, error = std::sqrt((sum2 / n - mean * mean) / n);
      SCOPED_TRACE(testing::Message() << (noise == NoiseModel::gaussian ? "gaussian" : "poisson") << " l = " << l);
      EXPECT_NEAR(counting_noise_cost(l, noise), mean, 4 * error + 1e-3 * mean);
    }
}

TEST(NoiseFloor, Limits) {
  EXPECT_EQ(counting_noise_cost(0, NoiseModel::gaussian), 0);
  EXPECT_EQ(counting_noise_cost(0, NoiseModel::poisson), 0);
  EXPECT_NEAR(counting_noise_cost(5e4, NoiseModel::gaussian), 0.25, 1e-5);
  EXPECT_NEAR(counting_noise_cost(5e4, NoiseModel::poisson), 0.5, 1e-5);
  // Few counts: mostly a 0 or a 1 against l.
  EXPECT_NEAR(counting_noise_cost(1e-5, NoiseModel::gaussian), 2e-5, 1e-7);
  EXPECT_NEAR(counting_noise_cost(1e-5, NoiseModel::poisson), -1e-5 * std::log(1e-5), 2e-6);
  // Continuous across the table's ends.
  for (NoiseModel noise : {NoiseModel::gaussian, NoiseModel::poisson})
    for (double edge : {1e-4, 1e4})
      EXPECT_NEAR(counting_noise_cost(edge * 0.999, noise), counting_noise_cost(edge * 1.001, noise),
                  5e-3 * counting_noise_cost(edge, noise));  // it changes by up to 0.2 % over the step itself
}

TEST(NoiseFloor, SumsThePattern) {
  std::vector<double> const pattern = {0, 0.5, 7, 250, 0};
  double expected = 0;
  for (double l : pattern) expected += counting_noise_cost(l, NoiseModel::gaussian);
  EXPECT_DOUBLE_EQ(counting_noise_floor(pattern, NoiseModel::gaussian), expected);
  EXPECT_GT(expected, 0.5);  // two pixels near 1/4, two less
}

// Frames in detector units of g per photon: a pixel of g d units costs g
// times what d photons cost, under either model (checked against Poisson
// draws scaled by g); unknown units (0) compare with nothing.
TEST(NoiseFloor, DetectorUnitsPerPhoton) {
  std::vector<double> const photons = {0, 0.5, 7, 250, 0, 3};
  for (NoiseModel noise : {NoiseModel::gaussian, NoiseModel::poisson}) {
    EXPECT_DOUBLE_EQ(counting_noise_floor_of(photons, noise, 1), counting_noise_floor(photons, noise));
    for (double g : {0.01, 12.5}) {
      std::vector<double> units = photons;
      for (double& l : units) l *= g;
      EXPECT_NEAR(counting_noise_floor_of(units, noise, g), g * counting_noise_floor(photons, noise),
                  1e-12 * g * counting_noise_floor(photons, noise));
    }
    EXPECT_EQ(counting_noise_floor_of(photons, noise, 0), 0.0);
  }
  // The gaussian (amplitude) cost of g d units about g l, by draws.
  std::mt19937_64 gen(5);
  double const g = 12.5, l = 3.0;
  std::poisson_distribution<int> draw(l);
  double sum = 0;
  int const n = 400000;
  for (int k = 0; k < n; ++k) {
    double const r = std::sqrt(g * draw(gen)) - std::sqrt(g * l);
    sum += r * r;
  }
  EXPECT_NEAR(counting_noise_floor_of({g * l}, NoiseModel::gaussian, g), sum / n, 0.01 * sum / n);
}

}  // namespace
