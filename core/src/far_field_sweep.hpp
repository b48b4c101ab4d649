#pragma once
// The model far fields of every local position, chunk by chunk, for the
// refinements that compare each frame's model with its data between epochs
// (intensities, background): one forward transform per position and mode,
// with buffers and FFT plans made on the first sweep and kept.

#include "solvers/pie_common.hpp"

#include <ptyko/core/solver.hpp>
#include <ptyko/core/state.hpp>
#include <ptyko/kernels/forward.hpp>

#include <algorithm>
#include <memory>
#include <vector>

namespace ptyko::impl {

template <class T, class ExecSpace>
class FarFieldSweep {
 public:
  using Mem = typename ExecSpace::memory_space;

  /// Chunks of at most 64 of `data`'s positions (the pipeline's size), in
  /// walking order. Not collective.
  FarFieldSweep(ExecSpace const& space, LocalData<T, ExecSpace> const& data, int modes, FFTPlanner planner)
      : m_planner(planner) {
    int const D = data.detector(), n = data.local_frames();
    m_chunk = std::max(1, std::min(pipeline_chunk<T>(space, D, modes, std::max(1, n)), 64));
    m_chunks = walking_chunks<Mem>(data.positions, D, m_chunk);
  }

  /// fn(B, waves, idx) for every chunk: `waves` (at least B, M, D, D) holds
  /// the far fields of the chunk's positions idx (B of them) for the
  /// state's object and probe. Non-blocking.
  template <class Fn>
  void for_each_chunk(ExecSpace const& space, LocalData<T, ExecSpace> const& data, State<T, ExecSpace> const& state,
                      Fn&& fn) {
    int const M = state.modes(), D = data.detector();
    if (!m_model) {
      m_model = std::make_unique<ForwardModel<T, ExecSpace>>(space, m_chunk, M, D, plan_effort(m_planner, D));
      m_waves = ComplexView4<T, Mem>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::FarFieldSweep::waves"), m_chunk, M, D, D);
    }
    for (auto const& idx : m_chunks) {
      m_model->far_field(space, state.object, state.probe, data.positions, idx, m_waves);
      fn(int(idx.extent(0)), m_waves, idx);
    }
  }

 private:
  FFTPlanner m_planner;
  int m_chunk = 1;
  std::vector<IndexView<Mem>> m_chunks;
  std::unique_ptr<ForwardModel<T, ExecSpace>> m_model;  ///< made on the first sweep
  ComplexView4<T, Mem> m_waves;
};

}  // namespace ptyko::impl
