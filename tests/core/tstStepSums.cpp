// LSQML's per-position step sums (core/src/solvers/lsqml_step_sums.hpp)
// against a plain double-precision sum written from their definition, for
// every form the kernel has: the compiled mode counts (1-4), the run-time
// mode count (here for every count), the device form (a team reduction per position,
// run here on the host), with and without the probe's terms, with positions
// that sample the object's direction and isolated ones that sample their own
// footprint-shaped direction. Frame sizes leave a partial column chunk (the
// host forms walk 16 columns at a time). The host forms were restructured
// for speed (item 77 of docs/performance.md); this is what they must keep.
#include "solvers/lsqml_step_sums.hpp"

#include <gtest/gtest.h>

#include <test_utils.hpp>

#include <cmath>
#include <complex>
#include <string>

namespace {

using namespace ptyko;
using namespace ptyko::test;
using cd = std::complex<double>;
using T = float;
using SumsView = Kokkos::View<double* [6], Kokkos::LayoutRight, MemSpace>;

cd to_cd(Complex<T> const& z) { return {double(z.real()), double(z.imag())}; }

struct Problem {
  int M, D, B, isolated_from;
  ComplexView3<T, MemSpace> P, dP, S, dI;
  ComplexView2<T, MemSpace> dO;
  PositionView<T, MemSpace> pos;
  IndexView<MemSpace> idx;
  ComplexView4<T, MemSpace> X;

  Problem(int M_, int D_, std::uint64_t seed) : M(M_), D(D_), B(5), isolated_from(3) {
    int const H = 2 * D + 7, W = 2 * D + 3, positions = 7;
    P = ComplexView3<T, MemSpace>("P", M, D, D);
    dP = ComplexView3<T, MemSpace>("dP", M, D, D);
    S = ComplexView3<T, MemSpace>("S", B, D, D);
    dI = ComplexView3<T, MemSpace>("dI", B - isolated_from, D + 1, D + 1);
    dO = ComplexView2<T, MemSpace>("dO", H, W);
    X = ComplexView4<T, MemSpace>("X", B, M, D, D);
    for (auto* v : {&P, &dP, &S, &dI}) fill_random(*v, seed++);
    fill_random(dO, seed++);
    fill_random(X, seed++);
    // Fractional positions (pixels) whose patches and their interpolation
    // row and column lie inside the object; batch member b is position
    // idx(b), not b.
    pos = PositionView<T, MemSpace>("pos", positions);
    idx = IndexView<MemSpace>("idx", B);
    auto hp = Kokkos::create_mirror_view(pos);
    auto hi = Kokkos::create_mirror_view(idx);
    for (int n = 0; n < positions; ++n) {
      hp(n, 0) = T(D / 2 + 0.37 + (H - D - 2) * ((n * 0.29) - std::floor(n * 0.29)));
      hp(n, 1) = T(D / 2 + 0.81 + (W - D - 2) * ((n * 0.53) - std::floor(n * 0.53)));
    }
    int const order[] = {4, 0, 6, 2, 5};
    for (int b = 0; b < B; ++b) hi(b) = order[b];
    Kokkos::deep_copy(pos, hp);  // host -> device
    Kokkos::deep_copy(idx, hi);  // host -> device
  }

  impl::StepSumsViews<T, MemSpace> views(SumsView const& out, bool with_probe) const {
    return {P, dP, S, dO, dI, isolated_from, pos, idx, X, out, with_probe};
  }
};

/// The sums from their definition, and the sums of the terms' magnitudes
/// (the scale the float kernels' rounding is judged against).
void reference(Problem const& p, bool with_probe, double (*sums)[6], double (*scale)[6]) {
  auto P = host_copy(p.P), dP = host_copy(p.dP), S = host_copy(p.S), dI = host_copy(p.dI);
  auto X = host_copy(p.X);
  auto dO = host_copy(p.dO);
  auto pos = host_copy(p.pos);
  auto idx = host_copy(p.idx);
  for (int b = 0; b < p.B; ++b) {
    for (int q = 0; q < 6; ++q) sums[b][q] = scale[b][q] = 0;
    double const cy = double(pos(idx(b), 0)) - p.D / 2, cx = double(pos(idx(b), 1)) - p.D / 2;
    int const y0 = int(std::floor(cy)), x0 = int(std::floor(cx));
    double const fy = cy - y0, fx = cx - x0;
    // D_O at (y0 + u, x0 + v): the object's, or b's own footprint-shaped one.
    auto dir = [&](int u, int v) {
      return b < p.isolated_from ? to_cd(dO(y0 + u, x0 + v)) : to_cd(dI(b - p.isolated_from, u, v));
    };
    for (int i = 0; i < p.D; ++i)
      for (int j = 0; j < p.D; ++j) {
        cd const ds = (1 - fy) * ((1 - fx) * dir(i, j) + fx * dir(i, j + 1)) +
                      fy * ((1 - fx) * dir(i + 1, j) + fx * dir(i + 1, j + 1));
        for (int m = 0; m < p.M; ++m) {
          cd const dop = to_cd(P(m, i, j)) * ds;
          cd const dpo = with_probe ? to_cd(dP(m, i, j)) * to_cd(S(b, i, j)) : cd(0);
          cd const x = to_cd(X(b, m, i, j));
          cd const a2 = std::conj(dop) * dpo;
          double const terms[6] = {std::norm(dop), std::norm(dpo), a2.real(), a2.imag(),
                                   (std::conj(dop) * x).real(), (std::conj(dpo) * x).real()};
          for (int q = 0; q < 6; ++q) {
            sums[b][q] += terms[q];
            scale[b][q] += std::abs(terms[q]);
          }
        }
      }
  }
}

/// Every sum within 1e-5 of its terms' magnitudes: float rounding of the
/// terms and of their short partial sums stays near 1e-7 of it; a pixel or
/// mode left out or counted twice moves a sum by ~1 / (M D^2) of it
/// (>= 1.3e-4 here).
void expect_sums(Problem const& p, SumsView const& got, double (*sums)[6], double (*scale)[6],
                 std::string const& form) {
  auto h = host_copy(got);
  char const* names[6] = {"A1", "A4", "Re A2", "Im A2", "b1", "b2"};
  for (int b = 0; b < p.B; ++b)
    for (int q = 0; q < 6; ++q)
      EXPECT_NEAR(h(b, q), sums[b][q], 1e-5 * scale[b][q] + 1e-30)
          << form << ", " << p.M << " modes, D " << p.D << ", position " << b << ", " << names[q];
}

constexpr int k_max_b = 5;

class StepSums : public ::testing::TestWithParam<int> {};

TEST_P(StepSums, EveryFormGivesTheSumsOfTheDefinition) {
  int const M = GetParam();
  for (int D : {24, 35}) {
    Problem const p(M, D, 100 + 10 * M + D);
    ASSERT_LE(p.B, k_max_b);
    for (bool with_probe : {true, false}) {
      double sums[k_max_b][6], scale[k_max_b][6];
      reference(p, with_probe, sums, scale);
      if (!with_probe) {
        for (int b = 0; b < p.B; ++b) ASSERT_EQ(scale[b][1], 0.0);  // the reference leaves the probe out
      }
      std::string const probe = with_probe ? "with the probe" : "object only";
      ExecSpace const space;

      SumsView out("sums", p.B);
      impl::step_sums<T>(space, p.B, p.P, p.dP, p.S, p.dO, p.dI, p.isolated_from, p.pos, p.idx, p.X, out,
                         with_probe);
      expect_sums(p, out, sums, scale, "step_sums (" + probe + ")");

      if constexpr (is_host_space_v<ExecSpace>) {
        SumsView rows("rows", p.B);
        impl::step_sums_rows<0, T>(space, p.B, p.views(rows, with_probe));
        expect_sums(p, rows, sums, scale, "run-time mode loop (" + probe + ")");
      }
      SumsView teams("teams", p.B);
      impl::step_sums_teams<T>(space, p.B, p.views(teams, with_probe));
      expect_sums(p, teams, sums, scale, "device form (" + probe + ")");
    }
  }
}

// 1-4 compiled, 5 and 6 on the run-time path.
INSTANTIATE_TEST_SUITE_P(Modes, StepSums, ::testing::Values(1, 2, 3, 4, 5, 6),
                         [](::testing::TestParamInfo<int> const& info) {
                           return std::to_string(info.param) + "_modes";
                         });

}  // namespace
