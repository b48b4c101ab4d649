#pragma once
// Helpers shared by the tests: random Views, host inner products, norms.

#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <complex>
#include <cstdint>
#include <random>

namespace ptyko::test {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;

/// Fills a View (any rank, real or Kokkos::complex) with uniform [-1, 1)
/// values from a seeded generator, through a host mirror.
template <class View>
void fill_random(View const& v, std::uint64_t seed) {
  auto h = Kokkos::create_mirror_view(v);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  using V = typename View::non_const_value_type;
  auto* p = h.data();
  for (std::size_t k = 0; k < h.span(); ++k) {
    if constexpr (std::is_arithmetic_v<V>) {
      p[k] = V(u(gen));
    } else {
      using R = typename V::value_type;
      p[k] = V(R(u(gen)), R(u(gen)));
    }
  }
  Kokkos::deep_copy(v, h);
}

/// A new host copy of a View (never an alias, unlike
/// create_mirror_view_and_copy on host memory).
template <class View>
auto host_copy(View const& v) {
  auto h = Kokkos::create_mirror(Kokkos::HostSpace(), v);
  Kokkos::deep_copy(h, v);
  return h;
}

/// <a, b> = sum conj(a) b over all elements, in double precision on the host.
template <class ViewA, class ViewB>
std::complex<double> inner(ViewA const& a, ViewB const& b) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  std::complex<double> s = 0;
  for (std::size_t k = 0; k < ha.span(); ++k) {
    auto x = ha.data()[k];
    auto y = hb.data()[k];
    s += std::conj(std::complex<double>(x.real(), x.imag())) * std::complex<double>(y.real(), y.imag());
  }
  return s;
}

/// Relative mismatch |x - y| / max(|x|, |y|).
inline double rel_diff(std::complex<double> x, std::complex<double> y) {
  double const scale = std::max(std::abs(x), std::abs(y));
  return scale == 0 ? 0 : std::abs(x - y) / scale;
}

template <class T>
constexpr double adjoint_tolerance() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

}  // namespace ptyko::test
