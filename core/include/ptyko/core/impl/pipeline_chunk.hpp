#pragma once
// How many positions the solvers' per-position pipeline runs together: a
// core detail, public for the benchmarks, whose FFT floor also runs the
// epoch's transforms in these chunks (bench/bench_run.hpp).

#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/types.hpp>

#include <algorithm>
#include <cmath>

namespace ptyko::impl {

/// Positions that go through the per-position pipeline together (extract
/// and exit waves, FFT, Fourier step, inverse FFT, adjoints and scatters).
/// Host spaces: as many as fill about 1 MiB (one core's L2 cache) per
/// thread with their waves, patches and products, at least one, so that
/// these stay in cache from one kernel to the next instead of streaming
/// through L3 (128 x 128, 2 modes, float: 2 positions; rPIE epoch -25 %,
/// DM -30 %, docs/performance.md). Devices: the whole batch at once.
/// `requested` > 0 (SolverOptions::pipeline_chunk) overrides the choice.
template <class T, class ExecSpace>
int pipeline_chunk(ExecSpace const& space, int D, int M, int batch, int requested = 0) {
  int chunk = batch;
  if (requested > 0) {
    chunk = std::min(batch, requested);
  } else if constexpr (is_host_space_v<ExecSpace>) {
    double const per_position = double(M + 2) * D * D * sizeof(Complex<T>);
    double const budget = double(1 << 20) * std::max(1, int(space.concurrency()));
    chunk = std::min(batch, int(std::max(1.0, std::floor(budget / per_position))));
  }
  return std::max(1, chunk);
}

}  // namespace ptyko::impl
