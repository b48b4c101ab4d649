// Probe-mode orthogonalisation (orthogonalize_modes): for mode counts that
// take the compiled recombination (1-4) and the run-time one (5, 7), the
// modes come out orthogonal, sorted by power, with the powers returned, the
// recombination V unitary and applied as documented (new mode k = sum_m
// V(m, k) old mode m), and the incoherent sum sum_m |P_m|^2 unchanged.
#include <ptyko/core/probe_modes.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;
using C = std::complex<double>;

C at(HostComplex3 const& p, int m, std::size_t k) {
  auto const v = p.data()[m * p.extent(1) * p.extent(2) + k];
  return {double(v.real()), double(v.imag())};
}

TEST(ProbeModes, OrthogonalSortedUnitaryAndIntensityKept) {
  int const D = 24;
  for (int M : {1, 2, 3, 4, 5, 7}) {
    ComplexView3<double, MemSpace> probe("probe", M, D, D);
    test::fill_random(probe, 40 + M);
    auto const before = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probe);  // device -> host
    HostComplex3 old("old", M, D, D);
    Kokkos::deep_copy(old, before);  // host -> host: the modes before
    std::vector<C> V;
    std::vector<double> const powers = orthogonalize_modes<double>(ExecSpace(), probe, &V);
    auto const after_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probe);  // device -> host
    HostComplex3 after("after", M, D, D);
    Kokkos::deep_copy(after, after_h);  // host -> host
    std::size_t const n = std::size_t(D) * D;
    ASSERT_EQ(int(powers.size()), M);
    ASSERT_EQ(V.size(), std::size_t(M) * M);
    double scale = 0;
    for (std::size_t k = 0; k < n; ++k) scale += std::norm(at(old, 0, k));
    for (int a = 0; a < M; ++a) {
      // Powers: returned, sorted, and those of the new modes.
      double p = 0;
      for (std::size_t k = 0; k < n; ++k) p += std::norm(at(after, a, k));
      EXPECT_NEAR(p, powers[a], 1e-9 * scale) << "M " << M << " mode " << a;
      if (a > 0) EXPECT_GE(powers[a - 1], powers[a]) << "M " << M;
      for (int b = a + 1; b < M; ++b) {  // orthogonal
        C s = 0;
        for (std::size_t k = 0; k < n; ++k) s += std::conj(at(after, a, k)) * at(after, b, k);
        EXPECT_LT(std::abs(s), 1e-9 * scale) << "M " << M << " modes " << a << ", " << b;
      }
      for (int b = 0; b < M; ++b) {  // V unitary: sum_k V(a, k) conj(V(b, k)) = delta
        C s = 0;
        for (int k = 0; k < M; ++k) s += V[a * M + k] * std::conj(V[b * M + k]);
        EXPECT_NEAR(std::abs(s - C(a == b ? 1 : 0)), 0, 1e-12) << "M " << M;
      }
    }
    double worst_mode = 0, worst_intensity = 0;
    for (std::size_t k = 0; k < n; ++k) {
      double i_old = 0, i_new = 0;
      for (int m = 0; m < M; ++m) {
        i_old += std::norm(at(old, m, k));
        i_new += std::norm(at(after, m, k));
        C expected = 0;  // new mode m = sum_j V(j, m) old mode j
        for (int j = 0; j < M; ++j) expected += V[j * M + m] * at(old, j, k);
        worst_mode = std::max(worst_mode, std::abs(expected - at(after, m, k)));
      }
      worst_intensity = std::max(worst_intensity, std::abs(i_new - i_old));
    }
    EXPECT_LT(worst_mode, 1e-12) << "M " << M;
    EXPECT_LT(worst_intensity, 1e-12) << "M " << M;
  }
}

}  // namespace
