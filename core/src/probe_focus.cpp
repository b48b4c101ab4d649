#include <ptyko/core/probe_focus.hpp>
#include <ptyko/core/reconstruction.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <memory>

namespace ptyko {

template <class T, class ExecSpace>
ProbeFocusTrial choose_probe_focus(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                   Sync<T, ExecSpace>& sync, int tile_height, int tile_width,
                                   SolverOptions const& run, double probe_diameter,
                                   std::vector<std::array<double, 2>> const& all_positions,
                                   std::vector<std::array<double, 2>> const& file_positions) {
  // rPIE is the cheapest epoch and tells the sides apart as clearly as
  // LSQML; DM's costs from either side stay alike for its first epochs.
  SolverOptions trial;
  trial.solver = "rpie";
  trial.epochs = probe_focus_max_epochs;
  trial.batching = run.batching;
  trial.noise = run.noise;
  trial.modes = run.modes;
  trial.seed = run.seed;
  trial.probe_support = run.probe_support;
  trial.update_probe = run.update_probe;
  trial.illumination = run.illumination;
  trial.fft_planner = run.fft_planner;
  trial.pipeline_chunk = run.pipeline_chunk;
  auto const trial_run = [&](ProbeFocus focus) {
    State<T, ExecSpace> state = initial_state<T, ExecSpace>(space, data, sync, tile_height, tile_width,
                                                            HostComplex3(), run.modes, run.seed, probe_diameter,
                                                            focus);
    state.tile_y = data.tile_y;
    state.tile_x = data.tile_x;
    return std::make_unique<Reconstruction<T, ExecSpace>>(space, data, std::move(state), trial, sync, all_positions,
                                                          file_positions);
  };
  // Both sides epoch by epoch (each epoch is whole and collective, so the
  // strategy sees one run's epoch at a time), until one side's cost is
  // probe_focus_decisive_ratio times the other's.
  auto upstream = trial_run(ProbeFocus::upstream);
  auto downstream = trial_run(ProbeFocus::downstream);
  ProbeFocusTrial out;
  while (out.epochs < probe_focus_max_epochs) {
    out.upstream_cost = upstream->step().cost;
    out.downstream_cost = downstream->step().cost;
    ++out.epochs;
    double const high = std::max(out.upstream_cost, out.downstream_cost);
    double const low = std::min(out.upstream_cost, out.downstream_cost);
    if (out.epochs >= probe_focus_min_epochs && high >= probe_focus_decisive_ratio * low) break;
  }
  // The costs are sums over all ranks: every rank decides alike.
  out.focus = out.downstream_cost < out.upstream_cost ? ProbeFocus::downstream : ProbeFocus::upstream;
  return out;
}

#define PTYKO_INSTANTIATE(T)                                                                                  \
  template ProbeFocusTrial choose_probe_focus<T, Kokkos::DefaultExecutionSpace>(                              \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&,               \
      Sync<T, Kokkos::DefaultExecutionSpace>&, int, int, SolverOptions const&, double,                        \
      std::vector<std::array<double, 2>> const&, std::vector<std::array<double, 2>> const&);
PTYKO_INSTANTIATE(float)
PTYKO_INSTANTIATE(double)
#undef PTYKO_INSTANTIATE

}  // namespace ptyko
