#pragma once
// The power bound of DM's Fourier projection (docs/solvers.md, "The bound
// held to the counting noise"): a frame whose model differs from its data by
// more than the bound (the mean of (|Psi| - sqrt(d))^2 over its measured
// pixels) moves onto the sphere of that radius about the data; one within it
// stays as it is. That keeps DM, which has no fixed point on noisy data,
// from chasing the noise.
//
// PtyPy scales its bound with the brightest frame, relax^2 max_j(sum d_j) /
// (4 D^2). Counting noise does not scale so: a pixel's amplitude noise is
// about 1/4 however bright it is, and less where counts are few. Dim frames
// then get a bound far below their noise and DM chases it (at 1e4 photons
// per frame its object error after 100 epochs was 0.27-0.39), bright ones
// one far above it and DM stops short of the data (at 1e8, 10 times the
// noise). So ptyko keeps the bound between 0.1 and 1 times the counting
// noise per pixel (noise_floor.hpp). And where DM drifts anyway, its cost
// rising while near the noise (a strongly phase-shifting sample), the bound
// loosens by half every 10 epochs that it rises, up to the noise.
//
// The bound is a function of the run's cost history alone, which a
// checkpoint keeps: a resumed run takes it up where it was (DM's exit waves
// restart from P S O there, docs/usage.md).

#include <vector>

namespace ptyko {

struct PowerBoundRule {
  double floor_share = 0.10;   ///< the lowest bound, times the counting noise per pixel
  double ceiling_share = 1.0;  ///< the highest, the same
  int window = 10;             ///< epochs per cost window
  double rise = 1.03;          ///< a window's mean cost above rise x the one before: drifting
  double near_noise = 2.0;     ///< ... while below near_noise x the counting-noise floor
  double loosen = 1.5;         ///< the bound's factor per drifting window
};

/// The bound per measured pixel for the next epoch.
///  * `ptypy_bound`: relax^2 max_j(sum d_j) / (4 D^2); 0 leaves the plain
///    modulus projection (fourier_relax = 0), whatever the rest.
///  * `noise_floor`: the cost per frame counting noise alone leaves (Gaussian,
///    noise_floor.hpp) over `measured_pixels` pixels; 0 (unknown) leaves
///    `ptypy_bound`.
///  * `costs`: the cost per frame of every epoch so far (NaN where not
///    measured, DM's cost_every).
double power_bound(double ptypy_bound, double noise_floor, int measured_pixels, std::vector<double> const& costs,
                   PowerBoundRule const& rule = {});

}  // namespace ptyko
