// ForwardModel: adjoint (dot-product) tests of the whole operator with
// respect to object and probe, and its intensity against an independent naive
// loop (bilinear patch, product, naive DFT, sum over modes); the probe's
// adjoint sums (numerator and weight) against a naive loop and the separate
// kernels they fuse.
#include <ptyko/kernels/forward.hpp>
#include <ptyko/kernels/update.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;
using Host = Kokkos::HostSpace;

template <class T>
class Forward : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Forward, Reals);

template <class T>
struct Problem {
  int N = 6, M = 3, D = 16, H = 48, W = 44;
  ComplexView2<T, MemSpace> object{"object", std::size_t(H), std::size_t(W)};
  ComplexView3<T, MemSpace> probe{"probe", std::size_t(M), std::size_t(D), std::size_t(D)};
  PositionView<T, MemSpace> pos{"pos", std::size_t(N)};
  IndexView<MemSpace> idx{"idx", std::size_t(N)};
  Problem() {
    test::fill_random(object, 1);
    test::fill_random(probe, 2);
    auto hp = Kokkos::create_mirror_view(pos);
    std::mt19937 gen(3);
    std::uniform_real_distribution<double> uy(D / 2, H - D / 2 - 1.01), ux(D / 2, W - D / 2 - 1.01);
    for (int n = 0; n < N; ++n) {
      hp(n, 0) = T(uy(gen));
      hp(n, 1) = T(ux(gen));
    }
    Kokkos::deep_copy(pos, hp);
    auto hi = Kokkos::create_mirror_view(idx);
    for (int n = 0; n < N; ++n) hi(n) = (n * 5) % N;  // a permutation
    Kokkos::deep_copy(idx, hi);
  }
};

TYPED_TEST(Forward, AdjointWithRespectToObject) {
  using T = TypeParam;
  Problem<T> p;
  ExecSpace space;
  ForwardModel<T, ExecSpace> model(space, p.N, p.M, p.D);
  ComplexView4<T, MemSpace> Ax("Ax", p.N, p.M, p.D, p.D), y("y", p.N, p.M, p.D, p.D),
      ycopy("ycopy", p.N, p.M, p.D, p.D);
  ComplexView2<T, MemSpace> Ahy("Ahy", p.H, p.W);
  test::fill_random(y, 4);
  Kokkos::deep_copy(ycopy, y);
  model.far_field(space, p.object, p.probe, p.pos, p.idx, Ax);
  model.adjoint_object(space, p.probe, p.pos, p.idx, ycopy, Ahy);
  EXPECT_LT(test::rel_diff(test::inner(Ax, y), test::inner(p.object, Ahy)),
            test::adjoint_tolerance<T>());
}

TYPED_TEST(Forward, AdjointWithRespectToProbe) {
  using T = TypeParam;
  Problem<T> p;
  ExecSpace space;
  ForwardModel<T, ExecSpace> model(space, p.N, p.M, p.D);
  ComplexView4<T, MemSpace> Ax("Ax", p.N, p.M, p.D, p.D), y("y", p.N, p.M, p.D, p.D),
      ycopy("ycopy", p.N, p.M, p.D, p.D);
  ComplexView3<T, MemSpace> Ahy("Ahy", p.M, p.D, p.D);
  test::fill_random(y, 5);
  Kokkos::deep_copy(ycopy, y);
  model.far_field(space, p.object, p.probe, p.pos, p.idx, Ax);
  model.adjoint_probe(space, p.object, p.pos, p.idx, ycopy, Ahy);
  EXPECT_LT(test::rel_diff(test::inner(Ax, y), test::inner(p.probe, Ahy)),
            test::adjoint_tolerance<T>());
}

TYPED_TEST(Forward, IntensityMatchesNaiveLoop) {
  using T = TypeParam;
  Problem<T> p;
  ExecSpace space;
  ForwardModel<T, ExecSpace> model(space, p.N, p.M, p.D);
  ComplexView4<T, MemSpace> Psi("Psi", p.N, p.M, p.D, p.D);
  RealView3<T, MemSpace> I("I", p.N, p.D, p.D);
  model.far_field(space, p.object, p.probe, p.pos, p.idx, Psi);
  far_field_intensity(space, p.N, Psi, I);
  auto hI = Kokkos::create_mirror_view_and_copy(Host(), I);
  auto ho = Kokkos::create_mirror_view_and_copy(Host(), p.object);
  auto hpr = Kokkos::create_mirror_view_and_copy(Host(), p.probe);
  auto hpos = Kokkos::create_mirror_view_and_copy(Host(), p.pos);
  auto hidx = Kokkos::create_mirror_view_and_copy(Host(), p.idx);
  auto c = [](Complex<T> z) { return std::complex<double>(z.real(), z.imag()); };
  double max_rel = 0;
  for (int b = 0; b < p.N; ++b) {
    int const n = hidx(b);
    double const cy = double(hpos(n, 0)) - p.D / 2, cx = double(hpos(n, 1)) - p.D / 2;
    int const y0 = int(std::floor(cy)), x0 = int(std::floor(cx));
    double const fy = cy - y0, fx = cx - x0;
    std::vector<std::complex<double>> psi(std::size_t(p.M) * p.D * p.D);
    for (int m = 0; m < p.M; ++m)
      for (int i = 0; i < p.D; ++i)
        for (int j = 0; j < p.D; ++j) {
          auto o = (1 - fy) * (1 - fx) * c(ho(y0 + i, x0 + j)) + (1 - fy) * fx * c(ho(y0 + i, x0 + j + 1)) +
                   fy * (1 - fx) * c(ho(y0 + i + 1, x0 + j)) + fy * fx * c(ho(y0 + i + 1, x0 + j + 1));
          psi[(m * p.D + i) * p.D + j] = c(hpr(m, i, j)) * o;
        }
    for (int ky = 0; ky < p.D; ++ky)
      for (int kx = 0; kx < p.D; ++kx) {
        double ref = 0;
        for (int m = 0; m < p.M; ++m) {
          std::complex<double> s = 0;
          for (int i = 0; i < p.D; ++i)
            for (int j = 0; j < p.D; ++j)
              s += psi[(m * p.D + i) * p.D + j] * std::polar(1.0, -2 * M_PI * (double(ky) * i + double(kx) * j) / p.D);
          ref += std::norm(s) / (p.D * p.D);
        }
        max_rel = std::max(max_rel, std::abs(hI(b, ky, kx) - ref) / (ref + 1e-3));
      }
  }
  double const tol = std::is_same_v<T, float> ? 1e-4 : 1e-11;
  EXPECT_LT(max_rel, tol);
}

// add_probe_sums adds sum_b conj(S_b) g_bm and sum_b |S_b|^2 to what the
// sums hold: as a naive double loop gives them, and bit for bit as
// patch_adjoint_product and add_patch_intensity give them apart (one work
// item per pixel sums the batch in its order in both). D = 13 leaves a
// remainder to every vector width.
TYPED_TEST(Forward, ProbeSumsMatchANaiveLoopAndTheSeparateKernels) {
  using T = TypeParam;
  int const B = 5, M = 2, D = 13;
  ExecSpace space;
  ComplexView3<T, MemSpace> patches("patches", B, D, D), num("num", M, D, D), num_apart("num_apart", M, D, D);
  ComplexView4<T, MemSpace> g("g", B, M, D, D);
  RealView2<T, MemSpace> w("w", D, D), w_apart("w_apart", D, D);
  test::fill_random(patches, 11);
  test::fill_random(g, 12);
  test::fill_random(num, 13);
  test::fill_random(w, 14);
  Kokkos::deep_copy(num_apart, num);  // device -> device: the same starting sums
  Kokkos::deep_copy(w_apart, w);
  auto const num0 = test::host_copy(num);
  auto const w0 = test::host_copy(w);

  add_probe_sums(space, B, patches, g, num, w);
  patch_adjoint_product(space, B, patches, g, num_apart);
  add_patch_intensity(space, B, patches, w_apart);
  space.fence();

  auto const hn = test::host_copy(num), hna = test::host_copy(num_apart), hs = test::host_copy(patches);
  auto const hg = test::host_copy(g);
  auto const hw = test::host_copy(w), hwa = test::host_copy(w_apart);
  auto c = [](Complex<T> z) { return std::complex<double>(z.real(), z.imag()); };
  double const tol = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) {
      double ref_w = double(w0(i, j));
      for (int b = 0; b < B; ++b) ref_w += std::norm(c(hs(b, i, j)));
      EXPECT_NEAR(double(hw(i, j)), ref_w, tol * (1 + std::abs(ref_w))) << i << ", " << j;
      EXPECT_EQ(hw(i, j), hwa(i, j)) << i << ", " << j;
      for (int m = 0; m < M; ++m) {
        std::complex<double> ref = c(num0(m, i, j));
        for (int b = 0; b < B; ++b) ref += std::conj(c(hs(b, i, j))) * c(hg(b, m, i, j));
        EXPECT_LT(std::abs(c(hn(m, i, j)) - ref), tol * (1 + std::abs(ref))) << m << ", " << i << ", " << j;
        EXPECT_EQ(hn(m, i, j).real(), hna(m, i, j).real());
        EXPECT_EQ(hn(m, i, j).imag(), hna(m, i, j).imag());
      }
    }
}

}  // namespace
