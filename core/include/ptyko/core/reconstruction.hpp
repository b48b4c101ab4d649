#pragma once
// Runs a solver epoch by epoch on one rank's share of a dataset: global
// batches, probe-update schedule, mode orthogonalisation, probe support and
// the object/probe scale normalisation, cost bookkeeping. The driver (or a
// test) builds the LocalData and the Sync, then calls step() per epoch.

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/solver.hpp>
#include <ptyko/core/state.hpp>
#include <ptyko/core/sync.hpp>

#include <array>
#include <cmath>
#include <memory>
#include <vector>

namespace ptyko {

struct EpochReport {
  int epoch = 0;            ///< 1-based number of the epoch just run
  double cost = 0;          ///< mean cost per frame (NaN when not measured)
  double seconds = 0;       ///< wall time of the epoch on this rank
  double bytes = 0;         ///< bytes this rank moved in the epoch
  std::vector<double> mode_power_fractions;
  /// Position refinement after this epoch (SolverOptions::refine_positions):
  /// the root-mean-square and largest move in pixels, NaN when none ran.
  double position_rms_move_px = std::nan("");
  double position_max_move_px = std::nan("");
  /// Intensity refinement after this epoch (SolverOptions::refine_intensities):
  /// the frames' relative fluxes, their root-mean-square deviation from 1
  /// and extremes; NaN when none ran.
  double flux_rms_deviation = std::nan("");
  double flux_min = std::nan(""), flux_max = std::nan("");
  /// Background refinement after this epoch (SolverOptions::refine_background):
  /// the background's share of the measured counts; NaN when none ran.
  double background_fraction = std::nan("");
};

template <class T, class ExecSpace>
class PositionRefiner;
template <class T, class ExecSpace>
class MaskedPower;
template <class T, class ExecSpace>
class IntensityRefiner;
template <class T, class ExecSpace>
class BackgroundRefiner;
template <class T, class ExecSpace>
class EpochMomentum;

/// Mean diffraction pattern over all ranks' frames (corner-centred D x D, on
/// the host) and the mean total counts per frame over measured pixels.
/// Collective.
template <class T, class ExecSpace>
std::pair<std::vector<double>, double> mean_pattern(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                                    Sync<T, ExecSpace>& sync);

/// An initial state: object tile of ones (H, W), probe from `guess` when it
/// has modes, else from the mean pattern spread to `probe_diameter` pixels
/// on the side of the focus `focus` names (upstream, as `ptyko simulate`'s
/// data, unless told; choose_probe_start decides it from the data); probe
/// power set to the mean counts. Identical on every rank for the same seed.
/// Collective (mean pattern).
template <class T, class ExecSpace>
State<T, ExecSpace> initial_state(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                  Sync<T, ExecSpace>& sync, int tile_height, int tile_width,
                                  HostComplex3 const& guess, int modes, std::uint64_t seed,
                                  double probe_diameter, ProbeFocus focus = ProbeFocus::upstream);

template <class T, class ExecSpace>
class Reconstruction {
 public:
  /// \param all_positions  probe centres of every frame of the dataset (all
  ///                       ranks), in global object pixels: the global batches
  ///                       are computed from them.
  /// \param file_positions the same frames' positions as the file gives them
  ///                       when `all_positions` are refined ones (a resumed
  ///                       run; empty: `all_positions`): the batches are
  ///                       made from them, and position refinement's
  ///                       positions_max_shift counts from them.
  Reconstruction(ExecSpace const& space, LocalData<T, ExecSpace> data, State<T, ExecSpace> state,
                 SolverOptions options, Sync<T, ExecSpace>& sync,
                 std::vector<std::array<double, 2>> const& all_positions,
                 std::vector<std::array<double, 2>> const& file_positions = {});
  ~Reconstruction();

  /// Runs one epoch. Collective.
  EpochReport step();
  bool done() const { return m_state.epoch >= m_options.epochs; }

  State<T, ExecSpace>& state() { return m_state; }
  State<T, ExecSpace> const& state() const { return m_state; }
  LocalData<T, ExecSpace> const& data() const { return m_data; }
  SolverOptions const& options() const { return m_options; }
  /// This rank's positions that the solver updates directly, without
  /// object-shaped sums (LocalBatch::isolated), over all batches.
  /// Every frame's probe position (global object pixels), as refined so
  /// far (the positions given to the constructor without refinement).
  std::vector<std::array<double, 2>> const& positions() const { return m_positions; }
  /// Every frame's relative incident flux as intensity refinement found it
  /// (indexed by the frames' global ids; empty without
  /// SolverOptions::refine_intensities). Collective.
  std::vector<double> relative_flux();
  /// Scales the frames for relative fluxes a checkpoint holds (every frame,
  /// by global id), as if refined. Only with refine_intensities.
  void restore_flux(std::vector<double> const& flux);
  /// The cost per frame that counting noise alone would leave if the model
  /// were the truth (noise_floor.hpp), from the mean pattern of the frames
  /// as loaded: a converged run's cost is about this, or below.
  double counting_noise_floor() const { return m_noise_floor; }
  std::size_t isolated_positions() const {
    std::size_t n = 0;
    for (auto const& b : m_batches) n += std::size_t(b.isolated);
    return n;
  }

 private:
  ExecSpace m_space;
  LocalData<T, ExecSpace> m_data;
  State<T, ExecSpace> m_state;
  SolverOptions m_options;
  Sync<T, ExecSpace>& m_sync;
  std::unique_ptr<Solver<T, ExecSpace>> m_solver;
  /// Tiles and isolated positions of every batch, from m_positions.
  void plan_batches();
  /// After an epoch that updated the probe: its support, the modes made
  /// orthogonal and sorted (the solver and momentum told of the
  /// recombination) and, every rescale_every epochs, its power set to the
  /// counts with the object scaled inversely. Returns the modes' power
  /// fractions.
  std::vector<double> constrain_probe(int epoch);

  std::vector<std::vector<int>> m_global;  ///< the global batches (frame ids), fixed for the run
  std::vector<LocalBatch<ExecSpace>> m_batches;
  std::vector<std::array<double, 2>> m_positions, m_reference;  ///< current and file positions, global pixels
  std::vector<int> m_frame_rank;  ///< the rank holding each frame, when the strategy reads tile sources or holds pixels on several ranks (held_boxes)
  std::unique_ptr<PositionRefiner<T, ExecSpace>> m_refiner;  ///< made on the first refinement
  std::unique_ptr<IntensityRefiner<T, ExecSpace>> m_intensities;  ///< with refine_intensities
  std::unique_ptr<BackgroundRefiner<T, ExecSpace>> m_background;   ///< with refine_background
  std::unique_ptr<EpochMomentum<T, ExecSpace>> m_momentum;        ///< with momentum > 0
  ComplexView2<T, typename ExecSpace::memory_space> m_mode_mix;  ///< the modes' recombination, M x M (M > 1)
  double m_power = 0;        ///< measured mean counts per frame
  double m_noise_floor = 0;  ///< counting_noise_floor of the frames' mean pattern
  /// The probe's far-field share on masked pixels, when some are (the
  /// probe's power is the counts over the rest: masked_power.hpp).
  std::unique_ptr<MaskedPower<T, ExecSpace>> m_masked_power;
};

}  // namespace ptyko
