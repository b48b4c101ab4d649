#pragma once
// What rPIE/ePIE and LSQML hold alike: the per-position pipeline that forms
// each batch's gradient sums (gradient_sums in pie_common.hpp) and the
// buffers it works in, set up in one place.

#include "pie_common.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

namespace ptyko::impl {

/// Base of the batch-gradient solvers: the forward model and its chunk of
/// positions, the batch's exit waves, the update sums of the batch and,
/// with IlluminationNorm::all, of all positions, and the epoch's Fourier-
/// step costs. Both collect per-position sums and update isolated positions
/// footprint by footprint where that applies.
template <class T, class ExecSpace>
class GradientSolver : public Solver<T, ExecSpace> {
 public:
  using Base = Solver<T, ExecSpace>;
  using Mem = typename ExecSpace::memory_space;

  bool collects_position_sums() const override { return true; }

  bool updates_isolated_positions(SolverOptions const& options, typename Base::SyncT const& sync) const override {
    return isolated_positions_apply(options, sync);
  }

 protected:
  /// Allocates the pipeline for batches of up to `max_local_batch`
  /// positions (the exit waves labelled `waves_label`) and keeps `options`;
  /// returns that batch size, at least 1. (The label is a std::string:
  /// view_alloc takes a char pointer for memory to wrap.)
  int setup_pipeline(ExecSpace const& space, typename Base::Data const& data, typename Base::St const& state,
                     SolverOptions const& options, int max_local_batch, std::string const& waves_label) {
    m_options = options;
    int const M = state.modes(), D = data.detector();
    int const H = int(state.object.extent(0)), W = int(state.object.extent(1));
    int const batch = std::max(1, max_local_batch);
    m_model = std::make_unique<ForwardModel<T, ExecSpace>>(space, batch, M, D, plan_effort(options.fft_planner, D));
    m_chunk = pipeline_chunk<T>(space, D, M, batch, options.pipeline_chunk);
    m_waves = ComplexView4<T, Mem>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, waves_label), batch, M, D,
                                   D);
    m_sums = UpdateSums<T, ExecSpace>(space, H, W, M, D, batch);
    if (options.illumination == IlluminationNorm::all) {
      m_all = UpdateSums<T, ExecSpace>(space, H, W, M, D, batch);
      m_chunks = index_chunks<Mem>(data.local_frames(), batch);
    }
    return batch;
  }

  /// The start of an epoch over `batches`: the cost slots of its pipeline
  /// passes, and with IlluminationNorm::all every position's illumination
  /// sums (m_all) and their largest weights (object, probe), else {0, 0}.
  std::array<double, 2> begin_epoch(ExecSpace const& space, typename Base::Data const& data,
                                    typename Base::St const& state,
                                    std::vector<typename Base::Batch const*> const& batches,
                                    typename Base::SyncT& sync) {
    std::array<double, 2> all_max{0, 0};
    if (m_options.illumination == IlluminationNorm::all)
      all_max = all_positions_weights(space, *m_model, data, state, m_chunks, m_all, sync);
    m_costs.begin(space, pipeline_passes(batches, m_chunk));
    return all_max;
  }

  /// The gradient sums of the batch `idx` into m_sums (gradient_sums);
  /// `keep`: its exit waves and patches stay in m_waves and the model's
  /// patches for the solver to read again. Non-blocking.
  void batch_gradient_sums(ExecSpace const& space, typename Base::Data const& data, typename Base::St const& state,
                           IndexView<Mem> const& idx, bool update_probe, bool keep) {
    gradient_sums(space, *m_model, data, state, idx, m_options.noise, m_waves, m_model->patches(), m_sums, m_costs,
                  update_probe, m_chunk, keep, this->m_position_sums);
  }

  /// The epoch's total cost (blocking).
  double end_epoch(ExecSpace const& space) { return m_costs.total(space); }

  SolverOptions m_options;
  std::unique_ptr<ForwardModel<T, ExecSpace>> m_model;
  ComplexView4<T, Mem> m_waves;            ///< the batch's exit waves (batch, M, D, D)
  UpdateSums<T, ExecSpace> m_sums, m_all;  ///< the batch's sums; all positions' (IlluminationNorm::all)

 private:
  CostSlots<ExecSpace> m_costs;          ///< the epoch's Fourier-step costs, read once at its end
  std::vector<IndexView<Mem>> m_chunks;  ///< the local frames in batches (IlluminationNorm::all)
  int m_chunk = 1;                       ///< positions per pass of the pipeline
};

}  // namespace ptyko::impl
