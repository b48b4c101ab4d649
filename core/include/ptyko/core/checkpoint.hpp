#pragma once
// Checkpoints: everything a reconstruction needs to continue where it
// stopped, as a result file (viewable like any other) plus a /checkpoint
// group. `ptyko reconstruct` writes one every K epochs, on SIGINT/SIGTERM and
// at the end, so every result can be continued (`--resume OUT.h5`).
//
//   /reconstruction/...           the result (result_file.hpp): global object,
//                                 probe, positions, per-epoch history (cost,
//                                 seconds, bytes, truth error), resolved config
//   /checkpoint/epoch             epochs completed
//   /checkpoint/seed, rng_state   the batch-order seed (batch_order is a pure
//                                 function of (seed, epoch)) and State::rng_state
//   /checkpoint/ranks, strategy   how the run was split (informative: a run
//                                 may resume on any rank count and strategy)
//   /checkpoint/precision         "single" or "double"
//   /checkpoint/input             absolute path of the input file
//   /checkpoint/object, probe     complex128 copies, double precision only
//                                 (single precision: /reconstruction's
//                                 complex64 arrays hold the values exactly)
//   /checkpoint/object_velocity,  momentum's velocities (core/momentum.hpp),
//     probe_velocity              in the run's precision, when it has them
//
// The object is stored whole (gathered), so each rank of the resumed run cuts
// its own tile from it. What is not stored, because it is rebuilt exactly
// from the input and the options: the batches, the frames, the measured
// probe power. DM/RAAR's per-position exit waves are not stored either: they
// are as large as the whole dataset (twice, as complex values) and tied to
// the decomposition; a resumed DM/RAAR run restarts them from P S O, which is
// how DM/RAAR start (see docs/usage.md).

#include <ptyko/core/result_file.hpp>
#include <ptyko/core/state.hpp>

#include <cstdint>
#include <string>

namespace ptyko {

struct Checkpoint {
  ResultContents result;  ///< object (whole), probe, positions, history, config
  int epoch = 0;
  std::uint64_t seed = 0;
  std::uint64_t rng_state = 0;
  int ranks = 1;
  std::string strategy;
  bool double_precision = false;
  std::string input;  ///< absolute path of the input CXI file
  /// The run's own object and probe where the result's differ (the result
  /// without the phase ramp, core/phase_ramp.hpp); empty otherwise. A
  /// resumed run continues from these, read back into result.object/probe.
  HostComplex2 state_object;
  HostComplex3 state_probe;
  /// Momentum's velocities (the object's whole, as the object), empty for
  /// runs without momentum: a resumed run continues them.
  HostComplex2 object_velocity;
  HostComplex3 probe_velocity;
};

/// Writes `path` atomically (temporary file + rename): a reader, or a run
/// killed while writing, never sees half a checkpoint.
void write_checkpoint(std::string const& path, Checkpoint const& c);

/// True when `path` is an HDF5 file holding a /checkpoint group. Never
/// throws (false for missing or non-HDF5 files).
bool is_checkpoint(std::string const& path);

/// Reads a checkpoint; throws UserError naming the file when it is not one.
Checkpoint read_checkpoint(std::string const& path);

/// A State that continues from `c`: the tile (tile_y, tile_x, height, width)
/// of the checkpoint's global object, its probe, epoch, history and RNG
/// state, in the memory space of `space`. Throws UserError when the tile
/// does not lie inside the stored object. Blocking (copies to the device).
template <class T, class ExecSpace>
State<T, ExecSpace> state_from_checkpoint(ExecSpace const& space, Checkpoint const& c, int tile_y, int tile_x,
                                          int tile_height, int tile_width);

}  // namespace ptyko
