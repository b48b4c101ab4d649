#pragma once
// Momentum across epochs for the descent solvers (rPIE, ePIE, LSQML), as
// mPIE (Maiden, Johnson & Li, Optica 4, 736, 2017) and tike's object and
// probe momentum add it: each epoch's own update of the object and the probe
// joins a velocity that keeps `friction` of the last one, and the fields
// move on by gain x velocity. Where the probe must travel far from its
// start (an aberrated beam started from a round one) the plain solvers creep
// for hundreds of epochs; with momentum they get there in tens
// (docs/solvers.md). As in tike, no step is taken while the cost has risen
// in two epochs running (the cost is global, so every rank decides alike):
// the velocity is halved and nothing moves, which ends an overshoot. Nor
// once the cost is down to the counting noise, where momentum would carry
// the noise on.
//
// The velocities live in the State (a checkpoint keeps them, so a resumed
// run continues exactly); between the epoch's start and end each holds
// friction v - x, so one field per updated field is all the memory it takes.

#include <ptyko/core/state.hpp>
#include <ptyko/kernels/types.hpp>

namespace ptyko {

/// The step along the velocity after an epoch (as a share of it): 0.5 with
/// friction 0.9 took the object error of an aberrated-probe scan from 0.15
/// to 0.08 in 200 epochs and left the other test scans within a few per
/// cent, most of them better (docs/solvers.md).
inline constexpr double momentum_gain = 0.5;

/// No step once the cost per frame is below this many times the counting-
/// noise floor (noise_floor.hpp): the model then explains the frames to
/// their noise, and carrying the epochs' updates on fits the noise.
inline constexpr double momentum_noise_limit = 1.1;

template <class T, class ExecSpace>
class EpochMomentum {
 public:
  using Mem = typename ExecSpace::memory_space;
  /// Allocates the state's velocities (zero) unless it holds some (a
  /// resumed run). `friction` in (0, 1); `clip`: --object-clip.
  EpochMomentum(ExecSpace const& space, State<T, ExecSpace>& state, double friction, bool clip);

  /// Before the solver's epoch; `noise_floor` as for end. Non-blocking.
  void begin(ExecSpace const& space, State<T, ExecSpace>& state, double noise_floor) const;
  /// After the epoch and the strategy's end of epoch (every copy of a pixel
  /// and the probe agreed), before `cost` joins state.cost: steps unless
  /// the cost rose in this epoch and the one before, the probe only when
  /// this epoch updated it. After the run's first epoch, and after any
  /// whose cost is below momentum_noise_limit times `noise_floor` (the
  /// counting-noise cost per frame; 0: unknown), the velocities are zero
  /// and no step is taken. Returns whether it stepped. Non-blocking.
  bool end(ExecSpace const& space, State<T, ExecSpace>& state, double cost, double noise_floor,
           bool probe_updated) const;
  /// The modes were recombined by `mix` (orthogonalize_modes' V on the
  /// device): the velocity follows them. Non-blocking.
  void modes_recombined(ExecSpace const& space, State<T, ExecSpace>& state,
                        ComplexView2<T, Mem> const& mix) const;
  /// The object was scaled by 1 / c and the probe by c. Non-blocking.
  void rescaled(ExecSpace const& space, State<T, ExecSpace>& state, double c) const;

 private:
  double m_friction;
  bool m_clip;
};

}  // namespace ptyko
