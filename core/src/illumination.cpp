#include <ptyko/core/illumination.hpp>

#include <algorithm>
#include <cmath>

namespace ptyko {

HostRealImage illumination_map(HostComplex3 const& probe, std::vector<std::array<double, 2>> const& positions_px,
                               int height, int width) {
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  std::vector<double> p(std::size_t(D) * D, 0.0);
  for (int m = 0; m < M; ++m)
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) p[std::size_t(i) * D + j] += Kokkos::abs(probe(m, i, j)) * Kokkos::abs(probe(m, i, j));
  HostRealImage out("ptyko::illumination", height, width);
  for (auto const& pos : positions_px) {
    int const y0 = int(std::lround(pos[0])) - D / 2, x0 = int(std::lround(pos[1])) - D / 2;
    // The patch clipped to the image once, then contiguous rows: the
    // column loop vectorises (a bounds check per pixel kept it scalar,
    // 0.5 s for 10 000 positions of 128 x 128). The same sums, in the same order.
    int const i0 = std::max(0, -y0), i1 = std::min(D, height - y0);
    int const j0 = std::max(0, -x0), j1 = std::min(D, width - x0);
    if (i0 >= i1 || j0 >= j1) continue;  // wholly outside: no row pointer to form
    for (int i = i0; i < i1; ++i) {
      double* row = &out(y0 + i, x0 + j0);
      double const* lit = &p[std::size_t(i) * D + j0];
      for (int j = 0; j < j1 - j0; ++j) row[j] += lit[j];
    }
  }
  return out;
}

}  // namespace ptyko
