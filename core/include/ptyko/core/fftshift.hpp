#pragma once
// fftshift / ifftshift of 2-D frames on the host, as numpy.fft defines them.
// Files hold centred detector frames (zero frequency at (ny/2, nx/2));
// ptyko works on corner-centred frames inside (zero frequency at (0, 0)):
//   internal = ifftshift(file),  file = fftshift(internal).
// The two differ only for odd sizes.

#include <cstddef>

namespace ptyko {

namespace impl {

/// dst(y', x') = src(y, x) with y' = (y + sy) mod ny, x' = (x + sx) mod nx,
/// 0 <= sy <= ny, 0 <= sx <= nx. Each row goes in two contiguous pieces (no
/// modulo per pixel: loading 10 000 frames spent more in those divisions
/// than in their conversion, docs/performance.md), which vectorise.
template <class Src, class Dst>
void roll2(Src const* src, Dst* dst, int ny, int nx, int sy, int sx) {
  int const split = nx - sx;  // columns [0, split) move right by sx, the rest wrap to the front
  for (int y = 0; y < ny; ++y) {
    Src const* in = src + std::size_t(y) * nx;
    Dst* out = dst + std::size_t((y + sy) % ny) * nx;
    for (int x = 0; x < split; ++x) out[x + sx] = Dst(in[x]);
    for (int x = split; x < nx; ++x) out[x - split] = Dst(in[x]);
  }
}

}  // namespace impl

/// Signed frequency of bin k of an n-point DFT (numpy.fft.fftfreq(n) * n):
/// k for k < (n + 1) / 2, else k - n, so in [-(n / 2), (n - 1) / 2]; the
/// Nyquist bin of an even n counts as -n / 2.
inline int signed_frequency(int k, int n) { return k < (n + 1) / 2 ? k : k - n; }

/// dst = fftshift(src) for one ny x nx frame (row-major). dst != src.
template <class Src, class Dst>
void fftshift2(Src const* src, Dst* dst, int ny, int nx) {
  impl::roll2(src, dst, ny, nx, ny / 2, nx / 2);  // numpy: shift by floor(n/2)
}

/// dst = ifftshift(src) for one ny x nx frame (row-major). dst != src.
template <class Src, class Dst>
void ifftshift2(Src const* src, Dst* dst, int ny, int nx) {
  impl::roll2(src, dst, ny, nx, ny - ny / 2, nx - nx / 2);  // numpy: shift by -floor(n/2)
}

}  // namespace ptyko
