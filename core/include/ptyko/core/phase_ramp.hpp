#pragma once
// The linear phase ramp that ptychography cannot determine, fixed for the
// result: O e^{i k.r} with P e^{-i k.r} gives every position's exit wave
// times a constant phase, so the same diffraction patterns. A solver leaves
// whatever ramp its start and its iterations drift to (DM: about 1e-3
// rad/px, 0.3 rad across a 300-pixel scan, three times the object error of
// a comparison that removes only a global phase). The result takes the
// gauge "no mean phase gradient over the well-lit object", and the probe the
// opposite ramp, so that object and probe still explain the data.
// See docs/conventions.md.

#include <ptyko/core/cxi.hpp>

#include <array>
#include <vector>

namespace ptyko {

/// A phase ramp e^{i (y_rad_per_px y + x_rad_per_px x)} over object pixels.
struct PhaseRamp {
  double y_rad_per_px = 0;
  double x_rad_per_px = 0;
};

/// The object's mean phase gradient over the pixels whose illumination (the
/// summed probe intensity of every position, illumination_map) reaches
/// `threshold` of its maximum: the phase of sum w O(y + 1, x) conj(O(y, x))
/// along y, and likewise along x, with w the smaller illumination of the two
/// pixels. Phase wraps do not matter; a pure ramp is found exactly.
PhaseRamp object_phase_ramp(HostComplex2 const& object, HostReal2 const& illumination, double threshold = 0.1);

/// Removes `ramp` from the object, centred on the object pixel `centre`
/// (y, x) whose phase it keeps, and puts the opposite ramp on every probe
/// mode, centred on the probe pixel (D/2, D/2) that sits on a position: each
/// exit wave changes by a constant phase only.
void remove_phase_ramp(HostComplex2 const& object, HostComplex3 const& probe, PhaseRamp ramp,
                       std::array<double, 2> centre);

/// The two above with the illumination of `probe` at `positions_px`,
/// centred on the scan's mean position. Returns the ramp removed.
PhaseRamp remove_object_phase_ramp(HostComplex2 const& object, HostComplex3 const& probe,
                                   std::vector<std::array<double, 2>> const& positions_px);

}  // namespace ptyko
