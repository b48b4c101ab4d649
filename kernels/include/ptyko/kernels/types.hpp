#pragma once
// View aliases used throughout ptyko. All multi-dimensional Views are
// LayoutRight so that one frame (the last two extents) is contiguous: FFT
// libraries and MPI receive `.data()` of whole frames.
//
// Index conventions:
//  * object      (H, W)         complex, [y][x]
//  * probe       (M, D, D)      complex, M incoherent modes, real space,
//                               centred: pixel (D/2, D/2) is the probe centre
//  * positions   (N, 2)         real, (y, x) object pixel under the probe
//                               pixel (D/2, D/2); a patch starts at pos - D/2
//  * frames      (N, D, D)      real intensities, stored un-shifted inside
//                               (zero frequency at [0][0])
//  * waves       (B, M, D, D)   complex exit waves / far fields of a batch

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ptyko {

template <class T>
using Complex = Kokkos::complex<T>;

template <class T, class Mem>
using ComplexView1 = Kokkos::View<Complex<T>*, Kokkos::LayoutRight, Mem>;
template <class T, class Mem>
using ComplexView2 = Kokkos::View<Complex<T>**, Kokkos::LayoutRight, Mem>;
template <class T, class Mem>
using ComplexView3 = Kokkos::View<Complex<T>***, Kokkos::LayoutRight, Mem>;
template <class T, class Mem>
using ComplexView4 = Kokkos::View<Complex<T>****, Kokkos::LayoutRight, Mem>;

template <class T, class Mem>
using RealView1 = Kokkos::View<T*, Kokkos::LayoutRight, Mem>;
template <class T, class Mem>
using RealView2 = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;
template <class T, class Mem>
using RealView3 = Kokkos::View<T***, Kokkos::LayoutRight, Mem>;

/// (N, 2) positions, (y, x) in object pixels.
template <class T, class Mem>
using PositionView = Kokkos::View<T* [2], Kokkos::LayoutRight, Mem>;

/// Indices of the positions of one batch into the (N, ...) arrays.
template <class Mem>
using IndexView = Kokkos::View<int*, Kokkos::LayoutRight, Mem>;

/// (D, D) detector mask: 1 = measured, 0 = ignore (un-shifted like the data).
template <class Mem>
using MaskView = Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, Mem>;

/// Position of flat index k in a stack of D x D frames: frame b, row i,
/// column j (for kernels that must run flat; frame_policy avoids the
/// divisions).
struct FrameIndex {
  int b, i, j;
};
KOKKOS_INLINE_FUNCTION FrameIndex frame_index(std::size_t k, int D) {
  std::size_t const d = std::size_t(D);
  return FrameIndex{int(k / (d * d)), int((k / d) % d), int(k % d)};
}

/// Iteration over a stack of `frames` frames of D x D pixels, (b, i, j) with
/// j fastest (the contiguous index of LayoutRight Views) on every backend:
/// the kernels get their indices without integer divisions.
template <class ExecSpace>
auto frame_policy(ExecSpace const& space, int frames, int D) {
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                       Kokkos::IndexType<int>>;
  return Policy(space, {0, 0, 0}, {frames, D, D});
}

/// Most incoherent probe modes ptyko handles (kernels keep one value per
/// mode in local arrays of this size).
inline constexpr int max_probe_modes = 16;

/// True when T is float or double (the two precisions ptyko instantiates).
template <class T>
inline constexpr bool is_supported_real_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

}  // namespace ptyko
