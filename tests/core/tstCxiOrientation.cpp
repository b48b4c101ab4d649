// CXI detectors mounted otherwise than the specification's default
// (basis_vectors), the beam from corner_position, and --find-beam.
#include "cxi_test_files.hpp"

namespace {

using namespace ptyko;
using namespace ptyko::test;  // CXI paths, TempDirTest, expect_user_error, the helpers of cxi_test_files.hpp

// A detector mounted otherwise than CXI's default (rows stepping along -y,
// columns along -x) says so in basis_vectors; its frames are read turned
// into the default orientation. The expected frames come from the
// specification's geometry, not from ptyko's mapping: stored pixel (u, v)
// sits at (u - c) b0 + (v - c) b1 from the beam (c = d / 2), and the same
// lab point sits at default pixel (c - Y / p_y, c - X / p_x).
TEST_F(Cxi, BasisVectorsTurnFramesIntoTheDefaultOrientation) {
  double const py = 75e-6, px = 55e-6;
  struct Case {
    char const* name;
    double b[2][3];     // steps in pixel sizes: x in px, y in py
    bool cdtools;       // stored as (3, 2)
    bool transpose, flip_y, flip_x;
  };
  std::vector<Case> const cases = {
      {"default", {{0, -1, 0}, {-1, 0, 0}}, false, false, false, false},
      {"cdtools' (3, 2) default", {{0, -1, 0}, {-1, 0, 0}}, true, false, false, false},
      {"rows up", {{0, 1, 0}, {-1, 0, 0}}, false, false, true, false},
      {"columns along +x", {{0, -1, 0}, {1, 0, 0}}, false, false, false, true},
      {"transposed", {{-1, 0, 0}, {0, -1, 0}}, false, true, false, false},
      {"transposed, both reversed", {{1, 0, 0}, {0, 1, 0}}, false, true, true, true},
      {"transposed, (3, 2), x reversed", {{1, 0, 0}, {0, -1, 0}}, true, true, false, true},
  };
  for (std::size_t d : {8u, 7u}) {
    int const c = int(d) / 2;
    // A value per lab point (whole pixels from the beam).
    auto lab_value = [](long X, long Y) { return float(1 + 40 * (Y + 20) + (X + 20)); };
    for (auto const& k : cases) {
      SCOPED_TRACE(std::string(k.name) + ", " + std::to_string(d) + " pixels");
      Builder b;
      b.d = d;
      b.n = 2;
      b.frames.assign(b.n * d * d, 0);
      b.translations.assign(b.n * 3, 0.0);
      std::vector<std::uint32_t> bad(d * d, 0);
      auto lab = [&](int u, int v) {  // (X, Y) in pixels of stored pixel (u, v)
        return std::array<long, 2>{std::lround((u - c) * k.b[0][0] + (v - c) * k.b[1][0]),
                                   std::lround((u - c) * k.b[0][1] + (v - c) * k.b[1][1])};
      };
      for (std::size_t f = 0; f < b.n; ++f)
        for (int u = 0; u < int(d); ++u)
          for (int v = 0; v < int(d); ++v) {
            auto const xy = lab(u, v);
            b.frames[(f * d + u) * d + v] = lab_value(xy[0], xy[1]) + float(f);
          }
      int const bad_u = 1, bad_v = int(d) - 2;
      bad[bad_u * d + bad_v] = 1;
      auto const path = file("oriented.cxi");
      b.write(path, {k_pixel_x}, [&](h5::File const& f) {  // pixel sizes from the basis
        std::vector<double> basis;
        if (k.cdtools) {
          for (int comp = 0; comp < 3; ++comp)
            for (int dim = 0; dim < 2; ++dim) basis.push_back(k.b[dim][comp] * (comp == 0 ? px : py));
          h5::write(f, k_basis, basis.data(), {3, 2});
        } else {
          for (int dim = 0; dim < 2; ++dim)
            for (int comp = 0; comp < 3; ++comp) basis.push_back(k.b[dim][comp] * (comp == 0 ? px : py));
          h5::write(f, k_basis, basis.data(), {2, 3});
        }
        h5::write(f, k_mask, bad.data(), {d, d});
      });
      CxiInfo const info = cxi_inspect(path);
      EXPECT_EQ(info.orientation.transpose, k.transpose);
      EXPECT_EQ(info.orientation.flip_y, k.flip_y);
      EXPECT_EQ(info.orientation.flip_x, k.flip_x);
      EXPECT_EQ(info.orientation.rotation_deg, 0.0);
      ASSERT_TRUE(info.pixel_size_x_m && info.pixel_size_y_m);
      EXPECT_DOUBLE_EQ(*info.pixel_size_x_m, px);
      EXPECT_DOUBLE_EQ(*info.pixel_size_y_m, py);

      auto const frames = cxi_read_frames(info, all_indices(b.n));
      auto const mask = cxi_read_mask(info);
      auto const xy = lab(bad_u, bad_v);
      int const bi = c - int(xy[1]), bj = c - int(xy[0]);
      // Every default pixel whose lab point the stored frames hold (all but
      // the Nyquist row / column of an even size when that axis reverses),
      // but the bad one (read as 0).
      std::size_t wrong = 0;
      for (std::size_t f = 0; f < b.n; ++f)
        for (int i = 0; i < int(d); ++i)
          for (int j = 0; j < int(d); ++j) {
            long const X = c - j, Y = c - i;
            if (std::abs(X) > (int(d) - 1) / 2 || std::abs(Y) > (int(d) - 1) / 2 || (i == bi && j == bj)) continue;
            wrong += frames(f, i, j) != lab_value(X, Y) + float(f);
          }
      EXPECT_EQ(wrong, 0u);
      // The bad pixel, and the stored pixel it came from.
      std::size_t measured = 0;
      for (std::size_t p = 0; p < mask.span(); ++p) measured += mask.data()[p];
      EXPECT_EQ(measured, d * d - 1);
      EXPECT_EQ(mask(bi, bj), 0);
      auto const back = info.stored_position(bi, bj);
      EXPECT_DOUBLE_EQ(back[0], bad_u);
      EXPECT_DOUBLE_EQ(back[1], bad_v);
    }
  }
}

TEST_F(Cxi, TurnedAndUnusableBasesAndTheBeamFromTheCorner) {
  Builder b;
  int const c = int(b.d) / 2;
  auto const path = file("basis.cxi");
  auto with = [&](std::vector<double> const& basis, std::vector<std::size_t> const& dims,
                  std::vector<double> const& corner = {}) {
    b.write(path, {}, [&](h5::File const& f) {
      h5::write(f, k_basis, basis.data(), dims);
      if (!corner.empty()) h5::write(f, k_corner, corner.data(), {corner.size()});
    });
  };
  double const p = 75e-6;  // the Builder's pixel size
  // Turned by atan(0.02) = 1.15 degrees about the beam: read along the
  // nearest axes, the angle reported.
  with({0.02 * p, -p, 0, -p, -0.02 * p, 0}, {2, 3});
  CxiInfo info = cxi_inspect(path);
  EXPECT_TRUE(info.orientation.is_default());
  EXPECT_NEAR(info.orientation.rotation_deg, 1.1457, 1e-3);

  // corner_position: the first pixel's outer corner; the beam 3 pixels
  // right of the centre (towards -x, larger column numbers) and on the
  // centre row.
  with({0, -p, 0, -p, 0, 0}, {2, 3}, {(c + 3.5) * p, (c + 0.5) * p, 3.0});
  info = cxi_inspect(path);
  ASSERT_TRUE(info.beam_from_corner.has_value());
  EXPECT_NEAR((*info.beam_from_corner)[0], c, 1e-9);
  EXPECT_NEAR((*info.beam_from_corner)[1], c + 3, 1e-9);

  // ptyko's own files state the default basis and a centred beam.
  auto const own = file("own.cxi");
  cxi_write(own, make_contents(3, 16, true));
  info = cxi_inspect(own);
  EXPECT_TRUE(info.orientation.is_default());
  ASSERT_TRUE(info.beam_from_corner.has_value());
  EXPECT_NEAR((*info.beam_from_corner)[0], 8, 1e-9);
  EXPECT_NEAR((*info.beam_from_corner)[1], 8, 1e-9);

  // What cannot be a basis is refused, naming the dataset.
  with({0, -p, -p, 0}, {2, 2});
  expect_user_error([&] { cxi_inspect(path); }, path, {"basis_vectors", "(2, 3)"});
  with({-p, 0, 0, -p, 0.1 * p, 0}, {2, 3});
  expect_user_error([&] { cxi_inspect(path); }, path, {"basis_vectors", "both frame dimensions step along x"});
  with({0, 0, p, -p, 0, 0}, {2, 3});
  expect_user_error([&] { cxi_inspect(path); }, path, {"basis_vectors", "dimension 0", "face the beam"});
  with({0, -p, 0, -p, 0, 0}, {2, 3}, {1.0, 2.0});
  expect_user_error([&] { cxi_inspect(path); }, path, {"corner_position", "2 values"});
}

// --find-beam: a diffraction pattern centred off the frames' centre, on a
// floor of counts, with a hot pixel brighter than the beam and a masked
// pixel brighter still; the window is centred on the pattern.
TEST_F(Cxi, FindBeamCentresTheWindowOnTheDirectBeam) {
  Builder b;
  std::size_t const ny = 40, nx = 56;
  int const cy = 23, cx = 31;
  b.n = 5;
  b.translations.assign(b.n * 3, 0.0);
  b.frames.assign(b.n * ny * nx, 0.f);
  std::vector<std::uint32_t> bad(ny * nx, 0);
  bad[5 * nx + 5] = 1;
  for (std::size_t f = 0; f < b.n; ++f)
    for (int y = 0; y < int(ny); ++y)
      for (int x = 0; x < int(nx); ++x) {
        // A disc of radius 6 (a pupil's far field) with a weaker ring, and
        // a floor of 3 counts.
        double const r = std::hypot(y - cy, x - cx);
        b.frames[(f * ny + y) * nx + x] = float(3 + (r <= 6 ? 500 : 0) + (r > 9 && r < 11 ? 40 : 0));
      }
  for (std::size_t f = 0; f < b.n; ++f) {
    b.frames[(f * ny + 2) * nx + 50] = 60000.f;  // hot
    b.frames[(f * ny + 5) * nx + 5] = 1e9f;      // masked
  }
  auto const path = file("offcentre.cxi");
  auto write = [&] {
    auto f = h5::File::create(path);
    h5::write(f, k_detector_data, b.frames.data(), {b.n, ny, nx}, {}, "float32");
    h5::write(f, k_translation, b.translations.data(), {b.n, 3});
    h5::write_scalar(f, k_energy, 1.2817e-15);
    h5::write_scalar(f, k_distance, 3.0);
    h5::write_scalar(f, k_pixel_x, 75e-6);
    h5::write(f, k_mask, bad.data(), {ny, nx});
    f.close();
  };
  write();
  FrameCrop crop;
  crop.size = 16;
  crop.find_beam = true;
  CxiInfo info = cxi_inspect(path, crop);
  ASSERT_TRUE(info.beam_found.has_value());
  EXPECT_EQ((*info.beam_found)[0], cy);
  EXPECT_EQ((*info.beam_found)[1], cx);
  EXPECT_EQ(info.window_y, cy - 8);
  EXPECT_EQ(info.window_x, cx - 8);
  // Without a size: the largest square around the beam (rows 23 - 17 to
  // 23 + 16: 34 pixels).
  crop.size = 0;
  info = cxi_inspect(path, crop);
  EXPECT_EQ(info.ny, 34);
  EXPECT_EQ(info.window_y, cy - 17);
  EXPECT_EQ(info.window_x, cx - 17);
  // A given centre and --find-beam contradict each other.
  crop.centre_y = 20;
  expect_user_error([&] { cxi_inspect(path, crop); }, path, {"--find-beam", "--crop-centre-y/-x"});
}

}  // namespace
