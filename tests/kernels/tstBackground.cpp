// Background refinement's kernels: the EM sums of the background as an
// incoherent mode, against a plain host loop (masked pixels, frames picked
// by index, several chunks summed), and the background's measured counts.
#include <ptyko/kernels/background.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <vector>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;
using Host = Kokkos::HostSpace;

TEST(Background, RatioSumsMatchAHostLoop) {
  int const B = 3, M = 2, D = 12;
  ComplexView4<float, MemSpace> Psi("Psi", B, M, D, D);
  test::fill_random(Psi, 7);
  Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, MemSpace> data("data", B + 1, D, D);
  IndexView<MemSpace> idx("idx", B);
  MaskView<MemSpace> mask("mask", D, D);
  RealView2<float, MemSpace> background("background", D, D);
  auto hd = Kokkos::create_mirror_view(data);
  for (std::size_t k = 0; k < hd.span(); ++k) hd.data()[k] = std::uint16_t((k * 7919) % 23);
  Kokkos::deep_copy(data, hd);
  auto hi = Kokkos::create_mirror_view(idx);
  for (int b = 0; b < B; ++b) hi(b) = B - b;
  Kokkos::deep_copy(idx, hi);
  auto hm = Kokkos::create_mirror_view(mask);
  auto hb = Kokkos::create_mirror_view(background);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) {
      hm(i, j) = (2 * i + j) % 7 != 0;
      hb(i, j) = 0.5f + 0.25f * float((i + j) % 5);
    }
  Kokkos::deep_copy(mask, hm);
  Kokkos::deep_copy(background, hb);
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> sums("sums", D, D);
  Kokkos::deep_copy(sums, 1.0);  // the kernel adds: two calls sum twice onto the start
  ExecSpace space;
  float const eps = 1e-6f;
  background_ratio_sums(space, B, Psi, data, idx, mask, background, sums, eps);
  background_ratio_sums(space, B, Psi, data, idx, mask, background, sums, eps);
  auto const got = Kokkos::create_mirror_view_and_copy(Host(), sums);  // device -> host: the sums
  auto const hP = Kokkos::create_mirror_view_and_copy(Host(), Psi);    // device -> host: the far fields
  int checked = 0;
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) {
      double expected = 1;
      for (int b = 0; b < B && hm(i, j); ++b) {
        double I = hb(i, j);
        for (int m = 0; m < M; ++m) I += std::norm(std::complex<double>(hP(b, m, i, j).real(), hP(b, m, i, j).imag()));
        expected += 2 * double(hb(i, j)) * double(hd(hi(b), i, j)) / (I + eps);
      }
      EXPECT_NEAR(got(i, j), expected, 1e-5 * expected) << i << " " << j;
      checked += expected > 1;
    }
  EXPECT_GT(checked, D * D / 2);  // most measured pixels hold counts
}

TEST(Background, MeasuredCountsSkipMaskedPixels) {
  int const D = 10;
  RealView2<double, MemSpace> background("background", D, D);
  MaskView<MemSpace> mask("mask", D, D), none;
  auto hb = Kokkos::create_mirror_view(background);
  auto hm = Kokkos::create_mirror_view(mask);
  double all = 0, measured = 0;
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) {
      hb(i, j) = 1 + i + 0.5 * j;
      hm(i, j) = (i * j) % 3 != 1;
      all += hb(i, j);
      measured += hm(i, j) ? hb(i, j) : 0;
    }
  Kokkos::deep_copy(background, hb);
  Kokkos::deep_copy(mask, hm);
  EXPECT_NEAR(measured_background_counts(ExecSpace(), background, none), all, 1e-9 * all);
  EXPECT_NEAR(measured_background_counts(ExecSpace(), background, mask), measured, 1e-9 * measured);
  EXPECT_LT(measured, 0.9 * all);
}

}  // namespace
