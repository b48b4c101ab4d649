// fftshift2 / ifftshift2 against numpy.fft's outputs (docs/conventions.md:
// files hold centred frames, ptyko corner-centred ones), odd and even sizes.
#include <ptyko/core/fftshift.hpp>

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace {

using ptyko::fftshift2;
using ptyko::ifftshift2;

std::vector<int> iota(int n) {
  std::vector<int> v(std::size_t(n), 0);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// numpy.fft.fftshift / ifftshift of arange(n) as one row (ny = 1) and as
// one column (nx = 1).
TEST(Fftshift, RowsAndColumnsAsNumpy) {
  struct Case {
    int n;
    std::vector<int> shifted, unshifted;
  };
  for (auto const& c : {Case{5, {3, 4, 0, 1, 2}, {2, 3, 4, 0, 1}}, Case{4, {2, 3, 0, 1}, {2, 3, 0, 1}},
                        Case{1, {0}, {0}}, Case{2, {1, 0}, {1, 0}}}) {
    std::vector<int> const src = iota(c.n);
    std::vector<float> row(src.size()), col(src.size());
    fftshift2(src.data(), row.data(), 1, c.n);
    fftshift2(src.data(), col.data(), c.n, 1);
    for (int k = 0; k < c.n; ++k) {
      EXPECT_EQ(row[k], c.shifted[k]) << "fftshift, n = " << c.n << ", k = " << k;
      EXPECT_EQ(col[k], c.shifted[k]) << "fftshift, n = " << c.n << ", k = " << k;
    }
    ifftshift2(src.data(), row.data(), 1, c.n);
    ifftshift2(src.data(), col.data(), c.n, 1);
    for (int k = 0; k < c.n; ++k) {
      EXPECT_EQ(row[k], c.unshifted[k]) << "ifftshift, n = " << c.n << ", k = " << k;
      EXPECT_EQ(col[k], c.unshifted[k]) << "ifftshift, n = " << c.n << ", k = " << k;
    }
  }
}

// 2-D frames of odd and even sizes: the zero frequency (0, 0) lands on
// (ny / 2, nx / 2), every pixel moves by (floor(ny/2), floor(nx/2))
// circularly, and ifftshift undoes fftshift.
// numpy.fft.fftfreq(n) * n for an even and an odd n.
TEST(Fftshift, SignedFrequencyAsNumpy) {
  std::vector<int> const even = {0, 1, 2, 3, -4, -3, -2, -1}, odd = {0, 1, 2, 3, -3, -2, -1};
  for (int k = 0; k < 8; ++k) EXPECT_EQ(ptyko::signed_frequency(k, 8), even[k]) << k;
  for (int k = 0; k < 7; ++k) EXPECT_EQ(ptyko::signed_frequency(k, 7), odd[k]) << k;
}

TEST(Fftshift, FramesRoundTrip) {
  for (auto [ny, nx] : {std::pair{4, 6}, std::pair{5, 7}, std::pair{6, 3}, std::pair{128, 128}}) {
    std::vector<int> const src = iota(ny * nx);
    std::vector<int> centred(src.size()), back(src.size());
    fftshift2(src.data(), centred.data(), ny, nx);
    EXPECT_EQ(centred[std::size_t(ny / 2) * nx + nx / 2], 0) << ny << " x " << nx;
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        ASSERT_EQ(centred[std::size_t((y + ny / 2) % ny) * nx + (x + nx / 2) % nx], y * nx + x)
            << ny << " x " << nx << " at " << y << ", " << x;
    ifftshift2(centred.data(), back.data(), ny, nx);
    EXPECT_EQ(back, src) << ny << " x " << nx;
  }
}

}  // namespace
