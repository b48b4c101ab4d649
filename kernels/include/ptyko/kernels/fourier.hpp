#pragma once
// Detector-plane kernels on far fields Psi (B, M, D, D) and measured
// intensities d (N, D, D), both corner-centred (un-shifted on load):
//  * far_field_intensity: I = sum_m |Psi_m|^2
// With an incoherent background b (D, D), the same for every frame
// (air scatter, fluorescence, a detector offset; background refinement),
// I below is the model's whole intensity sum_m |Psi_m|^2 + b: the
// background is one more incoherent mode that no probe carries, and the
// factors scale the coherent modes as they would scale it (PyNX's
// "background as a mode"). An empty background View is none.
//  * modulus_projection (Gaussian/amplitude noise), fused with its cost
//      Psi_m <- Psi_m * sqrt(d) / (sqrt(I) + eps)  on measured pixels
//      cost  =  sum (sqrt(I) - sqrt(d))^2
//  * cost_descent_direction, fused with its cost: -dL/dPsi*, 0 on masked pixels
//      Gaussian  Psi_m <- Psi_m (sqrt(d) / (sqrt(I) + eps) - 1)
//      Poisson   Psi_m <- Psi_m (min(d / (I + eps), r_max) - 1)
//      Poisson cost = sum (I - d - d log((I + eps) / (d + eps)))   (>= 0, 0 at a perfect fit)
//    The Poisson ratio is capped (poisson_ratio_max): where the model is
//    far darker than the data (early epochs, pixels the probe hardly
//    reaches) the bare gradient scales Psi by up to d / eps ~ 1e6.
// Masked pixels (mask == 0) are never compared with the data: the modulus
// projection keeps the model value there and the costs skip them.
// Every kernel here needs all modes of a pixel at once: 1 to
// max_compiled_modes modes run an instantiation with the count compiled
// (impl::fourier_row), other counts the run-time loop
// (impl::fourier_pixel_reduce).

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace ptyko {

enum class NoiseModel { gaussian, poisson };

/// The largest data-to-model ratio d / (I + eps) the Poisson direction
/// uses. Uncapped, pixels with I << d scaled Psi by up to d / eps ~ 1e6:
/// the first epochs' updates exploded, and the float rounding of the sums'
/// order with them (LSQML's cost after one epoch 37749 on one rank, 34544
/// on two). Capped at 10 (docs/solvers.md): the same result on any rank
/// count, and object errors after 50 epochs of 0.048-0.18 against
/// 0.079-0.28 on three simulated scans (LSQML; rPIE 0.039-0.11 against
/// 0.045-0.18). Near the solution d / I is about 1, where the cap does not
/// act.
inline constexpr double poisson_ratio_max = 10;

/// I(b, i, j) = sum_m |Psi(b, m, i, j)|^2 for b < B. Non-blocking.
template <class ExecSpace, class T, class Mem>
void far_field_intensity(ExecSpace const& space, int B, ComplexView4<T, Mem> const& Psi,
                         RealView3<T, Mem> const& intensity) {
  int const M = int(Psi.extent(1));
  int const D = int(Psi.extent(2));
  auto F = Psi;
  auto I = intensity;
  for_each_frame_span(space, "ptyko::far_field_intensity", B, D, KOKKOS_LAMBDA(int b, int i, int j0, int j1) {
        T* out = &I(b, i, 0);
        for (int j = j0; j < j1; ++j) out[j] = T(0);
        for (int m = 0; m < M; ++m) {
          Complex<T> const* f = &F(b, m, i, 0);
          for (int j = j0; j < j1; ++j) out[j] += math::norm2(f[j]);
        }
      });
}

/// I[k] = sum_m |Psi(b, m, i, c0 + k)|^2 for k < n: the model intensity of
/// n columns of a detector row, in a local array (an element-wise loop per
/// mode, which vectorises).
template <class T, class Mem>
KOKKOS_INLINE_FUNCTION void chunk_intensity(ComplexView4<T, Mem> const& Psi, int b, int i, int c0, int n, int M,
                                            T* I) {
  for (int k = 0; k < n; ++k) I[k] = T(0);
  // Four modes per pass over I: a pass per mode kept Clang 14 busy storing
  // I (docs/performance.md, item 78).
  int m = 0;
  for (; m + 4 <= M; m += 4) {
    Complex<T> const* f0 = &Psi(b, m, i, c0);
    Complex<T> const* f1 = &Psi(b, m + 1, i, c0);
    Complex<T> const* f2 = &Psi(b, m + 2, i, c0);
    Complex<T> const* f3 = &Psi(b, m + 3, i, c0);
    for (int k = 0; k < n; ++k)
      I[k] += (math::norm2(f0[k]) + math::norm2(f1[k])) + (math::norm2(f2[k]) + math::norm2(f3[k]));
  }
  for (; m < M; ++m) {
    Complex<T> const* f = &Psi(b, m, i, c0);
    for (int k = 0; k < n; ++k) I[k] += math::norm2(f[k]);
  }
}

namespace impl {
// Loops over the (b, i, j) detector pixels of a batch, with the frame's
// measured data d and the model intensity I. Ops with `modifies` scale every
// mode of Psi by op.factor(I, d) * out_scale; on masked pixels by
// op.masked_factor * out_scale. (out_scale folds the 1/sqrt(D^2) of the
// inverse FFT that follows into this pass, saving one pass over Psi.)
// The total cost over measured pixels goes to `cost`: a double (blocking)
// or a Kokkos::Sum reducer over a View (non-blocking; see reduce_frame_spans).
template <class ExecSpace, class T, class Mem, class DataView, class Op, class Cost>
void fourier_pixel_reduce(ExecSpace const& space, char const* label, int B,
                          ComplexView4<T, Mem> const& Psi, DataView const& data,
                          IndexView<Mem> const& indices, MaskView<Mem> const& mask,
                          RealView2<T, Mem> const& background, Op op, T out_scale, Cost&& cost) {
  int const M = int(Psi.extent(1));
  int const D = int(Psi.extent(2));
  bool const has_mask = mask.extent(0) > 0;
  bool const has_background = background.extent(0) > 0;
  auto bg = background;
  auto F = Psi;
  auto d = data;
  auto idx = indices;
  auto msk = mask;
  // Chunks of span_chunk_v columns: per-column intensity, factor and partial
  // cost in local arrays, so that every inner loop is element-wise (the cost
  // is summed lane by lane, then over the lanes: a fixed order).
  reduce_frame_spans(
      space, label, B, D,
      KOKKOS_LAMBDA(int b, int i, int j0, int j1, double& acc) {
        auto const* meas = &d(idx(b), i, 0);
        std::uint8_t const* measured = has_mask ? &msk(i, 0) : nullptr;
        T const* incoherent = has_background ? &bg(i, 0) : nullptr;
        constexpr int chunk = span_chunk_v<ExecSpace>;
        // One running sum per lane: a single running sum would make every
        // pixel wait for the previous add (latency-bound, ~4 cycles a pixel).
        double lane[chunk];
        for (int k = 0; k < chunk; ++k) lane[k] = 0.0;
        for (int c0 = j0; c0 < j1; c0 += chunk) {
          int const n = (j1 - c0 < chunk) ? j1 - c0 : chunk;
          T I[chunk], factor[chunk];
          double part[chunk];
          chunk_intensity(F, b, i, c0, n, M, I);
          if (incoherent != nullptr)
            for (int k = 0; k < n; ++k) I[k] += incoherent[c0 + k];
          for (int k = 0; k < n; ++k) {
            T const dk = T(meas[c0 + k]);
            factor[k] = op.factor(I[k], dk) * out_scale;
            part[k] = double(op.cost(I[k], dk));
          }
          if (measured != nullptr) {
            // Masked pixels are never compared with the data: their value
            // may be anything, and the select discards what it gave.
            for (int k = 0; k < n; ++k) {
              bool const use = measured[c0 + k] != 0;
              factor[k] = use ? factor[k] : T(Op::masked_factor) * out_scale;
              part[k] = use ? part[k] : 0.0;
            }
          }
          // Plain `if` on the constexpr flag, not `if constexpr`: nvcc forbids
          // an extended lambda to first-capture a variable inside if-constexpr.
          if (Op::modifies) {
            for (int m = 0; m < M; ++m) {
              Complex<T>* f = &F(b, m, i, c0);
              for (int k = 0; k < n; ++k) f[k] *= factor[k];
            }
          }
          for (int k = 0; k < n; ++k) lane[k] += part[k];
        }
        for (int k = 0; k < chunk; ++k) acc += lane[k];
      },
      std::forward<Cost>(cost));
}

// fourier_pixel_reduce for a compiled mode count MC (with_compiled_modes):
// N pixels from column c0 of one detector row, each with all its modes in
// registers (the modes' loops unroll), so one element-wise loop over the
// columns does everything. Float frames (and the mask) are copied to local
// arrays first: then no store into Psi can be feared to change a value still
// to be read, which would keep the loop scalar (GCC). Rows with a mask
// take their own loop (Masked): its selects in every pixel would keep the
// common loop scalar; so do rows with a background (Background, its row
// `incoherent`). Partial costs go to T lanes, one per column.
//
// For Clang (docs/performance.md, item 78) the loop runs over the rows'
// (re, im) pairs with its iterations declared independent, and every
// pointer starts at column c0: with indices 2 (c0 + k) Clang gathered and
// scattered the pairs instead of loading whole vectors.
template <int MC, int N, bool Masked, bool Background, class T, class Meas, class Op>
KOKKOS_INLINE_FUNCTION void fourier_pixels(Complex<T>* const* rows, Meas const* meas,
                                           std::uint8_t const* measured, T const* incoherent, int c0,
                                           Op const& op, T out_scale, T* lane) {
  // Integer counts cannot alias Psi's floats; float frames are copied.
  constexpr bool copy_data = !std::is_integral_v<Meas>;
  Meas const* dat = meas + c0;
  T const* bg = Background ? incoherent + c0 : nullptr;
  T d[copy_data ? N : 1], keep[N];
  if constexpr (copy_data)
    for (int k = 0; k < N; ++k) d[k] = T(dat[k]);
  if (Masked)
    for (int k = 0; k < N; ++k) keep[k] = measured[c0 + k] != 0 ? T(1) : T(0);
  T* r[MC];
  for (int m = 0; m < MC; ++m) r[m] = as_pairs(rows[m] + c0);
  PTYKO_INDEPENDENT_ITERATIONS
  for (int k = 0; k < N; ++k) {
    Complex<T> x[MC];
    T I = T(0);
    for (int m = 0; m < MC; ++m) {
      x[m] = pair_at(r[m], k);
      I += math::norm2(x[m]);
    }
    if constexpr (Background) I += bg[k];
    T const dk = copy_data ? d[copy_data ? k : 0] : T(dat[k]);
    T factor = op.factor(I, dk), part = op.cost(I, dk);
    if (Masked) {
      // Masked pixels are never compared with the data: the selects discard
      // what they gave.
      factor = keep[k] != T(0) ? factor : T(Op::masked_factor);
      part = keep[k] != T(0) ? part : T(0);
    }
    lane[k] += part;
    if (Op::modifies) {
      T const scale = factor * out_scale;
      for (int m = 0; m < MC; ++m) set_pair(r[m], k, scale * x[m]);
    }
  }
}

/// fourier_pixels over columns [j0, j1): chunks of N, then single columns.
template <int MC, int N, bool Masked, bool Background, class T, class Meas, class Op>
KOKKOS_INLINE_FUNCTION void fourier_columns(Complex<T>* const* rows, Meas const* meas, std::uint8_t const* measured,
                                            T const* incoherent, int j0, int j1, Op const& op, T out_scale,
                                            T* lane) {
  int c0 = j0;
  for (; c0 + N <= j1; c0 += N)
    fourier_pixels<MC, N, Masked, Background>(rows, meas, measured, incoherent, c0, op, out_scale, lane);
  for (; c0 < j1; ++c0)
    fourier_pixels<MC, 1, Masked, Background>(rows, meas, measured, incoherent, c0, op, out_scale, lane);
}

/// One detector row's columns [j0, j1) through fourier_pixels (mode count
/// MC compiled; rows with a mask, or a background row `incoherent`, take
/// their own loops). Returns the row's cost, summed in N T lanes of
/// (j1 - j0) / N terms each.
template <int MC, int N, class T, class Meas, class Op>
KOKKOS_INLINE_FUNCTION T fourier_row(Complex<T>* const* rows, Meas const* meas, std::uint8_t const* measured,
                                     T const* incoherent, int j0, int j1, Op const& op, T out_scale) {
  T lane[N];
  for (int k = 0; k < N; ++k) lane[k] = T(0);
  if (measured == nullptr && incoherent == nullptr)
    fourier_columns<MC, N, false, false>(rows, meas, measured, incoherent, j0, j1, op, out_scale, lane);
  else if (incoherent == nullptr)
    fourier_columns<MC, N, true, false>(rows, meas, measured, incoherent, j0, j1, op, out_scale, lane);
  else if (measured == nullptr)
    fourier_columns<MC, N, false, true>(rows, meas, measured, incoherent, j0, j1, op, out_scale, lane);
  else
    fourier_columns<MC, N, true, true>(rows, meas, measured, incoherent, j0, j1, op, out_scale, lane);
  T row = T(0);
  for (int k = 0; k < N; ++k) row += lane[k];
  return row;
}

template <int MC, class ExecSpace, class T, class Mem, class DataView, class Op, class Cost>
void fourier_pixel_reduce_compiled(ExecSpace const& space, char const* label, int B,
                                   ComplexView4<T, Mem> const& Psi, DataView const& data,
                                   IndexView<Mem> const& indices, MaskView<Mem> const& mask,
                                   RealView2<T, Mem> const& background, Op op, T out_scale, Cost&& cost) {
  static_assert(MC >= 1, "fourier_pixel_reduce_compiled: a compiled mode count");
  int const D = int(Psi.extent(2));
  bool const has_mask = mask.extent(0) > 0;
  bool const has_background = background.extent(0) > 0;
  auto bg = background;
  auto F = Psi;
  auto d = data;
  auto idx = indices;
  auto msk = mask;
  // A row's cost in T lanes, then in double over the rows (a fixed order).
  reduce_frame_spans(
      space, label, B, D,
      KOKKOS_LAMBDA(int b, int i, int j0, int j1, double& acc) {
        Complex<T>* rows[MC];
        for (int m = 0; m < MC; ++m) rows[m] = &F(b, m, i, 0);
        acc += double(fourier_row<MC, span_chunk_v<ExecSpace>>(
            rows, &d(idx(b), i, 0), has_mask ? &msk(i, 0) : nullptr, has_background ? &bg(i, 0) : nullptr, j0, j1,
            op, out_scale));
      },
      std::forward<Cost>(cost));
}

/// fourier_pixel_reduce with the mode count compiled where it can be; the
/// cost goes to `cost` as there.
template <class ExecSpace, class T, class Mem, class DataView, class Op, class Cost>
void fourier_reduce_into(ExecSpace const& space, char const* label, int B, ComplexView4<T, Mem> const& Psi,
                         DataView const& data, IndexView<Mem> const& indices, MaskView<Mem> const& mask,
                         RealView2<T, Mem> const& background, Op op, T out_scale, Cost&& cost) {
  with_compiled_modes(int(Psi.extent(1)), [&](auto mc) {
    constexpr int MC = decltype(mc)::value;
    if constexpr (MC > 0)
      fourier_pixel_reduce_compiled<MC>(space, label, B, Psi, data, indices, mask, background, op, out_scale,
                                        std::forward<Cost>(cost));
    else
      fourier_pixel_reduce(space, label, B, Psi, data, indices, mask, background, op, out_scale,
                           std::forward<Cost>(cost));
  });
}

/// fourier_reduce_into a host scalar: returns the cost (blocking).
template <class ExecSpace, class T, class Mem, class DataView, class Op>
double fourier_reduce(ExecSpace const& space, char const* label, int B, ComplexView4<T, Mem> const& Psi,
                      DataView const& data, IndexView<Mem> const& indices, MaskView<Mem> const& mask,
                      RealView2<T, Mem> const& background, Op op, T out_scale = T(1)) {
  double cost = 0;
  fourier_reduce_into(space, label, B, Psi, data, indices, mask, background, op, out_scale, cost);
  return cost;
}

// Gaussian (amplitude) noise. Cost (sqrt(I) - sqrt(d))^2.
template <class T>
struct GaussianCost {
  T eps;
  KOKKOS_INLINE_FUNCTION T cost(T I, T d) const {
    T const r = math::sqrt(I) - math::sqrt(d);
    return r * r;
  }
};
// Poisson noise, deviance form: I - d - d log((I + eps) / (d + eps)).
template <class T>
struct PoissonCost {
  T eps;
  KOKKOS_INLINE_FUNCTION T cost(T I, T d) const {
    return I - d - d * math::log((I + eps) / (d + eps));
  }
};

template <class Cost>
struct MeasureOnly : Cost {
  static constexpr bool modifies = false;
  static constexpr int masked_factor = 1;
  template <class T>
  KOKKOS_INLINE_FUNCTION T factor(T, T) const { return T(1); }
};
// Psi -> Psi' = Psi sqrt(d) / (sqrt(I) + eps); masked pixels keep Psi.
template <class T>
struct ModulusProjection : GaussianCost<T> {
  static constexpr bool modifies = true;
  static constexpr int masked_factor = 1;
  KOKKOS_INLINE_FUNCTION T factor(T I, T d) const { return math::sqrt(d) / (math::sqrt(I) + this->eps); }
};
// Psi -> Psi' - Psi = -dL/dPsi* of the Gaussian cost; 0 on masked pixels.
template <class T>
struct GaussianDirection : GaussianCost<T> {
  static constexpr bool modifies = true;
  static constexpr int masked_factor = 0;
  KOKKOS_INLINE_FUNCTION T factor(T I, T d) const {
    return math::sqrt(d) / (math::sqrt(I) + this->eps) - T(1);
  }
};
// Psi -> Psi (d / (I + eps) - 1) = -dL/dPsi* of the Poisson cost, with the
// ratio capped at ratio_max (poisson_ratio_max); 0 on masked pixels.
template <class T>
struct PoissonDirection : PoissonCost<T> {
  static constexpr bool modifies = true;
  static constexpr int masked_factor = 0;
  T ratio_max;
  KOKKOS_INLINE_FUNCTION T factor(T I, T d) const {
    T const r = d / (I + this->eps);
    return (r < ratio_max ? r : ratio_max) - T(1);  // a select: vectorises
  }
};
}  // namespace impl

/// Gaussian modulus projection of Psi (B, M, D, D) in place, against frames
/// data(indices(b)); an empty mask View means all pixels are measured, an
/// empty background View no background. Returns the Gaussian cost of the
/// Psi it received (blocking). The result is multiplied by `out_scale` (see
/// impl::fourier_pixel_reduce).
template <class ExecSpace, class T, class Mem, class DataView>
double modulus_projection(ExecSpace const& space, int B, ComplexView4<T, Mem> const& Psi,
                          DataView const& data, IndexView<Mem> const& indices,
                          MaskView<Mem> const& mask, RealView2<T, Mem> const& background, T eps,
                          T out_scale = T(1)) {
  return impl::fourier_reduce(space, "ptyko::modulus_projection", B, Psi, data, indices, mask, background,
                              impl::ModulusProjection<T>{{eps}}, out_scale);
}

namespace impl {
/// cost_descent_direction with its cost going to `cost` (as in
/// fourier_pixel_reduce).
template <class ExecSpace, class T, class Mem, class DataView, class Cost>
void cost_descent_direction_into(ExecSpace const& space, NoiseModel noise, int B, ComplexView4<T, Mem> const& Psi,
                                 DataView const& data, IndexView<Mem> const& indices, MaskView<Mem> const& mask,
                                 RealView2<T, Mem> const& background, T eps, T out_scale, T poisson_ratio,
                                 Cost&& cost) {
  if (noise == NoiseModel::gaussian)
    fourier_reduce_into(space, "ptyko::cost_descent_direction::gaussian", B, Psi, data, indices, mask, background,
                        GaussianDirection<T>{{eps}}, out_scale, std::forward<Cost>(cost));
  else
    fourier_reduce_into(space, "ptyko::cost_descent_direction::poisson", B, Psi, data, indices, mask, background,
                        PoissonDirection<T>{{eps}, poisson_ratio}, out_scale, std::forward<Cost>(cost));
}
}  // namespace impl

/// Replaces Psi by the descent direction of the cost, -dL/dPsi*, zero on
/// masked pixels: Gaussian Psi' - Psi (the modulus projection's step), or
/// Poisson Psi (min(d / (I + eps), poisson_ratio) - 1), times `out_scale`.
/// The cost of the Psi it received goes to `cost`, a View in the space's
/// memory: non-blocking, so that a device does not wait for the host after
/// every batch (the solvers read their batches' costs once per epoch).
template <class ExecSpace, class T, class Mem, class DataView>
void cost_descent_direction(ExecSpace const& space, NoiseModel noise, int B, ComplexView4<T, Mem> const& Psi,
                            DataView const& data, IndexView<Mem> const& indices, MaskView<Mem> const& mask,
                            RealView2<T, Mem> const& background, Kokkos::View<double, Mem> const& cost, T eps,
                            T out_scale = T(1), T poisson_ratio = T(poisson_ratio_max)) {
  impl::cost_descent_direction_into(space, noise, B, Psi, data, indices, mask, background, eps, out_scale,
                                    poisson_ratio, Kokkos::Sum<double, Mem>(cost));
}

/// The same, returning the cost (blocking).
template <class ExecSpace, class T, class Mem, class DataView>
double cost_descent_direction(ExecSpace const& space, NoiseModel noise, int B,
                              ComplexView4<T, Mem> const& Psi, DataView const& data,
                              IndexView<Mem> const& indices, MaskView<Mem> const& mask,
                              RealView2<T, Mem> const& background, T eps, T out_scale = T(1),
                              T poisson_ratio = T(poisson_ratio_max)) {
  double cost = 0;
  impl::cost_descent_direction_into(space, noise, B, Psi, data, indices, mask, background, eps, out_scale,
                                    poisson_ratio, cost);
  return cost;
}

/// Cost of the model far fields Psi against the data under `noise`, without
/// changing Psi (blocking).
template <class ExecSpace, class T, class Mem, class DataView>
double data_cost(ExecSpace const& space, NoiseModel noise, int B, ComplexView4<T, Mem> const& Psi,
                 DataView const& data, IndexView<Mem> const& indices, MaskView<Mem> const& mask,
                 RealView2<T, Mem> const& background, T eps) {
  if (noise == NoiseModel::gaussian) {
    return impl::fourier_reduce(space, "ptyko::data_cost::gaussian", B, Psi, data, indices, mask, background,
                                impl::MeasureOnly<impl::GaussianCost<T>>{{eps}});
  }
  return impl::fourier_reduce(space, "ptyko::data_cost::poisson", B, Psi, data, indices, mask, background,
                              impl::MeasureOnly<impl::PoissonCost<T>>{{eps}});
}

}  // namespace ptyko
