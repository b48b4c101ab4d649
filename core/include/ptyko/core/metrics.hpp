#pragma once
// Reconstruction quality against a known truth (simulated data), with the
// ambiguities of ptychography removed before comparing:
//   * a rigid shift s (integer + sub-pixel) between the two grids,
//   * a linear phase ramp exp(i (a y + b x)) (a shift of the far field),
//   * a global complex scale c (object/probe scale and global phase).
// The error is the normalised RMS difference over a region R:
//   NRMSE = || c e^{i(a y + b x)} shift_s(recon) - truth ||_R / || truth ||_R
// with (s, a, b, c) chosen to make it small (see object_error for how).
// Used by tests, benchmarks and `ptyko reconstruct` when a truth is present.

#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <complex>
#include <cstddef>

namespace ptyko {

using HostComplexImage = Kokkos::View<Complex<double>**, Kokkos::LayoutRight, Kokkos::HostSpace>;
using HostRealImage = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;

/// Options of object_error.
struct ObjectErrorOptions {
  /// Largest shift searched, pixels (per axis, >= 0; at most (n - 1) / 2 is
  /// used for an axis of n pixels, since shifts are circular).
  int max_shift = 16;
  /// Remove a linear phase ramp (true) or only the shift and global scale.
  bool remove_phase_ramp = true;
  /// Region R: pixels whose illumination is at least this fraction of its
  /// maximum (in [0, 1]).
  double illumination_threshold = 0.1;
};

/// Result of object_error: the error and the ambiguities that were removed,
/// such that truth ~ scale * e^{i (ramp_y y + ramp_x x)} * recon(y - shift_y, x - shift_x)
/// over R, with (y, x) the array indices.
struct ObjectError {
  double nrmse = 0;                  ///< the error defined in the file comment
  double shift_y = 0, shift_x = 0;   ///< displacement applied to recon, pixels
  std::complex<double> scale{1, 0};  ///< c
  double ramp_y = 0, ramp_x = 0;     ///< a, b in radians per pixel
  std::size_t pixels = 0;            ///< size of the compared region R
};

/// Compares `recon` with `truth` (same shape) over the pixels R where
/// `illumination` (same shape; e.g. sum_j S_j^T |P|^2 of the truth) is at least
/// options.illumination_threshold of its maximum.
///
/// Procedure. The arrays are treated as periodic over their whole extent:
/// correlations are circular and the sub-pixel shift is a Fourier shift of
/// the whole array, exact for band-limited data; values wrap around at the
/// array edges, which lie outside R for any sensible threshold.
///  1. shift: the integer d, |d| <= max_shift per axis, maximising
///     |<truth, recon(. + d)>_R|^2 / ||recon(. + d)||_R^2 (the least-squares
///     criterion with the scale eliminated), from FFT correlations. A strong
///     ramp would wash the correlation out, so a coarse ramp from the
///     cross-correlation of the spectral magnitudes (a ramp shifts the
///     spectrum, a shift leaves its magnitude alone) is removed first.
///  2. ramp: the least-squares (a, b), i.e. the maximum of
///     |sum_R truth conj(recon') e^{-i(a y + b x)}|: FFT peak, then Newton.
///  3. scale: c = <recon'', truth>_R / <recon'', recon''>_R.
/// This is done for the integer shift, and again for the sub-pixel shift
/// maximising the criterion of step 1 on DFT-upsampled grids around it
/// (1/4 px, then 1/32 px steps and a quadratic fit; Guizar-Sicairos et al.,
/// Opt. Lett. 33, 156 (2008)), applied to recon with the ramp of step 2
/// removed (no phase jump at the wrap-around), twice, the second time with
/// the updated ramp. The smallest NRMSE is returned: each candidate is an
/// upper bound of the minimum over (s, a, b, c), and the integer one needs no
/// interpolation. On exactly band-limited data the shift comes out within
/// ~1e-5 px, the ramp ~1e-9 rad/px, the NRMSE ~1e-6; on rough data the
/// Fourier interpolation dominates the NRMSE.
///
/// Axes longer than 1024 pixels whose length FFTW transforms slowly (a
/// prime factor above 13; a 2097-pixel object: 233) are compared on the
/// smallest fast-length window holding R with max_shift + 16 pixels on
/// each side (zero-padded where the array is too short): integer shifts
/// stay exact, the sub-pixel shift interpolates the window instead of the
/// array's periodic extension (about 1e-3 of NRMSE on exactly periodic
/// data, nothing of note on reconstructions).
///
/// Cost: host only, serial, blocking; 13 FFTs of the array's (or window's)
/// shape and four complex work arrays of that shape (a 2000 x 2000 object
/// takes about a second on one core).
///
/// Throws UserError on shape mismatch, bad options, zero illumination, an
/// empty region or a truth that vanishes on it.
ObjectError object_error(HostComplexImage const& recon, HostComplexImage const& truth,
                         HostRealImage const& illumination, ObjectErrorOptions const& options = {});

/// NRMSE between two probe modes (normally mode 0 of each; incoherent modes
/// are only defined up to a unitary mixing, so higher modes are not compared
/// one to one). Uses the procedure of object_error with the default options;
/// the region R is where |truth|^2 >= 1 % of its maximum, i.e. the probe
/// out to 10 % of its peak amplitude, leaving out the noisy, near-zero tails
/// that a reconstruction does not constrain. Host only, blocking.
/// Throws UserError on shape mismatch or an all-zero truth.
double probe_error(HostComplexImage const& recon_mode0, HostComplexImage const& truth_mode0);

}  // namespace ptyko
