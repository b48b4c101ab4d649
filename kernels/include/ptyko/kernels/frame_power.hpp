#pragma once
// Per-frame power of the model and of the data over the measured pixels,
// and per-frame scaling of float frames: the kernels of intensity
// refinement (core/intensity_refinement.hpp). One team per frame on every
// backend: each sums D x D pixels (and M modes) into one double, a few
// percent of the forward FFT that precedes it.

#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace ptyko {

/// The sum over the pixels (i, j) of a D x D frame of pixel(i, j), by the
/// threads of `team` (the devices' forms below: one team per frame).
template <class Member, class Pixel>
KOKKOS_INLINE_FUNCTION double team_pixel_sum(Member const& team, int D, Pixel const& pixel) {
  double total = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, D * D), [&](int k, double& acc) { acc += pixel(k / D, k % D); }, total);
  return total;
}

/// out(idx(b)) = sum over measured pixels (mask(i, j) != 0, or every pixel
/// when the mask is empty) of sum_m |Psi(b, m, i, j)|^2, for b < B: the
/// model's counts of frame idx(b) where the detector measures. Host spaces:
/// one position per work item walking its rows (per-row sums in T, the
/// mask as a 0/1 factor: a loop that vectorises); devices: one team per
/// position reducing over its pixels. Non-blocking.
template <class ExecSpace, class T, class Mem>
void measured_model_power(ExecSpace const& space, int B, ComplexView4<T, Mem> const& Psi,
                          MaskView<Mem> const& mask, IndexView<Mem> const& idx,
                          Kokkos::View<double*, Kokkos::LayoutRight, Mem> const& out) {
  int const M = int(Psi.extent(1)), D = int(Psi.extent(2));
  PTYKO_ASSERT(int(Psi.extent(0)) >= B && int(idx.extent(0)) >= B, "measured_model_power: ", B,
               " positions for buffers of ", Psi.extent(0));
  bool const masked = mask.extent(0) > 0;
  auto W = Psi;
  auto measured = mask;
  auto index = idx;
  auto power = out;
  if constexpr (is_host_space_v<ExecSpace>) {
    Kokkos::parallel_for(
        "ptyko::measured_model_power", Kokkos::RangePolicy<ExecSpace>(space, 0, B), KOKKOS_LAMBDA(int b) {
          double total = 0;
          for (int i = 0; i < D; ++i) {
            std::uint8_t const* keep = masked ? &measured(i, 0) : nullptr;
            T row = 0;
            for (int m = 0; m < M; ++m) {
              Complex<T> const* z = &W(b, m, i, 0);
              if (keep) {
                for (int j = 0; j < D; ++j) row += T(keep[j]) * (z[j].real() * z[j].real() + z[j].imag() * z[j].imag());
              } else {
                for (int j = 0; j < D; ++j) row += z[j].real() * z[j].real() + z[j].imag() * z[j].imag();
              }
            }
            total += double(row);
          }
          power(index(b)) = total;
        });
  } else {
    using Policy = Kokkos::TeamPolicy<ExecSpace>;
    using Member = typename Policy::member_type;
    Kokkos::parallel_for(
        "ptyko::measured_model_power", Policy(space, B, Kokkos::AUTO), KOKKOS_LAMBDA(Member const& team) {
          int const b = team.league_rank();
          double const total = team_pixel_sum(team, D, [&](int i, int j) {
            double v = 0;
            if (masked && measured(i, j) == 0) return v;
            for (int m = 0; m < M; ++m) {
              Complex<T> const z = W(b, m, i, j);
              v += double(z.real()) * double(z.real()) + double(z.imag()) * double(z.imag());
            }
            return v;
          });
          Kokkos::single(Kokkos::PerTeam(team), [&]() { power(index(b)) = total; });
        });
  }
}

/// out(f) = sum over measured pixels of frames(f, i, j), every frame f
/// (uint16 counts or floats). Host spaces: one frame per work item, row by
/// row; devices: one team per frame. Non-blocking.
template <class ExecSpace, class Frames, class Mem>
void measured_frame_sums(ExecSpace const& space, Frames const& frames, MaskView<Mem> const& mask,
                         Kokkos::View<double*, Kokkos::LayoutRight, Mem> const& out) {
  int const n = int(frames.extent(0)), D = int(frames.extent(1));
  bool const masked = mask.extent(0) > 0;
  auto F = frames;
  auto measured = mask;
  auto sums = out;
  if constexpr (is_host_space_v<ExecSpace>) {
    Kokkos::parallel_for(
        "ptyko::measured_frame_sums", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(int f) {
          double total = 0;
          for (int i = 0; i < D; ++i) {
            auto const* row = &F(f, i, 0);
            std::uint8_t const* keep = masked ? &measured(i, 0) : nullptr;
            double r = 0;
            for (int j = 0; j < D; ++j) r += keep ? double(keep[j]) * double(row[j]) : double(row[j]);
            total += r;
          }
          sums(f) = total;
        });
  } else {
    using Policy = Kokkos::TeamPolicy<ExecSpace>;
    using Member = typename Policy::member_type;
    Kokkos::parallel_for(
        "ptyko::measured_frame_sums", Policy(space, n, Kokkos::AUTO), KOKKOS_LAMBDA(Member const& team) {
          int const f = team.league_rank();
          double const total = team_pixel_sum(team, D, [&](int i, int j) {
            return !masked || measured(i, j) != 0 ? double(F(f, i, j)) : 0.0;
          });
          Kokkos::single(Kokkos::PerTeam(team), [&]() { sums(f) = total; });
        });
  }
}

/// frames(f, i, j) *= factor(f) for every pixel of every frame. Non-blocking.
template <class ExecSpace, class Mem>
void scale_frames(ExecSpace const& space, RealView3<float, Mem> const& frames,
                  Kokkos::View<double*, Kokkos::LayoutRight, Mem> const& factor) {
  std::size_t const pixels = frames.extent(1) * frames.extent(2);
  float* v = frames.data();
  auto s = factor;
  Kokkos::parallel_for(
      "ptyko::scale_frames", Kokkos::RangePolicy<ExecSpace>(space, 0, frames.span()),
      KOKKOS_LAMBDA(std::size_t k) { v[k] *= float(s(k / pixels)); });
}

/// A float copy of uint16 frames. Non-blocking.
template <class ExecSpace, class Mem>
RealView3<float, Mem> frames_as_float(ExecSpace const& space,
                                      Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, Mem> const& counts) {
  RealView3<float, Mem> out(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::frames_as_float"),
                            counts.extent(0), counts.extent(1), counts.extent(2));
  float* o = out.data();
  std::uint16_t const* c = counts.data();
  Kokkos::parallel_for(
      "ptyko::frames_as_float", Kokkos::RangePolicy<ExecSpace>(space, 0, counts.span()),
      KOKKOS_LAMBDA(std::size_t k) { o[k] = float(c[k]); });
  return out;
}

}  // namespace ptyko
