#pragma once
// Exit waves for M incoherent probe modes and the per-patch products used by
// the adjoints:
//   psi(b, m) = P(m) * patch(b)                      (forward)
//   sum_m conj(P(m)) * g(b, m)                       (object adjoint, per patch)
//   sum_b conj(patch(b)) * g(b, m)                   (probe adjoint)

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/patch.hpp>
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
      "ptyko::exit_waves", frame_policy(space, B, D),
      KOKKOS_LAMBDA(int b, int i, int j) {
        Complex<T> const s = S(b, i, j);
        for (int m = 0; m < M; ++m) out(b, m, i, j) = P(m, i, j) * s;
      });
}

/// The fused forward step of a batch: patches(b) = S_{indices(b)} object
/// (bilinear, kept for the adjoints) and psi(b, m) = scale * probe(m) *
/// patches(b), in one pass (one read of the object, no re-read of the
/// patches). `scale` = 1/sqrt(D^2) turns an unnormalised FFT that follows
/// into the orthonormal one. Non-blocking.
template <class ExecSpace, class T, class Mem>
void extract_exit_waves(ExecSpace const& space, ComplexView2<T, Mem> const& object,
                        PositionView<T, Mem> const& positions, IndexView<Mem> const& indices,
                        ComplexView3<T, Mem> const& probe, ComplexView3<T, Mem> const& patches,
                        ComplexView4<T, Mem> const& psi, T scale = T(1)) {
  int const B = int(indices.extent(0));
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  PTYKO_ASSERT(int(psi.extent(0)) >= B && int(psi.extent(1)) == M && int(patches.extent(0)) >= B,
               "exit wave buffers do not fit ", B, " x ", M, " x ", D, " x ", D);
  auto obj = object;
  auto pos = positions;
  auto idx = indices;
  auto P = probe;
  auto S = patches;
  auto out = psi;
  Kokkos::parallel_for(
      "ptyko::extract_exit_waves", frame_policy(space, B, D),
      KOKKOS_LAMBDA(int b, int i, int j) {
        int const n = idx(b);
        Complex<T> const s = PatchCorner<T>(pos(n, 0), pos(n, 1), D).sample(obj, i, j);
        S(b, i, j) = s;
        Complex<T> const ss = scale * s;
        for (int m = 0; m < M; ++m) out(b, m, i, j) = P(m, i, j) * ss;
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
      frame_policy(space, B, D),
      KOKKOS_LAMBDA(int b, int i, int j) {
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
      frame_policy(space, M, D),
      KOKKOS_LAMBDA(int m, int i, int j) {
        Complex<T> sum(0);
        for (int b = 0; b < B; ++b) sum += math::conj_mul(S(b, i, j), G(b, m, i, j));
        O(m, i, j) += sum;
      });
}

}  // namespace ptyko
