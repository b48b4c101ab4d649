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

#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace ptyko {

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
  typename Parts::HostMirror parts_host;
  /// Other ranks' isolated positions whose footprints reach this rank's
  /// pixels: their positions in their owner's tile coordinates (as the
  /// owner's LocalData holds them, before the cast to T) and the whole
  /// pixels from the owner's tile to this rank's (owner origin - this
  /// origin), for kernels/isolated_update.hpp's ShiftedPositions.
  int foreign = 0;
  Kokkos::View<double* [2], Kokkos::LayoutRight, Mem> foreign_positions;
  Kokkos::View<int* [2], Kokkos::LayoutRight, Mem> foreign_shifts;
};

}  // namespace ptyko
