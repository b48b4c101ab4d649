#include <ptyko/core/fftshift.hpp>
#include <ptyko/core/hermitian_eigen.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/modes.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>

namespace ptyko {
namespace {

using HostExec = Kokkos::DefaultHostExecutionSpace;
using cplx = std::complex<double>;

// A smooth random real field (D x D, unit RMS): white noise low-passed by a
// Gaussian of width `sigma` pixels in Fourier space (periodic).
std::vector<double> smooth_random_field(int D, double sigma, std::mt19937_64& rng) {
  std::normal_distribution<double> g(0, 1);
  HostExec space;
  ComplexView3<double, Kokkos::HostSpace> f("ptyko::probe::noise", 1, D, D);
  for (std::size_t k = 0; k < f.span(); ++k) f.data()[k] = g(rng);
  BatchedFFT2D<double, HostExec> fft(space, 1, D, D);
  fft.forward(space, f, f);
  for (int y = 0; y < D; ++y)
    for (int x = 0; x < D; ++x) {
      double const ky = signed_frequency(y, D), kx = signed_frequency(x, D);
      // frequency cut-off D / (2 pi sigma)
      double const s = 2 * M_PI * sigma / D;
      f(0, y, x) *= std::exp(-0.5 * (ky * ky + kx * kx) * s * s);
    }
  fft.inverse(space, f, f);
  std::vector<double> out(std::size_t(D) * D);
  double rms = 0;
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k] = f.data()[k].real();
    rms += out[k] * out[k];
  }
  rms = std::sqrt(rms / double(out.size()));
  for (auto& v : out) v /= rms > 0 ? rms : 1;
  return out;
}

// Orthogonalises host modes (Gram-Schmidt in order) and scales the total
// power to `power`.
void orthonormalise_and_scale(HostComplex3 const& p, double power) {
  int const M = int(p.extent(0));
  std::size_t const n = p.extent(1) * p.extent(2);
  for (int m = 0; m < M; ++m) {
    Complex<double>* pm = &p(m, 0, 0);
    for (int k = 0; k < m; ++k) {
      Complex<double> const* pk = &p(k, 0, 0);
      Complex<double> num = 0;
      double den = 0;
      for (std::size_t i = 0; i < n; ++i) {
        num += Kokkos::conj(pk[i]) * pm[i];
        den += Kokkos::abs(pk[i]) * Kokkos::abs(pk[i]);
      }
      if (den > 0)
        for (std::size_t i = 0; i < n; ++i) pm[i] -= (num / den) * pk[i];
    }
  }
  double total = 0;
  for (std::size_t i = 0; i < p.span(); ++i) total += Kokkos::abs(p.data()[i]) * Kokkos::abs(p.data()[i]);
  PTYKO_REQUIRE(total > 0, "the initial probe is zero everywhere: the data hold no counts");
  double const f = std::sqrt(power / total);
  for (std::size_t i = 0; i < p.span(); ++i) p.data()[i] *= f;
}

// Fills modes 1.. of `p` from mode 0 times smooth random complex fields, at
// 5 % of mode 0's power each.
void add_perturbed_modes(HostComplex3 const& p, int first, std::mt19937_64& rng) {
  int const M = int(p.extent(0)), D = int(p.extent(1));
  double p0 = 0;
  for (int y = 0; y < D; ++y)
    for (int x = 0; x < D; ++x) p0 += Kokkos::abs(p(0, y, x)) * Kokkos::abs(p(0, y, x));
  for (int m = first; m < M; ++m) {
    auto re = smooth_random_field(D, D / 8.0, rng);
    auto im = smooth_random_field(D, D / 8.0, rng);
    double pm = 0;
    for (int y = 0; y < D; ++y)
      for (int x = 0; x < D; ++x) {
        std::size_t const k = std::size_t(y) * D + x;
        p(m, y, x) = p(0, y, x) * Complex<double>(re[k], im[k]);
        pm += Kokkos::abs(p(m, y, x)) * Kokkos::abs(p(m, y, x));
      }
    double const f = pm > 0 ? std::sqrt(0.05 * p0 / pm) : 0;
    for (int y = 0; y < D; ++y)
      for (int x = 0; x < D; ++x) p(m, y, x) *= f;
  }
}

}  // namespace

namespace {

// One back-propagation of amplitude `amp` (corner-centred far field) with a
// defocus phase pi c |k|^2 plus `noise` (radians), centred in real space.
void back_propagate(std::vector<double> const& amp, std::vector<double> const& noise, double c, int D,
                    Complex<double>* out) {
  HostExec space;
  ComplexView3<double, Kokkos::HostSpace> far("ptyko::probe::far", 1, D, D);
  for (int y = 0; y < D; ++y)
    for (int x = 0; x < D; ++x) {
      std::size_t const k = std::size_t(y) * D + x;
      double const ky = signed_frequency(y, D), kx = signed_frequency(x, D);
      double const phase = M_PI * c * (ky * ky + kx * kx) + noise[k];
      far.data()[k] = Complex<double>(amp[k] * std::cos(phase), amp[k] * std::sin(phase));
    }
  BatchedFFT2D<double, HostExec> fft(space, 1, D, D);
  fft.inverse(space, far, far);
  // Back-propagation puts the probe centre at pixel (0, 0); ptyko's probe
  // centre is (D/2, D/2).
  fftshift2(far.data(), out, D, D);
}

// Radius (frequency bins) of the centred disc holding 90 % of the pattern.
double pattern_radius(std::vector<double> const& pattern_corner, int D) {
  std::vector<std::pair<double, double>> rp;
  double total = 0;
  for (int y = 0; y < D; ++y)
    for (int x = 0; x < D; ++x) {
      double const ky = signed_frequency(y, D), kx = signed_frequency(x, D);
      double const v = std::max(pattern_corner[std::size_t(y) * D + x], 0.0);
      rp.emplace_back(std::hypot(ky, kx), v);
      total += v;
    }
  std::sort(rp.begin(), rp.end());
  double acc = 0;
  for (auto const& [r, v] : rp)
    if ((acc += v) >= 0.9 * total) return std::max(r, 1.0);
  return D / 2.0;
}

}  // namespace

HostComplex3 initial_probe_from_pattern(std::vector<double> const& mean_corner, int D, int modes,
                                        std::uint64_t seed, double power, double diameter, ProbeFocus focus) {
  PTYKO_ASSERT(mean_corner.size() == std::size_t(D) * D, "mean pattern is not ", D, " x ", D);
  PTYKO_ASSERT(focus != ProbeFocus::automatic, "initial_probe_from_pattern: choose a side of the focus first");
  std::mt19937_64 rng(seed ^ 0x70726f6265ULL);
  std::vector<double> amp(mean_corner.size());
  for (std::size_t k = 0; k < amp.size(); ++k) amp[k] = std::sqrt(std::max(mean_corner[k], 0.0));
  auto noise = smooth_random_field(D, D / 16.0, rng);  // ~1 rad: breaks the symmetry of a flat phase
  HostComplex3 probe("ptyko::probe::initial", modes, D, D);
  diameter = std::clamp(diameter, 4.0, 0.6 * D);
  // A ray at frequency k lands at -D c k pixels, so the defocus c spreads the
  // probe over a diameter of about 2 D c k_r; two corrections on the
  // measured diameter absorb what the ray picture misses.
  // Upstream of the focus (a converging beam) the defocus phase is +pi c k^2,
  // downstream -pi c k^2 (docs/conventions.md): the twins.
  double c = (focus == ProbeFocus::downstream ? -1 : 1) * diameter / (2.0 * D * pattern_radius(mean_corner, D));
  for (int pass = 0; pass < 3; ++pass) {
    back_propagate(amp, noise, c, D, &probe(0, 0, 0));
    auto first = Kokkos::subview(probe, std::make_pair(0, 1), Kokkos::ALL, Kokkos::ALL);
    HostComplex3 mode0("ptyko::probe::mode0", 1, D, D);
    Kokkos::deep_copy(mode0, first);
    double const measured = probe_diameter_px(mode0);
    if (measured > 0) c *= diameter / measured;
  }
  back_propagate(amp, noise, c, D, &probe(0, 0, 0));
  add_perturbed_modes(probe, 1, rng);
  orthonormalise_and_scale(probe, power);
  return probe;
}

ProbeFocus parse_probe_focus(std::string const& name) {
  if (name == "auto") return ProbeFocus::automatic;
  if (name == "upstream") return ProbeFocus::upstream;
  if (name == "downstream") return ProbeFocus::downstream;
  throw UserError("--probe-focus '" + name + "' is not a side of the focus: use auto, upstream or downstream");
}

std::string to_string(ProbeFocus focus) {
  switch (focus) {
    case ProbeFocus::upstream: return "upstream";
    case ProbeFocus::downstream: return "downstream";
    default: return "auto";
  }
}

double default_probe_diameter(double typical_step_px, int D) {
  double const d = typical_step_px / (1 - 0.7);
  return std::isfinite(d) && d > 0 ? std::clamp(d, 4.0, 0.6 * D) : D / 3.0;
}

HostComplex3 initial_probe_from_guess(HostComplex3 const& guess, int modes, std::uint64_t seed,
                                      double power) {
  int const D = int(guess.extent(1)), given = int(guess.extent(0));
  PTYKO_REQUIRE(given >= 1, "the probe guess has no modes");
  std::mt19937_64 rng(seed ^ 0x6775657373ULL);
  HostComplex3 probe("ptyko::probe::initial", modes, D, guess.extent(2));
  int const keep = std::min(modes, given);
  for (int m = 0; m < keep; ++m)
    for (int y = 0; y < D; ++y)
      for (std::size_t x = 0; x < guess.extent(2); ++x) probe(m, y, x) = guess(m, y, x);
  add_perturbed_modes(probe, keep, rng);
  orthonormalise_and_scale(probe, power);
  return probe;
}

template <class T, class ExecSpace>
std::vector<double> mode_powers(ExecSpace const& space,
                                ComplexView3<T, typename ExecSpace::memory_space> const& probe) {
  int const M = int(probe.extent(0));
  std::size_t const n = probe.extent(1) * probe.extent(2);
  std::vector<double> out(M);
  for (int m = 0; m < M; ++m) {
    Complex<T> const* p = probe.data() + m * n;
    double s = 0;
    Kokkos::parallel_reduce(
        "ptyko::mode_powers", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
        KOKKOS_LAMBDA(std::size_t k, double& acc) { acc += double(math::norm2(p[k])); }, s);
    out[m] = s;
  }
  return out;
}

template <class T, class ExecSpace>
std::vector<double> orthogonalize_modes(ExecSpace const& space,
                                        ComplexView3<T, typename ExecSpace::memory_space> const& probe,
                                        std::vector<std::complex<double>>* recombination,
                                        ComplexView2<T, typename ExecSpace::memory_space> mix) {
  using Mem = typename ExecSpace::memory_space;
  int const M = int(probe.extent(0));
  if (recombination) recombination->assign(std::size_t(M) * M, 0.0);
  if (M == 1) {
    if (recombination) (*recombination)[0] = 1.0;
    return mode_powers<T>(space, probe);
  }
  // G(a, b) = <P_a, P_b> = sum_k conj(P_a[k]) P_b[k], in double. (KokkosBlas
  // gemm did this in 19 ms per call with a Kokkos Kernels 4 OpenMP build,
  // its generic kernel on a 2 x 16384 by 16384 x 2 product: ours is M(M+1)/2
  // plain reductions, ~0.1 ms.)
  std::size_t const n = probe.extent(1) * probe.extent(2);
  auto const* p = probe.data();
  std::vector<std::complex<double>> G(std::size_t(M) * M);
  for (int a = 0; a < M; ++a)
    for (int b = a; b < M; ++b) {
      Kokkos::complex<double> s(0);
      Kokkos::parallel_reduce(
          "ptyko::orthogonalize_modes::gram", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
          KOKKOS_LAMBDA(std::size_t k, Kokkos::complex<double>& acc) {
            Complex<T> const x = p[a * n + k], y = p[b * n + k];
            acc += Kokkos::complex<double>(double(x.real()), -double(x.imag())) *
                   Kokkos::complex<double>(double(y.real()), double(y.imag()));
          },
          s);
      G[std::size_t(a) * M + b] = {s.real(), s.imag()};
      G[std::size_t(b) * M + a] = {s.real(), -s.imag()};
    }
  HermitianEigen eig = hermitian_eigen(G, M);
  if (recombination) *recombination = eig.vectors;
  // New mode k = sum_m V(m, k) P_m, in place.
  if (mix.extent(0) == 0)
    mix = ModeMix<T, Mem>(Kokkos::view_alloc(space, "ptyko::orthogonalize_modes::vectors"), M, M);
  PTYKO_REQUIRE(int(mix.extent(0)) == M && int(mix.extent(1)) == M, "ptyko::orthogonalize_modes: the mix buffer is ",
                mix.extent(0), "x", mix.extent(1), ", not ", M, "x", M);
  // Staged in host memory that is not a View, so that no call allocates one.
  std::vector<Complex<T>> staged(std::size_t(M) * M);
  for (std::size_t k = 0; k < staged.size(); ++k)
    staged[k] = Complex<T>(T(eig.vectors[k].real()), T(eig.vectors[k].imag()));
  Kokkos::View<Complex<T>**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> const
      h_V(staged.data(), M, M);
  Kokkos::deep_copy(space, mix, h_V);  // host -> device: eigenvectors
  mix_modes<T>(space, as_one_frame(probe), mix);
  fence(space, "ptyko::orthogonalize_modes");
  return eig.values;
}

template <class T, class ExecSpace>
void apply_probe_support(ExecSpace const& space,
                         ComplexView3<T, typename ExecSpace::memory_space> const& probe, double radius) {
  int const M = int(probe.extent(0)), D = int(probe.extent(1)), Dx = int(probe.extent(2));
  T const r0 = T(radius), width = T(std::max(1.0, 0.05 * radius));
  auto P = probe;
  Kokkos::parallel_for(
      "ptyko::apply_probe_support", Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(D) * Dx),
      KOKKOS_LAMBDA(std::size_t k) {
        int const i = int(k / Dx), j = int(k % Dx);
        T const dy = T(i - D / 2), dx = T(j - Dx / 2);
        T const r = math::sqrt(dy * dy + dx * dx);
        // raised-cosine edge of `width` pixels outside r0
        T w = 1;
        if (r > r0 + width) w = 0;
        else if (r > r0) w = T(0.5) * (T(1) + math::cos(T(3.14159265358979) * (r - r0) / width));
        for (int m = 0; m < M; ++m) P(m, i, j) *= w;
      });
}

#define PTYKO_INSTANTIATE(T)                                                                       \
  template std::vector<double> orthogonalize_modes<T, Kokkos::DefaultExecutionSpace>(             \
      Kokkos::DefaultExecutionSpace const&, ComplexView3<T, Kokkos::DefaultExecutionSpace::memory_space> const&, \
      std::vector<std::complex<double>>*, ComplexView2<T, Kokkos::DefaultExecutionSpace::memory_space>);         \
  template std::vector<double> mode_powers<T, Kokkos::DefaultExecutionSpace>(                     \
      Kokkos::DefaultExecutionSpace const&, ComplexView3<T, Kokkos::DefaultExecutionSpace::memory_space> const&); \
  template void apply_probe_support<T, Kokkos::DefaultExecutionSpace>(                            \
      Kokkos::DefaultExecutionSpace const&, ComplexView3<T, Kokkos::DefaultExecutionSpace::memory_space> const&, double);
PTYKO_INSTANTIATE(float)
PTYKO_INSTANTIATE(double)
#undef PTYKO_INSTANTIATE

}  // namespace ptyko
