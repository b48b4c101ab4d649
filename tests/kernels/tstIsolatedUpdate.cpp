// Isolated positions: isolated_footprints finds the positions whose
// footprints meet no other, their direct update equals the scatter of the
// object sums followed by the tiled preconditioned update, and their
// footprint-shaped LSQML directions equal the object-shaped one; their
// largest weight skips rows that cannot hold it and stays exact.
#include <ptyko/kernels/isolated_update.hpp>
#include <ptyko/kernels/patch.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/kernels/update.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;

TEST(IsolatedFootprints, BoxesThatMeetAreNotIsolated) {
  int const D = 16;
  // Boxes span D + 3 pixels (footprint D + 1 and a pixel of margin on each
  // side): centres D + 3 apart are isolated, D + 2 apart are not, whatever
  // the other coordinate does within the box.
  std::vector<std::array<double, 2>> const c{
      {50.5, 50.25},           // 0: meets 1 (D + 2 below)
      {50.5 + D + 2, 60.0},    // 1
      {200.0, 50.0},           // 2: isolated (far below 0 and 1)
      {200.0, 50.0 + D + 3},   // 3: isolated from 2 (D + 3 to the right)
      {400.0, 400.0},          // 4: meets 5 diagonally
      {400.0 + D + 2, 400.0 - D - 2},  // 5
      {NAN, 0.0},              // 6: never isolated
  };
  auto const iso = isolated_footprints(c, D);
  std::vector<char> const want{0, 0, 1, 1, 0, 0, 0};
  EXPECT_EQ(iso, want);
  EXPECT_TRUE(isolated_footprints({}, D).empty());
  EXPECT_EQ(isolated_footprints({{10.0, 10.0}}, D), std::vector<char>{1});
}

TEST(IsolatedFootprints, AgreesWithEveryPairCompared) {
  int const D = 32;
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(D, 600.0);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::array<double, 2>> c(40);
    for (auto& p : c) p = {u(gen), u(gen)};
    auto const iso = isolated_footprints(c, D);
    for (std::size_t i = 0; i < c.size(); ++i) {
      bool meets = false;
      auto const a = footprint_box(c[i], D);
      for (std::size_t j = 0; j < c.size(); ++j) {
        auto const b = footprint_box(c[j], D);
        meets |= j != i && a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];
      }
      ASSERT_EQ(bool(iso[i]), !meets) << "trial " << trial << ", centre " << i;
    }
  }
}

template <class T>
class IsolatedUpdate : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(IsolatedUpdate, Reals);

// Positions on a grid D + 5 apart, each with a random sub-pixel part.
template <class T>
PositionView<T, MemSpace> isolated_positions(int rows, int cols, int D, std::vector<std::array<double, 2>>& centres) {
  PositionView<T, MemSpace> pos("pos", rows * cols);
  auto h = Kokkos::create_mirror_view(pos);
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> frac(0.0, 0.999);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      int const n = r * cols + c;
      h(n, 0) = T(D + r * (D + 5) + frac(gen));
      h(n, 1) = T(D + c * (D + 5) + frac(gen));
      centres.push_back({double(h(n, 0)), double(h(n, 1))});
    }
  Kokkos::deep_copy(pos, h);
  return pos;
}

// Intensities are >= 0: |random| + a floor, so the denominators are > 0.
template <class T>
RealView2<T, MemSpace> random_intensity(int D) {
  RealView2<T, MemSpace> w("intensity", D, D);
  test::fill_random(w, 11);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  for (std::size_t k = 0; k < h.span(); ++k) h.data()[k] = T(0.05) + std::abs(h.data()[k]);
  Kokkos::deep_copy(w, h);
  return w;
}

// A smooth probe intensity: a Gaussian peak between pixels, on a floor.
template <class T>
RealView2<T, MemSpace> peaked_intensity(int D) {
  RealView2<T, MemSpace> w("intensity", D, D);
  auto h = Kokkos::create_mirror_view(w);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j)
      h(i, j) = T(0.01 + std::exp(-((i - 11.3) * (i - 11.3) + (j - 12.7) * (j - 12.7)) / 18.0));
  Kokkos::deep_copy(w, h);
  return w;
}

// The largest weight as the object-shaped scatter and max_value give it.
template <class T>
double scattered_max(ExecSpace const& space, PositionView<T, MemSpace> const& pos, IndexView<MemSpace> const& idx,
                     RealView2<T, MemSpace> const& intensity, int H, int W) {
  int const D = int(intensity.extent(0));
  RealView2<T, MemSpace> w("w", H, W);
  auto pint = intensity;
  scatter_add_patches(space, int(idx.extent(0)), D, pos, idx, w, KOKKOS_LAMBDA(int, int i) { return &pint(i, 0); });
  return max_value(space, w);
}

// The reference: the sums scattered into object-shaped arrays, then the
// tiled update. A free function: nvcc allows no device lambda in a test body.
template <class T>
double reference_update(ExecSpace const& space, PositionView<T, MemSpace> const& pos, IndexView<MemSpace> const& idx,
                        ComplexView3<T, MemSpace> const& products, RealView2<T, MemSpace> const& intensity,
                        ComplexView2<T, MemSpace> const& object, std::vector<std::array<double, 2>> const& centres,
                        double alpha, double step) {
  int const H = int(object.extent(0)), W = int(object.extent(1)), D = int(intensity.extent(0));
  ComplexView2<T, MemSpace> num("num", H, W);
  RealView2<T, MemSpace> w("w", H, W);
  add_patches(space, products, pos, idx, num);
  auto pint = intensity;
  scatter_add_patches(space, int(idx.extent(0)), D, pos, idx, w, KOKKOS_LAMBDA(int, int i) { return &pint(i, 0); });
  double const w_max = max_value(space, w);
  auto tiles = make_tile_list<MemSpace>(footprint_tiles(centres, D, H, W), "tiles");
  apply_preconditioned_update(space, tiles, object, num, w, alpha, w_max, step);
  space.fence();
  return w_max;
}

// LSQML's reference: the object-shaped direction (the same scatters), then
// preconditioned and added over the tiles.
template <class T>
void reference_direction_step(ExecSpace const& space, PositionView<T, MemSpace> const& pos,
                              IndexView<MemSpace> const& idx, ComplexView3<T, MemSpace> const& products,
                              RealView2<T, MemSpace> const& intensity, ComplexView2<T, MemSpace> const& object,
                              std::vector<std::array<double, 2>> const& centres, double alpha, double w_max,
                              double step) {
  int const H = int(object.extent(0)), W = int(object.extent(1)), D = int(intensity.extent(0));
  ComplexView2<T, MemSpace> dir("dir", H, W);
  RealView2<T, MemSpace> w("w", H, W);
  add_patches(space, products, pos, idx, dir);
  auto pint = intensity;
  scatter_add_patches(space, int(idx.extent(0)), D, pos, idx, w, KOKKOS_LAMBDA(int, int i) { return &pint(i, 0); });
  auto tiles = make_tile_list<MemSpace>(footprint_tiles(centres, D, H, W), "tiles");
  precondition_direction(space, tiles, dir, w, alpha, w_max);
  add_scaled(space, tiles, object, dir, step);
  space.fence();
}

// Isolated positions on a grid D + 5 apart (every other one, in reverse
// order: indices need not be sorted), with random products, intensity and
// object, and the object's copy for the reference.
template <class T>
struct IsolatedBatch {
  static constexpr int D = 24, rows = 3, cols = 4, B = rows * cols / 2;
  int const H = 2 * D + rows * (D + 5), W = 2 * D + cols * (D + 5);
  std::vector<std::array<double, 2>> centres, used;
  PositionView<T, MemSpace> pos = isolated_positions<T>(rows, cols, D, centres);
  IndexView<MemSpace> idx{"idx", B};
  ComplexView3<T, MemSpace> products{"products", B, D, D};
  RealView2<T, MemSpace> intensity = random_intensity<T>(D);
  ComplexView2<T, MemSpace> object{"object", std::size_t(H), std::size_t(W)};
  ComplexView2<T, MemSpace> reference{"reference", std::size_t(H), std::size_t(W)};

  IsolatedBatch() {
    auto hi = Kokkos::create_mirror_view(idx);
    for (int b = 0; b < B; ++b) hi(b) = 2 * B - 1 - 2 * b;
    Kokkos::deep_copy(idx, hi);
    for (int b = 0; b < B; ++b) used.push_back(centres[hi(b)]);
    test::fill_random(products, 5);
    test::fill_random(object, 9);
    Kokkos::deep_copy(reference, object);
  }

  /// The largest change of the reference, and the largest distance of the
  /// object from it, relative to that change.
  double relative_error() const {
    auto got = test::host_copy(object);
    auto want = test::host_copy(reference);
    auto before = test::host_copy(object);
    test::fill_random(before, 9);  // the object before the update
    double worst = 0, changed = 0;
    for (std::size_t k = 0; k < got.span(); ++k) {
      worst = std::max(worst, double(Kokkos::abs(got.data()[k] - want.data()[k])));
      changed = std::max(changed, double(Kokkos::abs(want.data()[k] - before.data()[k])));
    }
    EXPECT_GT(changed, 0.1);  // the update moved the object
    return worst / changed;
  }
};

TYPED_TEST(IsolatedUpdate, EqualsTheScatteredSumsAndTheTiledUpdate) {
  using T = TypeParam;
  ExecSpace space;
  IsolatedBatch<T> s;
  for (char i : isolated_footprints(s.centres, s.D)) ASSERT_TRUE(i);
  double const alpha = 0.3, step = 0.8;
  double const w_max =
      reference_update(space, s.pos, s.idx, s.products, s.intensity, s.reference, s.used, alpha, step);
  RealView1<T, MemSpace> bounds("bounds", s.D + 1);
  footprint_row_bounds(space, s.intensity, bounds);
  double const got_max = max_isolated_weight(space, s.pos, s.idx, s.intensity, bounds);
  EXPECT_NEAR(got_max, w_max, 1e-6 * w_max);
  apply_isolated_update(space, s.pos, s.idx, s.products, s.intensity, s.object,
                        PreconditionedStep<T>(alpha, w_max, step));
  space.fence();
  EXPECT_LT(s.relative_error(), (std::is_same_v<T, float> ? 1e-5 : 1e-13));
  EXPECT_EQ(max_isolated_weight(space, s.pos, IndexView<MemSpace>("none", 0), s.intensity, bounds), 0.0);
}

// Skipping the footprint rows whose bound the running maximum reaches keeps
// the maximum exact. On a peaked intensity most rows lie below it (so rows
// are skipped), and which of the two rows a footprint row interpolates
// holds the peak varies with the sub-pixel parts of the 48 positions.
TYPED_TEST(IsolatedUpdate, RowBoundsKeepTheLargestWeight) {
  using T = TypeParam;
  ExecSpace space;
  int const D = 24, rows = 6, cols = 8;
  std::vector<std::array<double, 2>> centres;
  auto const pos = isolated_positions<T>(rows, cols, D, centres);
  IndexView<MemSpace> idx("idx", rows * cols);
  auto hi = Kokkos::create_mirror_view(idx);
  for (int b = 0; b < rows * cols; ++b) hi(b) = b;
  Kokkos::deep_copy(idx, hi);
  auto const intensity = peaked_intensity<T>(D);
  RealView1<T, MemSpace> bounds("bounds", D + 1);
  footprint_row_bounds(space, intensity, bounds);
  auto const hb = test::host_copy(bounds);
  auto const hp = test::host_copy(intensity);
  for (int u = 0; u <= D; ++u) {
    T want = 0;
    for (int i = std::max(0, u - 1); i <= std::min(D - 1, u); ++i)
      for (int j = 0; j < D; ++j) want = std::max(want, hp(i, j));
    EXPECT_EQ(hb(u), want) << "footprint row " << u;
  }
  double const every_row = max_isolated_weight(space, pos, idx, intensity, RealView1<T, MemSpace>());
  double const skipping = max_isolated_weight(space, pos, idx, intensity, bounds);
  EXPECT_EQ(skipping, every_row);
  int const H = 2 * D + rows * (D + 5), W = 2 * D + cols * (D + 5);
  EXPECT_NEAR(skipping, scattered_max(space, pos, idx, intensity, H, W), 1e-6 * skipping);
  int below = 0;
  for (int u = 0; u <= D; ++u) below += hb(u) < T(skipping);
  EXPECT_GT(below, D / 2);  // most rows can be skipped once the maximum is found
}

// LSQML: the footprint-shaped directions, added with a step, equal the
// object-shaped direction preconditioned and added over the tiles.
TYPED_TEST(IsolatedUpdate, DirectionsEqualTheObjectShapedDirection) {
  using T = TypeParam;
  ExecSpace space;
  IsolatedBatch<T> s;
  double const alpha = 0.2, step = 1.7;
  double const w_max = max_isolated_weight(space, s.pos, s.idx, s.intensity, RealView1<T, MemSpace>());
  reference_direction_step(space, s.pos, s.idx, s.products, s.intensity, s.reference, s.used, alpha, w_max, step);
  ComplexView3<T, MemSpace> dirs("dirs", s.B + 1, s.D + 1, s.D + 1);  // room to spare: only B are read
  isolated_directions(space, s.pos, s.idx, s.products, s.intensity, dirs, PreconditionedDirection<T>(alpha, w_max));
  add_isolated_directions(space, s.pos, s.idx, dirs, s.object, step);
  space.fence();
  EXPECT_LT(s.relative_error(), (std::is_same_v<T, float> ? 1e-5 : 1e-13));
}

// Another rank holding a window of the owner's object updates its copy of
// the isolated positions' pixels there (core's SharedIsolated): from the
// positions in the owner's coordinates shifted by whole pixels
// (ShiftedPositions), clipped to its window, reading only the patch rows
// and columns its pixels need (the rest of the products is NaN here). Its
// pixels must equal the owner's bit for bit, for rPIE's update and LSQML's
// direction step alike; a footprint row or column beyond the window must
// not be touched.
template <class T>
void update_a_window(ExecSpace const& space, IsolatedBatch<T> const& s, ComplexView2<T, MemSpace> const& owner,
                     bool lsqml) {
  double const alpha = 0.3, w_max = 1.5, step = 0.8;
  if (lsqml) {
    ComplexView3<T, MemSpace> dirs("dirs", s.B, s.D + 1, s.D + 1);
    isolated_directions(space, s.pos, s.idx, s.products, s.intensity, dirs, PreconditionedDirection<T>(alpha, w_max));
    add_isolated_directions(space, s.pos, s.idx, dirs, owner, step);
  } else {
    apply_isolated_update(space, s.pos, s.idx, s.products, s.intensity, owner,
                          PreconditionedStep<T>(alpha, w_max, step));
  }
  // The window: rows [y0, y0 + h), columns [x0, x0 + w) of the owner's
  // object, cutting through footprints on all four sides.
  int const y0 = s.D + 17, x0 = s.D + 40, h = 2 * s.D + 3, w = 2 * s.D + 9;
  ComplexView2<T, MemSpace> window("window", h, w);
  auto const before = test::host_copy(s.reference);  // the owner's object before its update
  auto hw = Kokkos::create_mirror_view(window);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) hw(y, x) = before(y0 + y, x0 + x);
  Kokkos::deep_copy(window, hw);
  // Positions as double (the owner's values exactly), shifted by -(y0, x0);
  // product pixels no window pixel reads set to NaN.
  auto const hpos = test::host_copy(s.pos);
  auto const hidx = test::host_copy(s.idx);
  ShiftedPositions<T, MemSpace> placed;
  placed.pos = decltype(placed.pos)("foreign_pos", s.B);
  placed.shift = decltype(placed.shift)("foreign_shift", s.B);
  auto hp = Kokkos::create_mirror_view(placed.pos);
  auto hs = Kokkos::create_mirror_view(placed.shift);
  auto prod = test::host_copy(s.products);
  for (int b = 0; b < s.B; ++b) {
    hp(b, 0) = double(hpos(hidx(b), 0));
    hp(b, 1) = double(hpos(hidx(b), 1));
    hs(b, 0) = -y0;
    hs(b, 1) = -x0;
    PatchCorner<T> const c(hpos(hidx(b), 0), hpos(hidx(b), 1), s.D);
    for (int i = 0; i < s.D; ++i)
      for (int j = 0; j < s.D; ++j) {
        // Patch pixel (i, j) feeds footprint pixels (i or i + 1, j or j + 1).
        bool const row = c.y + i + 1 >= y0 && c.y + i < y0 + h, col = c.x + j + 1 >= x0 && c.x + j < x0 + w;
        if (!(row && col)) prod(b, i, j) = Complex<T>(NAN, NAN);
      }
  }
  Kokkos::deep_copy(placed.pos, hp);
  Kokkos::deep_copy(placed.shift, hs);
  ComplexView3<T, MemSpace> parts("parts", s.B, s.D, s.D);
  Kokkos::deep_copy(parts, prod);
  if (lsqml) {
    ComplexView3<T, MemSpace> dirs("dirs", s.B, s.D + 1, s.D + 1);
    isolated_directions(space, placed, parts, s.intensity, dirs, PreconditionedDirection<T>(alpha, w_max), h, w);
    add_isolated_directions(space, placed, dirs, window, step);
  } else {
    apply_isolated_update(space, placed, parts, s.intensity, window, PreconditionedStep<T>(alpha, w_max, step));
  }
  space.fence();
  auto const got = test::host_copy(window);
  auto const want = test::host_copy(owner);
  int differ = 0, changed = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      differ += !(got(y, x) == want(y0 + y, x0 + x));
      changed += !(got(y, x) == before(y0 + y, x0 + x));
    }
  EXPECT_EQ(differ, 0) << (lsqml ? "lsqml" : "rpie");
  EXPECT_GT(changed, h * w / 4) << (lsqml ? "lsqml" : "rpie");  // the footprints cover much of the window
}

TYPED_TEST(IsolatedUpdate, AnotherRanksWindowGetsTheOwnersValues) {
  ExecSpace space;
  for (bool lsqml : {false, true}) {
    IsolatedBatch<TypeParam> s;
    update_a_window(space, s, s.object, lsqml);
  }
}

}  // namespace
