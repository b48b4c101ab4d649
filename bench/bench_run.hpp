#pragma once
// The benchmark datasets and runs: a simulated CXI file (written once per
// program, or kept under a cache name for the large memory run), and a
// reconstruction assembled in-process the way `ptyko reconstruct` does it
// (read_scan_layout -> load_local_data -> initial_state -> Reconstruction),
// on one rank's share given by a frame list and an object tile.

#include "bench_support.hpp"

#include <ptyko/core/batching.hpp>
#include <ptyko/core/cxi.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/impl/pipeline_chunk.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/core/scan.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/core/solver.hpp>
#include <ptyko/kernels/fft.hpp>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace ptyko::bench {

/// The standard benchmark dataset: 128 x 128 detector, 2 probe modes,
/// 400 Fermat-spiral positions at 70 % overlap, 1e6 photons per frame.
inline SimulationOptions standard_simulation(int frames = 400, int detector = 128, int modes = 2) {
  SimulationOptions o;
  o.frames = frames;
  o.detector = detector;
  o.modes = modes;
  o.photons = 1e6;
  o.seed = 1;
  return o;
}

inline std::string temp_dir() {
  char const* env = std::getenv("PTYKO_BENCH_TMPDIR");
  return env && *env ? std::string(env) : std::filesystem::temp_directory_path().string();
}

/// A simulated CXI file removed when the object goes away (unless `keep`).
class SimulatedFile {
 public:
  SimulatedFile() = default;
  /// Writes the simulation to a fresh temporary name (the pid keeps
  /// concurrent programs apart).
  explicit SimulatedFile(SimulationOptions const& o) {
    m_path = temp_dir() + "/ptyko-bench-" + std::to_string(getpid()) + "-" + std::to_string(o.frames) + "x" +
             std::to_string(o.detector) + "-m" + std::to_string(o.modes) + ".cxi";
    cxi_write(m_path, simulate(o));
    m_remove = true;
  }
  /// A cached file: written when `path` does not exist yet, kept afterwards.
  static SimulatedFile cached(SimulationOptions const& o, std::string const& path) {
    SimulatedFile f;
    f.m_path = path;
    if (!std::filesystem::exists(path)) cxi_write(path, simulate(o));
    return f;
  }
  SimulatedFile(SimulatedFile&& o) noexcept : m_path(std::move(o.m_path)), m_remove(o.m_remove) { o.m_remove = false; }
  SimulatedFile& operator=(SimulatedFile&& o) noexcept {
    std::swap(m_path, o.m_path);
    std::swap(m_remove, o.m_remove);
    return *this;
  }
  ~SimulatedFile() {
    if (m_remove) std::filesystem::remove(m_path);
  }
  std::string const& path() const { return m_path; }

 private:
  std::string m_path;
  bool m_remove = false;
};

/// One rank's share: frames and object tile (global pixels).
struct Share {
  std::vector<std::size_t> frame_ids;
  int tile_y = 0, tile_x = 0, tile_height = 0, tile_width = 0;

  static Share everything(ScanLayout const& layout) {
    Share s;
    s.frame_ids.resize(layout.positions_px.size());
    std::iota(s.frame_ids.begin(), s.frame_ids.end(), std::size_t(0));
    s.tile_height = layout.grid.height;
    s.tile_width = layout.grid.width;
    return s;
  }
};

/// The frames and positions of `share`, as `ptyko reconstruct` loads them.
template <class T>
LocalData<T, Exec> load_share(Exec const& space, ScanLayout const& layout, Share const& share) {
  return load_local_data<T, Exec>(space, layout, share.frame_ids, share.tile_y, share.tile_x, share.tile_height,
                                  share.tile_width, {});
}

/// Reconstruction of `share` from its loaded `data` with `sync` (not
/// owned), initial state as `ptyko reconstruct` makes it (probe from the
/// mean pattern).
template <class T>
std::unique_ptr<Reconstruction<T, Exec>> assemble(Exec const& space, ScanLayout const& layout, Share const& share,
                                                  LocalData<T, Exec> data, Sync<T, Exec>& sync,
                                                  SolverOptions const& options) {
  double const diameter = default_probe_diameter(typical_step(layout.positions_px), layout.info.ny);
  auto state = initial_state<T, Exec>(space, data, sync, share.tile_height, share.tile_width, HostComplex3(),
                                      options.modes, options.seed, diameter);
  state.tile_y = share.tile_y;
  state.tile_x = share.tile_x;
  return std::make_unique<Reconstruction<T, Exec>>(space, std::move(data), std::move(state), options, sync,
                                                   layout.positions_px);
}

/// The same, loading `share` first.
template <class T>
std::unique_ptr<Reconstruction<T, Exec>> assemble(Exec const& space, ScanLayout const& layout, Share const& share,
                                                  Sync<T, Exec>& sync, SolverOptions const& options) {
  return assemble<T>(space, layout, share, load_share<T>(space, layout, share), sync, options);
}

/// Solver options of the benchmarks: the solver's defaults, `modes` modes.
inline SolverOptions bench_options(std::string const& solver, int modes, int cost_every = 1) {
  SolverOptions o;
  o.solver = solver;
  o.epochs = 1 << 30;  // step() is called as often as the benchmark wants
  o.modes = modes;
  o.seed = 1;
  o.cost_every = cost_every;
  return o;
}

/// The FFT floor of an epoch: two FFTs per frame per mode (one forward,
/// one inverse, in place, the library alone: FFTNorm::none), the minimum any
/// of the solvers needs, timed in each of `schedules` (lists of positions
/// per batched call, each covering every frame of the epoch once); the
/// floor is the fastest. The benchmarks give two: the epoch's batches
/// (DM/RAAR: its chunks of the batch size), and the same batches in the
/// pieces the solvers' pipeline transforms at a time (pipeline_schedule):
/// large batches spill out of cache and slow the library down, which would
/// flatter the ratio of a solver that never runs them
/// (docs/performance.md, section 3). Buffers and plans are built once.
template <class T>
class FftFloor {
 public:
  /// `effort`: the solvers' (plan_effort of their fft_planner), so that the
  /// floor uses the same plans.
  FftFloor(Exec const& space, std::vector<std::vector<int>> schedules, int modes, int D, FFTPlanEffort effort)
      : m_schedules(std::move(schedules)), m_modes(modes),
        m_fft(space, largest() * modes, D, D, effort),
        m_waves(Kokkos::view_alloc(space, "ptyko::bench::floor_waves"), largest(), modes, D, D) {
    Kokkos::deep_copy(space, m_waves, Complex<T>(T(0.5), T(-0.25)));
    run(space);  // plans for every batch size, page faults
  }
  /// One floor epoch: the seconds of the fastest schedule (each fenced).
  double run(Exec const& space) {
    double best = 0;
    for (std::size_t s = 0; s < m_schedules.size(); ++s) {
      double const t = run_schedule(space, m_schedules[s]);
      best = s == 0 ? t : std::min(best, t);
    }
    return best;
  }
  std::size_t transforms() const {
    std::size_t n = 0;
    if (!m_schedules.empty())
      for (int B : m_schedules.front()) n += 2 * std::size_t(B) * m_modes;
    return n;
  }

 private:
  int largest() const {
    int n = 1;
    for (auto const& sizes : m_schedules)
      for (int B : sizes) n = std::max(n, B);
    return n;
  }
  double run_schedule(Exec const& space, std::vector<int> const& sizes) {
    FencedTimer t(space);
    for (int B : sizes) {
      if (B == 0) continue;
      auto w = Kokkos::subview(m_waves, std::make_pair(0, B), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
      m_fft.forward(space, w, w, FFTNorm::none);
      m_fft.inverse(space, w, w, FFTNorm::none);
    }
    return t.stop();
  }

  std::vector<std::vector<int>> m_schedules;
  int m_modes;
  BatchedFFT2D<T, Exec> m_fft;
  ComplexView4<T, Exec::memory_space> m_waves;
};

/// Sizes of the batches (rPIE/LSQML: the global batches) or chunks (DM/RAAR:
/// contiguous chunks of the local frames) an epoch of `options` runs over.
inline std::vector<int> epoch_batch_sizes(ScanLayout const& layout, SolverOptions options, std::size_t local_frames) {
  resolve_solver_defaults(options, layout.positions_px.size());
  std::vector<int> sizes;
  for (auto const& b : make_batches(layout.positions_px, options.batch_size, options.batching, options.seed))
    sizes.push_back(int(b.size()));
  if (options.solver == "dm" || options.solver == "raar") {
    // DM works through its frames in contiguous chunks of the largest batch.
    int const chunk = std::max(1, std::min<int>(int(local_frames), *std::max_element(sizes.begin(), sizes.end())));
    sizes.clear();
    for (std::size_t first = 0; first < local_frames; first += chunk)
      sizes.push_back(int(std::min<std::size_t>(chunk, local_frames - first)));
  }
  return sizes;
}

/// `batches` (epoch_batch_sizes) in the pieces of the pipeline's chunk
/// (impl::pipeline_chunk: what the solvers transform at a time).
template <class T>
std::vector<int> pipeline_schedule(Exec const& space, std::vector<int> const& batches, int D, int modes,
                                   SolverOptions const& options) {
  int const largest = batches.empty() ? 1 : std::max(1, *std::max_element(batches.begin(), batches.end()));
  int const chunk = impl::pipeline_chunk<T>(space, D, modes, largest, options.pipeline_chunk);
  std::vector<int> pieces;
  for (int B : batches)
    for (int first = 0; first < B; first += chunk) pieces.push_back(std::min(chunk, B - first));
  return pieces;
}

/// The FFT floor of an epoch of `options` (FftFloor): its batches, or its
/// batches in the pipeline's pieces, whichever the library runs faster.
template <class T>
FftFloor<T> epoch_fft_floor(Exec const& space, ScanLayout const& layout, SolverOptions const& options,
                            std::size_t local_frames, int modes) {
  int const D = layout.info.ny;
  auto batches = epoch_batch_sizes(layout, options, local_frames);
  auto pieces = pipeline_schedule<T>(space, batches, D, modes, options);
  std::vector<std::vector<int>> schedules{std::move(batches)};
  if (pieces != schedules.front()) schedules.push_back(std::move(pieces));  // devices: the same, timed once
  return FftFloor<T>(space, std::move(schedules), modes, D, plan_effort(options.fft_planner, D));
}

}  // namespace ptyko::bench
