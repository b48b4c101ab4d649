#pragma once
// Exit waves for M incoherent probe modes and the per-patch products used by
// the adjoints:
//   psi(b, m) = P(m) * patch(b)                      (forward)
//   sum_m conj(P(m)) * g(b, m)                       (object adjoint, per patch)
//   sum_b conj(patch(b)) * g(b, m)                   (probe adjoint)

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

/// psi(b, m, i, j) = probe(m, i, j) * patches(b, i, j) for b < B. Non-blocking.
template <class ExecSpace, class T, class Mem>
void exit_waves(ExecSpace const& space, int B, ComplexView3<T, Mem> const& probe,
                ComplexView3<T, Mem> const& patches, ComplexView4<T, Mem> const& psi) {
  int const M = int(probe.extent(0));
  int const D = int(probe.extent(1));
  PTYKO_ASSERT(int(psi.extent(0)) >= B && int(psi.extent(1)) == M && int(psi.extent(2)) == D,
               "exit wave buffer does not fit ", B, " x ", M, " x ", D, " x ", D);
  auto P = probe;
  auto S = patches;
  auto out = psi;
  Kokkos::parallel_for(
      "ptyko::exit_waves", Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(B) * D * D),
      KOKKOS_LAMBDA(std::size_t k) {
        auto const [b, i, j] = frame_index(k, D);
        Complex<T> const s = S(b, i, j);
        for (int m = 0; m < M; ++m) out(b, m, i, j) = P(m, i, j) * s;
      });
}

/// out(b, i, j) = sum_m conj(probe(m, i, j)) * g(b, m, i, j): the per-patch
/// object adjoint of the exit-wave product. Non-blocking.
template <class ExecSpace, class T, class Mem>
void probe_adjoint_product(ExecSpace const& space, int B, ComplexView3<T, Mem> const& probe,
                           ComplexView4<T, Mem> const& g, ComplexView3<T, Mem> const& out) {
  int const M = int(probe.extent(0));
  int const D = int(probe.extent(1));
  auto P = probe;
  auto G = g;
  auto O = out;
  Kokkos::parallel_for(
      "ptyko::probe_adjoint_product",
      Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(B) * D * D),
      KOKKOS_LAMBDA(std::size_t k) {
        auto const [b, i, j] = frame_index(k, D);
        Complex<T> sum(0);
        for (int m = 0; m < M; ++m) sum += math::conj_mul(P(m, i, j), G(b, m, i, j));
        O(b, i, j) = sum;
      });
}

/// out(m, i, j) += sum_{b<B} conj(patches(b, i, j)) * g(b, m, i, j): the probe
/// adjoint of the exit-wave product. One thread per probe pixel loops over the
/// batch, so the sum is deterministic and needs no atomics. Non-blocking.
template <class ExecSpace, class T, class Mem>
void patch_adjoint_product(ExecSpace const& space, int B, ComplexView3<T, Mem> const& patches,
                           ComplexView4<T, Mem> const& g, ComplexView3<T, Mem> const& out) {
  int const M = int(out.extent(0));
  int const D = int(out.extent(1));
  auto S = patches;
  auto G = g;
  auto O = out;
  Kokkos::parallel_for(
      "ptyko::patch_adjoint_product",
      Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(M) * D * D),
      KOKKOS_LAMBDA(std::size_t k) {
        auto const [m, i, j] = frame_index(k, D);  // frame index = probe mode
        Complex<T> sum(0);
        for (int b = 0; b < B; ++b) sum += math::conj_mul(S(b, i, j), G(b, m, i, j));
        O(m, i, j) += sum;
      });
}

}  // namespace ptyko
