#pragma once
// Isolated positions whose pixels several ranks hold.
//
// A position of a batch whose footprint meets no other of the batch is
// updated from its own patch-shaped product (kernels/isolated_update.hpp),
// without object-shaped sums. Under neighbour-consensus the ranks' tiles
// overlap, and a footprint near a cut lies on pixels its neighbours hold
// too: every holder must update its copy of them, with the same values.
// Only the owner has the frame, so it sends the other holders the part of
// the product their pixels need (the patch rows and columns the bilinear
// adjoint reads there), and each holder evaluates the same update on its
// part of the footprint: the same inputs (product, probe, the batch's
// largest weight over all ranks, the position in the owner's tile
// coordinates shifted by whole pixels), so the copies stay bit for bit
// equal. Without this, positions near a cut went through the tile sums: on
// a 10 000-frame scan 9 241 positions are isolated on one rank, 7 636 on
// two, 2 075 on 16 and 9 on 64 (docs/performance.md, item 53).
//
// Reconstruction plans it once per run (and after position refinement)
// from the global batches and Sync::held_boxes; the strategy moves the
// parts in its sum_batch (SharedProducts); the solvers update the foreign
// positions' pixels after the sums.

#include <ptyko/kernels/patch.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

namespace ptyko {

/// The first pixel {y, x} of the footprint of the position `global` (object
/// pixels) as its owner's kernels place it: from the position in the
/// owner's tile coordinates (tile origin `home`, as its LocalData holds
/// it), cast to T, back in global object pixels.
template <class T>
std::array<int, 2> owner_footprint_corner(std::array<double, 2> const& global, std::array<int, 2> const& home, int D) {
  PatchCorner<T> const c(T(global[0] - home[0]), T(global[1] - home[1]), D);
  return {c.y + home[0], c.x + home[1]};
}

/// The patch rows and columns of a footprint's product that the pixels of
/// `box` ({y, x, height, width}, global object pixels) read, for the
/// footprint whose first pixel is `corner` (owner_footprint_corner):
/// {row, col, rows, cols}, with rows = 0 where the footprint misses the
/// box. Footprint pixel (u, v), u, v in [0, D], reads patch rows u - 1 and
/// u and columns v - 1 and v (the bilinear adjoint).
inline std::array<int, 4> product_part_read_by(std::array<int, 2> const& corner, std::array<int, 4> const& box, int D) {
  int const u0 = std::max(0, box[0] - corner[0]), u1 = std::min(D + 1, box[0] + box[2] - corner[0]);
  int const v0 = std::max(0, box[1] - corner[1]), v1 = std::min(D + 1, box[1] + box[3] - corner[1]);
  if (u0 >= u1 || v0 >= v1) return {0, 0, 0, 0};
  int const r0 = std::max(0, u0 - 1), r1 = std::min(D, u1), c0 = std::max(0, v0 - 1), c1 = std::min(D, v1);
  return {r0, c0, r1 - r0, c1 - c0};
}

/// One batch's plan, for one rank. Parts are rectangles of patch-shaped
/// products: (slot, row, col, rows, cols, offset): patch rows [row, row +
/// rows) and columns [col, col + cols) of product `slot`, packed row-major
/// at complex value `offset` of its message.
template <class Mem>
struct SharedIsolated {
  using Parts = Kokkos::View<int* [6], Kokkos::LayoutRight, Mem>;
  /// One message: the parts [first, first + count) of `parts`, `values`
  /// complex values in all, to or from `rank`.
  struct Message {
    int rank = 0;
    int first = 0, count = 0;
    std::size_t values = 0;
  };
  std::vector<Message> sends;     ///< this rank's isolated positions' parts, slot = its batch slot
  std::vector<Message> receives;  ///< other ranks' positions' parts, slot = their foreign index
  Parts parts;                    ///< every message's parts, sends first
  /// Other ranks' isolated positions whose footprints reach this rank's
  /// pixels: their positions in their owner's tile coordinates (as the
  /// owner's LocalData holds them, before the cast to T) and the whole
  /// pixels from the owner's tile to this rank's (owner origin - this
  /// origin), for kernels/isolated_update.hpp's ShiftedPositions.
  Kokkos::View<double* [2], Kokkos::LayoutRight, Mem> foreign_positions;
  Kokkos::View<int* [2], Kokkos::LayoutRight, Mem> foreign_shifts;
  int foreign() const { return int(foreign_positions.extent(0)); }
};

}  // namespace ptyko
