#pragma once
// Element-wise kernels that the solvers compose into object and probe
// updates: exit-wave differences, illumination maps, preconditioned updates,
// reductions. Each is one pass over its View(s); all are non-blocking unless
// they return a host value.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

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
  for_each_frame_span(space, "ptyko::subtract_exit_waves", B, D, KOKKOS_LAMBDA(int b, int i, int j0, int j1) {
        Complex<T> const* s = &S(b, i, 0);
        for (int m = 0; m < M; ++m) {
          Complex<T> const* p = &P(m, i, 0);
          Complex<T>* o = &out(b, m, i, 0);
          for (int j = j0; j < j1; ++j) o[j] -= p[j] * s[j];
        }
      });
}

/// out(i, j) = sum_m |probe(m, i, j)|^2. Non-blocking.
template <class ExecSpace, class T, class Mem>
void probe_intensity(ExecSpace const& space, ComplexView3<T, Mem> const& probe,
                     RealView2<T, Mem> const& out) {
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  auto P = probe;
  auto o = out;
  for_each_frame_span(space, "ptyko::probe_intensity", 1, D, KOKKOS_LAMBDA(int, int i, int j0, int j1) {
        T* row = &o(i, 0);
        for (int j = j0; j < j1; ++j) row[j] = T(0);
        for (int m = 0; m < M; ++m) {
          Complex<T> const* p = &P(m, i, 0);
          for (int j = j0; j < j1; ++j) row[j] += math::norm2(p[j]);
        }
      });
}

/// The probe's two sums from one read of the patches:
///   num(m, i, j) += sum_{b<B} conj(patches(b, i, j)) * g(b, m, i, j)
///   weight(i, j) += sum_{b<B} |patches(b, i, j)|^2
/// (patch_adjoint_product and add_patch_intensity in one pass: the same
/// sums, in the same order, bit for bit; one launch and one pass over the
/// batch's patches less). One work item per probe pixel (host: per probe
/// row, every mode) loops over the batch: deterministic, no atomics.
/// With no modes (`num` and `g` empty) it adds the weight alone
/// (add_patch_intensity). `label`: the kernel's name in profiles.
/// Non-blocking.
template <class ExecSpace, class T, class Mem>
void add_probe_sums(ExecSpace const& space, int B, ComplexView3<T, Mem> const& patches,
                    ComplexView4<T, Mem> const& g, ComplexView3<T, Mem> const& num, RealView2<T, Mem> const& weight,
                    char const* label = "ptyko::add_probe_sums") {
  int const M = int(num.extent(0)), D = int(weight.extent(0));
  PTYKO_ASSERT(int(weight.extent(1)) == D && int(g.extent(1)) == M && (M == 0 || int(num.extent(1)) == D),
               "add_probe_sums: shapes do not match");
  auto S = patches;
  auto G = g;
  auto U = num;
  auto W = weight;
  for_each_frame_span(space, label, 1, D, KOKKOS_LAMBDA(int, int i, int j0, int j1) {
        T* w = &W(i, 0);
        for (int b = 0; b < B; ++b) {
          Complex<T> const* s = &S(b, i, 0);
          for (int j = j0; j < j1; ++j) w[j] += math::norm2(s[j]);
          for (int m = 0; m < M; ++m) {
            Complex<T>* u = &U(m, i, 0);
            Complex<T> const* gm = &G(b, m, i, 0);
            for (int j = j0; j < j1; ++j) u[j] += math::conj_mul(s[j], gm[j]);
          }
        }
      });
}

/// out(i, j) += sum_{b<B} |patches(b, i, j)|^2 (the probe's illumination
/// weight W_P): add_probe_sums without modes. Deterministic: one work item
/// per pixel (host: per row). Non-blocking.
template <class ExecSpace, class T, class Mem>
void add_patch_intensity(ExecSpace const& space, int B, ComplexView3<T, Mem> const& patches,
                         RealView2<T, Mem> const& out) {
  add_probe_sums(space, B, patches, ComplexView4<T, Mem>(), ComplexView3<T, Mem>(), out, "ptyko::add_patch_intensity");
}

namespace impl {
/// The largest value of a View of non-negative reals through a
/// Kokkos::Max reducer.
template <class ExecSpace, class View, class Reducer>
void max_value_into(ExecSpace const& space, View const& v, Reducer const& reducer) {
  using V = typename View::non_const_value_type;
  auto const* data = v.data();
  reduce_plane_spans(
      space, "ptyko::max_value", 1, v.span(),
      KOKKOS_LAMBDA(int, std::size_t k0, std::size_t k1, V& m) { m = max_nonnegative(data, k0, k1, m); }, reducer);
}
}  // namespace impl

/// Largest value of a View of non-negative reals (weights) of any rank, 0
/// when it is empty (blocking: returns a host scalar).
template <class ExecSpace, class View>
double max_value(ExecSpace const& space, View const& v) {
  using V = typename View::non_const_value_type;
  V result = 0;
  impl::max_value_into(space, v, Kokkos::Max<V>(result));
  return double(result);
}

/// The same into `result`, a rank-0 View in the space's memory, where a
/// value below 0 means 0 (max_over_tiles' non-blocking form). Non-blocking.
template <class ExecSpace, class View>
void max_value(ExecSpace const& space, View const& v,
               Kokkos::View<typename View::non_const_value_type, typename ExecSpace::memory_space> const& result) {
  using V = typename View::non_const_value_type;
  impl::max_value_into(space, v, Kokkos::Max<V, typename ExecSpace::memory_space>(result));
}

/// A non-negative scalar argument of a kernel (the largest weight w_max of
/// a preconditioned update, LSQML's step sizes): a value the host knows,
/// and up to two rank-0 Views in the space's memory that reductions or
/// kernels filled (max_over_tiles, max_value, max_isolated_weight), read by
/// the kernel when it runs: the argument is the largest of the value and
/// the slots (a slot below 0, a reduction over nothing, counts as 0 when
/// the value is 0). The slots let a device run a batch from its sums to its
/// update without a copy to the host in between.
template <class S, class Mem>
struct ScalarArg {
  double value = 0;
  Kokkos::View<S, Mem> slot, slot2;  ///< empty: not part of the argument

  ScalarArg(double v) : value(v) {}  // NOLINT: a host value wherever a double was
  explicit ScalarArg(Kokkos::View<S, Mem> const& s) : slot(s) {}
  /// This argument and `s`'s content, the larger (at most two slots).
  ScalarArg with(Kokkos::View<S, Mem> const& s) const {
    PTYKO_ASSERT(slot2.data() == nullptr, "a ScalarArg holds at most two slots");
    ScalarArg out = *this;
    (out.slot.data() == nullptr ? out.slot : out.slot2) = s;
    return out;
  }
  /// Whether the value is all there is (the host may read `value`).
  bool on_host() const { return slot.data() == nullptr; }
  KOKKOS_INLINE_FUNCTION double get() const {
    double v = value;
    if (slot.data() != nullptr && double(slot()) > v) v = double(slot());
    if (slot2.data() != nullptr && double(slot2()) > v) v = double(slot2());
    return v;
  }
};

/// One pixel of the regularised (rPIE-style) preconditioned update
/// f += step num / ((1 - alpha) w + alpha w_max) where the denominator is > 0.
template <class T>
struct PreconditionedStep {
  T a, wm, s;
  KOKKOS_INLINE_FUNCTION PreconditionedStep(double alpha, double w_max, double step)
      : a(T(alpha)), wm(T(alpha * w_max)), s(T(step)) {}
  template <class V>
  KOKKOS_INLINE_FUNCTION void operator()(V& f, V const& u, T w) const {
    T const denom = (T(1) - a) * w + wm;
    f += (denom > T(0) ? s / denom : T(0)) * u;  // a select: vectorises (kernels/CMakeLists.txt)
  }
  KOKKOS_INLINE_FUNCTION PreconditionedStep op() const { return *this; }
};

/// A PreconditionedStep whose w_max a kernel reads when it runs
/// (ScalarArg): kernels that take an op build it with op().
template <class T, class Mem>
struct PreconditionedStepArg {
  double alpha;
  ScalarArg<T, Mem> w_max;
  double step;
  KOKKOS_INLINE_FUNCTION PreconditionedStep<T> op() const { return PreconditionedStep<T>(alpha, w_max.get(), step); }
};

/// One pixel of LSQML's preconditioned search direction
/// d <- d / sqrt(((1 - alpha) w)^2 + (alpha w_max)^2) (0 where that is 0).
template <class T>
struct PreconditionedDirection {
  T a, wm2;
  KOKKOS_INLINE_FUNCTION PreconditionedDirection(double alpha, double w_max)
      : a(T(alpha)), wm2(T(alpha * w_max) * T(alpha * w_max)) {}
  template <class V>
  KOKKOS_INLINE_FUNCTION void operator()(V& d, T w) const {
    T const wk = (T(1) - a) * w;
    T const denom = math::sqrt(wk * wk + wm2);
    d *= denom > T(0) ? T(1) / denom : T(0);
  }
  KOKKOS_INLINE_FUNCTION PreconditionedDirection op() const { return *this; }
};

/// A PreconditionedDirection whose w_max a kernel reads when it runs.
template <class T, class Mem>
struct PreconditionedDirectionArg {
  double alpha;
  ScalarArg<T, Mem> w_max;
  KOKKOS_INLINE_FUNCTION PreconditionedDirection<T> op() const {
    return PreconditionedDirection<T>(alpha, w_max.get());
  }
};

/// What a pass leaves in the per-batch sum it reads (an object's tiles, a
/// probe's numerator). `zeroed`: the pass writes 0 behind itself, so the
/// sum is clear for the next batch without a zeroing pass of its own (the
/// pass has the sum's cache lines anyway; on a large object this saves a
/// trip to memory).
enum class SumAfterUse { kept, zeroed };

/// field += num / ((1 - alpha) w + alpha w_max) where w > 0: the regularised
/// (rPIE-style) preconditioned update of a probe. Works on the flattened
/// Views: `field`/`num` may carry extra leading dimensions over the weight
/// (probe modes share one weight). `num_after`: whether the pass clears the
/// numerator behind itself (the weight is read by every mode's plane, so
/// no plane may clear it). Objects use the tiled overload below.
/// `w_max`: a double or a ScalarArg. Non-blocking.
template <class ExecSpace, class FieldView, class WeightView, class WMax>
void apply_preconditioned_update(ExecSpace const& space, FieldView const& field, FieldView const& num,
                                 WeightView const& weight, double alpha, WMax const& w_max, double step = 1.0,
                                 SumAfterUse num_after = SumAfterUse::kept) {
  using T = typename WeightView::non_const_value_type;
  using V = typename FieldView::non_const_value_type;
  std::size_t const n = field.span(), w_n = weight.span();
  PTYKO_ASSERT(num.span() == n && n % w_n == 0, "update shapes do not match");
  auto* f = field.data();
  auto* u = num.data();
  auto const* w = weight.data();
  bool const zero = num_after == SumAfterUse::zeroed;
  ScalarArg<T, typename ExecSpace::memory_space> const wm(w_max);
  for_each_plane_span(space, "ptyko::apply_preconditioned_update", int(n / w_n), w_n,
                      KOKKOS_LAMBDA(int p, std::size_t k0, std::size_t k1) {
                        PreconditionedStep<T> const op(alpha, wm.get(), step);
                        auto* fp = f + p * w_n;
                        auto* up = u + p * w_n;
                        for (std::size_t k = k0; k < k1; ++k) op(fp[k], up[k], w[k]);
                        if (zero)
                          for (std::size_t k = k0; k < k1; ++k) up[k] = V(0);
                      });
}

/// The same update of an (H, W) object over the tiles of a batch, where all
/// of its non-zero numerators lie. `num_after` / `weight_after`: whether the
/// pass clears the numerator / the weight behind itself. Non-blocking.
template <class ExecSpace, class T, class Mem, class WMax>
void apply_preconditioned_update(ExecSpace const& space, TileList<Mem> const& tiles, ComplexView2<T, Mem> const& field,
                                 ComplexView2<T, Mem> const& num, RealView2<T, Mem> const& weight, double alpha,
                                 WMax const& w_max, double step = 1.0, SumAfterUse num_after = SumAfterUse::kept,
                                 SumAfterUse weight_after = SumAfterUse::kept) {
  auto f = field;
  auto u = num;
  auto w = weight;
  bool const zero = num_after == SumAfterUse::zeroed, zero_w = weight_after == SumAfterUse::zeroed;
  ScalarArg<T, Mem> const wm(w_max);
  for_each_tile_span(space, "ptyko::apply_preconditioned_update(tiles)", tiles, int(field.extent(0)),
                     int(field.extent(1)), KOKKOS_LAMBDA(int y, int x0, int x1) {
                       PreconditionedStep<T> const op(alpha, wm.get(), step);
                       Complex<T>* fr = &f(y, 0);
                       Complex<T>* ur = &u(y, 0);
                       T* wr = &w(y, 0);
                       for (int x = x0; x < x1; ++x) op(fr[x], ur[x], wr[x]);
                       if (zero)
                         for (int x = x0; x < x1; ++x) ur[x] = Complex<T>(0);
                       if (zero_w)
                         for (int x = x0; x < x1; ++x) wr[x] = T(0);
                     }, prefetch_rows_of(f, u, w));
}

/// dir <- dir / sqrt(((1 - alpha) w)^2 + (alpha w_max)^2): LSQML's
/// preconditioned search direction (Odstrcil et al. 2018) of a probe. Works
/// on flattened Views like apply_preconditioned_update. Non-blocking.
template <class ExecSpace, class FieldView, class WeightView, class WMax>
void precondition_direction(ExecSpace const& space, FieldView const& dir, WeightView const& weight,
                            double alpha, WMax const& w_max) {
  using T = typename WeightView::non_const_value_type;
  std::size_t const n = dir.span(), w_n = weight.span();
  PTYKO_ASSERT(n % w_n == 0, "direction and weight shapes do not match");
  auto* f = dir.data();
  auto const* w = weight.data();
  ScalarArg<T, typename ExecSpace::memory_space> const wm(w_max);
  for_each_plane_span(space, "ptyko::precondition_direction", int(n / w_n), w_n,
                      KOKKOS_LAMBDA(int p, std::size_t k0, std::size_t k1) {
                        PreconditionedDirection<T> const op(alpha, wm.get());
                        auto* fp = f + p * w_n;
                        for (std::size_t k = k0; k < k1; ++k) op(fp[k], w[k]);
                      });
}

/// The same for an (H, W) object direction over the tiles of a batch;
/// `weight_after`: whether the pass clears the weight behind itself.
/// Non-blocking.
template <class ExecSpace, class T, class Mem, class WMax>
void precondition_direction(ExecSpace const& space, TileList<Mem> const& tiles, ComplexView2<T, Mem> const& dir,
                            RealView2<T, Mem> const& weight, double alpha, WMax const& w_max,
                            SumAfterUse weight_after = SumAfterUse::kept) {
  auto d = dir;
  auto w = weight;
  bool const zero_w = weight_after == SumAfterUse::zeroed;
  ScalarArg<T, Mem> const wm(w_max);
  for_each_tile_span(space, "ptyko::precondition_direction(tiles)", tiles, int(dir.extent(0)), int(dir.extent(1)),
                     KOKKOS_LAMBDA(int y, int x0, int x1) {
                       PreconditionedDirection<T> const op(alpha, wm.get());
                       Complex<T>* dr = &d(y, 0);
                       T* wr = &w(y, 0);
                       for (int x = x0; x < x1; ++x) op(dr[x], wr[x]);
                       if (zero_w)
                         for (int x = x0; x < x1; ++x) wr[x] = T(0);
                     }, prefetch_rows_of(d, w));
}

/// field += step * dir (same shapes); `after`: whether the pass clears dir
/// behind itself; `step`: a double or a ScalarArg<double, Mem>.
/// Non-blocking.
template <class ExecSpace, class View, class Step>
void add_scaled(ExecSpace const& space, View const& field, View const& dir, Step const& step,
                SumAfterUse after = SumAfterUse::kept) {
  using V = typename View::non_const_value_type;
  using R = typename V::value_type;
  PTYKO_ASSERT(field.span() == dir.span(), "add_scaled: shapes do not match");
  auto* f = field.data();
  auto* d = dir.data();
  ScalarArg<double, typename ExecSpace::memory_space> const st(step);
  bool const zero = after == SumAfterUse::zeroed;
  for_each_plane_span(space, "ptyko::add_scaled", 1, field.span(),
                      KOKKOS_LAMBDA(int, std::size_t k0, std::size_t k1) {
                        R const s(st.get());
                        for (std::size_t k = k0; k < k1; ++k) f[k] += s * d[k];
                        if (zero)
                          for (std::size_t k = k0; k < k1; ++k) d[k] = V(0);
                      });
}

/// object += step * dir over the tiles of a batch (`step` as above).
/// Non-blocking.
template <class ExecSpace, class T, class Mem, class Step>
void add_scaled(ExecSpace const& space, TileList<Mem> const& tiles, ComplexView2<T, Mem> const& field,
                ComplexView2<T, Mem> const& dir, Step const& step, SumAfterUse after = SumAfterUse::kept) {
  auto f = field;
  auto d = dir;
  ScalarArg<double, Mem> const st(step);
  bool const zero = after == SumAfterUse::zeroed;
  for_each_tile_span(space, "ptyko::add_scaled(tiles)", tiles, int(field.extent(0)), int(field.extent(1)),
                     KOKKOS_LAMBDA(int y, int x0, int x1) {
                       T const s(st.get());
                       Complex<T>* fr = &f(y, 0);
                       Complex<T>* dr = &d(y, 0);
                       for (int x = x0; x < x1; ++x) fr[x] += s * dr[x];
                       if (zero)
                         for (int x = x0; x < x1; ++x) dr[x] = Complex<T>(0);
                     }, prefetch_rows_of(f, d));
}

/// num = 0 and weight = 0 over the tiles. Non-blocking.
template <class ExecSpace, class T, class Mem>
void zero_tiles(ExecSpace const& space, TileList<Mem> const& tiles, ComplexView2<T, Mem> const& num,
                RealView2<T, Mem> const& weight) {
  auto u = num;
  auto w = weight;
  for_each_tile_span(space, "ptyko::zero_tiles", tiles, int(num.extent(0)), int(num.extent(1)),
                     KOKKOS_LAMBDA(int y, int x0, int x1) {
                       Complex<T>* ur = &u(y, 0);
                       T* wr = &w(y, 0);
                       for (int x = x0; x < x1; ++x) {
                         ur[x] = Complex<T>(0);
                         wr[x] = T(0);
                       }
                     }, prefetch_rows_of(u, w));
}

/// sum = 0 over the tiles, for one (H, W) sum of any value type: a
/// numerator or a weight whose partner the pass that read it last already
/// cleared (SumAfterUse::zeroed), or a strategy's accumulated weights.
/// Non-blocking.
template <class ExecSpace, class Mem, class View>
void zero_tiles(ExecSpace const& space, TileList<Mem> const& tiles, View const& sum) {
  static_assert(View::rank == 2, "ptyko::zero_tiles: an (H, W) sum");
  using V = typename View::non_const_value_type;
  auto v = sum;
  char const* label = std::is_floating_point_v<V> ? "ptyko::zero_tiles(weights)" : "ptyko::zero_tiles(numerator)";
  for_each_tile_span(space, label, tiles, int(sum.extent(0)), int(sum.extent(1)),
                     KOKKOS_LAMBDA(int y, int x0, int x1) {
                       V* r = &v(y, 0);
                       for (int x = x0; x < x1; ++x) r[x] = V(0);
                     }, prefetch_rows_of(v));
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
  for_each_plane_span(space, "ptyko::apply_weighted_average", int(n / w_n), w_n,
                      KOKKOS_LAMBDA(int p, std::size_t k0, std::size_t k1) {
                        auto* fp = f + p * w_n;
                        auto const* up = u + p * w_n;
                        for (std::size_t k = k0; k < k1; ++k) {
                          T const den = w[k] + in;
                          fp[k] = den > T(0) ? (up[k] + in * fp[k]) / den : fp[k];  // a select: vectorises
                        }
                      });
}

/// Clips |object| to at most `limit` (phase kept) over the tiles (pass
/// all_tiles for the whole object). Non-blocking.
template <class ExecSpace, class T, class Mem>
void clip_amplitude(ExecSpace const& space, TileList<Mem> const& tiles, ComplexView2<T, Mem> const& object, T limit) {
  auto o = object;
  for_each_tile_span(space, "ptyko::clip_amplitude", tiles, int(object.extent(0)), int(object.extent(1)),
                     KOKKOS_LAMBDA(int y, int x0, int x1) {
                       Complex<T>* row = &o(y, 0);
                       for (int x = x0; x < x1; ++x) {
                         T const a = math::sqrt(math::norm2(row[x]));
                         row[x] *= a > limit ? limit / a : T(1);
                       }
                     }, prefetch_rows_of(o));
}

/// sum |a - b|^2 / sum |b|^2 over two contiguous complex Views of the same
/// size (e.g. two probes), in double; 0 when both are zero (blocking:
/// returns a host scalar).
template <class ExecSpace, class View>
double relative_squared_distance(ExecSpace const& space, View const& a, View const& b) {
  PTYKO_ASSERT(a.span() == b.span() && a.span_is_contiguous() && b.span_is_contiguous(),
               "relative_squared_distance: two contiguous Views of one size");
  auto const* pa = a.data();
  auto const* pb = b.data();
  Kokkos::complex<double> sums(0, 0);  // (sum |a - b|^2, sum |b|^2)
  Kokkos::parallel_reduce(
      "ptyko::relative_squared_distance", Kokkos::RangePolicy<ExecSpace>(space, 0, a.span()),
      KOKKOS_LAMBDA(std::size_t k, Kokkos::complex<double>& s) {
        s += Kokkos::complex<double>(double(math::norm2(pa[k] - pb[k])), double(math::norm2(pb[k])));
      },
      sums);
  return sums.imag() > 0 ? sums.real() / sums.imag() : (sums.real() > 0 ? 1.0 : 0.0);
}

/// Momentum across epochs, in one field per updated field x (an object tile
/// or the probe modes), element-wise, so that copies of a pixel on several
/// ranks stay equal. Before an epoch, momentum_begin turns the velocity v
/// into w = friction v - x; after it, momentum_end forms the new velocity
/// v = x + w = (the epoch's own update) + friction v and, when `step`, moves
/// x <- x + gain v (with limit > 0, |x| clipped to limit: --object-clip),
/// else keeps `keep` v. Non-blocking.
template <class ExecSpace, class View, class T>
void momentum_begin(ExecSpace const& space, View const& x, View const& velocity, T friction) {
  PTYKO_ASSERT(x.span() == velocity.span() && x.span_is_contiguous() && velocity.span_is_contiguous(),
               "momentum_begin: two contiguous Views of one size");
  auto const* px = x.data();
  auto* pv = velocity.data();
  Kokkos::parallel_for(
      "ptyko::momentum_begin", Kokkos::RangePolicy<ExecSpace>(space, 0, x.span()),
      KOKKOS_LAMBDA(std::size_t k) { pv[k] = friction * pv[k] - px[k]; });
}

template <class ExecSpace, class View, class T>
void momentum_end(ExecSpace const& space, View const& x, View const& velocity, bool step, T gain, T limit, T keep) {
  PTYKO_ASSERT(x.span() == velocity.span() && x.span_is_contiguous() && velocity.span_is_contiguous(),
               "momentum_end: two contiguous Views of one size");
  auto* px = x.data();
  auto* pv = velocity.data();
  Kokkos::parallel_for(
      "ptyko::momentum_end", Kokkos::RangePolicy<ExecSpace>(space, 0, x.span()), KOKKOS_LAMBDA(std::size_t k) {
        auto const v = px[k] + pv[k];
        if (!step) {
          pv[k] = keep * v;
          return;
        }
        pv[k] = v;
        auto y = px[k] + gain * v;
        if (limit > T(0)) {
          T const a = math::sqrt(math::norm2(y));
          if (a > limit) y *= limit / a;
        }
        px[k] = y;
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
