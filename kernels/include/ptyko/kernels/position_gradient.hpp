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
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

/// Per position, its five sums (Ayy, Axx, Axy, by, bx).
template <class Mem>
using PositionSumsView = Kokkos::View<double* [5], Kokkos::LayoutRight, Mem>;

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

/// The five terms of one pixel and mode, added to acc[0], acc[stride], ...
template <class T, class Acc>
KOKKOS_INLINE_FUNCTION void add_shift_terms(Complex<T> const& p, Complex<T> const& gy, Complex<T> const& gx,
                                            Complex<T> const& x, Acc* acc, int stride) {
  Complex<T> const py = p * gy, px = p * gx;
  acc[0 * stride] += Acc(math::norm2(py));
  acc[1 * stride] += Acc(math::norm2(px));
  acc[2 * stride] += Acc(math::conj_mul(py, px).real());
  acc[3 * stride] += Acc(math::conj_mul(py, x).real());
  acc[4 * stride] += Acc(math::conj_mul(px, x).real());
}

/// position_shift_sums on host spaces: one position per work item walking
/// its rows over row pointers, 16 partial sums per quantity (lanes) so that
/// the inner column loop is element-wise and vectorises (as LSQML's step
/// sums); a row sums in T, flushed into double lanes after each row.
template <class ExecSpace, class T, class Mem>
void position_shift_sums_rows(ExecSpace const& space, int B, ComplexView3<T, Mem> const& P,
                              ComplexView3<T, Mem> const& S, ComplexView4<T, Mem> const& X,
                              PositionSumsView<Mem> const& sums, IndexView<Mem> const& idx) {
  int const M = int(P.extent(0)), D = int(P.extent(1));
  Kokkos::parallel_for(
      "ptyko::position_shift_sums", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, B),
      KOKKOS_LAMBDA(int b) {
        constexpr int lanes = 16;
        double acc[5 * lanes] = {};
        for (int i = 0; i < D; ++i) {
          T row[5 * lanes] = {};
          int const lo = i > 0 ? i - 1 : i, hi = i < D - 1 ? i + 1 : i;
          T const sy = T(1.0 / double(hi - lo));
          Complex<T> const* s = &S(b, i, 0);
          Complex<T> const* up = &S(b, lo, 0);
          Complex<T> const* down = &S(b, hi, 0);
          for (int c0 = 0; c0 < D; c0 += lanes) {
            int const n = D - c0 < lanes ? D - c0 : lanes;
            Complex<T> gy[lanes], gx[lanes];
            for (int k = 0; k < n; ++k) {
              int const j = c0 + k;
              int const l = j > 0 ? j - 1 : j, r = j < D - 1 ? j + 1 : j;
              gy[k] = (down[j] - up[j]) * sy;
              gx[k] = (s[r] - s[l]) * T(1.0 / double(r - l));
            }
            for (int m = 0; m < M; ++m) {
              Complex<T> const* p = &P(m, i, c0);
              Complex<T> const* x = &X(b, m, i, c0);
              for (int k = 0; k < n; ++k) add_shift_terms(p[k], gy[k], gx[k], x[k], row + k, lanes);
            }
          }
          for (int q = 0; q < 5 * lanes; ++q) acc[q] += double(row[q]);
        }
        for (int q = 0; q < 5; ++q) {
          double t = 0;
          for (int k = 0; k < lanes; ++k) t += acc[q * lanes + k];
          sums(idx(b), q) = t;
        }
      });
}

/// out(idx(b), 0..4) = the sums above for positions b < B (idx: their
/// local frames), from the probe (M, D, D), the patches S_b O (B, D, D) and
/// the exit-wave updates delta (B, M, D, D). Devices: one team per
/// position; hosts: position_shift_sums_rows. Non-blocking.
template <class ExecSpace, class T, class Mem>
void position_shift_sums(ExecSpace const& space, int B, ComplexView3<T, Mem> const& probe,
                         ComplexView3<T, Mem> const& patches, ComplexView4<T, Mem> const& delta,
                         PositionSumsView<Mem> const& out, IndexView<Mem> const& idx) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  PTYKO_ASSERT(int(patches.extent(0)) >= B && int(delta.extent(0)) >= B && int(idx.extent(0)) >= B &&
                   int(delta.extent(1)) == M,
               "position_shift_sums: buffers do not fit ", B, " positions of ", M, " modes");
  if constexpr (is_host_space_v<ExecSpace>) {
    position_shift_sums_rows(space, B, probe, patches, delta, out, idx);
  } else {
    auto P = probe;
    auto S = patches;
    auto X = delta;
    auto sums = out;
    auto index = idx;
    Kokkos::parallel_for(
        "ptyko::position_shift_sums", Policy(space, B, Kokkos::AUTO), KOKKOS_LAMBDA(Member const& team) {
          int const b = team.league_rank();
          PositionShiftSums total;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, D * D),
              [&](int k, PositionShiftSums& acc) {
                int const i = k / D, j = k % D;
                Complex<T> const gy = patch_slope(S, b, i, j, D, 0), gx = patch_slope(S, b, i, j, D, 1);
                for (int m = 0; m < M; ++m) add_shift_terms(P(m, i, j), gy, gx, X(b, m, i, j), acc.v, 1);
              },
              Kokkos::Sum<PositionShiftSums>(total));
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            for (int q = 0; q < 5; ++q) sums(index(b), q) = total.v[q];
          });
        });
  }
}

}  // namespace ptyko
