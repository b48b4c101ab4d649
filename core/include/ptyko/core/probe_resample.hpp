#pragma once
// A probe guess moved onto another sampling: the one the frames as read
// give (--crop changes the object pixel, --bin the field of view), or that
// of a run at another energy, distance or frame size (--probe from an
// earlier result). The probe is the same field in metres either way; only
// its pixels change.

#include <ptyko/core/cxi.hpp>

#include <array>

namespace ptyko {

/// How a probe is sampled: its pixel along y (rows) and x (columns), in any
/// one unit (metres, or one sampling's pixel).
using ProbePixel = std::array<double, 2>;

struct ResampledProbe {
  HostComplex3 probe;  ///< (M, ny, nx) of the target sampling
  /// The scale left by rounding the interpolated grid to whole pixels:
  /// largest |k - exact| / exact over the axes, where the source's field
  /// holds `exact` target pixels and k is the whole number used (0 when the
  /// ratio of the pixels is one of whole numbers, as --crop and --bin give).
  double scale_error = 0;
};

/// `probe` (M, my, mx) with pixels `from`, resampled onto (M, ny, nx) with
/// pixels `to`, about the same centre (probe pixel (m/2, m/2), the one a
/// scan position names, stays on pixel (n/2, n/2)):
/// 1. Fourier interpolation onto pixels `to` over the same field (the
///    centred spectrum cropped, or padded with zeros, to k = round(m *
///    from / to) frequencies per axis): band-limited values are kept,
///    frequencies above the new Nyquist limit dropped;
/// 2. the centred ny x nx window of that grid, zeros outside it.
/// The same sampling returns a copy. Throws UserError naming `source` when
/// the interpolated grid would be absurdly large (pixel sizes of different
/// units).
ResampledProbe resample_probe(HostComplex3 const& probe, ProbePixel const& from, int ny, int nx,
                              ProbePixel const& to, std::string const& source);

/// True when two samplings' pixels agree to 1e-6 (relative): the probe
/// then needs no interpolation.
bool same_pixel(ProbePixel const& a, ProbePixel const& b);

}  // namespace ptyko
