// rPIE (Maiden, Johnson & Li 2017) with mini-batches, and ePIE (Maiden &
// Rodenburg 2009) as its special case alpha = beta = 1, batch size 1:
//   O += sum_b S_b^T( sum_m conj(P_m) Delta_bm ) / ((1-alpha) W_O + alpha max W_O)
//   P_m += sum_b conj(S_b O) Delta_bm / ((1-beta) W_P + beta max W_P)
// with W_O, W_P summed over the batch (default) or all positions.

#include "gradient_solver.hpp"

#include <ptyko/kernels/update.hpp>

namespace ptyko::impl {

template <class T, class ExecSpace>
class RPIE final : public GradientSolver<T, ExecSpace> {
 public:
  using Base = GradientSolver<T, ExecSpace>;
  using Mem = typename ExecSpace::memory_space;

  explicit RPIE(std::string name) : m_name(std::move(name)) {}
  std::string name() const override { return m_name; }

  void setup(ExecSpace const& space, typename Base::Data const& data, typename Base::St const& state,
             SolverOptions const& options, int max_local_batch) override {
    this->setup_pipeline(space, data, state, options, max_local_batch, "ptyko::rPIE::waves");
  }

  double epoch(ExecSpace const& space, typename Base::Data const& data, typename Base::St& state,
               std::vector<typename Base::Batch const*> const& batches, typename Base::SyncT& sync,
               bool update_probe) override {
    auto const all_max = this->begin_epoch(space, data, state, batches, sync);
    // The step along the exit-wave update (impl::exit_wave_update has
    // already halved the Poisson one).
    double const step = 1.0;
    for (auto const* batch : batches) {
      auto const& idx = batch->local;
      auto const& tiles = batch->tiles.list;
      m_sums.begin_batch(space, batch->tiles, update_probe, batch->shared.get());
      // Isolated positions: on one rank they update the object as they go
      // (and the batch's largest weight is known first); on several, after
      // the sums, with the largest weight over all ranks.
      bool const in_pipeline = sync.ranks() == 1;
      ScalarArg<T, Mem> isolated_max(0.0);
      if (batch->isolated > 0 && in_pipeline)
        m_sums.begin_isolated_updates(space, state.probe, data.positions, idx, batch->isolated, state.object,
                                      m_options.alpha, step);  // reduce returns its w_max
      else if (batch->isolated > 0 || batch->foreign() > 0)
        isolated_max = m_sums.begin_isolated(space, state.probe, data.positions, idx, batch->isolated);
      this->batch_gradient_sums(space, data, state, idx, update_probe, /*keep=*/false);
      auto const maxima = m_sums.reduce(space, sync, update_probe, isolated_max);
      if (!in_pipeline && batch->isolated > 0) {
        auto const kept = m_sums.kept_isolated(idx);
        apply_isolated_update(space, data.positions, kept.indices, kept.products, m_sums.batch_probe_intensity(),
                              state.object, PreconditionedStepArg<T, Mem>{m_options.alpha, maxima[0], step});
      }
      if (batch->foreign() > 0) {  // other ranks' isolated positions, on the pixels this rank holds
        auto const foreign = m_sums.foreign_isolated();
        apply_isolated_update(space, foreign.placed, foreign.products, m_sums.batch_probe_intensity(), state.object,
                              PreconditionedStepArg<T, Mem>{m_options.alpha, maxima[0], step});
      }
      bool const all = m_options.illumination == IlluminationNorm::all;
      auto const w_max = [&](int k) { return all ? ScalarArg<T, Mem>(all_max[k]) : maxima[k]; };
      // The update reads the batch's sums last: it clears them behind itself
      // (the weights only when they are the ones it reads and the strategy
      // does not read them after the batch).
      apply_preconditioned_update(space, tiles, state.object, m_sums.obj_num, all ? m_all.obj_w : m_sums.obj_w,
                                  m_options.alpha, w_max(0), step,
                                  m_sums.zero_numerator_after_use(),
                                  m_sums.zero_weight_after_use(!all && !sync.reads_batch_illumination()));
      if (update_probe) {
        apply_preconditioned_update(space, state.probe, m_sums.probe_num,
                                    all ? m_all.probe_w : m_sums.probe_w, m_options.beta,
                                    w_max(1), step, m_sums.zero_probe_numerator_after_use());
      }
      if (m_options.object_clip) clip_amplitude(space, tiles, state.object, T(1));
      sync.after_batch(space, state.object, m_sums.obj_w, batch->tiles);
    }
    return this->end_epoch(space);
  }

 private:
  // The pipeline's members (GradientSolver), named here as in a
  // non-template class.
  using Base::m_all;
  using Base::m_options;
  using Base::m_sums;
  std::string m_name;
};

template <class T, class ExecSpace>
std::unique_ptr<Solver<T, ExecSpace>> make_rpie(std::string const& name) {
  return std::make_unique<RPIE<T, ExecSpace>>(name);
}

template std::unique_ptr<Solver<float, Kokkos::DefaultExecutionSpace>>
make_rpie<float, Kokkos::DefaultExecutionSpace>(std::string const&);
template std::unique_ptr<Solver<double, Kokkos::DefaultExecutionSpace>>
make_rpie<double, Kokkos::DefaultExecutionSpace>(std::string const&);

}  // namespace ptyko::impl
