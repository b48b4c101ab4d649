#pragma once
// Checks and warnings about one view's input that `ptyko reconstruct` makes
// before its epochs: what would fail (memory, a foreign checkpoint) and what
// the file says that ptyko does not act on or that may keep a run from
// converging (detector placement, scan overlap).

#include "run_log.hpp"

#include <ptyko/core/checkpoint.hpp>
#include <ptyko/core/cxi.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/parallel/strategy.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace ptyko::drivers {

/// The object tile and the solvers' object-sized work arrays must fit: an
/// absurd scan extent (wrong units) fails here, before any allocation.
/// Throws UserError naming the translations and what to check.
void check_object_memory(ScanLayout const& layout, parallel::Decomposition const& d, std::size_t real_bytes);

/// A checkpoint fits this input: same object grid, probe size and positions.
void check_checkpoint_matches(Checkpoint const& c, ScanLayout const& layout, std::string const& path);

/// "3, 17, 42", at most 8 ids and then how many more.
std::string frame_list(std::vector<std::size_t> const& ids);

/// What the file says about its detector that ptyko does not act on: a
/// detector turned about the beam (ptyko turns frames by whole quarters
/// only), and a direct beam (corner_position) away from the centre the
/// frames are read around.
void warn_detector_placement(Log& log, std::string const& input, CxiInfo const& info);

/// A scan whose steps leave less than 50 % overlap between neighbouring
/// footprints of `probe` (the guess, or the reconstructed one when there was
/// none): `which` names that probe, `risk` what follows.
void warn_low_overlap(Log& log, std::string const& input, double step, HostComplex3 const& probe, char const* which,
                      char const* risk);

}  // namespace ptyko::drivers
