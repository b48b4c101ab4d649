#pragma once
// Exit waves for M incoherent probe modes and the per-patch products used by
// the adjoints:
//   psi(b, m) = P(m) * patch(b)                      (forward)
//   sum_m conj(P(m)) * g(b, m)                       (object adjoint, per patch)
//   sum_b conj(patch(b)) * g(b, m)                   (probe adjoint)

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_loop.hpp>
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
  for_each_frame_span(space, "ptyko::exit_waves", B, D, KOKKOS_LAMBDA(int b, int i, int j0, int j1) {
        Complex<T> const* s = &S(b, i, 0);
        for (int m = 0; m < M; ++m) {
          Complex<T> const* p = &P(m, i, 0);
          Complex<T>* o = &out(b, m, i, 0);
          for (int j = j0; j < j1; ++j) o[j] = p[j] * s[j];
        }
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
  for_each_frame_span(space, "ptyko::extract_exit_waves", B, D, KOKKOS_LAMBDA(int b, int i, int j0, int j1) {
        int const n = idx(b);
        PatchCorner<T> const c(pos(n, 0), pos(n, 1), D);
        T* s = as_pairs(&S(b, i, 0));
        sample_patch_row(obj, c, D, i, j0, j1, s);
        for (int m = 0; m < M; ++m) {
          T const* p = as_pairs(&P(m, i, 0));
          T* o = as_pairs(&out(b, m, i, 0));
          PTYKO_INDEPENDENT_ITERATIONS
          for (int j = j0; j < j1; ++j) set_pair(o, j, scale * pair_product(p, s, j));
        }
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
  for_each_frame_span(space, "ptyko::probe_adjoint_product", B, D, KOKKOS_LAMBDA(int b, int i, int j0, int j1) {
        Complex<T>* o = &O(b, i, 0);
        for (int j = j0; j < j1; ++j) o[j] = Complex<T>(0);
        for (int m = 0; m < M; ++m) {
          Complex<T> const* p = &P(m, i, 0);
          Complex<T> const* g = &G(b, m, i, 0);
          for (int j = j0; j < j1; ++j) o[j] += math::conj_mul(p[j], g[j]);
        }
      });
}

/// out(m, i, j) += sum_{b<B} conj(patches(b, i, j)) * g(b, m, i, j): the probe
/// adjoint of the exit-wave product. One work item per probe pixel (host: per
/// probe row) loops over the batch, so the sum is deterministic and needs no
/// atomics. Non-blocking.
template <class ExecSpace, class T, class Mem>
void patch_adjoint_product(ExecSpace const& space, int B, ComplexView3<T, Mem> const& patches,
                           ComplexView4<T, Mem> const& g, ComplexView3<T, Mem> const& out) {
  int const M = int(out.extent(0));
  int const D = int(out.extent(1));
  auto S = patches;
  auto G = g;
  auto O = out;
  for_each_frame_span(space, "ptyko::patch_adjoint_product", M, D, KOKKOS_LAMBDA(int m, int i, int j0, int j1) {
        Complex<T>* o = &O(m, i, 0);
        for (int b = 0; b < B; ++b) {
          Complex<T> const* s = &S(b, i, 0);
          Complex<T> const* g = &G(b, m, i, 0);
          for (int j = j0; j < j1; ++j) o[j] += math::conj_mul(s[j], g[j]);
        }
      });
}

}  // namespace ptyko
