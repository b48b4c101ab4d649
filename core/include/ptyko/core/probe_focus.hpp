#pragma once
// The side of the focus for a probe computed from the data. A sample
// upstream of a focusing optic (the beam converging) and one as far
// downstream (diverging) see twin probes, each the other's complex
// conjugate mirrored through the centre; their mean patterns are the same,
// so the data's mean cannot choose, and beamlines use both sides. A start on
// the wrong side stays with the true probe's twin: object errors 0.31-0.41
// against 0.01-0.05 after 100 epochs (docs/solvers.md). The data can choose
// within a few epochs: started from the wrong side, rPIE's cost is 2.6-20
// times higher after 3 epochs on most scans, so a short rPIE run from each
// side decides. Where the sides part slowly (a probe much larger than the
// start's diameter: 1 % apart after 3 epochs, 34 % after 10), the trial runs
// longer; where they never part (a probe at its focus), either side serves.
// The sides part within a well-overlapped part of the scan that holds some
// of the sample, so a large scan's trial runs on a compact part of it first
// (on the 10 000-frame file of docs/performance.md, whose sides never
// parted over the whole scan, 10 + 10 epochs of every frame took 37 s of a
// 44 s one-epoch run; 1024 of its frames decided in 3 + 3 epochs), and on
// the whole scan only where that part does not decide.
//
// The same trial sizes the probe. The mean pattern does not say how far the
// beam has spread at the sample either, and a start a third of the probe's
// size never recovers: on scans of 89 % overlap (an independent simulator's,
// 38 px probes stepped 4.2 px) the default start of a 70 % overlap scan left
// LSQML and rPIE at object errors of 0.21, and a start of 35 px gave 0.033.
// So where --probe-diameter is not given, the trial also tries larger
// starts, and the lowest cost after 3 epochs picks the diameter with the
// side: on six such scans it cut the errors of the two with the largest
// probes 2-6 times, those of two others by 5 %, and left two with strongly
// aberrated probes as they were (docs/solvers.md).

#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/solver.hpp>
#include <ptyko/core/state.hpp>
#include <ptyko/core/sync.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace ptyko {

/// rPIE epochs of a trial start: every start runs the first number; where
/// that does not decide the side, the best start of each side runs on, both
/// in turn, until one side's cost is the decisive ratio times the other's or
/// the second number is reached.
inline constexpr int probe_focus_min_epochs = 3;
inline constexpr int probe_focus_max_epochs = 10;
inline constexpr double probe_focus_decisive_ratio = 2.0;
/// Frames of the trial by default (over all ranks): larger scans try a
/// compact part of themselves (probe_focus_frames).
inline constexpr int probe_focus_trial_frames = 1024;
/// Every rank with frames tries at least this many of its own (or all it
/// holds), so that each rank's part still overlaps itself at many ranks.
inline constexpr int probe_focus_rank_frames = 64;

/// A computed probe to start from: the side of the focus and the diameter
/// (object pixels, 90 % of the power) that initial_probe_from_pattern gives it.
struct ProbeStart {
  ProbeFocus focus = ProbeFocus::upstream;
  double diameter = 0;
};

/// Diameters a trial tries when none is given: `default_diameter` (the probe
/// of a 70 % overlap scan, default_probe_diameter) times 1, 1.6 and 2.5,
/// each clamped to [4, 0.6 D] and kept when 10 % larger than the one before.
/// A start a third of the probe's size never recovers (docs/solvers.md), and
/// scans are often overlapped far more than 70 %.
std::vector<double> probe_diameter_candidates(double default_diameter, int D);

/// The starts a trial tries: each side (`focus` automatic) or the one named,
/// times each diameter.
std::vector<ProbeStart> probe_starts(ProbeFocus focus, std::vector<double> const& diameters);

/// What choose_probe_start found.
struct ProbeStartTrial {
  ProbeStart start;                   ///< the start whose trial ended at the lowest cost
  std::vector<ProbeStart> starts;     ///< every start tried
  std::vector<double> costs;          ///< each one's mean cost per frame after probe_focus_min_epochs
  /// The cost that chose the side: the lowest of the upstream starts'
  /// (0: none tried), or, where the sides ran on, the best one's at the end.
  double upstream_cost = 0;
  double downstream_cost = 0;  ///< the same for the downstream starts
  int epochs = 0;              ///< rPIE epochs behind those two costs
  bool sides_ran_on = false;   ///< whether each side's best start ran on past the first epochs
  std::size_t frames = 0;             ///< frames the trials ran on, over all ranks
  /// Frames of a part of the scan whose trial did not decide before the
  /// whole scan's did (0: none was tried, or it decided).
  std::size_t undecided_frames = 0;
};

/// How many of its `own` frames a rank tries out of `global` over all ranks,
/// for a trial of at most `max_frames` (<= 0: every frame): all of them when
/// the scan has no more than max_frames, else its share of max_frames, at
/// least probe_focus_rank_frames (or all it holds).
std::size_t probe_focus_quota(std::size_t own, std::size_t global, int max_frames);

/// The `count` frames of `ids` (global frame numbers) nearest the one of them
/// nearest their centroid (`positions` indexed by frame number; ties to the
/// lower number): a compact part of those frames' scan, which overlaps
/// itself as the scan does. Ascending; all of `ids` when count >= their
/// number.
std::vector<std::size_t> compact_frames(std::vector<std::array<double, 2>> const& positions,
                                        std::vector<std::size_t> const& ids, std::size_t count);

/// Runs rPIE from each of `starts` (initial_state with no guess) with the
/// run's batching, noise model, modes, seed, probe support and probe
/// updates, and returns the start whose cost is lowest: every start runs
/// probe_focus_min_epochs, one after the other (one trial state is held at a
/// time); where the sides did not part by the decisive ratio, the best start
/// of each side runs afresh, both in turn, for up to probe_focus_max_epochs
/// (see above; ties go to the earlier start). The run itself then starts
/// afresh from the chosen probe; nothing of the trials is kept.
/// A scan of more than `max_frames` frames (<= 0: no limit) tries each
/// rank's compact_frames of its probe_focus_quota first, a copy of those
/// frames, and the whole scan only where that part's sides did not part.
/// `tile_height` x `tile_width`: this rank's object tile (at data.tile_y,
/// data.tile_x). Collective: every rank gets the same answer.
template <class T, class ExecSpace>
ProbeStartTrial choose_probe_start(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                   Sync<T, ExecSpace>& sync, int tile_height, int tile_width,
                                   SolverOptions const& run, std::vector<ProbeStart> const& starts,
                                   std::vector<std::array<double, 2>> const& all_positions,
                                   std::vector<std::array<double, 2>> const& file_positions = {},
                                   int max_frames = probe_focus_trial_frames);

}  // namespace ptyko
