#pragma once
// Host-side illumination map sum_j S_j^T sum_m |P_m|^2 of a probe over a
// scan, used to choose the well-lit region where errors are measured.

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/metrics.hpp>

#include <array>
#include <vector>

namespace ptyko {

/// (H, W) map of the summed probe intensity of every position (patch at
/// round(position) - D/2; positions are probe centres in object pixels).
HostRealImage illumination_map(HostComplex3 const& probe, std::vector<std::array<double, 2>> const& positions_px,
                               int height, int width);

}  // namespace ptyko
