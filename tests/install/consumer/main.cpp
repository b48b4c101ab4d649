// Uses one thing from each ptyko library through the installed headers:
// a batched FFT round trip (kernels), an object grid (core) and the
// MPI/Kokkos environment (parallel). Prints "ptyko consumer OK" on success.
#include <ptyko/core/geometry.hpp>
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/types.hpp>
#include <ptyko/parallel/environment.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char* argv[]) {
  ptyko::parallel::Environment env(argc, argv);
  int failures = 0;
  {
    using Space = Kokkos::DefaultExecutionSpace;
    using Mem = Space::memory_space;
    Space space;
    int const frames = 2, n = 8;
    ptyko::ComplexView3<double, Mem> x("x", frames, n, n), y("y", frames, n, n);
    Kokkos::deep_copy(x, ptyko::Complex<double>(1.0, 0.0));
    ptyko::BatchedFFT2D<double, Space> fft(space, frames, n, n);
    fft.forward(space, x, y);
    fft.inverse(space, y, y);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    for (int f = 0; f < frames; ++f)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (std::abs(h(f, i, j).real() - 1.0) > 1e-12 || std::abs(h(f, i, j).imag()) > 1e-12)
            ++failures;

    ptyko::Geometry g;
    g.wavelength_m = 1e-10;
    g.distance_m = 1.0;
    g.pixel_size_y_m = g.pixel_size_x_m = 75e-6;
    g.detector_size = 64;
    auto grid = ptyko::make_object_grid({{0.0, 0.0}, {1e-6, 2e-6}}, g);
    if (grid.height < 64 || grid.width < 64) ++failures;
    std::printf("object grid %d x %d\n", grid.height, grid.width);
  }
  if (failures) {
    std::printf("ptyko consumer FAILED (%d)\n", failures);
    return 1;
  }
  std::printf("ptyko consumer OK\n");
  return 0;
}
