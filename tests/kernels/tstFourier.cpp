// Detector-plane kernels: intensity, modulus projection and Poisson gradient
// (finite-difference checks of the cost gradients), masks, an incoherent
// background in the model, costs.
#include <ptyko/kernels/fourier.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;
using Host = Kokkos::HostSpace;

struct Batch {
  int B = 3, M = 2, D = 8;
  ComplexView4<double, MemSpace> Psi;
  RealView3<float, MemSpace> data;
  IndexView<MemSpace> idx;
  MaskView<MemSpace> mask;
  RealView2<double, MemSpace> background;  ///< empty: none
  explicit Batch(bool with_mask, bool with_background = false) {
    Psi = ComplexView4<double, MemSpace>("Psi", B, M, D, D);
    data = RealView3<float, MemSpace>("data", B + 1, D, D);
    idx = IndexView<MemSpace>("idx", B);
    test::fill_random(Psi, 21);
    auto hd = Kokkos::create_mirror_view(data);
    for (std::size_t k = 0; k < hd.span(); ++k) hd.data()[k] = float(1 + (k * 7919) % 13);
    Kokkos::deep_copy(data, hd);
    auto hi = Kokkos::create_mirror_view(idx);
    for (int b = 0; b < B; ++b) hi(b) = B - b;  // frames 3, 2, 1
    Kokkos::deep_copy(idx, hi);
    if (with_mask) {
      mask = MaskView<MemSpace>("mask", D, D);
      auto hm = Kokkos::create_mirror_view(mask);
      for (int i = 0; i < D; ++i)
        for (int j = 0; j < D; ++j) hm(i, j) = (i + 2 * j) % 5 != 0;
      Kokkos::deep_copy(mask, hm);
    }
    if (with_background) {  // 0.2 to 2.6 counts: comparable with the model's 2 |Psi|^2 ~ 1-4
      background = RealView2<double, MemSpace>("background", D, D);
      auto hb = Kokkos::create_mirror_view(background);
      for (int i = 0; i < D; ++i)
        for (int j = 0; j < D; ++j) hb(i, j) = 0.2 + 0.3 * ((3 * i + j) % 9);
      Kokkos::deep_copy(background, hb);
    }
  }
};

double cost_of(NoiseModel noise, Batch const& s, ComplexView4<double, MemSpace> const& Psi) {
  return data_cost(ExecSpace(), noise, s.B, Psi, s.data, s.idx, s.mask, s.background, 1e-12);
}

// Central finite difference of the cost along a random direction e compared
// with 2 Re<G, e>, where G = dL/dPsi^* = -(descent direction) for both models.
void check_gradient(NoiseModel noise, bool with_mask, bool with_background = false) {
  Batch s(with_mask, with_background);
  ExecSpace space;
  ComplexView4<double, MemSpace> dir("dir", s.B, s.M, s.D, s.D), upd("upd", s.B, s.M, s.D, s.D),
      shifted("shifted", s.B, s.M, s.D, s.D);
  test::fill_random(dir, 5);
  Kokkos::deep_copy(upd, s.Psi);
  // G = dL/dPsi* = -(descent direction); the Poisson ratio uncapped (the
  // test's data reach 130 times the model)
  cost_descent_direction(space, noise, s.B, upd, s.data, s.idx, s.mask, s.background, 1e-12, 1.0,
                         std::numeric_limits<double>::infinity());
  {
    auto hu = test::host_copy(upd);
    for (std::size_t k = 0; k < hu.span(); ++k) hu.data()[k] = -hu.data()[k];
    Kokkos::deep_copy(upd, hu);
  }
  double const h = 1e-6;
  auto shifted_cost = [&](double step) {
    auto hp = test::host_copy(s.Psi);
    auto hd = test::host_copy(dir);
    for (std::size_t k = 0; k < hp.span(); ++k) hp.data()[k] += step * hd.data()[k];
    Kokkos::deep_copy(shifted, hp);
    return cost_of(noise, s, shifted);
  };
  double const fd = (shifted_cost(h) - shifted_cost(-h)) / (2 * h);
  double const analytic = 2 * test::inner(upd, dir).real();
  EXPECT_NEAR(fd, analytic, 1e-6 * std::abs(analytic) + 1e-7)
      << (noise == NoiseModel::gaussian ? "gaussian" : "poisson") << (with_mask ? " masked" : "")
      << (with_background ? " background" : "");
}

TEST(Fourier, GaussianGradientFiniteDifference) {
  for (bool background : {false, true}) {
    check_gradient(NoiseModel::gaussian, false, background);
    check_gradient(NoiseModel::gaussian, true, background);
  }
}

TEST(Fourier, PoissonGradientFiniteDifference) {
  for (bool background : {false, true}) {
    check_gradient(NoiseModel::poisson, false, background);
    check_gradient(NoiseModel::poisson, true, background);
  }
}

// sum_m |v(b, m, i, j)|^2: the model intensity of one pixel.
template <class View>
double mode_intensity(View const& v, int M, int b, int i, int j) {
  double sum = 0;
  for (int m = 0; m < M; ++m) sum += std::norm(std::complex<double>(v(b, m, i, j).real(), v(b, m, i, j).imag()));
  return sum;
}

// With a background b the projection scales the coherent modes as it would
// scale b taken as one more mode: the model's total sum_m |Psi'|^2 + b d /
// (I + b) equals the data, and the cost is that of I + b.
TEST(Fourier, ModulusProjectionWithBackgroundScalesItAsAMode) {
  Batch s(true, true), plain(true, false);
  ExecSpace space;
  auto before = test::host_copy(s.Psi);
  double const cost = modulus_projection(space, s.B, s.Psi, s.data, s.idx, s.mask, s.background, 0.0);
  double const cost_without = modulus_projection(space, plain.B, plain.Psi, plain.data, plain.idx, plain.mask,
                                                 plain.background, 0.0);
  auto after = test::host_copy(s.Psi);
  auto hd = test::host_copy(s.data);
  auto hm = test::host_copy(s.mask);
  auto hi = test::host_copy(s.idx);
  auto hb = test::host_copy(s.background);
  double ref_cost = 0;
  for (int b = 0; b < s.B; ++b)
    for (int i = 0; i < s.D; ++i)
      for (int j = 0; j < s.D; ++j) {
        double const I0 = mode_intensity(before, s.M, b, i, j), I1 = mode_intensity(after, s.M, b, i, j);
        double const d = hd(hi(b), i, j), bg = hb(i, j);
        if (!hm(i, j)) {
          EXPECT_NEAR(I1, I0, 1e-12 * I0);  // masked: kept
          continue;
        }
        EXPECT_NEAR(I1 + bg * d / (I0 + bg), d, 1e-9 * d);
        ref_cost += (std::sqrt(I0 + bg) - std::sqrt(d)) * (std::sqrt(I0 + bg) - std::sqrt(d));
      }
  EXPECT_NEAR(cost, ref_cost, 1e-9 * ref_cost);
  EXPECT_GT(std::abs(cost - cost_without), 0.01 * cost);  // the background changed the cost
}

TEST(Fourier, GaussianDirectionIsProjectionMinusModel) {
  Batch a(true), b(true);
  ExecSpace space;
  auto psi = test::host_copy(a.Psi);
  modulus_projection(space, a.B, a.Psi, a.data, a.idx, a.mask, a.background, 1e-12);
  cost_descent_direction(space, NoiseModel::gaussian, b.B, b.Psi, b.data, b.idx, b.mask, b.background, 1e-12);
  auto proj = test::host_copy(a.Psi);
  auto dir = test::host_copy(b.Psi);
  for (std::size_t k = 0; k < psi.span(); ++k) {
    auto expect = proj.data()[k] - psi.data()[k];
    EXPECT_NEAR(dir.data()[k].real(), expect.real(), 1e-12);
    EXPECT_NEAR(dir.data()[k].imag(), expect.imag(), 1e-12);
  }
}

TEST(Fourier, ModulusProjectionMatchesDataAndKeepsMaskedPixels) {
  Batch s(true);
  ExecSpace space;
  auto before = test::host_copy(s.Psi);
  double const cost = modulus_projection(space, s.B, s.Psi, s.data, s.idx, s.mask, s.background, 0.0);
  auto after = Kokkos::create_mirror_view_and_copy(Host(), s.Psi);
  auto hd = Kokkos::create_mirror_view_and_copy(Host(), s.data);
  auto hm = Kokkos::create_mirror_view_and_copy(Host(), s.mask);
  auto hi = Kokkos::create_mirror_view_and_copy(Host(), s.idx);
  double ref_cost = 0;
  for (int b = 0; b < s.B; ++b)
    for (int i = 0; i < s.D; ++i)
      for (int j = 0; j < s.D; ++j) {
        double const I0 = mode_intensity(before, s.M, b, i, j), I1 = mode_intensity(after, s.M, b, i, j);
        double const d = hd(hi(b), i, j);
        if (hm(i, j)) {
          EXPECT_NEAR(I1, d, 1e-9 * d);
          ref_cost += std::pow(std::sqrt(I0) - std::sqrt(d), 2);
        } else {
          EXPECT_EQ(I1, I0);
        }
      }
  EXPECT_NEAR(cost, ref_cost, 1e-9 * ref_cost);
}

TEST(Fourier, IntensitySumsModes) {
  Batch s(false);
  ExecSpace space;
  RealView3<double, MemSpace> I("I", s.B, s.D, s.D);
  far_field_intensity(space, s.B, s.Psi, I);
  auto hI = Kokkos::create_mirror_view_and_copy(Host(), I);
  auto hP = Kokkos::create_mirror_view_and_copy(Host(), s.Psi);
  for (int b = 0; b < s.B; ++b)
    for (int i = 0; i < s.D; ++i)
      for (int j = 0; j < s.D; ++j) {
        double ref = 0;
        for (int m = 0; m < s.M; ++m) {
          auto z = hP(b, m, i, j);
          ref += z.real() * z.real() + z.imag() * z.imag();
        }
        EXPECT_NEAR(hI(b, i, j), ref, 1e-12);
      }
}

TEST(Fourier, PoissonCostIsZeroAtPerfectFit) {
  Batch s(false);
  ExecSpace space;
  // Model = data exactly: cost 0 (deviance form).
  modulus_projection(space, s.B, s.Psi, s.data, s.idx, s.mask, s.background, 0.0);
  EXPECT_NEAR(cost_of(NoiseModel::poisson, s, s.Psi), 0.0, 1e-8);
  EXPECT_NEAR(cost_of(NoiseModel::gaussian, s, s.Psi), 0.0, 1e-8);
}



// The kernels compile mode counts 1 to max_compiled_modes (every mode of a
// pixel in registers, full chunks of columns then single columns) and run
// other counts through the run-time path. Every count, masked or not, with
// count (uint16) and float frames, against a plain host computation in
// double: D = 40 has full chunks and a tail on host backends.
template <class Frame>
void check_against_host_reference(int M, bool with_mask, bool with_background) {
  int const B = 2, D = 40;
  ComplexView4<float, MemSpace> Psi("Psi", B, M, D, D);
  test::fill_random(Psi, 100 + M);
  Kokkos::View<Frame***, Kokkos::LayoutRight, MemSpace> data("data", B, D, D);
  IndexView<MemSpace> idx("idx", B);
  MaskView<MemSpace> mask;
  auto hd = Kokkos::create_mirror_view(data);
  for (std::size_t k = 0; k < hd.span(); ++k) hd.data()[k] = Frame((k * 7919) % 17);
  Kokkos::deep_copy(data, hd);
  auto hi = Kokkos::create_mirror_view(idx);
  hi(0) = 1;
  hi(1) = 0;
  Kokkos::deep_copy(idx, hi);
  if (with_mask) {
    mask = MaskView<MemSpace>("mask", D, D);
    auto hm = Kokkos::create_mirror_view(mask);
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) hm(i, j) = (i + 3 * j) % 7 != 0;
    Kokkos::deep_copy(mask, hm);
  }
  RealView2<float, MemSpace> background;
  if (with_background) {
    background = RealView2<float, MemSpace>("background", D, D);
    auto hb = Kokkos::create_mirror_view(background);
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) hb(i, j) = 0.1f * float((i + 5 * j) % 11);
    Kokkos::deep_copy(background, hb);
  }
  auto const hb = Kokkos::create_mirror_view_and_copy(Host(), background);  // device -> host: background
  auto const before = Kokkos::create_mirror_view_and_copy(Host(), Psi);  // device -> host: the input
  auto hm = Kokkos::create_mirror_view_and_copy(Host(), mask);            // device -> host: mask
  float const eps = 1e-6f, scale = 0.5f;
  for (NoiseModel noise : {NoiseModel::gaussian, NoiseModel::poisson}) {
    ComplexView4<float, MemSpace> work("work", B, M, D, D);
    Kokkos::deep_copy(work, Psi);  // device -> device: a fresh copy
    double const cost = cost_descent_direction(ExecSpace(), noise, B, work, data, idx, mask, background, eps, scale);
    auto const after = Kokkos::create_mirror_view_and_copy(Host(), work);  // device -> host: result
    double expected_cost = 0, worst = 0;
    int capped = 0;  // Poisson pixels whose ratio the cap replaces
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < D; ++i)
        for (int j = 0; j < D; ++j) {
          double I = with_background ? double(hb(i, j)) : 0.0;
          for (int m = 0; m < M; ++m) I += std::norm(std::complex<double>(before(b, m, i, j).real(), before(b, m, i, j).imag()));
          double const d = double(hd(hi(b), i, j));
          bool const use = !with_mask || hm(i, j) != 0;
          double factor = 0;
          if (use) {
            if (noise == NoiseModel::gaussian) {
              factor = std::sqrt(d) / (std::sqrt(I) + eps) - 1;
              expected_cost += (std::sqrt(I) - std::sqrt(d)) * (std::sqrt(I) - std::sqrt(d));
            } else {
              factor = std::min(d / (I + eps), poisson_ratio_max) - 1;
              capped += d / (I + eps) > poisson_ratio_max;
              expected_cost += I - d - d * std::log((I + eps) / (d + eps));
            }
          }
          for (int m = 0; m < M; ++m) {
            std::complex<double> const x(before(b, m, i, j).real(), before(b, m, i, j).imag());
            std::complex<double> const y(after(b, m, i, j).real(), after(b, m, i, j).imag());
            worst = std::max(worst, std::abs(y - scale * factor * x) / (1 + std::abs(scale * factor * x)));
          }
        }
    EXPECT_LT(worst, 1e-5) << "M " << M << (with_mask ? " masked" : "") << (with_background ? " background" : "")
                           << " noise " << int(noise);
    if (noise == NoiseModel::poisson && !with_background)  // a background keeps I + b above d / 10 here
      EXPECT_GT(capped, 0) << "M " << M << ": the data never reach the cap";
    EXPECT_NEAR(cost, expected_cost, 1e-5 * std::abs(expected_cost) + 1e-6)
        << "M " << M << (with_mask ? " masked" : "") << " noise " << int(noise);
    // The non-blocking form (the cost left in the space's memory): the same
    // direction and the same cost, bit for bit.
    ComplexView4<float, MemSpace> again("again", B, M, D, D);
    Kokkos::deep_copy(again, Psi);  // device -> device: a fresh copy
    Kokkos::View<double, MemSpace> cost_slot("cost_slot");
    cost_descent_direction(ExecSpace(), noise, B, again, data, idx, mask, background, cost_slot, eps, scale);
    auto const slot = Kokkos::create_mirror_view_and_copy(Host(), cost_slot);  // device -> host: the cost
    EXPECT_EQ(slot(), cost);
    auto const h_again = Kokkos::create_mirror_view_and_copy(Host(), again);  // device -> host: result
    int differ = 0;
    for (std::size_t k = 0; k < h_again.span(); ++k) differ += !(h_again.data()[k] == after.data()[k]);
    EXPECT_EQ(differ, 0);
  }
}

TEST(Fourier, EveryModeCountMatchesAHostReference) {
  for (int M = 1; M <= max_compiled_modes + 2; ++M)
    for (bool masked : {false, true})
      for (bool background : {false, true}) {
        check_against_host_reference<std::uint16_t>(M, masked, background);
        check_against_host_reference<float>(M, masked, background);
      }
}

}  // namespace
