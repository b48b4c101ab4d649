#pragma once
// What the cost per frame would be if the model were the truth and the
// frames differed from it by counting (Poisson) noise alone: the floor a
// reconstruction's cost approaches when the model explains the frames. A
// final cost several times above it says the model leaves much of the
// frames unexplained (a probe start far from the beam, a wrong geometry, too
// few epochs), whatever the object looks like.
//
// Per pixel of expected counts l, with d ~ Poisson(l):
//   gaussian  E[(sqrt(d) - sqrt(l))^2]        -> 1/4 for l >> 1, ~ 2 l for l << 1
//   poisson   E[l - d - d log(l / d)]         -> 1/2 for l >> 1, ~ -l log l for l << 1
// summed over the measured pixels of the mean pattern. The pattern stands in
// for each frame's expected counts: the expectation is concave in l, so the
// mean pattern's floor is at or above the frames' own (speckle moves counts
// between pixels), and a cost below it is possible; above it, the model
// misses something.

#include <ptyko/kernels/fourier.hpp>

#include <vector>

namespace ptyko {

/// The expected cost of one pixel of `expected_counts` under `noise`'s cost
/// when its counts are Poisson-distributed about them (0 for 0 counts).
double counting_noise_cost(double expected_counts, NoiseModel noise);

/// The expected cost per frame of frames whose mean pattern is `pattern`
/// (counts per pixel; masked pixels hold 0 and add nothing).
double counting_noise_floor(std::vector<double> const& pattern, NoiseModel noise);

/// The same for frames in detector units of `adu_per_photon` each: a pixel
/// of g d units (d photons) costs g times what d photons cost under either
/// model (sqrt(g d) - sqrt(g l) = sqrt(g) (sqrt(d) - sqrt(l)); g (l - d - d
/// log(l / d))), so the floor is g times the photons' floor. 0 when
/// `adu_per_photon` is 0 (not known).
double counting_noise_floor_of(std::vector<double> pattern, NoiseModel noise, double adu_per_photon);

}  // namespace ptyko
