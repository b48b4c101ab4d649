#include <ptyko/core/illumination.hpp>

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
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) {
        int const y = y0 + i, x = x0 + j;
        if (y >= 0 && y < height && x >= 0 && x < width) out(y, x) += p[std::size_t(i) * D + j];
      }
  }
  return out;
}

}  // namespace ptyko
