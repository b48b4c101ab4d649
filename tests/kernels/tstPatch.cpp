// Patch extraction (bilinear) and its adjoint.
#include <ptyko/kernels/patch.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;

template <class T>
class Patch : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Patch, Reals);

// Random sub-pixel positions whose patches fit an (H, W) object.
template <class T>
PositionView<T, MemSpace> random_positions(int N, int D, int H, int W, unsigned seed) {
  PositionView<T, MemSpace> pos("pos", N);
  auto h = Kokkos::create_mirror_view(pos);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> uy(D / 2, H - D / 2 - 1.001), ux(D / 2, W - D / 2 - 1.001);
  for (int n = 0; n < N; ++n) {
    h(n, 0) = T(uy(gen));
    h(n, 1) = T(ux(gen));
  }
  Kokkos::deep_copy(pos, h);
  return pos;
}

IndexView<MemSpace> iota_indices(int N) {
  IndexView<MemSpace> idx("idx", N);
  auto h = Kokkos::create_mirror_view(idx);
  for (int n = 0; n < N; ++n) h(n) = N - 1 - n;  // reversed: indices need not be sorted
  Kokkos::deep_copy(idx, h);
  return idx;
}

TYPED_TEST(Patch, AdjointDotProduct) {
  using T = TypeParam;
  ExecSpace space;
  int const N = 12, D = 16, H = 40, W = 52;
  auto pos = random_positions<T>(N, D, H, W, 7);
  auto idx = iota_indices(N);
  ComplexView2<T, MemSpace> x("x", H, W), sty("sty", H, W);
  ComplexView3<T, MemSpace> y("y", N, D, D), sx("sx", N, D, D);
  test::fill_random(x, 11);
  test::fill_random(y, 12);
  extract_patches(space, x, pos, idx, sx);
  add_patches(space, y, pos, idx, sty);
  EXPECT_LT(test::rel_diff(test::inner(sx, y), test::inner(x, sty)), test::adjoint_tolerance<T>());
}

TYPED_TEST(Patch, IntegerAndHalfPixelPositions) {
  using T = TypeParam;
  ExecSpace space;
  int const D = 4, H = 10, W = 10;
  PositionView<T, MemSpace> pos("pos", 2);
  auto hp = Kokkos::create_mirror_view(pos);
  hp(0, 0) = 4;   hp(0, 1) = 5;    // integer: corner (2, 3)
  hp(1, 0) = 4.5; hp(1, 1) = 5;    // half a pixel down: average of two rows
  Kokkos::deep_copy(pos, hp);
  IndexView<MemSpace> idx("idx", 2);
  auto hi = Kokkos::create_mirror_view(idx);
  hi(0) = 0; hi(1) = 1;
  Kokkos::deep_copy(idx, hi);
  ComplexView2<T, MemSpace> obj("obj", H, W);
  test::fill_random(obj, 3);
  ComplexView3<T, MemSpace> out("out", 2, D, D);
  extract_patches(space, obj, pos, idx, out);
  auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obj);
  auto hout = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) {
      EXPECT_EQ(hout(0, i, j), ho(2 + i, 3 + j));
      auto avg = T(0.5) * (ho(2 + i, 3 + j) + ho(3 + i, 3 + j));
      EXPECT_NEAR(hout(1, i, j).real(), avg.real(), 1e-6);
      EXPECT_NEAR(hout(1, i, j).imag(), avg.imag(), 1e-6);
    }
}

// The footprint scatters of `patches` (complex) and of one real D x D
// `weight_rows` per position into (H, W) targets: ordered (add_patches /
// scatter_add_patches on this space) or atomic (the form devices run, here
// on this space's threads). A free function: nvcc allows no device lambda in
// a test body.
template <class T>
void footprint_scatters(ExecSpace const& space, bool atomic, PositionView<T, MemSpace> const& pos,
                        IndexView<MemSpace> const& idx, ComplexView3<T, MemSpace> const& patches,
                        RealView2<T, MemSpace> const& weight_rows, ComplexView2<T, MemSpace> const& target,
                        RealView2<T, MemSpace> const& target_w) {
  int const N = int(idx.extent(0)), D = int(patches.extent(1));
  auto patch_row = KOKKOS_LAMBDA(int b, int i) { return &patches(b, i, 0); };
  auto weight_row = KOKKOS_LAMBDA(int, int i) { return &weight_rows(i, 0); };
  if (!atomic) {
    add_patches(space, patches, pos, idx, target);
    scatter_add_patches(space, N, D, pos, idx, target_w, weight_row);
    return;
  }
  using ComplexScatter = impl::FootprintScatter<true, T, MemSpace, ComplexView2<T, MemSpace>, decltype(patch_row)>;
  using RealScatter = impl::FootprintScatter<true, T, MemSpace, RealView2<T, MemSpace>, decltype(weight_row)>;
  for_each_frame_span(space, "test::atomic_scatter", N, D + 1, ComplexScatter{pos, idx, target, patch_row, D});
  for_each_frame_span(space, "test::atomic_scatter_w", N, D + 1, RealScatter{pos, idx, target_w, weight_row, D});
}

// The atomic scatter against the ordered one, with heavily overlapping
// footprints, so that on a multi-threaded host space concurrent rows meet on
// the same pixels. Complex targets go through the split real/imaginary
// atomic adds, real targets through plain atomic adds.
TYPED_TEST(Patch, AtomicScatterMatchesOrderedScatter) {
  using T = TypeParam;
  ExecSpace space;
  int const N = 48, D = 12, H = 20, W = 22;  // 48 footprints of 13^2 on 440 pixels
  auto pos = random_positions<T>(N, D, H, W, 21);
  auto idx = iota_indices(N);
  ComplexView3<T, MemSpace> patches("patches", N, D, D);
  RealView2<T, MemSpace> weight_rows("weight_rows", D, D);
  test::fill_random(patches, 22);
  test::fill_random(weight_rows, 23);
  ComplexView2<T, MemSpace> ordered("ordered", H, W), atomic("atomic", H, W);
  RealView2<T, MemSpace> ordered_w("ordered_w", H, W), atomic_w("atomic_w", H, W);
  footprint_scatters(space, false, pos, idx, patches, weight_rows, ordered, ordered_w);
  footprint_scatters(space, true, pos, idx, patches, weight_rows, atomic, atomic_w);

  auto a = test::host_copy(atomic), o = test::host_copy(ordered);
  auto aw = test::host_copy(atomic_w), ow = test::host_copy(ordered_w);
  double scale = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      scale = std::max({scale, std::hypot(double(o(y, x).real()), double(o(y, x).imag())), std::fabs(double(ow(y, x)))});
  ASSERT_GT(scale, 1.0);  // the footprints overlap: sums of many terms
  double const tol = (std::is_same_v<T, float> ? 2e-5 : 1e-13) * scale;  // the adds' order differs
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      EXPECT_NEAR(a(y, x).real(), o(y, x).real(), tol) << y << ", " << x;
      EXPECT_NEAR(a(y, x).imag(), o(y, x).imag(), tol) << y << ", " << x;
      EXPECT_NEAR(aw(y, x), ow(y, x), tol) << y << ", " << x;
    }
}

TYPED_TEST(Patch, InsideCheck) {
  using T = TypeParam;
  PositionView<T, Kokkos::HostSpace> pos("pos", 1);
  pos(0, 0) = 8; pos(0, 1) = 8;
  EXPECT_TRUE(patches_inside(pos, 16, 17, 17));   // corner 0, reads up to row 16
  EXPECT_FALSE(patches_inside(pos, 16, 16, 17));  // needs row 16
  pos(0, 0) = 7.9;
  EXPECT_FALSE(patches_inside(pos, 16, 40, 40));  // corner -0.1
  pos(0, 0) = std::numeric_limits<T>::quiet_NaN();
  EXPECT_FALSE(patches_inside(pos, 16, 40, 40));
}

}  // namespace
