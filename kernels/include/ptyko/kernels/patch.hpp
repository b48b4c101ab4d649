#pragma once
// Patch extraction S_j (bilinear sub-pixel interpolation) and its adjoint
// S_j^T (scatter-add with the same four weights, atomic where patches overlap).
//
// Position convention (docs/conventions.md): position (y, x) is the object
// pixel under the probe's pixel (D/2, D/2), so patch pixel (i, j) samples the
// object at (y - D/2 + i, x - D/2 + j), interpolated bilinearly.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>

namespace ptyko {

/// Integer corner and bilinear fractions of the patch of one position.
template <class T>
struct PatchCorner {
  int y, x;  ///< object pixel of patch pixel (0, 0) before interpolation
  T fy, fx;  ///< fractional shift in [0, 1)

  KOKKOS_INLINE_FUNCTION PatchCorner(T pos_y, T pos_x, int D) {
    T const cy = pos_y - T(D / 2);
    T const cx = pos_x - T(D / 2);
    // Truncation is floor here: patches lie inside the object, so corners
    // are >= 0 (checked by patches_inside), and it is far cheaper than a
    // floor call in every kernel's inner loop.
    y = int(cy);
    x = int(cx);
    fy = cy - T(y);
    fx = cx - T(x);
  }

  /// Bilinear sample at patch pixel (i, j), given pointers to the object
  /// rows y + i and y + i + 1, each at column x (row pointers: the form that
  /// vectorises over j).
  template <class V>
  KOKKOS_INLINE_FUNCTION V sample_rows(V const* row0, V const* row1, int j) const {
    return blend(row0[j], row0[j + 1], row1[j], row1[j + 1]);
  }

  /// The samples at patch columns [j0, j1) into out, all three complex rows
  /// seen as (re, im) pairs (as_pairs). Host code walks the elements
  /// e = 2 j + part with its iterations declared independent, the form Clang
  /// vectorises (frame_loop.hpp); device code reads and writes whole values
  /// (pair_at: one load per neighbour, not two).
  KOKKOS_INLINE_FUNCTION void sample_pair_span(T const* row0, T const* row1, int j0, int j1, T* out) const {
#if PTYKO_DEVICE_PASS
    for (int j = j0; j < j1; ++j)
      set_pair(out, j, blend(pair_at(row0, j), pair_at(row0, j + 1), pair_at(row1, j), pair_at(row1, j + 1)));
#else
    PTYKO_INDEPENDENT_ITERATIONS
    for (int e = 2 * j0; e < 2 * j1; ++e) out[e] = blend(row0[e], row0[e + 2], row1[e], row1[e + 2]);
#endif
  }

  /// The bilinear weights applied to the four neighbours (top left, top
  /// right, bottom left, bottom right).
  template <class V>
  KOKKOS_INLINE_FUNCTION V blend(V const& a, V const& b, V const& c, V const& d) const {
    return (T(1) - fy) * ((T(1) - fx) * a + fx * b) + fy * ((T(1) - fx) * c + fx * d);
  }
};

/// True when every patch of the positions lies inside an (H, W) object,
/// including the extra row/column that bilinear interpolation reads.
/// Host function on host-accessible positions.
template <class PositionsView>
bool patches_inside(PositionsView const& positions, int D, int H, int W) {
  using T = typename PositionsView::non_const_value_type;
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename PositionsView::memory_space>::accessible,
                "ptyko::patches_inside: positions must be host-accessible");
  for (std::size_t n = 0; n < positions.extent(0); ++n) {
    if (!math::isfinite(positions(n, 0)) || !math::isfinite(positions(n, 1))) return false;
    if (positions(n, 0) < T(D / 2) || positions(n, 1) < T(D / 2)) return false;  // corner < 0
    PatchCorner<T> const c(positions(n, 0), positions(n, 1), D);
    if (c.y < 0 || c.x < 0 || c.y + D >= H || c.x + D >= W) return false;
  }
  return true;
}

/// Row i of the patch whose corner is `c`, columns [j0, j1), as (re, im)
/// pairs into `out` (as_pairs of the patch row): bilinear samples of the
/// object rows c.y + i and c.y + i + 1 (sample_pair_span), D the patch's
/// side. A host work item that walks more than one column first asks for
/// object row c.y + i + 3, the one patch row i + 2 adds (prefetch_host;
/// nothing on devices).
template <class T, class Mem>
KOKKOS_INLINE_FUNCTION void sample_patch_row(ComplexView2<T, Mem> const& obj, PatchCorner<T> const& c, int D, int i,
                                             int j0, int j1, T* out) {
  if (j1 - j0 > 1 && i + 3 <= D) prefetch_host(&obj(c.y + i + 3, c.x), (D + 1) * sizeof(Complex<T>));
  // Element by element over the rows' (re, im) pairs, iterations
  // independent: Clang vectorises only this form (frame_loop.hpp).
  c.sample_pair_span(as_pairs(&obj(c.y + i, c.x)), as_pairs(&obj(c.y + i + 1, c.x)), j0, j1, out);
}

/// patches(b, i, j) = (S_{indices(b)} object)(i, j) for b < indices.extent(0).
/// Non-blocking; runs on `space`.
template <class ExecSpace, class T, class Mem>
void extract_patches(ExecSpace const& space, ComplexView2<T, Mem> const& object,
                     PositionView<T, Mem> const& positions, IndexView<Mem> const& indices,
                     ComplexView3<T, Mem> const& patches) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, Mem>::accessible,
                "ptyko::extract_patches: Views not accessible from the execution space");
  int const B = int(indices.extent(0));
  int const D = int(patches.extent(1));
  PTYKO_ASSERT(int(patches.extent(0)) >= B && int(patches.extent(2)) == D, "patch buffer too small");
  auto obj = object;
  auto pos = positions;
  auto idx = indices;
  auto out = patches;
  for_each_frame_span(space, "ptyko::extract_patches", B, D, KOKKOS_LAMBDA(int b, int i, int j0, int j1) {
        int const n = idx(b);
        PatchCorner<T> const c(pos(n, 0), pos(n, 1), D);
        sample_patch_row(obj, c, D, i, j0, j1, as_pairs(&out(b, i, 0)));
      });
}

namespace impl {

template <class V>
struct is_kokkos_complex : std::false_type {};
template <class R>
struct is_kokkos_complex<Kokkos::complex<R>> : std::true_type {};

/// *target += x, atomically when Atomic. A complex value is added as its two
/// real parts, each a hardware atomic add (PTX red.add.f32 / .f64): Kokkos's
/// atomic_add on a whole Kokkos::complex is a 64-bit compare-and-swap loop
/// for float and goes through a lock array for double (16 bytes). The sum
/// is the same; only the two parts are no longer updated as one.
template <bool Atomic, class V>
KOKKOS_INLINE_FUNCTION void add_to(V* target, V const& x) {
  if constexpr (!Atomic) {
    *target += x;
  } else if constexpr (is_kokkos_complex<V>::value) {
    Kokkos::atomic_add(&target->real(), x.real());
    Kokkos::atomic_add(&target->imag(), x.imag());
  } else {
    Kokkos::atomic_add(target, x);
  }
}

/// Footprint row u of one position under the adjoint S^T of bilinear
/// extraction: pixel (u, v) of the (D+1) x (D+1) footprint gets the four
/// contributions of patch rows u (weights (1-fy)(1-fx) at v, (1-fy)fx at
/// v-1) and u-1 (fy(1-fx), fy fx) of a value V (real or complex); pixels
/// outside the patch contribute nothing. inner(v) is the value at the
/// columns 1..D-1 of the rows 1..D-1 (all four terms, no conditions: the
/// loop that vectorises), edge(v) at any pixel.
template <class T, class V>
struct BilinearAdjointRow {
  T w00, w01, w10, w11;
  V const* r0;  ///< patch row u - 1 (nullptr for u == 0)
  V const* r1;  ///< patch row u (nullptr for u == D)
  int D;

  template <class RowFn>
  KOKKOS_INLINE_FUNCTION BilinearAdjointRow(PatchCorner<T> const& c, RowFn const& row, int b, int u, int D_)
      : w00((T(1) - c.fy) * (T(1) - c.fx)),
        w01((T(1) - c.fy) * c.fx),
        w10(c.fy * (T(1) - c.fx)),
        w11(c.fy * c.fx),
        r0(u > 0 ? row(b, u - 1) : nullptr),
        r1(u < D_ ? row(b, u) : nullptr),
        D(D_) {}

  KOKKOS_INLINE_FUNCTION bool interior() const { return r0 != nullptr && r1 != nullptr; }
  KOKKOS_INLINE_FUNCTION V inner(int v) const {
    return V(w00 * r1[v]) + V(w01 * r1[v - 1]) + V(w10 * r0[v]) + V(w11 * r0[v - 1]);
  }
  KOKKOS_INLINE_FUNCTION V edge(int v) const {
    V sum = V(0);
    if (r1 != nullptr && v < D) sum += w00 * r1[v];
    if (r1 != nullptr && v > 0) sum += w01 * r1[v - 1];
    if (r0 != nullptr && v < D) sum += w10 * r0[v];
    if (r0 != nullptr && v > 0) sum += w11 * r0[v - 1];
    return sum;
  }
};

/// Calls pixel.inner(v) or pixel.edge(v) for the columns [v0, v1) of a
/// footprint row (`interior`: a row 1..D-1): the inner columns in one loop
/// without conditions, so that it vectorises, the edge columns apart.
template <class Pixel>
KOKKOS_INLINE_FUNCTION void walk_footprint_row(Pixel const& pixel, bool interior, int D, int v0, int v1) {
  int v = v0;
  if (interior) {
    if (v == 0 && v < v1) pixel.edge(v++);
    int const inner_end = v1 < D ? v1 : D;
    for (; v < inner_end; ++v) pixel.inner(v);
    if (v < v1) pixel.edge(v);
    return;
  }
  for (; v < v1; ++v) pixel.edge(v);  // first and last footprint rows
}

/// Row spans of the (D+1) x (D+1) footprints of a batch: footprint row u,
/// columns [v0, v1), gets its BilinearAdjointRow values added.
/// `row(b, i)` points to row i of the value of patch b (real or complex).
/// Atomic: footprints of a batch overlap, so concurrent spans may meet on an
/// object pixel.
template <bool Atomic, class T, class Mem, class TargetView, class RowFn>
struct FootprintScatter {
  PositionView<T, Mem> pos;
  IndexView<Mem> idx;
  TargetView out;
  RowFn row;
  int D;

  using V = typename TargetView::non_const_value_type;
  struct AddPixel {
    BilinearAdjointRow<T, V> value;
    V* o;
    KOKKOS_INLINE_FUNCTION void inner(int v) const { add_to<Atomic, V>(o + v, value.inner(v)); }
    KOKKOS_INLINE_FUNCTION void edge(int v) const { add_to<Atomic, V>(o + v, value.edge(v)); }
  };

  KOKKOS_INLINE_FUNCTION PatchCorner<T> corner(int n) const { return PatchCorner<T>(pos(n, 0), pos(n, 1), D); }

  KOKKOS_INLINE_FUNCTION void operator()(int b, int u, int v0, int v1) const {
    PatchCorner<T> const c = corner(idx(b));
    AddPixel const pixel{BilinearAdjointRow<T, V>(c, row, b, u, D), &out(c.y + u, c.x)};
    // Host rows: ask for the object row that footprint row u + 2 adds to.
    if (v1 - v0 > 1 && u + 2 <= D) prefetch_host(&out(c.y + u + 2, c.x), (D + 1) * sizeof(V));
    walk_footprint_row(pixel, pixel.value.interior(), D, v0, v1);
  }
};

/// A FootprintScatter of a real target (weights) on host spaces that also
/// reduces the largest value it leaves in its span. Host loops add without
/// atomics, so the value read back is the pixel's sum so far; sums of
/// non-negative values only grow, so the largest over every span is the
/// largest final value (read from L1, right after the adds).
template <class Scatter, class V>
struct FootprintScatterMax {
  Scatter scatter;
  KOKKOS_INLINE_FUNCTION void operator()(int b, int u, int v0, int v1, V& m) const {
    scatter(b, u, v0, v1);
    int const n = scatter.idx(b);
    auto const c = scatter.corner(n);
    m = max_nonnegative(&scatter.out(c.y + u, c.x), std::size_t(v0), std::size_t(v1), m);
  }
};

/// Host spaces with several threads: one object row y0 + r per work item,
/// taking footprint row y - c.y of every position of the batch that covers
/// it, in batch order. No two threads write one pixel, so no atomics (a
/// complex atomic add is a compare-and-swap loop on CPUs), and every pixel
/// gets its adds in the order one thread gives them: the same sums, bit for
/// bit, at any thread count.
template <class T, class Mem, class TargetView, class RowFn>
struct FootprintRows {
  FootprintScatter<false, T, Mem, TargetView, RowFn> scatter;
  int B, y0;
  KOKKOS_INLINE_FUNCTION void operator()(int r) const {
    int const y = y0 + r;
    for (int b = 0; b < B; ++b) {
      int const u = y - scatter.corner(scatter.idx(b)).y;
      if (u >= 0 && u <= scatter.D) scatter(b, u, 0, scatter.D + 1);
    }
  }
};

/// FootprintRows reducing the largest value it leaves (FootprintScatterMax).
template <class T, class Mem, class TargetView, class RowFn, class V>
struct FootprintRowsMax {
  FootprintScatterMax<FootprintScatter<false, T, Mem, TargetView, RowFn>, V> scatter;
  int B, y0;
  KOKKOS_INLINE_FUNCTION void operator()(int r, V& m) const {
    int const y = y0 + r;
    auto const& s = scatter.scatter;
    for (int b = 0; b < B; ++b) {
      int const u = y - s.corner(s.idx(b)).y;
      if (u >= 0 && u <= s.D) scatter(b, u, 0, s.D + 1, m);
    }
  }
};

/// The object rows [y0, y1] a batch's footprints cover (host memory).
template <class T, class Mem>
std::array<int, 2> footprint_rows(int B, int D, PositionView<T, Mem> const& positions, IndexView<Mem> const& indices) {
  int y0 = 0, y1 = -1;
  for (int b = 0; b < B; ++b) {
    int const n = indices(b);
    int const y = PatchCorner<T>(positions(n, 0), positions(n, 1), D).y;
    y0 = b == 0 || y < y0 ? y : y0;
    y1 = b == 0 || y + D > y1 ? y + D : y1;
  }
  return {y0, y1};
}

}  // namespace impl

/// target += sum_b S_{indices(b)}^T value(b), where row(b, i) is a device
/// functor returning a pointer to row i of the value of patch b (D x D, real
/// or complex). Works per object pixel of each (D+1)x(D+1) footprint, so
/// each pixel gets one add per position instead of four. One host thread:
/// footprint rows in batch order, plain adds; several host threads: object
/// rows, each taking every footprint that covers it in batch order (no
/// atomics, the one-thread sums); devices: atomic adds. Non-blocking.
template <class ExecSpace, class TargetView, class RowFn, class T, class Mem>
void scatter_add_patches(ExecSpace const& space, int B, int D, PositionView<T, Mem> const& positions,
                         IndexView<Mem> const& indices, TargetView const& target, RowFn const& row,
                         char const* label = "ptyko::scatter_add_patches") {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, Mem>::accessible,
                "ptyko::scatter_add_patches: Views not accessible from the execution space");
  static_assert(TargetView::rank == 2, "ptyko::scatter_add_patches: target must be (H, W)");
  int const E = D + 1;  // footprint edge
  impl::FootprintScatter<false, T, Mem, TargetView, RowFn> const plain{positions, indices, target, row, D};
  if constexpr (is_host_space_v<ExecSpace>) {
    if (space.concurrency() == 1) {
      for_each_frame_span(space, label, B, E, plain);
    } else if (B > 0) {
      auto const [y0, y1] = impl::footprint_rows(B, D, positions, indices);
      Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, y1 - y0 + 1),
                           impl::FootprintRows<T, Mem, TargetView, RowFn>{plain, B, y0});
    }
  } else {
    for_each_frame_span(space, label, B, E,
                        impl::FootprintScatter<true, T, Mem, TargetView, RowFn>{positions, indices, target, row, D});
  }
}

/// scatter_add_patches of non-negative real values (weights) on host spaces,
/// returning the largest value of `target` in the pixels it added to: with
/// the target zero elsewhere (a batch's weights over its tiles), the
/// maximum of the weights without a pass of its own (the same value as
/// max_over_tiles). Blocking.
template <class ExecSpace, class TargetView, class RowFn, class T, class Mem>
double scatter_add_patches_max(ExecSpace const& space, int B, int D, PositionView<T, Mem> const& positions,
                               IndexView<Mem> const& indices, TargetView const& target, RowFn const& row,
                               char const* label) {
  static_assert(is_host_space_v<ExecSpace>, "ptyko::scatter_add_patches_max: host spaces only");
  static_assert(TargetView::rank == 2, "ptyko::scatter_add_patches_max: target must be (H, W)");
  using V = typename TargetView::non_const_value_type;
  static_assert(std::is_floating_point_v<V>, "ptyko::scatter_add_patches_max: a real target");
  if (B <= 0) return 0.0;
  using Scatter = impl::FootprintScatter<false, T, Mem, TargetView, RowFn>;
  impl::FootprintScatterMax<Scatter, V> const with_max{Scatter{positions, indices, target, row, D}};
  V result = 0;
  if (space.concurrency() == 1) {
    Kokkos::parallel_reduce(label, impl::row_policy(space, B * (D + 1)),
                            impl::FrameRowSpansReduce<decltype(with_max), V>{with_max, D + 1}, Kokkos::Max<V>(result));
  } else {
    auto const [y0, y1] = impl::footprint_rows(B, D, positions, indices);
    Kokkos::parallel_reduce(label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, y1 - y0 + 1),
                            impl::FootprintRowsMax<T, Mem, TargetView, RowFn, V>{with_max, B, y0},
                            Kokkos::Max<V>(result));
  }
  return std::max(0.0, double(result));
}

/// target += sum_b S_{indices(b)}^T patches(b): the adjoint of extract_patches.
/// Non-blocking.
template <class ExecSpace, class PatchView, class TargetView, class T, class Mem>
void add_patches(ExecSpace const& space, PatchView const& patches,
                 PositionView<T, Mem> const& positions, IndexView<Mem> const& indices,
                 TargetView const& target) {
  static_assert(PatchView::rank == 3, "ptyko::add_patches: patches must be (B, D, D)");
  auto p = patches;
  scatter_add_patches(
      space, int(indices.extent(0)), int(patches.extent(1)), positions, indices, target,
      KOKKOS_LAMBDA(int b, int i) { return &p(b, i, 0); }, "ptyko::add_patches");
}

}  // namespace ptyko
