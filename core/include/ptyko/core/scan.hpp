#pragma once
// Scan geometry statistics: spacing between positions and overlap.

#include <array>
#include <vector>

namespace ptyko {

/// Distance from each position to its nearest other position (same units as
/// the input). O(N) expected, with a uniform cell grid. One position: {inf}.
std::vector<double> nearest_neighbour_distances(std::vector<std::array<double, 2>> const& positions);

/// Median of the nearest-neighbour distances: the typical scan step.
double typical_step(std::vector<std::array<double, 2>> const& positions);

/// Linear overlap 1 - step / probe_diameter, clamped to [0, 1]
/// (docs/conventions.md defines the probe diameter as the 90 %-power disc).
double overlap_ratio(double step, double probe_diameter);

}  // namespace ptyko
