#pragma once
// Element-wise kernels that the solvers compose into object and probe
// updates: exit-wave differences, illumination maps, preconditioned updates,
// reductions. Each is one pass over its View(s); all are non-blocking unless
// they return a host value.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

/// psi(b, m) <- psi(b, m) - probe(m) * patches(b): the exit-wave update
/// Delta = F^{-1}Psi' - P S O, given F^{-1}Psi' in psi. Non-blocking.
template <class ExecSpace, class T, class Mem>
void subtract_exit_waves(ExecSpace const& space, int B, ComplexView3<T, Mem> const& probe,
                         ComplexView3<T, Mem> const& patches, ComplexView4<T, Mem> const& psi) {
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  auto P = probe;
  auto S = patches;
  auto out = psi;
  Kokkos::parallel_for(
      "ptyko::subtract_exit_waves", frame_policy(space, B, D),
      KOKKOS_LAMBDA(int b, int i, int j) {
        Complex<T> const s = S(b, i, j);
        for (int m = 0; m < M; ++m) out(b, m, i, j) -= P(m, i, j) * s;
      });
}

/// out(i, j) = sum_m |probe(m, i, j)|^2. Non-blocking.
template <class ExecSpace, class T, class Mem>
void probe_intensity(ExecSpace const& space, ComplexView3<T, Mem> const& probe,
                     RealView2<T, Mem> const& out) {
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  auto P = probe;
  auto o = out;
  Kokkos::parallel_for(
      "ptyko::probe_intensity", Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(D) * D),
      KOKKOS_LAMBDA(std::size_t k) {
        int const i = int(k / D), j = int(k % D);
        T s = 0;
        for (int m = 0; m < M; ++m) s += math::norm2(P(m, i, j));
        o(i, j) = s;
      });
}

/// out(i, j) += sum_{b<B} |patches(b, i, j)|^2 (the probe's illumination
/// weight W_P). Deterministic: one thread per pixel. Non-blocking.
template <class ExecSpace, class T, class Mem>
void add_patch_intensity(ExecSpace const& space, int B, ComplexView3<T, Mem> const& patches,
                         RealView2<T, Mem> const& out) {
  int const D = int(out.extent(0));
  auto S = patches;
  auto o = out;
  Kokkos::parallel_for(
      "ptyko::add_patch_intensity", Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(D) * D),
      KOKKOS_LAMBDA(std::size_t k) {
        int const i = int(k / D), j = int(k % D);
        T s = 0;
        for (int b = 0; b < B; ++b) s += math::norm2(S(b, i, j));
        o(i, j) += s;
      });
}

/// Largest value of a real View of any rank (blocking: returns a host scalar).
template <class ExecSpace, class View>
double max_value(ExecSpace const& space, View const& v) {
  using V = typename View::non_const_value_type;
  auto const* data = v.data();
  V result = 0;
  Kokkos::parallel_reduce(
      "ptyko::max_value", Kokkos::RangePolicy<ExecSpace>(space, 0, v.span()),
      KOKKOS_LAMBDA(std::size_t k, V& m) {
        if (data[k] > m) m = data[k];
      },
      Kokkos::Max<V>(result));
  return double(result);
}

/// field += num / ((1 - alpha) w + alpha w_max) where w > 0: the regularised
/// (rPIE-style) preconditioned update of an object or probe. Works on the
/// flattened Views: `field`/`num` may carry extra leading dimensions over the
/// weight (probe modes share one weight). Non-blocking.
template <class ExecSpace, class FieldView, class WeightView>
void apply_preconditioned_update(ExecSpace const& space, FieldView const& field, FieldView const& num,
                                 WeightView const& weight, double alpha, double w_max,
                                 double step = 1.0) {
  using T = typename WeightView::non_const_value_type;
  std::size_t const n = field.span(), w_n = weight.span();
  PTYKO_ASSERT(num.span() == n && n % w_n == 0, "update shapes do not match");
  auto* f = field.data();
  auto const* u = num.data();
  auto const* w = weight.data();
  T const a = T(alpha), wm = T(alpha * w_max), s = T(step);
  Kokkos::parallel_for(
      "ptyko::apply_preconditioned_update", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(std::size_t k) {
        T const denom = (T(1) - a) * w[k % w_n] + wm;
        if (denom > T(0)) f[k] += (s / denom) * u[k];
      });
}

/// dir <- dir / sqrt(((1 - alpha) w)^2 + (alpha w_max)^2): LSQML's
/// preconditioned search direction (Odstrcil et al. 2018). Works on flattened
/// Views like apply_preconditioned_update. Non-blocking.
template <class ExecSpace, class FieldView, class WeightView>
void precondition_direction(ExecSpace const& space, FieldView const& dir, WeightView const& weight,
                            double alpha, double w_max) {
  using T = typename WeightView::non_const_value_type;
  std::size_t const n = dir.span(), w_n = weight.span();
  PTYKO_ASSERT(n % w_n == 0, "direction and weight shapes do not match");
  auto* f = dir.data();
  auto const* w = weight.data();
  T const a = T(alpha), wm2 = T(alpha * w_max) * T(alpha * w_max);
  Kokkos::parallel_for(
      "ptyko::precondition_direction", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(std::size_t k) {
        T const wk = (T(1) - a) * w[k % w_n];
        T const denom = math::sqrt(wk * wk + wm2);
        f[k] = denom > T(0) ? f[k] / denom : f[k] * T(0);
      });
}

/// field += step * dir (same shapes). Non-blocking.
template <class ExecSpace, class View>
void add_scaled(ExecSpace const& space, View const& field, View const& dir, double step) {
  using V = typename View::non_const_value_type;
  PTYKO_ASSERT(field.span() == dir.span(), "add_scaled: shapes do not match");
  auto* f = field.data();
  auto const* d = dir.data();
  typename V::value_type const s(step);
  Kokkos::parallel_for(
      "ptyko::add_scaled", Kokkos::RangePolicy<ExecSpace>(space, 0, field.span()),
      KOKKOS_LAMBDA(std::size_t k) { f[k] += s * d[k]; });
}

/// field = (num + inertia field) / (weight + inertia): DM's overlap
/// projection, where a small inertia keeps unilluminated pixels as they are
/// and damps the update where the weight is tiny. Non-blocking.
template <class ExecSpace, class FieldView, class WeightView>
void apply_weighted_average(ExecSpace const& space, FieldView const& field, FieldView const& num,
                            WeightView const& weight, double inertia) {
  using T = typename WeightView::non_const_value_type;
  std::size_t const n = field.span(), w_n = weight.span();
  PTYKO_ASSERT(num.span() == n && n % w_n == 0, "update shapes do not match");
  auto* f = field.data();
  auto const* u = num.data();
  auto const* w = weight.data();
  T const in = T(inertia);
  Kokkos::parallel_for(
      "ptyko::apply_weighted_average", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(std::size_t k) {
        T const den = w[k % w_n] + in;
        if (den > T(0)) f[k] = (u[k] + in * f[k]) / den;
      });
}

/// Clips |object| to at most `limit` (phase kept). Non-blocking.
template <class ExecSpace, class T, class Mem>
void clip_amplitude(ExecSpace const& space, ComplexView2<T, Mem> const& object, T limit) {
  auto* o = object.data();
  Kokkos::parallel_for(
      "ptyko::clip_amplitude", Kokkos::RangePolicy<ExecSpace>(space, 0, object.span()),
      KOKKOS_LAMBDA(std::size_t k) {
        T const a = math::sqrt(math::norm2(o[k]));
        if (a > limit) o[k] *= limit / a;
      });
}

/// Multiplies every element of a complex View by a real scalar. Non-blocking.
template <class ExecSpace, class View, class T>
void scale(ExecSpace const& space, View const& v, T factor) {
  auto* d = v.data();
  Kokkos::parallel_for(
      "ptyko::scale", Kokkos::RangePolicy<ExecSpace>(space, 0, v.span()),
      KOKKOS_LAMBDA(std::size_t k) { d[k] *= factor; });
}

}  // namespace ptyko
