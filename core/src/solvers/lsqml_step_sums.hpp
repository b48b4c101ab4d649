#pragma once
// LSQML's per-position step sums (lsqml.cpp, step 3): the six sums of the
// 2 x 2 least-squares system for the object's and the probe's step sizes,
// in a device form (a team reduction per position) and a host form (rows
// walked with lane-wise partial sums; mode counts 1-4 compiled). Its own
// header so that tstStepSums can check every form against a plain sum.

#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/patch.hpp>
#include <ptyko/kernels/types.hpp>

namespace ptyko::impl {

/// The six per-position sums of the step-size system.
struct StepSums {
  double v[6];  // A1, A4, Re A2, Im A2, b1, b2
  KOKKOS_INLINE_FUNCTION StepSums() {
    for (int k = 0; k < 6; ++k) v[k] = 0;
  }
  KOKKOS_INLINE_FUNCTION StepSums& operator+=(StepSums const& o) {
    for (int k = 0; k < 6; ++k) v[k] += o.v[k];
    return *this;
  }
};

}  // namespace ptyko::impl

namespace Kokkos {
template <>
struct reduction_identity<ptyko::impl::StepSums> {
  KOKKOS_FORCEINLINE_FUNCTION static ptyko::impl::StepSums sum() { return ptyko::impl::StepSums(); }
};
}  // namespace Kokkos

namespace ptyko::impl {

/// The six sums of one pixel and mode, added to acc[0], acc[stride], ...,
/// acc[5 stride] (Acc: double, or T for short partial sums).
template <class T, class Acc>
KOKKOS_INLINE_FUNCTION void add_step_terms(Complex<T> const& dop, Complex<T> const& dpo, Complex<T> const& x,
                                           Acc* acc, int stride) {
  Complex<T> const a2 = math::conj_mul(dop, dpo);
  acc[0 * stride] += Acc(math::norm2(dop));
  acc[1 * stride] += Acc(math::norm2(dpo));
  acc[2 * stride] += Acc(a2.real());
  acc[3 * stride] += Acc(a2.imag());
  acc[4 * stride] += Acc(math::conj_mul(dop, x).real());
  acc[5 * stride] += Acc(math::conj_mul(dpo, x).real());
}

/// The Views step_sums reads and writes (captured whole by its kernels).
template <class T, class Mem>
struct StepSumsViews {
  ComplexView3<T, Mem> P, dP;  ///< probe and its direction (M, D, D)
  ComplexView3<T, Mem> S;      ///< S_b O (B, D, D)
  ComplexView2<T, Mem> dO;     ///< the object's direction D_O: S_b D_O is sampled where it is used
  ComplexView3<T, Mem> dI;     ///< D_O on the footprints of the isolated positions b >= isolated_from
  int isolated_from;           ///< (isolated_directions: b's footprint row u is dI(b - isolated_from, u, .))
  PositionView<T, Mem> pos;    ///< positions (pixels)
  IndexView<Mem> idx;          ///< position of each b
  ComplexView4<T, Mem> X;      ///< chi (B, M, D, D)
  Kokkos::View<double* [6], Kokkos::LayoutRight, Mem> out;
  bool with_probe;

  KOKKOS_INLINE_FUNCTION PatchCorner<T> corner(int b) const {
    int const n = idx(b);
    return PatchCorner<T>(pos(n, 0), pos(n, 1), int(P.extent(1)));
  }
  /// The row of D_O that S_b D_O's row i interpolates with the next one,
  /// at column c.x: in the object, or in b's own footprint-shaped direction.
  KOKKOS_INLINE_FUNCTION Complex<T> const* dir_row(int b, PatchCorner<T> const& c, int i) const {
    return b < isolated_from ? &dO(c.y + i, c.x) : &dI(b - isolated_from, i, 0);
  }
};

/// step_sums on device spaces: one team per position, a team reduction over
/// its pixels.
template <class T, class ExecSpace>
void step_sums_teams(ExecSpace const& space, int B, StepSumsViews<T, typename ExecSpace::memory_space> const& v) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  int const M = int(v.P.extent(0)), D = int(v.P.extent(1));
  int const pixels = D * D;
  Kokkos::parallel_for(
      "ptyko::LSQML::step_sums", Policy(space, B, Kokkos::AUTO),
      KOKKOS_LAMBDA(Member const& team) {
        int const b = team.league_rank();
        PatchCorner<T> const c = v.corner(b);
        StepSums total;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, pixels),
            [&](int k, StepSums& acc) {
              int const i = k / D, j = k % D;
              Complex<T> const s = v.S(b, i, j), ds = c.sample_rows(v.dir_row(b, c, i), v.dir_row(b, c, i + 1), j);
              for (int m = 0; m < M; ++m) {
                Complex<T> const dpo = v.with_probe ? v.dP(m, i, j) * s : Complex<T>(0);
                add_step_terms(v.P(m, i, j) * ds, dpo, v.X(b, m, i, j), acc.v, 1);
              }
            },
            Kokkos::Sum<StepSums>(total));
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          for (int k = 0; k < 6; ++k) v.out(b, k) = total.v[k];
        });
      });
}

/// The N pixels from column c0 of one row, mode by mode (each mode's loop
/// over the N pixels vectorises; S_b D_O is sampled once for all modes),
/// pixel k's sums into lane k of the 6 quantity-major runs of Lanes partial
/// sums each (N = Lanes, or 1 for the columns after the last full chunk,
/// into lane 0). MC modes, or M when MC = 0. Pixels outer and modes inner
/// (the modes' loop unrolled inside the pixels') was slower for every count
/// and fell off a cliff at 4 modes, where GCC 12 no longer vectorised it:
/// the batch's step sums took 104 ms per epoch instead of 25
/// (docs/performance.md, item 77).
template <int MC, int N, int Lanes, bool WithProbe, class T>
KOKKOS_INLINE_FUNCTION void step_pixels(int M, Complex<T> const* const* p, Complex<T> const* const* dp,
                                        Complex<T> const* s, PatchCorner<T> const& c, Complex<T> const* d0,
                                        Complex<T> const* d1, Complex<T> const* const* x, int c0, T* lane) {
  static_assert(N == Lanes || N == 1, "step_pixels: a full chunk, or one column");
  // Over the rows' (re, im) pairs from column c0, iterations independent:
  // the form Clang vectorises (fourier_pixels, docs/performance.md item 78).
  T ds[2 * N];
  T const* a0 = as_pairs(d0 + c0);
  T const* a1 = as_pairs(d1 + c0);
  c.sample_pair_span(a0, a1, 0, N, ds);
  T const* sk = as_pairs(s + c0);
  for (int m = 0; m < (MC > 0 ? MC : M); ++m) {
    T const* pk = as_pairs(p[m] + c0);
    T const* dpk = as_pairs(dp[m] + c0);
    T const* xk = as_pairs(x[m] + c0);
    PTYKO_INDEPENDENT_ITERATIONS
    for (int k = 0; k < N; ++k) {
      Complex<T> const dpo = WithProbe ? pair_at(dpk, k) * pair_at(sk, k) : Complex<T>(0);
      add_step_terms(pair_at(pk, k) * pair_at(ds, k), dpo, pair_at(xk, k), lane + k, Lanes);
    }
  }
}

/// One row: chunks of N columns, then single columns, which add into lane 0
/// with the lanes' stride (with a stride of 1 their five other sums would
/// land in A1's lanes; tstStepSums checks widths that leave such columns).
template <int MC, int N, bool WithProbe, class T>
KOKKOS_INLINE_FUNCTION void step_row(int M, Complex<T> const* const* p, Complex<T> const* const* dp,
                                     Complex<T> const* s, PatchCorner<T> const& c, Complex<T> const* d0,
                                     Complex<T> const* d1, Complex<T> const* const* x, int D, T* lane) {
  int c0 = 0;
  for (; c0 + N <= D; c0 += N) step_pixels<MC, N, N, WithProbe>(M, p, dp, s, c, d0, d1, x, c0, lane);
  for (; c0 < D; ++c0) step_pixels<MC, 1, N, WithProbe>(M, p, dp, s, c, d0, d1, x, c0, lane);
}

/// step_sums on host spaces: one position per work item walking its rows
/// over row pointers, 16 partial sums per quantity (lanes) so that the
/// column loops are element-wise and vectorise; a row's lanes sum in T (at
/// most M D / 16 terms each) and the rows in double (a fixed order). The
/// mode count is compiled (MC = 1-4, with_compiled_modes: constant trip
/// counts) or run-time (MC = 0, at most max_probe_modes).
template <int MC, class T, class ExecSpace>
void step_sums_rows(ExecSpace const& space, int B, StepSumsViews<T, typename ExecSpace::memory_space> const& v) {
  int const M = int(v.P.extent(0)), D = int(v.P.extent(1));
  PTYKO_ASSERT(MC == M || (MC == 0 && M <= max_probe_modes), "step_sums_rows: ", M, " modes in a form for ", MC);
  Kokkos::parallel_for(
      "ptyko::LSQML::step_sums", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, B),
      KOKKOS_LAMBDA(int b) {
        constexpr int N = span_chunk_v<ExecSpace>;
        constexpr int max_modes = MC > 0 ? MC : max_probe_modes;
        double acc[6] = {};
        PatchCorner<T> const c = v.corner(b);
        for (int i = 0; i < D; ++i) {
          Complex<T> const *p[max_modes], *dp[max_modes], *x[max_modes];
          for (int m = 0; m < M; ++m) {
            p[m] = &v.P(m, i, 0);
            dp[m] = &v.dP(m, i, 0);
            x[m] = &v.X(b, m, i, 0);
          }
          T lane[6 * N];
          for (int q = 0; q < 6 * N; ++q) lane[q] = T(0);
          Complex<T> const* d0 = v.dir_row(b, c, i);
          Complex<T> const* d1 = v.dir_row(b, c, i + 1);
          if (i + 3 <= D) prefetch_host(v.dir_row(b, c, i + 3), (D + 1) * sizeof(Complex<T>));  // row i + 2's
          if (v.with_probe)
            step_row<MC, N, true>(M, p, dp, &v.S(b, i, 0), c, d0, d1, x, D, lane);
          else
            step_row<MC, N, false>(M, p, dp, &v.S(b, i, 0), c, d0, d1, x, D, lane);
          for (int q = 0; q < 6; ++q) {
            T row = T(0);
            for (int k = 0; k < N; ++k) row += lane[q * N + k];
            acc[q] += double(row);
          }
        }
        for (int q = 0; q < 6; ++q) v.out(b, q) = acc[q];
      });
}

/// sums(b) = StepSums of position b: dOP = P_m S_b D_O, dPO = D_P,m S_b O,
/// A1 = sum |dOP|^2, A4 = sum |dPO|^2, A2 = sum conj(dOP) dPO,
/// b1 = Re sum conj(dOP) chi, b2 = Re sum conj(dPO) chi. S_b D_O is sampled
/// from the direction `dir_object` inside the sums (no patch buffer: one
/// pass less over the batch), for the positions b >= isolated_from from
/// their footprint-shaped directions `dir_isolated` (isolated_directions).
/// Non-blocking.
template <class T, class ExecSpace>
void step_sums(ExecSpace const& space, int B, ComplexView3<T, typename ExecSpace::memory_space> const& probe,
               ComplexView3<T, typename ExecSpace::memory_space> const& dir_probe,
               ComplexView3<T, typename ExecSpace::memory_space> const& patches,
               ComplexView2<T, typename ExecSpace::memory_space> const& dir_object,
               ComplexView3<T, typename ExecSpace::memory_space> const& dir_isolated, int isolated_from,
               PositionView<T, typename ExecSpace::memory_space> const& positions,
               IndexView<typename ExecSpace::memory_space> const& indices,
               ComplexView4<T, typename ExecSpace::memory_space> const& chi,
               Kokkos::View<double* [6], Kokkos::LayoutRight, typename ExecSpace::memory_space> const& sums,
               bool with_probe) {
  StepSumsViews<T, typename ExecSpace::memory_space> const v{
      probe, dir_probe, patches, dir_object, dir_isolated, isolated_from, positions, indices, chi, sums, with_probe};
  if constexpr (is_host_space_v<ExecSpace>)
    with_compiled_modes(int(probe.extent(0)),
                        [&](auto mc) { step_sums_rows<decltype(mc)::value, T>(space, B, v); });
  else
    step_sums_teams<T>(space, B, v);
}

}  // namespace ptyko::impl
