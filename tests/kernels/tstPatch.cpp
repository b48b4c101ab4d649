// Patch extraction (bilinear) and its adjoint.
#include <ptyko/kernels/patch.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <random>

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
