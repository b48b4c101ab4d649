#include <ptyko/core/momentum.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/modes.hpp>
#include <ptyko/kernels/update.hpp>

#include <cmath>

namespace ptyko {

template <class T, class ExecSpace>
EpochMomentum<T, ExecSpace>::EpochMomentum(ExecSpace const& space, State<T, ExecSpace>& state, double friction,
                                           bool clip)
    : m_friction(friction), m_clip(clip) {
  PTYKO_ASSERT(friction > 0 && friction < 1, "momentum friction ", friction, " outside (0, 1)");
  if (state.object_velocity.extent(0) != state.object.extent(0) ||
      state.object_velocity.extent(1) != state.object.extent(1))
    state.object_velocity = ComplexView2<T, Mem>(Kokkos::view_alloc(space, "ptyko::State::object_velocity"),
                                                 state.object.extent(0), state.object.extent(1));
  if (state.probe_velocity.span() != state.probe.span())
    state.probe_velocity = ComplexView3<T, Mem>(Kokkos::view_alloc(space, "ptyko::State::probe_velocity"),
                                                state.probe.extent(0), state.probe.extent(1), state.probe.extent(2));
}

namespace {

// The model explains the frames to their counting noise: the epochs'
// updates are then mostly noise, which momentum would carry on (1e4
// photons per frame, at the floor by epoch 10: LSQML's object error after
// 100 epochs 0.134 without momentum, 0.148 with it stepping on, 0.134
// stopping at 1.1 x the floor).
bool explained(double cost, double noise_floor) {
  return noise_floor > 0 && cost < momentum_noise_limit * noise_floor;
}

// After an epoch so explained the velocities are zero and stay so while
// the costs do: no passes over object and probe (3-4 % of a 400-frame rPIE
// epoch). Decided from the cost history, so a resumed run decides alike.
template <class T, class ExecSpace>
bool idle(State<T, ExecSpace> const& state, double noise_floor) {
  return !state.cost.empty() && explained(state.cost.back(), noise_floor);
}

}  // namespace

template <class T, class ExecSpace>
void EpochMomentum<T, ExecSpace>::begin(ExecSpace const& space, State<T, ExecSpace>& state,
                                        double noise_floor) const {
  if (idle(state, noise_floor)) return;
  momentum_begin(space, state.object, state.object_velocity, T(m_friction));
  momentum_begin(space, state.probe, state.probe_velocity, T(m_friction));
}

template <class T, class ExecSpace>
bool EpochMomentum<T, ExecSpace>::end(ExecSpace const& space, State<T, ExecSpace>& state, double cost,
                                      double noise_floor, bool probe_updated) const {
  if (idle(state, noise_floor)) return false;  // velocities zero, begin made no pass
  auto const& history = state.cost;  // the epochs before this one
  std::size_t const n = history.size();
  double const previous_cost = n >= 1 ? history[n - 1] : std::nan(""), before = n >= 2 ? history[n - 2] : std::nan("");
  // As tike: no step while the cost has risen twice in a row. An epoch
  // after a step often costs a little more than the one before (the step
  // overshoots along directions the next epoch corrects); stepping only
  // after falling costs halved the gain on aberrated probes. The run's
  // first epoch (no cost before it) is not carried on: it forms the object
  // from a blank start, and half of it again overshot (10 000 frames: cost
  // 2160 after the third epoch against 1184 without momentum, 1020 now).
  // Nor one explained to the counting noise: its velocities become zero.
  bool const first = !std::isfinite(previous_cost);
  bool const quiet = first || explained(cost, noise_floor);
  bool const step = !quiet && std::isfinite(cost) && !(before <= previous_cost && previous_cost <= cost);
  T const gain = T(momentum_gain), keep = T(quiet ? 0.0 : 0.5);
  momentum_end(space, state.object, state.object_velocity, step, gain, T(m_clip ? 1 : 0), keep);
  // A probe the epoch left alone has no update of its own: it does not
  // move, and its velocity (now friction v) is kept as it was.
  momentum_end(space, state.probe, state.probe_velocity, step && probe_updated, gain, T(0),
               probe_updated || quiet ? keep : T(1 / m_friction));
  return step;
}

template <class T, class ExecSpace>
void EpochMomentum<T, ExecSpace>::modes_recombined(ExecSpace const& space, State<T, ExecSpace>& state,
                                                   ComplexView2<T, Mem> const& mix) const {
  mix_modes<T>(space, as_one_frame(state.probe_velocity), mix);
}

template <class T, class ExecSpace>
void EpochMomentum<T, ExecSpace>::rescaled(ExecSpace const& space, State<T, ExecSpace>& state, double c) const {
  scale(space, state.object_velocity, T(1 / c));
  scale(space, state.probe_velocity, T(c));
}

template class EpochMomentum<float, Kokkos::DefaultExecutionSpace>;
template class EpochMomentum<double, Kokkos::DefaultExecutionSpace>;

}  // namespace ptyko
