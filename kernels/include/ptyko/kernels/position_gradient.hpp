#pragma once
// The per-position sums of position refinement (Odstrcil et al. 2018,
// Opt. Express 26, 3108, section 3.3; tike's and PtychoShelves' "position
// correction"): moving position r_b by (dy, dx) changes its exit waves by
//   P_m * S_{r + d} O - P_m * S_r O ~ dy P_m G_y + dx P_m G_x,
// with G = the object's slope along y and x at the patch. The move that
// best explains the exit-wave update delta_bm (the direction the Fourier
// constraint asks for) solves the 2 x 2 least-squares system
//   [Ayy Axy; Axy Axx] [dy; dx] = [by; bx],
//   Ayy = sum |P G_y|^2, Axx = sum |P G_x|^2, Axy = sum Re conj(P G_y) P G_x,
//   by = sum Re conj(P G_y) delta,  bx = sum Re conj(P G_x) delta,
// summed over modes and pixels. The slope is the central difference of the
// patch (S O, already sampled at the sub-pixel position), one-sided on its
// edge rows and columns.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

/// The five sums of one position (Ayy, Axx, Axy, by, bx).
struct PositionShiftSums {
  double v[5];
  KOKKOS_INLINE_FUNCTION PositionShiftSums() {
    for (int k = 0; k < 5; ++k) v[k] = 0;
  }
  KOKKOS_INLINE_FUNCTION PositionShiftSums& operator+=(PositionShiftSums const& o) {
    for (int k = 0; k < 5; ++k) v[k] += o.v[k];
    return *this;
  }
};

}  // namespace ptyko

namespace Kokkos {
template <>
struct reduction_identity<ptyko::PositionShiftSums> {
  KOKKOS_FORCEINLINE_FUNCTION static ptyko::PositionShiftSums sum() { return ptyko::PositionShiftSums(); }
};
}  // namespace Kokkos

namespace ptyko {

/// The slope of a D x D patch at (i, j) along rows (axis 0) or columns
/// (axis 1): central difference inside, one-sided on the edges.
template <class T, class Mem>
KOKKOS_INLINE_FUNCTION Complex<T> patch_slope(ComplexView3<T, Mem> const& S, int b, int i, int j, int D, int axis) {
  int const k = axis == 0 ? i : j;
  int const lo = k > 0 ? k - 1 : k, hi = k < D - 1 ? k + 1 : k;
  Complex<T> const a = axis == 0 ? S(b, hi, j) : S(b, i, hi);
  Complex<T> const z = axis == 0 ? S(b, lo, j) : S(b, i, lo);
  return (a - z) * T(1.0 / double(hi - lo));
}

/// out(first + b, 0..4) = the sums above for positions b < B, from the
/// probe (M, D, D), the patches S_b O (B, D, D) and the exit-wave updates
/// delta (B, M, D, D). One team per position. Non-blocking.
template <class ExecSpace, class T, class Mem>
void position_shift_sums(ExecSpace const& space, int B, ComplexView3<T, Mem> const& probe,
                         ComplexView3<T, Mem> const& patches, ComplexView4<T, Mem> const& delta,
                         Kokkos::View<double* [5], Kokkos::LayoutRight, Mem> const& out, int first = 0) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  PTYKO_ASSERT(int(patches.extent(0)) >= B && int(delta.extent(0)) >= B && int(out.extent(0)) >= first + B &&
                   int(delta.extent(1)) == M,
               "position_shift_sums: buffers do not fit ", B, " positions of ", M, " modes");
  auto P = probe;
  auto S = patches;
  auto X = delta;
  auto sums = out;
  Kokkos::parallel_for(
      "ptyko::position_shift_sums", Policy(space, B, Kokkos::AUTO), KOKKOS_LAMBDA(Member const& team) {
        int const b = team.league_rank();
        PositionShiftSums total;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, D * D),
            [&](int k, PositionShiftSums& acc) {
              int const i = k / D, j = k % D;
              Complex<T> const gy = patch_slope(S, b, i, j, D, 0), gx = patch_slope(S, b, i, j, D, 1);
              for (int m = 0; m < M; ++m) {
                Complex<T> const p = P(m, i, j);
                Complex<T> const py = p * gy, px = p * gx, x = X(b, m, i, j);
                acc.v[0] += double(math::norm2(py));
                acc.v[1] += double(math::norm2(px));
                acc.v[2] += double(math::conj_mul(py, px).real());
                acc.v[3] += double(math::conj_mul(py, x).real());
                acc.v[4] += double(math::conj_mul(px, x).real());
              }
            },
            Kokkos::Sum<PositionShiftSums>(total));
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          for (int q = 0; q < 5; ++q) sums(first + b, q) = total.v[q];
        });
      });
}

}  // namespace ptyko
