#pragma once
// Recombination of incoherent modes: new mode k = sum_m V(m, k) old mode m,
// applied pixel by pixel to a stack of per-mode fields (N, M, D, D). The
// probe's orthogonalisation recombines the probe (one frame) this way, and
// DM its stored exit waves with the same V.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

/// An M x M recombination, V(m, k): the weight of old mode m in new mode k.
template <class T, class Mem>
using ModeMix = Kokkos::View<Complex<T>**, Kokkos::LayoutRight, Mem>;

/// mix_modes for a compiled mode count MC: per pixel every mode in
/// registers, the M x M coefficients in local arrays, one element-wise loop
/// over the columns (7x the chunked run-time loop, docs/performance.md).
template <int MC, class T, class ExecSpace>
void mix_modes_compiled(ExecSpace const& space, ComplexView4<T, typename ExecSpace::memory_space> const& psi,
                        ModeMix<T, typename ExecSpace::memory_space> const& V) {
  int const D = int(psi.extent(2));
  auto X = psi;
  auto mix = V;
  for_each_frame_span(space, "ptyko::mix_modes", int(psi.extent(0)), D,
                      KOKKOS_LAMBDA(int j, int i, int x0, int x1) {
                        Complex<T> v[MC * MC];
                        for (int m = 0; m < MC; ++m)
                          for (int q = 0; q < MC; ++q) v[m * MC + q] = mix(m, q);
                        Complex<T>* row[MC];
                        for (int m = 0; m < MC; ++m) row[m] = &X(j, m, i, 0);
                        for (int k = x0; k < x1; ++k) {
                          Complex<T> old[MC];
                          for (int m = 0; m < MC; ++m) old[m] = row[m][k];
                          for (int q = 0; q < MC; ++q) {
                            Complex<T> sum(0);
                            for (int m = 0; m < MC; ++m) sum += v[m * MC + q] * old[m];
                            row[q][k] = sum;
                          }
                        }
                      });
}

/// psi(j, k) <- sum_m V(m, k) psi(j, m) for every frame j and pixel (at most
/// max_probe_modes modes), in place: the probe modes' recombination applied
/// to a stack of per-mode fields (DM's stored exit waves; a probe as one
/// frame). Compiled mode counts (with_compiled_modes) take
/// mix_modes_compiled; others row spans in chunks of columns: the
/// old values of every mode in a local array, then element-wise loops.
/// Non-blocking.
template <class T, class ExecSpace>
void mix_modes(ExecSpace const& space, ComplexView4<T, typename ExecSpace::memory_space> const& psi,
               ModeMix<T, typename ExecSpace::memory_space> const& V) {
  int const M = int(psi.extent(1)), D = int(psi.extent(2));
  PTYKO_ASSERT(M <= max_probe_modes, "mix_modes: at most ", max_probe_modes, " modes");
  if (M <= max_compiled_modes) {
    with_compiled_modes(M, [&](auto mc) {
      constexpr int MC = decltype(mc)::value;
      if constexpr (MC > 0) mix_modes_compiled<MC, T>(space, psi, V);
    });
    return;
  }
  auto X = psi;
  auto mix = V;
  for_each_frame_span(space, "ptyko::mix_modes", int(psi.extent(0)), D,
                      KOKKOS_LAMBDA(int j, int i, int x0, int x1) {
                        constexpr int chunk = span_chunk_v<ExecSpace>;
                        for (int c0 = x0; c0 < x1; c0 += chunk) {
                          int const n = x1 - c0 < chunk ? x1 - c0 : chunk;
                          Complex<T> old[max_probe_modes][chunk];
                          for (int m = 0; m < M; ++m) {
                            Complex<T> const* row = &X(j, m, i, c0);
                            for (int k = 0; k < n; ++k) old[m][k] = row[k];
                          }
                          for (int q = 0; q < M; ++q) {
                            Complex<T>* row = &X(j, q, i, c0);
                            for (int k = 0; k < n; ++k) row[k] = Complex<T>(0);
                            for (int m = 0; m < M; ++m) {
                              Complex<T> const v = mix(m, q);
                              for (int k = 0; k < n; ++k) row[k] += v * old[m][k];
                            }
                          }
                        }
                      });
}

/// A probe-shaped View (M, D, D) seen as one frame of a stack (1, M, D, D):
/// the same memory.
template <class T, class Mem>
ComplexView4<T, Mem> as_one_frame(ComplexView3<T, Mem> const& v) {
  return ComplexView4<T, Mem>(v.data(), 1, v.extent(0), v.extent(1), v.extent(2));
}

}  // namespace ptyko
