#pragma once
// The regularised (rPIE-style) object update of isolated positions: those
// of a batch whose footprints meet no other position's (isolated_footprints
// in tiles.hpp). Such a position is the only one that writes its object
// pixels, so the batch's object sums there are its own S^T terms, and
//   O += step S^T(sum_m conj(P_m) delta_m) / ((1 - alpha) S^T sum_m |P_m|^2 + alpha w_max)
// can be evaluated footprint pixel by footprint pixel, straight from the
// patch-shaped products, without the object-shaped numerator and weight:
// no scatter into them, no pass over the batch's tiles, no clearing. On a
// large scan most positions of a sparse batch are isolated, and those
// object-shaped passes were a third of an rPIE epoch (docs/performance.md).
// The values are those of scatter + tiled update (PreconditionedStep of the
// same two BilinearAdjointRow sums, up to the compiler's contractions).
// LSQML's search direction on isolated positions is kept footprint-shaped
// (isolated_directions): its step sums sample it there, and
// add_isolated_directions adds it once the step is known.

#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/patch.hpp>
#include <ptyko/kernels/types.hpp>
#include <ptyko/kernels/update.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

namespace impl {

/// One footprint pixel of an isolated position's update.
template <class T>
struct IsolatedUpdatePixel {
  BilinearAdjointRow<T, Complex<T>> num;  ///< products row (conj(P) delta summed over modes)
  BilinearAdjointRow<T, T> w;             ///< probe intensity row
  Complex<T>* o;                          ///< object row at the footprint's column 0
  PreconditionedStep<T> op;
  KOKKOS_INLINE_FUNCTION void inner(int v) const { op(o[v], num.inner(v), w.inner(v)); }
  KOKKOS_INLINE_FUNCTION void edge(int v) const { op(o[v], num.edge(v), w.edge(v)); }
};

/// One footprint pixel of an isolated position's LSQML search direction.
template <class T>
struct IsolatedDirectionPixel {
  BilinearAdjointRow<T, Complex<T>> num;  ///< products row
  BilinearAdjointRow<T, T> w;             ///< probe intensity row
  Complex<T>* d;                          ///< direction row (footprint column 0)
  PreconditionedDirection<T> op;
  KOKKOS_INLINE_FUNCTION void set(int v, Complex<T> u, T weight) const {
    op(u, weight);
    d[v] = u;
  }
  KOKKOS_INLINE_FUNCTION void inner(int v) const { set(v, num.inner(v), w.inner(v)); }
  KOKKOS_INLINE_FUNCTION void edge(int v) const { set(v, num.edge(v), w.edge(v)); }
};

/// Writes S^T values of a footprint row to out[v - first].
template <class T>
struct FootprintRowValues {
  BilinearAdjointRow<T, T> w;
  T* out;
  int first;
  KOKKOS_INLINE_FUNCTION void inner(int v) const { out[v - first] = w.inner(v); }
  KOKKOS_INLINE_FUNCTION void edge(int v) const { out[v - first] = w.edge(v); }
};

}  // namespace impl

/// Where the footprints lie: the positions positions(indices(b)) of this
/// rank's frames, in this rank's object coordinates.
template <class T, class Mem>
struct IndexedPositions {
  PositionView<T, Mem> pos;
  IndexView<Mem> idx;
  int count() const { return int(idx.extent(0)); }
  KOKKOS_INLINE_FUNCTION PatchCorner<T> corner(int b, int D) const {
    return PatchCorner<T>(pos(idx(b), 0), pos(idx(b), 1), D);
  }
};

/// Other ranks' positions (SharedIsolated in core): pos(b) in the owner's
/// tile coordinates, cast to T as the owner casts it, so that the corner's
/// fraction is the owner's bit for bit, then moved by shift(b) whole
/// pixels into this rank's object.
template <class T, class Mem>
struct ShiftedPositions {
  Kokkos::View<double* [2], Kokkos::LayoutRight, Mem> pos;
  Kokkos::View<int* [2], Kokkos::LayoutRight, Mem> shift;
  int count() const { return int(pos.extent(0)); }
  KOKKOS_INLINE_FUNCTION PatchCorner<T> corner(int b, int D) const {
    PatchCorner<T> c(T(pos(b, 0)), T(pos(b, 1)), D);
    c.y += shift(b, 0);
    c.x += shift(b, 1);
    return c;
  }
};

namespace impl {

/// The columns [v0, v1) of footprint row u of a footprint at corner c that
/// lie in an (H, W) object; false when none does. Footprints of this
/// rank's own positions lie inside its object; other ranks' may reach
/// beyond it.
template <class T>
KOKKOS_INLINE_FUNCTION bool clip_footprint_row(PatchCorner<T> const& c, int u, int H, int W, int& v0, int& v1) {
  int const y = c.y + u;
  if (y < 0 || y >= H) return false;
  if (v0 < -c.x) v0 = -c.x;
  if (v1 > W - c.x) v1 = W - c.x;
  return v0 < v1;
}

}  // namespace impl

/// bounds(u) >= S^T intensity on footprint row u (u = 0..D) for every
/// position: the larger maximum of the intensity rows u - 1 and u, which
/// that footprint row interpolates with non-negative weights summing to at
/// most 1 (intensity >= 0). max_isolated_weight skips the rows whose bound
/// its running maximum already reaches. Non-blocking.
template <class ExecSpace, class T, class Mem>
void footprint_row_bounds(ExecSpace const& space, RealView2<T, Mem> const& intensity,
                          RealView1<T, Mem> const& bounds) {
  int const D = int(intensity.extent(0));
  PTYKO_ASSERT(int(bounds.extent(0)) == D + 1, "footprint row bounds need D + 1 = ", D + 1, " entries");
  auto pint = intensity;
  auto out = bounds;
  Kokkos::parallel_for(
      "ptyko::footprint_row_bounds", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, D + 1),
      KOKKOS_LAMBDA(int u) {
        T m = T(0);
        if (u > 0) m = max_nonnegative(&pint(u - 1, 0), 0, std::size_t(D), m);
        if (u < D) m = max_nonnegative(&pint(u, 0), 0, std::size_t(D), m);
        out(u) = m;
      });
}

namespace impl {
/// max_isolated_weight through a Kokkos::Max reducer, for B > 0 positions.
template <class ExecSpace, class T, class Mem, class Reducer>
void max_isolated_weight_into(ExecSpace const& space, PositionView<T, Mem> const& positions,
                              IndexView<Mem> const& indices, RealView2<T, Mem> const& intensity,
                              RealView1<T, Mem> const& row_bounds, Reducer const& reducer) {
  int const B = int(indices.extent(0)), D = int(intensity.extent(0));
  bool const skip = row_bounds.extent(0) > 0;
  PTYKO_ASSERT(!skip || int(row_bounds.extent(0)) == D + 1, "footprint row bounds need D + 1 entries");
  auto pos = positions;
  auto idx = indices;
  auto pint = intensity;
  auto bound = row_bounds;
  auto const row = KOKKOS_LAMBDA(int, int i) { return &pint(i, 0); };
  reduce_frame_spans(
      space, "ptyko::max_isolated_weight", B, D + 1,
      KOKKOS_LAMBDA(int b, int u, int v0, int v1, T& m) {
        // m is a value some pixel has (or the reduction's identity), so a
        // row whose bound does not exceed it cannot hold the maximum.
        if (skip && bound(u) <= m) return;
        PatchCorner<T> const c(pos(idx(b), 0), pos(idx(b), 1), D);
        impl::BilinearAdjointRow<T, T> const w(c, row, b, u, D);
        // Pieces of 64 columns on the host (one pixel on devices): their
        // values, then their maximum (both loops vectorise on the host; a
        // running maximum over floats does not). Pieces of 16
        // (span_chunk_v) took 100-106 ms per 10 000-frame epoch, of 64 49-76.
        constexpr int piece = is_host_space_v<ExecSpace> ? 64 : 1;
        T values[piece];
        for (int a = v0; a < v1; a += piece) {
          int const e = a + piece < v1 ? a + piece : v1;
          impl::walk_footprint_row(impl::FootprintRowValues<T>{w, values, a}, w.interior(), D, a, e);
          m = max_nonnegative(values, 0, std::size_t(e - a), m);
        }
      },
      reducer);
}
}  // namespace impl

/// The largest value of S_n^T intensity over the footprints of the
/// positions `indices` (each its own: the batch weight of an isolated
/// position), where `intensity` is sum_m |P_m|^2 (D, D). 0 when there are
/// none. `row_bounds` (footprint_row_bounds of `intensity`, or empty: no
/// skipping) lets a footprint row be skipped when it cannot exceed the
/// maximum found so far: exact, and on a smooth probe only the rows near
/// its peak are evaluated once the first position has set the maximum.
/// Blocking: returns a host scalar.
template <class ExecSpace, class T, class Mem>
double max_isolated_weight(ExecSpace const& space, PositionView<T, Mem> const& positions,
                           IndexView<Mem> const& indices, RealView2<T, Mem> const& intensity,
                           RealView1<T, Mem> const& row_bounds) {
  if (indices.extent(0) == 0) return 0.0;
  T result = 0;
  impl::max_isolated_weight_into(space, positions, indices, intensity, row_bounds, Kokkos::Max<T>(result));
  return result > T(0) ? double(result) : 0.0;
}

/// The same into `result`, a rank-0 View in the space's memory (0 when
/// there are no positions; ScalarArg reads it). Non-blocking.
template <class ExecSpace, class T, class Mem>
void max_isolated_weight(ExecSpace const& space, PositionView<T, Mem> const& positions, IndexView<Mem> const& indices,
                         RealView2<T, Mem> const& intensity, RealView1<T, Mem> const& row_bounds,
                         Kokkos::View<T, Mem> const& result) {
  if (indices.extent(0) == 0) {
    Kokkos::deep_copy(space, result, T(0));
    return;
  }
  impl::max_isolated_weight_into(space, positions, indices, intensity, row_bounds, Kokkos::Max<T, Mem>(result));
}

/// object += step S_n^T products(b) / ((1 - alpha) S_n^T intensity + alpha
/// w_max) over the footprints of the isolated positions of `placed`
/// (IndexedPositions: this rank's, n = indices(b); ShiftedPositions: other
/// ranks'), on the pixels inside `object`, where products(b) = sum_m
/// conj(P_m) delta(b, m) and intensity = sum_m |P_m|^2 (the terms
/// add_patches and UpdateSums::add_illumination would scatter), w_max the
/// batch's largest weight. `op`: a PreconditionedStep, or a
/// PreconditionedStepArg (w_max read when the kernel runs). The footprints
/// must not meet (isolated_footprints): no two work items write one pixel,
/// so there are no atomics on any space. Of another rank's product only the
/// patch rows and columns that the pixels inside `object` read must hold
/// values. Non-blocking.
template <class ExecSpace, class T, class Mem, class Placed, class Op>
void apply_isolated_update(ExecSpace const& space, Placed const& placed, ComplexView3<T, Mem> const& products,
                           RealView2<T, Mem> const& intensity, ComplexView2<T, Mem> const& object, Op const& op) {
  int const B = placed.count(), D = int(intensity.extent(0));
  int const H = int(object.extent(0)), W = int(object.extent(1));
  PTYKO_ASSERT(int(products.extent(0)) >= B && int(products.extent(1)) == D, "products do not match the positions");
  auto prod = products;
  auto pint = intensity;
  auto obj = object;
  auto const num_row = KOKKOS_LAMBDA(int b, int i) { return &prod(b, i, 0); };
  auto const w_row = KOKKOS_LAMBDA(int, int i) { return &pint(i, 0); };
  for_each_frame_span(space, "ptyko::apply_isolated_update", B, D + 1, KOKKOS_LAMBDA(int b, int u, int v0, int v1) {
        PatchCorner<T> const c = placed.corner(b, D);
        if (!impl::clip_footprint_row(c, u, H, W, v0, v1)) return;
        impl::IsolatedUpdatePixel<T> const pixel{impl::BilinearAdjointRow<T, Complex<T>>(c, num_row, b, u, D),
                                                 impl::BilinearAdjointRow<T, T>(c, w_row, b, u, D),
                                                 &obj(c.y + u, 0) + c.x, op.op()};
        // Host rows: ask for the object row two footprint rows further down.
        if (v1 - v0 > 1 && u + 2 <= D && c.y + u + 2 < H)
          prefetch_host(&obj(c.y + u + 2, 0) + c.x + v0, (v1 - v0) * sizeof(Complex<T>));
        impl::walk_footprint_row(pixel, pixel.num.interior(), D, v0, v1);
      });
}

/// The same for this rank's positions n = indices(b).
template <class ExecSpace, class T, class Mem, class Op>
void apply_isolated_update(ExecSpace const& space, PositionView<T, Mem> const& positions,
                           IndexView<Mem> const& indices, ComplexView3<T, Mem> const& products,
                           RealView2<T, Mem> const& intensity, ComplexView2<T, Mem> const& object, Op const& op) {
  apply_isolated_update(space, IndexedPositions<T, Mem>{positions, indices}, products, intensity, object, op);
}

/// LSQML's preconditioned object direction on the footprints of isolated
/// positions (`placed`, as for apply_isolated_update): directions(b, u, v)
/// = S_n^T products(b) / sqrt(((1 - alpha) S_n^T intensity)^2 + (alpha
/// w_max)^2) at object pixel (corner_y + u, corner_x + v), u, v in [0, D],
/// with the products and intensity of apply_isolated_update and `op` =
/// PreconditionedDirection (or PreconditionedDirectionArg).
/// These are the values the object-shaped direction (scatter, then
/// precondition_direction over the tiles) would hold there: the footprints
/// of isolated positions meet no other of their batch. `directions` is
/// (>= B, D + 1, D + 1); every pixel of the first B footprints that lies in
/// an (H, W) object is written (`H`, `W` as large as an int: all of them).
/// Non-blocking.
template <class ExecSpace, class T, class Mem, class Placed, class Op>
void isolated_directions(ExecSpace const& space, Placed const& placed, ComplexView3<T, Mem> const& products,
                         RealView2<T, Mem> const& intensity, ComplexView3<T, Mem> const& directions, Op const& op,
                         int H, int W) {
  int const B = placed.count(), D = int(intensity.extent(0));
  PTYKO_ASSERT(int(products.extent(0)) >= B && int(products.extent(1)) == D, "products do not match the positions");
  PTYKO_ASSERT(int(directions.extent(0)) >= B && int(directions.extent(1)) == D + 1 &&
                   int(directions.extent(2)) == D + 1,
               "isolated directions must be (B, D + 1, D + 1)");
  auto prod = products;
  auto pint = intensity;
  auto dir = directions;
  auto const num_row = KOKKOS_LAMBDA(int b, int i) { return &prod(b, i, 0); };
  auto const w_row = KOKKOS_LAMBDA(int, int i) { return &pint(i, 0); };
  for_each_frame_span(space, "ptyko::isolated_directions", B, D + 1, KOKKOS_LAMBDA(int b, int u, int v0, int v1) {
        PatchCorner<T> const c = placed.corner(b, D);
        if (!impl::clip_footprint_row(c, u, H, W, v0, v1)) return;
        impl::IsolatedDirectionPixel<T> const pixel{impl::BilinearAdjointRow<T, Complex<T>>(c, num_row, b, u, D),
                                                    impl::BilinearAdjointRow<T, T>(c, w_row, b, u, D), &dir(b, u, 0),
                                                    op.op()};
        impl::walk_footprint_row(pixel, pixel.num.interior(), D, v0, v1);
      });
}

/// The same for this rank's positions n = indices(b), whole footprints.
template <class ExecSpace, class T, class Mem, class Op>
void isolated_directions(ExecSpace const& space, PositionView<T, Mem> const& positions,
                         IndexView<Mem> const& indices, ComplexView3<T, Mem> const& products,
                         RealView2<T, Mem> const& intensity, ComplexView3<T, Mem> const& directions, Op const& op) {
  constexpr int all = 1 << 30;
  isolated_directions(space, IndexedPositions<T, Mem>{positions, indices}, products, intensity, directions, op, all,
                      all);
}

/// object += step directions(b) over the footprints of the isolated
/// positions of `placed` (isolated_directions' layout), on the pixels
/// inside `object`: add_scaled of the object-shaped direction, footprint by
/// footprint. No atomics: the footprints do not meet. `step`: a double or a
/// ScalarArg<double, Mem>. Non-blocking.
template <class ExecSpace, class T, class Mem, class Placed, class Step>
void add_isolated_directions(ExecSpace const& space, Placed const& placed, ComplexView3<T, Mem> const& directions,
                             ComplexView2<T, Mem> const& object, Step const& step) {
  int const B = placed.count(), D1 = int(directions.extent(1));
  int const H = int(object.extent(0)), W = int(object.extent(1));
  PTYKO_ASSERT(int(directions.extent(0)) >= B && int(directions.extent(2)) == D1,
               "isolated directions must be (B, D + 1, D + 1)");
  auto dir = directions;
  auto obj = object;
  ScalarArg<double, Mem> const st(step);
  for_each_frame_span(space, "ptyko::add_isolated_directions", B, D1, KOKKOS_LAMBDA(int b, int u, int v0, int v1) {
        T const s(st.get());
        PatchCorner<T> const c = placed.corner(b, D1 - 1);
        if (!impl::clip_footprint_row(c, u, H, W, v0, v1)) return;
        Complex<T>* o = &obj(c.y + u, 0) + c.x;
        Complex<T> const* d = &dir(b, u, 0);
        // Host rows: ask for the object row two footprint rows further down.
        if (v1 - v0 > 1 && u + 2 < D1 && c.y + u + 2 < H)
          prefetch_host(&obj(c.y + u + 2, 0) + c.x + v0, (v1 - v0) * sizeof(Complex<T>));
        for (int v = v0; v < v1; ++v) o[v] += s * d[v];
      });
}

/// The same for this rank's positions n = indices(b).
template <class ExecSpace, class T, class Mem, class Step>
void add_isolated_directions(ExecSpace const& space, PositionView<T, Mem> const& positions,
                             IndexView<Mem> const& indices, ComplexView3<T, Mem> const& directions,
                             ComplexView2<T, Mem> const& object, Step const& step) {
  add_isolated_directions(space, IndexedPositions<T, Mem>{positions, indices}, directions, object, step);
}

}  // namespace ptyko
