// BatchedFFT2D: against a naive DFT, Parseval, adjointness, round trip,
// in-place, partial batches; float and double.
#include <ptyko/kernels/fft.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;

template <class T>
class FFT : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FFT, Reals);

// Orthonormal 2-D DFT with exp(sign 2 pi i k n / N), on the host in double.
template <class HostView>
std::complex<double> naive_dft(HostView const& x, int f, int ky, int kx, int sign) {
  int const ny = int(x.extent(1)), nx = int(x.extent(2));
  std::complex<double> s = 0;
  for (int y = 0; y < ny; ++y)
    for (int xx = 0; xx < nx; ++xx) {
      double const phase = sign * 2 * M_PI * (double(ky) * y / ny + double(kx) * xx / nx);
      auto v = x(f, y, xx);
      s += std::complex<double>(v.real(), v.imag()) * std::polar(1.0, phase);
    }
  return s / std::sqrt(double(ny) * nx);
}

TYPED_TEST(FFT, MatchesNaiveDFT) {
  using T = TypeParam;
  double const tol = std::is_same_v<T, float> ? 2e-6 : 1e-13;
  for (auto [ny, nx] : {std::pair{8, 8}, std::pair{6, 10}, std::pair{5, 7}}) {
    ExecSpace space;
    int const frames = 3;
    ComplexView3<T, MemSpace> x("x", frames, ny, nx), y("y", frames, ny, nx);
    test::fill_random(x, 1);
    BatchedFFT2D<T, ExecSpace> fft(space, frames, ny, nx);
    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    for (auto dir : {FFTDirection::forward, FFTDirection::inverse}) {
      if (dir == FFTDirection::forward) fft.forward(space, x, y);
      else fft.inverse(space, x, y);
      auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
      int const sign = dir == FFTDirection::forward ? -1 : +1;
      double max_err = 0;
      for (int f = 0; f < frames; ++f)
        for (int ky = 0; ky < ny; ++ky)
          for (int kx = 0; kx < nx; ++kx) {
            auto ref = naive_dft(hx, f, ky, kx, sign);
            auto got = hy(f, ky, kx);
            max_err = std::max(max_err, std::abs(ref - std::complex<double>(got.real(), got.imag())));
          }
      EXPECT_LT(max_err, tol) << ny << "x" << nx << " dir " << int(dir);
    }
  }
}

TYPED_TEST(FFT, ParsevalAdjointAndRoundTrip) {
  using T = TypeParam;
  ExecSpace space;
  int const frames = 5, n = 32;
  ComplexView3<T, MemSpace> x("x", frames, n, n), y("y", frames, n, n), fx("fx", frames, n, n),
      fhy("fhy", frames, n, n), back("back", frames, n, n);
  test::fill_random(x, 2);
  test::fill_random(y, 3);
  BatchedFFT2D<T, ExecSpace> fft(space, frames, n, n);
  fft.forward(space, x, fx);
  fft.inverse(space, y, fhy);
  fft.inverse(space, fx, back);
  double const tol = test::adjoint_tolerance<T>();
  // Parseval: ||F x|| = ||x||
  EXPECT_LT(test::rel_diff(test::inner(fx, fx), test::inner(x, x)), tol);
  // Adjoint: <F x, y> = <x, F^H y>
  EXPECT_LT(test::rel_diff(test::inner(fx, y), test::inner(x, fhy)), tol);
  // Round trip
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  double err2 = 0, norm2 = 0;
  for (std::size_t k = 0; k < hx.span(); ++k) {
    err2 += Kokkos::abs(hb.data()[k] - hx.data()[k]) * Kokkos::abs(hb.data()[k] - hx.data()[k]);
    norm2 += Kokkos::abs(hx.data()[k]) * Kokkos::abs(hx.data()[k]);
  }
  double const round_trip_tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  EXPECT_LT(std::sqrt(err2 / norm2), round_trip_tol);
}

TYPED_TEST(FFT, InPlaceAndPartialBatchMatchOutOfPlace) {
  using T = TypeParam;
  ExecSpace space;
  int const max_frames = 7, n = 16;
  ComplexView3<T, MemSpace> x("x", max_frames, n, n), y("y", max_frames, n, n);
  test::fill_random(x, 4);
  BatchedFFT2D<T, ExecSpace> fft(space, max_frames, n, n);
  fft.forward(space, x, y);
  // Three frames in place: must equal the first three frames out of place.
  auto x3 = Kokkos::subview(x, std::make_pair(0, 3), Kokkos::ALL, Kokkos::ALL);
  fft.forward(space, x3, x3);
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  for (int f = 0; f < 3; ++f)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        EXPECT_NEAR(hx(f, i, j).real(), hy(f, i, j).real(), 1e-5);
        EXPECT_NEAR(hx(f, i, j).imag(), hy(f, i, j).imag(), 1e-5);
      }
}

TYPED_TEST(FFT, UnscaledIsSqrtNTimesOrtho) {
  using T = TypeParam;
  ExecSpace space;
  int const n = 8;
  ComplexView3<T, MemSpace> x("x", 1, n, n), a("a", 1, n, n), b("b", 1, n, n);
  test::fill_random(x, 5);
  BatchedFFT2D<T, ExecSpace> fft(space, 1, n, n);
  fft.forward(space, x, a);
  fft.forward(space, x, b, FFTNorm::none);
  auto ip = test::inner(a, b);
  EXPECT_NEAR(ip.real() / test::inner(a, a).real(), double(n), 1e-4);
}

TEST(FFTPlan, RejectsEmptyShape) {
  ExecSpace space;
  EXPECT_THROW((BatchedFFT2D<float, ExecSpace>(space, 0, 8, 8)), UserError);
}

}  // namespace
