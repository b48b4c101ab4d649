// The kernels of intensity refinement: per-frame model and data power over
// the measured pixels (against sums on the host, with and without a mask,
// frames reached through an index), per-frame scaling of float frames, and
// the float copy of uint16 counts.
#include <ptyko/kernels/frame_power.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;
using Sums = Kokkos::View<double*, Kokkos::LayoutRight, MemSpace>;

MaskView<MemSpace> checker_mask(int D) {  // every third pixel unmeasured
  MaskView<MemSpace> mask("mask", D, D);
  auto h = Kokkos::create_mirror_view(mask);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) h(i, j) = (i * D + j) % 3 == 0 ? 0 : 1;
  Kokkos::deep_copy(mask, h);
  return mask;
}

TEST(FramePower, ModelPowerSumsTheModesOnMeasuredPixels) {
  int const B = 3, M = 2, D = 8;
  ComplexView4<double, MemSpace> Psi("Psi", B, M, D, D);
  test::fill_random(Psi, 5);
  IndexView<MemSpace> idx("idx", B);
  auto hi = Kokkos::create_mirror_view(idx);
  for (int b = 0; b < B; ++b) hi(b) = 2 * b + 1;  // frames 1, 3, 5 of 6
  Kokkos::deep_copy(idx, hi);
  auto const hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Psi);
  for (bool masked : {false, true}) {
    auto const mask = masked ? checker_mask(D) : MaskView<MemSpace>();
    auto const hm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mask);
    Sums out("out", 6);
    Kokkos::deep_copy(out, -1.0);
    ExecSpace space;
    measured_model_power(space, B, Psi, mask, idx, out);
    auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    for (int b = 0; b < B; ++b) {
      double expected = 0;
      for (int m = 0; m < M; ++m)
        for (int i = 0; i < D; ++i)
          for (int j = 0; j < D; ++j)
            if (!masked || hm(i, j)) expected += Kokkos::abs(hp(b, m, i, j)) * Kokkos::abs(hp(b, m, i, j));
      EXPECT_NEAR(h(2 * b + 1), expected, 1e-12 * expected) << "masked " << masked << ", position " << b;
      EXPECT_EQ(h(2 * b), -1.0) << "frames outside the index are not written";
    }
  }
}

TEST(FramePower, FrameSumsScalingAndTheFloatCopy) {
  int const n = 4, D = 6;
  Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, MemSpace> counts("counts", n, D, D);
  auto hc = Kokkos::create_mirror_view(counts);
  for (std::size_t k = 0; k < hc.span(); ++k) hc.data()[k] = std::uint16_t((k * 7919) % 65536);
  Kokkos::deep_copy(counts, hc);
  ExecSpace space;
  auto const mask = checker_mask(D);
  auto const hm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mask);

  Sums sums("sums", n);
  measured_frame_sums(space, counts, mask, sums);
  auto const floats = frames_as_float(space, counts);
  Sums factor("factor", n);
  auto hf = Kokkos::create_mirror_view(factor);
  for (int f = 0; f < n; ++f) hf(f) = 0.5 + f;
  Kokkos::deep_copy(factor, hf);
  scale_frames(space, floats, factor);
  auto const hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
  auto const hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), floats);
  for (int f = 0; f < n; ++f) {
    double expected = 0;
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) {
        if (hm(i, j)) expected += hc(f, i, j);
        EXPECT_EQ(hv(f, i, j), float(hc(f, i, j)) * float(0.5 + f)) << f << " " << i << " " << j;
      }
    EXPECT_EQ(hs(f), expected) << "frame " << f;  // integers: exact in double in any order
  }
}

}  // namespace
