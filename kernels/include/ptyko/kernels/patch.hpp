#pragma once
// Patch extraction S_j (bilinear sub-pixel interpolation) and its adjoint
// S_j^T (scatter-add with the same four weights, atomic where patches overlap).
//
// Position convention (docs/conventions.md): position (y, x) is the object
// pixel under the probe's pixel (D/2, D/2), so patch pixel (i, j) samples the
// object at (y - D/2 + i, x - D/2 + j), interpolated bilinearly.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <string>

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

  /// Bilinear sample of `obj` at patch pixel (i, j).
  template <class ObjectView>
  KOKKOS_INLINE_FUNCTION typename ObjectView::non_const_value_type sample(ObjectView const& obj, int i,
                                                                          int j) const {
    int const yy = y + i, xx = x + j;
    return (T(1) - fy) * ((T(1) - fx) * obj(yy, xx) + fx * obj(yy, xx + 1)) +
           fy * ((T(1) - fx) * obj(yy + 1, xx) + fx * obj(yy + 1, xx + 1));
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
  Kokkos::parallel_for(
      "ptyko::extract_patches", frame_policy(space, B, D),
      KOKKOS_LAMBDA(int b, int i, int j) {
        int const n = idx(b);
        out(b, i, j) = PatchCorner<T>(pos(n, 0), pos(n, 1), D).sample(obj, i, j);
      });
}

/// target += sum_b S_{indices(b)}^T value(b, ., .), where value(b, i, j) is a
/// device-callable functor returning the patch value (real or complex).
/// Works per object pixel of each (D+1)x(D+1) footprint, so each pixel gets
/// one atomic add per position instead of four. Non-blocking.
template <class ExecSpace, class TargetView, class ValueFn, class T, class Mem>
void scatter_add_patches(ExecSpace const& space, int B, int D,
                         PositionView<T, Mem> const& positions, IndexView<Mem> const& indices,
                         TargetView const& target, ValueFn const& value,
                         char const* label = "ptyko::scatter_add_patches") {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, Mem>::accessible,
                "ptyko::scatter_add_patches: Views not accessible from the execution space");
  static_assert(TargetView::rank == 2, "ptyko::scatter_add_patches: target must be (H, W)");
  using V = typename TargetView::non_const_value_type;
  int const E = D + 1;  // footprint edge
  auto pos = positions;
  auto idx = indices;
  auto out = target;
  Kokkos::parallel_for(
      label, frame_policy(space, B, E),
      KOKKOS_LAMBDA(int b, int u, int v) {
        int const n = idx(b);
        PatchCorner<T> const c(pos(n, 0), pos(n, 1), D);
        // Object pixel (c.y+u, c.x+v) takes weight (1-fy)(1-fx) from patch
        // pixel (u, v), (1-fy)fx from (u, v-1), fy(1-fx) from (u-1, v) and
        // fy fx from (u-1, v-1); pixels outside the patch contribute nothing.
        V sum = V(0);
        bool const in_u0 = u < D, in_u1 = u > 0, in_v0 = v < D, in_v1 = v > 0;
        if (in_u0 && in_v0) sum += ((T(1) - c.fy) * (T(1) - c.fx)) * value(b, u, v);
        if (in_u0 && in_v1) sum += ((T(1) - c.fy) * c.fx) * value(b, u, v - 1);
        if (in_u1 && in_v0) sum += (c.fy * (T(1) - c.fx)) * value(b, u - 1, v);
        if (in_u1 && in_v1) sum += (c.fy * c.fx) * value(b, u - 1, v - 1);
        Kokkos::atomic_add(&out(c.y + u, c.x + v), sum);
      });
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
      KOKKOS_LAMBDA(int b, int i, int j) { return p(b, i, j); }, "ptyko::add_patches");
}

}  // namespace ptyko
