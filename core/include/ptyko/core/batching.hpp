#pragma once
// Mini-batches of scan positions, and equal-count compact groups.
//
// Batches are global (computed from all N positions, identically on every
// rank), fixed for the whole run, and visited in a fresh seeded order each
// epoch; a rank works on the members of each batch it owns. So the batches,
// and thus the result, do not depend on the number of ranks.
//  * sparse:  one position from each of B compact groups per batch, so the
//             positions of a batch are far apart and overlap little (tike's
//             "wobbly centre"; what simultaneous updates want);
//  * compact: each batch is one compact group of ~B neighbouring positions;
//  * random:  a seeded random partition.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ptyko {

enum class BatchingScheme { sparse, compact, random };

BatchingScheme parse_batching(std::string const& name);
std::string to_string(BatchingScheme s);

/// Splits the positions into `groups` spatially compact groups whose sizes
/// differ by at most one, by recursive coordinate bisection (each cut along
/// the longer extent, at the count proportional to the groups on each side).
/// Deterministic. Each group lists position indices.
std::vector<std::vector<int>> compact_groups(std::vector<std::array<double, 2>> const& positions,
                                             int groups);

/// The batches of a run: ceil(N / batch_size) batches under `scheme`.
std::vector<std::vector<int>> make_batches(std::vector<std::array<double, 2>> const& positions,
                                           int batch_size, BatchingScheme scheme, std::uint64_t seed);

/// Order in which the batches are visited in `epoch`: a permutation that
/// depends only on (seed, epoch), so a resumed run repeats it exactly.
std::vector<int> batch_order(int batches, std::uint64_t seed, int epoch);

/// The positions' indices in an order that walks the object: bands of
/// `band` pixels of the first coordinate (rows) from the top, along the
/// second (columns) left to right and back in turns. Positions that are not
/// finite come last, in their order. For work that visits every position in
/// no order of its own (DM's and RAAR's passes, position refinement):
/// consecutive footprints then share most of their object window, in
/// cache, where the file's order may jump across the object (a spiral
/// scan's neighbouring indices lie far apart).
std::vector<int> walking_order(std::vector<std::array<double, 2>> const& positions, double band);

/// SplitMix64: small counter-based generator used for every seeded choice.
std::uint64_t splitmix64(std::uint64_t& state);

}  // namespace ptyko
