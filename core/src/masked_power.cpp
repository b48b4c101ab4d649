#include <ptyko/core/masked_power.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>

namespace ptyko {

template <class T, class ExecSpace>
MaskedPower<T, ExecSpace>::MaskedPower(ExecSpace const& space, int modes, int D)
    : m_fft(space, modes, D, D),
      m_far(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::MaskedPower::far"), modes, D, D) {}

template <class T, class ExecSpace>
double MaskedPower<T, ExecSpace>::fraction(ExecSpace const& space, ComplexView3<T, Mem> const& probe,
                                           MaskView<Mem> const& mask) {
  if (mask.extent(0) == 0) return 0;
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  PTYKO_ASSERT(M <= int(m_far.extent(0)) && D == int(m_far.extent(1)), "MaskedPower: a probe of ", M, " modes of ",
               D, " x ", D, " for buffers of ", m_far.extent(0), " of ", m_far.extent(1));
  auto const far = Kokkos::subview(m_far, std::make_pair(0, M), Kokkos::ALL, Kokkos::ALL);
  m_fft.forward(space, probe, far);  // the probe is centred in real space: a phase ramp, not in |F P|^2
  // (unmeasured, all) in one complex sum.
  Kokkos::complex<double> sums(0);
  Kokkos::parallel_reduce(
      "ptyko::MaskedPower::fraction", Kokkos::RangePolicy<ExecSpace>(space, 0, D * D),
      KOKKOS_LAMBDA(int k, Kokkos::complex<double>& acc) {
        int const i = k / D, j = k % D;
        double s = 0;
        for (int m = 0; m < M; ++m) s += double(math::norm2(far(m, i, j)));
        acc += Kokkos::complex<double>(mask(i, j) ? 0.0 : s, s);
      },
      sums);
  return sums.imag() > 0 ? sums.real() / sums.imag() : 0;
}

double probe_power_for_counts(double measured_counts, double masked_fraction) {
  return measured_counts / (1 - std::clamp(masked_fraction, 0.0, 0.999));
}

void fill_unmeasured(std::vector<double>& pattern, std::vector<std::uint8_t> const& mask, int D) {
  if (mask.empty()) return;
  PTYKO_ASSERT(pattern.size() == std::size_t(D) * D && mask.size() == pattern.size(), "fill_unmeasured: sizes");
  std::vector<std::size_t> holes;
  for (std::size_t k = 0; k < mask.size(); ++k)
    if (!mask[k]) holes.push_back(k);
  if (holes.empty() || holes.size() == mask.size()) return;
  double peak = 0;
  for (double v : pattern) peak = std::max(peak, std::abs(v));
  for (std::size_t k : holes) pattern[k] = 0;
  // Gauss-Seidel with over-relaxation on the discrete Laplace equation,
  // the measured pixels held: converges in O(hole width) sweeps.
  double const omega = 1.9;
  for (int sweep = 0; sweep < 20000; ++sweep) {
    double change = 0;
    for (std::size_t k : holes) {
      int const y = int(k / std::size_t(D)), x = int(k % std::size_t(D));
      auto at = [&](int yy, int xx) { return pattern[std::size_t((yy + D) % D) * D + std::size_t((xx + D) % D)]; };
      double const mean = 0.25 * (at(y - 1, x) + at(y + 1, x) + at(y, x - 1) + at(y, x + 1));
      double const step = omega * (mean - pattern[k]);
      pattern[k] += step;
      change = std::max(change, std::abs(step));
    }
    if (change <= 1e-9 * peak) break;
  }
}

template class MaskedPower<float, Kokkos::DefaultExecutionSpace>;
template class MaskedPower<double, Kokkos::DefaultExecutionSpace>;

}  // namespace ptyko
