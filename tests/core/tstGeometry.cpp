// Geometry: object pixel size, CXI translation sign, position conventions,
// object grid extent.
#include <ptyko/core/geometry.hpp>
#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <test_files.hpp>

#include <cmath>
#include <limits>

namespace {

using namespace ptyko;

Geometry example_geometry() {
  Geometry g;
  g.wavelength_m = wavelength_from_energy(8000 * 1.602176634e-19);  // 8 keV
  g.distance_m = 5.0;
  g.pixel_size_x_m = g.pixel_size_y_m = 75e-6;
  g.detector_size = 128;
  return g;
}

TEST(Geometry, WavelengthAndObjectPixel) {
  Geometry g = example_geometry();
  EXPECT_NEAR(g.wavelength_m, 1.5498e-10, 1e-13);  // 8 keV ~ 1.5498 Angstrom
  // lambda z / (D p)
  EXPECT_NEAR(g.object_pixel_size_x(), 1.5498e-10 * 5.0 / (128 * 75e-6), 1e-12);
  g.pixel_size_y_m = 150e-6;
  EXPECT_NEAR(g.object_pixel_size_y(), g.object_pixel_size_x() / 2, 1e-15);
  EXPECT_NEAR(g.energy_joule(), 8000 * 1.602176634e-19, 1e-22);
}

TEST(Geometry, ValidateNamesTheProblem) {
  Geometry g = example_geometry();
  EXPECT_NO_THROW(g.validate("x.cxi"));
  g.distance_m = 0;
  test::expect_user_error([&] { g.validate("x.cxi"); }, {"x.cxi", "distance"});
  g = example_geometry();
  g.pixel_size_x_m = -1;
  EXPECT_THROW(g.validate("x.cxi"), UserError);
  g = example_geometry();
  g.wavelength_m = std::nan("");
  EXPECT_THROW(g.validate("x.cxi"), UserError);
}

TEST(Geometry, TranslationSignAndConventions) {
  // CXI: translation of the sample relative to the beam; the probe sits at -t.
  std::vector<std::array<double, 3>> t = {{1e-6, 2e-6, 0.0}};
  auto p = probe_positions_from_translations(t, {});
  EXPECT_DOUBLE_EQ(p[0][0], -2e-6);  // y
  EXPECT_DOUBLE_EQ(p[0][1], -1e-6);  // x
  PositionConvention flip_x;
  flip_x.flip_x = true;
  EXPECT_DOUBLE_EQ(probe_positions_from_translations(t, flip_x)[0][1], 1e-6);
  PositionConvention flip_y;
  flip_y.flip_y = true;
  EXPECT_DOUBLE_EQ(probe_positions_from_translations(t, flip_y)[0][0], 2e-6);
  PositionConvention swap;
  swap.swap_xy = true;
  auto s = probe_positions_from_translations(t, swap);
  EXPECT_DOUBLE_EQ(s[0][0], -1e-6);
  EXPECT_DOUBLE_EQ(s[0][1], -2e-6);
  // Round trip through translations.
  auto back = probe_positions_from_translations(translations_from_probe_positions(p), {});
  EXPECT_DOUBLE_EQ(back[0][0], p[0][0]);
  EXPECT_DOUBLE_EQ(back[0][1], p[0][1]);
}

TEST(Geometry, ObjectGridHoldsEveryPatch) {
  Geometry g = example_geometry();
  double const dx = g.object_pixel_size_x();
  std::vector<std::array<double, 2>> pos = {{-10.3 * dx, 4.2 * dx}, {25.7 * dx, -30.1 * dx}};
  int const margin = 5;
  ObjectGrid grid = make_object_grid(pos, g, margin);
  int const D = g.detector_size;
  for (auto const& p : pos) {
    auto px = grid.to_pixels(p);
    // patch corner and the bilinear far edge inside the object, margin kept
    EXPECT_GE(px[0] - D / 2, margin - 1e-9);
    EXPECT_GE(px[1] - D / 2, margin - 1e-9);
    EXPECT_LE(px[0] - D / 2 + D + 1, grid.height - margin + 1e-9);
    EXPECT_LE(px[1] - D / 2 + D + 1, grid.width - margin + 1e-9);
  }
  // Spanning 36 x 34.3 pixels plus the probe and margins.
  EXPECT_LE(grid.height, 36 + D + 2 * margin + 3);
}

TEST(Geometry, ObjectGridPutsCommensurateScansOnWholePixels) {
  // A raster of whole-pixel steps whose origin the file puts at a fraction of
  // a pixel (0.5: positions centred on their mean; 0.3, 0.97: anywhere) lands
  // on whole object pixels, so that patches need no interpolation; an
  // incommensurate scan keeps its fractions, and every patch stays inside.
  Geometry g = example_geometry();
  double const dy = g.object_pixel_size_y(), dx = g.object_pixel_size_x();
  int const D = g.detector_size, margin = 4;
  for (double fraction : {0.5, 0.3, 0.97, 0.0}) {
    std::vector<std::array<double, 2>> pos;
    for (int i = -3; i <= 3; ++i)
      for (int j = -2; j <= 4; ++j) pos.push_back({(7 * i + fraction) * dy, (5 * j - fraction) * dx});
    ObjectGrid grid = make_object_grid(pos, g, margin);
    for (auto const& p : pos) {
      auto px = grid.to_pixels(p);
      EXPECT_NEAR(px[0], std::round(px[0]), 1e-9) << fraction;
      EXPECT_NEAR(px[1], std::round(px[1]), 1e-9) << fraction;
      EXPECT_GE(px[0] - D / 2, margin - 1e-9);
      EXPECT_LE(px[1] - D / 2 + D + 1, grid.width - margin + 1e-9);
    }
  }
  // Steps of 2.37 pixels: the fractions spread, and so they stay.
  std::vector<std::array<double, 2>> spread;
  for (int i = 0; i < 40; ++i) spread.push_back({2.37 * i * dy, 0.0});
  ObjectGrid grid = make_object_grid(spread, g, margin);
  int whole = 0;
  for (auto const& p : spread) {
    auto px = grid.to_pixels(p);
    whole += std::abs(px[0] - std::round(px[0])) < 1e-6;
    EXPECT_GE(px[0] - D / 2, margin - 1e-9);
    EXPECT_LE(px[0] - D / 2 + D + 1, grid.height - margin + 1e-9);
  }
  EXPECT_LE(whole, 2);
}

TEST(Geometry, ObjectGridRejectsAbsurdExtent) {
  Geometry g = example_geometry();
  // Translations in micrometres written as if metres: a 1 m scan.
  std::vector<std::array<double, 2>> pos = {{0, 0}, {1.0, 1.0}};
  EXPECT_THROW(make_object_grid(pos, g), UserError);
  std::vector<std::array<double, 2>> nan_pos = {{0, std::nan("")}};
  EXPECT_THROW(make_object_grid(nan_pos, g), UserError);
}

// Each frame without a finite position takes that of the nearest frame by
// number whose position the file holds (the earlier one on a tie), never
// another stand-in's; the grid is made from the placed frames alone.
TEST(Geometry, StandInsForMissingPositions) {
  double const nan = std::nan("");
  std::vector<std::array<double, 2>> pos = {{nan, nan}, {1, 1}, {2, nan}, {nan, 3}, {4, 4}, {5, 5}, {nan, nan}};
  auto const missing = stand_in_missing_positions(pos, "scan.cxi");
  EXPECT_EQ(missing, (std::vector<std::size_t>{0, 2, 3, 6}));
  std::vector<std::array<double, 2>> const expected = {{1, 1}, {1, 1}, {1, 1}, {4, 4}, {4, 4}, {5, 5}, {5, 5}};
  EXPECT_EQ(pos, expected);
  EXPECT_EQ(positions_except(pos, missing), (std::vector<std::array<double, 2>>{{1, 1}, {4, 4}, {5, 5}}));
  std::vector<std::array<double, 2>> none = {{nan, 0}, {0, std::numeric_limits<double>::infinity()}};
  test::expect_user_error([&] { stand_in_missing_positions(none, "scan.cxi: /t"); },
                    {"scan.cxi: /t", "none of the 2 translations"});
  std::vector<std::array<double, 2>> all = {{0, 0}, {1, 1}};
  EXPECT_TRUE(stand_in_missing_positions(all, "scan.cxi").empty());
  EXPECT_EQ(positions_except(all, {}), all);
}

}  // namespace
