#pragma once
// fftshift / ifftshift of 2-D frames on the host, as numpy.fft defines them.
// Files hold centred detector frames (zero frequency at (ny/2, nx/2));
// ptyko works on corner-centred frames inside (zero frequency at (0, 0)):
//   internal = ifftshift(file),  file = fftshift(internal).
// The two differ only for odd sizes.

#include <cstddef>

namespace ptyko {

/// dst = fftshift(src) for one ny x nx frame (row-major). dst != src.
template <class Src, class Dst>
void fftshift2(Src const* src, Dst* dst, int ny, int nx) {
  int const sy = ny / 2, sx = nx / 2;  // numpy: shift by floor(n/2)
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      dst[std::size_t((y + sy) % ny) * nx + (x + sx) % nx] = Dst(src[std::size_t(y) * nx + x]);
}

/// dst = ifftshift(src) for one ny x nx frame (row-major). dst != src.
template <class Src, class Dst>
void ifftshift2(Src const* src, Dst* dst, int ny, int nx) {
  int const sy = ny - ny / 2, sx = nx - nx / 2;  // numpy: shift by -floor(n/2)
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      dst[std::size_t((y + sy) % ny) * nx + (x + sx) % nx] = Dst(src[std::size_t(y) * nx + x]);
}

}  // namespace ptyko
