#pragma once
// Kernels of background refinement (core/background_refinement.hpp): an
// incoherent background b (D, D), the same in every frame, is one more
// incoherent mode of the model, I = sum_m |Psi_m|^2 + b. Its maximum-
// likelihood update for Poisson counts is the EM (Richardson-Lucy) step of
// that mode, b' = b * mean_j d_j / (I_j + b) over the frames (PyNX's
// background "as a mode"): positive, it stays positive, and where the
// coherent model already explains the data it leaves b alone.
// Frames, far fields and the background are corner-centred (un-shifted on
// load); masked pixels are never compared with the data.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ptyko {

/// Sums of the background's EM step: sums(i, j) += sum over b < B of
/// background(i, j) d(idx(b), i, j) / (I(b, i, j) + background(i, j) + eps),
/// I the coherent model intensity sum_m |Psi(b, m, i, j)|^2; unchanged on
/// masked pixels. Every pixel sums its frames in order, one work item per
/// detector row (host) or pixel (devices): no two work items write one
/// pixel, and the sums do not depend on the thread count. Non-blocking.
template <class ExecSpace, class T, class Mem, class DataView>
void background_ratio_sums(ExecSpace const& space, int B, ComplexView4<T, Mem> const& Psi, DataView const& data,
                           IndexView<Mem> const& idx, MaskView<Mem> const& mask,
                           RealView2<T, Mem> const& background,
                           Kokkos::View<double**, Kokkos::LayoutRight, Mem> const& sums, T eps) {
  int const M = int(Psi.extent(1)), D = int(Psi.extent(2));
  bool const has_mask = mask.extent(0) > 0;
  auto F = Psi;
  auto d = data;
  auto index = idx;
  auto msk = mask;
  auto bg = background;
  auto S = sums;
  // One "frame" of D rows: fn(0, i, j0, j1) owns row i's columns [j0, j1).
  for_each_frame_span(space, "ptyko::background_ratio_sums", 1, D, KOKKOS_LAMBDA(int, int i, int j0, int j1) {
    T const* b_row = &bg(i, 0);
    double* out = &S(i, 0);
    std::uint8_t const* measured = has_mask ? &msk(i, 0) : nullptr;
    for (int f = 0; f < B; ++f) {
      auto const* meas = &d(index(f), i, 0);
      for (int j = j0; j < j1; ++j) {
        T I = b_row[j];
        for (int m = 0; m < M; ++m) I += math::norm2(F(f, m, i, j));
        double const ratio = double(b_row[j]) * double(meas[j]) / double(I + eps);
        out[j] += measured == nullptr || measured[j] != 0 ? ratio : 0.0;
      }
    }
  });
}

/// The background's counts per frame over the measured pixels (every pixel
/// when the mask is empty). Blocking.
template <class ExecSpace, class T, class Mem>
double measured_background_counts(ExecSpace const& space, RealView2<T, Mem> const& background,
                                  MaskView<Mem> const& mask) {
  int const D = int(background.extent(0));
  bool const has_mask = mask.extent(0) > 0;
  auto bg = background;
  auto msk = mask;
  double total = 0;
  reduce_frame_spans(
      space, "ptyko::measured_background_counts", 1, D,
      KOKKOS_LAMBDA(int, int i, int j0, int j1, double& acc) {
        for (int j = j0; j < j1; ++j)
          if (!has_mask || msk(i, j) != 0) acc += double(bg(i, j));
      },
      total);
  return total;
}

}  // namespace ptyko
