// LSQML (Odstrcil, Menzel & Guizar-Sicairos 2018, Opt. Express 26, 3108),
// mini-batch form as in tike:
//  1. chi = exit-wave update direction from the noise model (real space);
//  2. U_O = sum_b S_b^T sum_m conj(P_m) chi_bm, preconditioned
//     D_O = U_O / sqrt(((1-a) W_O)^2 + (a max W_O)^2); likewise the probe
//     direction D_P from U_P = sum_b conj(S_b O) chi_b with W_P;
//  3. per position: least-squares steps (x1, x2) minimising
//     || chi - x1 P S_b D_O - x2 D_P S_b O ||^2 (2x2 system, A1/A4
//     regularised by half their batch means);
//  4. beta_O, beta_P = batch means of max(0, x); O += beta_O D_O, P += beta_P D_P.
// D_O of a batch's isolated positions (footprints that meet no other) is
// kept footprint by footprint (kernels/isolated_update.hpp), not in the
// object-shaped sums.

#include "lsqml_step_sums.hpp"
#include "gradient_solver.hpp"

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/isolated_update.hpp>
#include <ptyko/kernels/patch.hpp>
#include <ptyko/kernels/pinned_mirror.hpp>
#include <ptyko/kernels/update.hpp>

namespace ptyko::impl {

/// One position's step sizes from its sums s (A1, A4, Re A2, Im A2, b1,
/// b2; step_sums) and the batch's regularisation reg1, reg4: the real parts
/// of the solution of [a1 a2; conj(a2) a4] [x1; x2] = [b1; b2] with a1 =
/// A1 + reg1, a4 = A4 + reg4 (the object's alone, x1 = b1 / a1, without
/// the probe), negative steps as 0 (their batch means are beta_O, beta_P).
KOKKOS_INLINE_FUNCTION void position_steps(double const* s, double reg1, double reg4, bool with_probe, double& x1,
                                           double& x2) {
  double const a1 = s[0] + reg1, a4 = s[1] + reg4, a2r = s[2], a2i = s[3], b1 = s[4], b2 = s[5];
  x1 = x2 = 0;
  if (with_probe) {
    double const det = a1 * a4 - (a2r * a2r + a2i * a2i);
    if (det > 0) {
      x1 = (a4 * b1 - a2r * b2) / det;
      x2 = (a1 * b2 - a2r * b1) / det;
    }
  } else if (a1 > 0) {
    x1 = b1 / a1;
  }
  x1 = x1 > 0 ? x1 : 0.0;
  x2 = x2 > 0 ? x2 : 0.0;
}

/// The batch's mean step sizes (beta_O, beta_P) into steps(0), steps(1)
/// from the sums of its B positions, all on this rank (n = B): one work
/// item, in the batch's order. Non-blocking.
template <class ExecSpace>
void batch_step_means(ExecSpace const& space, int B, double n, bool with_probe,
                      Kokkos::View<double* [6], Kokkos::LayoutRight, typename ExecSpace::memory_space> const& sums,
                      Kokkos::View<double*, Kokkos::LayoutRight, typename ExecSpace::memory_space> const& steps) {
  Kokkos::parallel_for(
      "ptyko::LSQML::step_means", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, 1),
      KOKKOS_LAMBDA(int) {
        double a1 = 0, a4 = 0;
        for (int b = 0; b < B; ++b) {
          a1 += sums(b, 0);
          a4 += sums(b, 1);
        }
        double const reg1 = 0.5 * a1 / n, reg4 = 0.5 * a4 / n;
        double t1 = 0, t2 = 0;
        for (int b = 0; b < B; ++b) {
          double x1, x2;
          position_steps(&sums(b, 0), reg1, reg4, with_probe, x1, x2);
          t1 += x1;
          t2 += x2;
        }
        steps(0) = t1 / n;
        steps(1) = t2 / n;
      });
}

template <class T, class ExecSpace>
class LSQML final : public GradientSolver<T, ExecSpace> {
 public:
  using Base = GradientSolver<T, ExecSpace>;
  using Mem = typename ExecSpace::memory_space;

  std::string name() const override { return "lsqml"; }

  void setup(ExecSpace const& space, typename Base::Data const& data, typename Base::St const& state,
             SolverOptions const& options, int max_local_batch) override {
    int const batch = this->setup_pipeline(space, data, state, options, max_local_batch, "ptyko::LSQML::chi");
    int const D = data.detector();
    m_step = StepView(Kokkos::view_alloc(space, "ptyko::LSQML::step_sums"), batch);
    m_step_host = create_pinned_mirror(m_step);
    m_steps = decltype(m_steps)(Kokkos::view_alloc(space, "ptyko::LSQML::steps"), 2);
    if (options.isolated_updates && options.illumination == IlluminationNorm::batch)
      m_isolated_dir = ComplexView3<T, Mem>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::LSQML::isolated_directions"), batch, D + 1,
          D + 1);
  }

  double epoch(ExecSpace const& space, typename Base::Data const& data, typename Base::St& state,
               std::vector<typename Base::Batch const*> const& batches, typename Base::SyncT& sync,
               bool update_probe) override {
    bool const all = m_options.illumination == IlluminationNorm::all;
    auto const all_max = this->begin_epoch(space, data, state, batches, sync);
    for (auto const* batch : batches) {
      auto const& idx = batch->local;
      auto const& tiles = batch->tiles.list;
      int const B = int(idx.extent(0)), isolated_from = B - batch->isolated;
      m_sums.begin_batch(space, batch->tiles, update_probe, batch->shared.get());
      // Isolated positions keep their products; their direction is made
      // from them once the batch's largest weight over all ranks is known.
      bool const one_rank = sync.ranks() == 1;  // nothing summed over ranks: the batch's scalars stay in the space
      ScalarArg<T, Mem> const isolated_max =
          batch->isolated > 0 || batch->foreign() > 0
              ? m_sums.begin_isolated(space, state.probe, data.positions, idx, batch->isolated, /*in_space=*/one_rank)
              : ScalarArg<T, Mem>(0.0);
      // The step sums below read every position's waves and patches again.
      this->batch_gradient_sums(space, data, state, idx, update_probe, /*keep=*/true);
      auto const maxima = m_sums.reduce(space, sync, update_probe, isolated_max);
      auto const w_max = [&](int k) { return all ? ScalarArg<T, Mem>(all_max[k]) : maxima[k]; };
      // Search directions, in place of the sums.
      // The last read of the batch's weights: cleared behind the pass when
      // they are the ones it reads and the strategy does not read them after
      // the batch.
      precondition_direction(space, tiles, m_sums.obj_num, all ? m_all.obj_w : m_sums.obj_w, m_options.alpha,
                             w_max(0),
                             m_sums.zero_weight_after_use(!all && !sync.reads_batch_illumination()));
      auto const isolated = m_sums.kept_isolated(idx);
      if (batch->isolated > 0)
        isolated_directions(space, data.positions, isolated.indices, isolated.products,
                            m_sums.batch_probe_intensity(), m_isolated_dir,
                            PreconditionedDirectionArg<T, Mem>{m_options.alpha, maxima[0]});
      auto const foreign = m_sums.foreign_isolated();
      if (batch->foreign() > 0) {  // other ranks' isolated positions, on the pixels this rank holds
        if (int(m_foreign_dir.extent(0)) < batch->foreign())  // grows in the first epoch, then stays
          m_foreign_dir = ComplexView3<T, Mem>(
              Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::LSQML::foreign_directions"),
              batch->foreign(), m_isolated_dir.extent(1), m_isolated_dir.extent(2));
        isolated_directions(space, foreign.placed, foreign.products, m_sums.batch_probe_intensity(), m_foreign_dir,
                            PreconditionedDirectionArg<T, Mem>{m_options.alpha, maxima[0]},
                            int(state.object.extent(0)), int(state.object.extent(1)));
      }
      if (update_probe)
        precondition_direction(space, m_sums.probe_num, all ? m_all.probe_w : m_sums.probe_w,
                               m_options.beta, w_max(1));

      // Per-position step sizes and their batch means: on one rank in the
      // space, for the kernels below to read (a device does not wait for
      // the host); else on the host, summed over ranks.
      if (B > 0)
        step_sums<T>(space, B, state.probe, m_sums.probe_num, m_model->patches(), m_sums.obj_num, m_isolated_dir,
                     isolated_from, data.positions, idx, m_waves, m_step, update_probe);
      double const n = std::max(1, batch->global_size);
      ScalarArg<double, Mem> beta_o(0.0), beta_p(0.0);
      if (one_rank) {
        batch_step_means(space, B, n, update_probe, m_step, m_steps);
        beta_o = ScalarArg<double, Mem>(Kokkos::View<double, Mem>(m_steps.data()));
        beta_p = ScalarArg<double, Mem>(Kokkos::View<double, Mem>(m_steps.data() + 1));
      } else {
        auto const means = host_step_means(space, *batch, update_probe, sync);
        beta_o = means[0];
        beta_p = means[1];
      }
      add_scaled(space, tiles, state.object, m_sums.obj_num, beta_o, m_sums.zero_numerator_after_use());
      if (batch->isolated > 0)
        add_isolated_directions(space, data.positions, isolated.indices, m_isolated_dir, state.object, beta_o);
      if (batch->foreign() > 0) add_isolated_directions(space, foreign.placed, m_foreign_dir, state.object, beta_o);
      if (update_probe)
        add_scaled(space, state.probe, m_sums.probe_num, beta_p, m_sums.zero_probe_numerator_after_use());
      if (m_options.object_clip) clip_amplitude(space, tiles, state.object, T(1));
      sync.after_batch(space, state.object, m_sums.obj_w, batch->tiles);
    }
    return this->end_epoch(space);
  }

 private:
  // The pipeline's members (GradientSolver), named here as in a
  // non-template class.
  using Base::m_all;
  using Base::m_model;
  using Base::m_options;
  using Base::m_sums;
  using Base::m_waves;
  using StepView = Kokkos::View<double* [6], Kokkos::LayoutRight, Mem>;

  /// The batch's mean step sizes on the host, over all ranks' positions
  /// (blocking, collective). Up to lsqml_step_rows_limit positions in one
  /// collective: each rank puts its positions' sums (m_step) in their rows
  /// of the global batch (LocalBatch::global_rows) and zeroes the others,
  /// so the sum over ranks brings every row exactly, and every rank then
  /// makes the regularisation and the steps from all rows in the global
  /// batch's order, whatever the rank count. Larger batches sum A1 and A4,
  /// then the steps, in two.
  std::array<double, 2> host_step_means(ExecSpace const& space, typename Base::Batch const& batch, bool update_probe,
                                        typename Base::SyncT& sync) {
    int const B = int(batch.local.extent(0)), G = batch.global_size;
    PTYKO_ASSERT(int(batch.global_rows.size()) == B, "a batch's positions need their global rows");
    if (B > 0) {
      Kokkos::deep_copy(space, m_step_host, m_step);  // device -> host: B x 6 step sums
      fence(space, "ptyko::LSQML::step_sums");
    }
    double const n = std::max(1, G);
    bool const rows = G <= lsqml_step_rows_limit;
    // The positions' sums, each at its row of m_rows (rows), or this rank's
    // own in their local order.
    auto const sums_of = [&](int k) { return rows ? &m_rows[std::size_t(k) * 6] : &m_step_host(k, 0); };
    int const count = rows ? G : B;
    double acc[2] = {0, 0};  // sum A1, sum A4
    if (rows) {
      m_rows.assign(std::size_t(G) * 6, 0.0);  // the room of the largest batch, kept
      for (int b = 0; b < B; ++b)
        for (int k = 0; k < 6; ++k) m_rows[std::size_t(batch.global_rows[std::size_t(b)]) * 6 + k] = m_step_host(b, k);
      sync.sum(m_rows.data(), 6 * G);
    }
    for (int k = 0; k < count; ++k) {
      acc[0] += sums_of(k)[0];
      acc[1] += sums_of(k)[1];
    }
    if (!rows) sync.sum(acc, 2);
    double const reg1 = 0.5 * acc[0] / n, reg4 = 0.5 * acc[1] / n;
    double steps[2] = {0, 0};  // sum max(0, x1), sum max(0, x2)
    for (int k = 0; k < count; ++k) {
      double x1, x2;
      position_steps(sums_of(k), reg1, reg4, update_probe, x1, x2);
      steps[0] += x1;
      steps[1] += x2;
    }
    if (!rows) sync.sum(steps, 2);
    return {steps[0] / n, steps[1] / n};
  }
  ComplexView3<T, Mem> m_isolated_dir;  ///< (batch, D + 1, D + 1): isolated positions' object direction
  ComplexView3<T, Mem> m_foreign_dir;   ///< the same for other ranks' isolated positions (UpdateSums::foreign_isolated)
  StepView m_step;
  PinnedMirror<StepView> m_step_host;
  std::vector<double> m_rows;  ///< the global batch's step sums (host_step_means)
  Kokkos::View<double*, Kokkos::LayoutRight, Mem> m_steps;  ///< (beta_O, beta_P) of batch_step_means
};

template <class T, class ExecSpace>
std::unique_ptr<Solver<T, ExecSpace>> make_lsqml() {
  return std::make_unique<LSQML<T, ExecSpace>>();
}

template std::unique_ptr<Solver<float, Kokkos::DefaultExecutionSpace>> make_lsqml<float, Kokkos::DefaultExecutionSpace>();
template std::unique_ptr<Solver<double, Kokkos::DefaultExecutionSpace>> make_lsqml<double, Kokkos::DefaultExecutionSpace>();

}  // namespace ptyko::impl
