#pragma once
// Looking at the loaded frames before a reconstruction: per-frame totals and
// the brightest pixels (for the warnings about low counts, saturated pixels
// and empty frames), and dropping frames (empty ones are skipped).

#include <ptyko/core/state.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ptyko {

/// Totals of this rank's frames over measured pixels (masked pixels are zero
/// after loading).
struct FrameStats {
  std::vector<double> counts;  ///< total counts of each local frame
  double max_value = 0;        ///< the largest pixel value of the local frames (0 without frames)
};

/// Per-frame totals and the largest pixel of `data`'s frames. Blocking.
template <class T, class ExecSpace>
FrameStats frame_stats(ExecSpace const& space, LocalData<T, ExecSpace> const& data);

/// Number of pixels of `data`'s frames whose value is >= `threshold`. Blocking.
template <class T, class ExecSpace>
std::size_t count_pixels_at_least(ExecSpace const& space, LocalData<T, ExecSpace> const& data, float threshold);

/// Number of pixel values of `data`'s frames that are not whole numbers: 0
/// for frames of counts, many for frames that were normalised, flat-fielded
/// or dark-subtracted as floats (their photons per unit then unknown).
/// Blocking.
template <class T, class ExecSpace>
std::size_t count_fractional_pixels(ExecSpace const& space, LocalData<T, ExecSpace> const& data);

/// The smallest nonzero remainder of `data`'s pixel values (whole numbers)
/// divided by `modulus`, or, for modulus 0, the smallest nonzero value; 0
/// when there is none (every value a multiple). A few of these give the
/// largest number that divides every value (Euclid's algorithm over the
/// frames: ValueSurvey::unit_step). Blocking.
template <class T, class ExecSpace>
double smallest_nonzero_remainder(ExecSpace const& space, LocalData<T, ExecSpace> const& data, double modulus);

/// Number of values of `data`'s frames at measured pixels (frames times
/// measured pixels; those that are not > 0 are zeros, masked pixels being
/// 0 already). Blocking.
template <class T, class ExecSpace>
std::size_t count_measured_values(ExecSpace const& space, LocalData<T, ExecSpace> const& data);

/// What the measured values of all frames say about their unit.
struct ValueSurvey {
  bool whole_numbers = true;    ///< an integer data type, or floats without fractions
  double unit_step = 1;         ///< the largest number dividing every value (whole numbers)
  double smallest_nonzero = 0;  ///< the smallest nonzero value
  double nonzero_values = 0;    ///< measured values that are not 0
  double zero_values = 0;       ///< measured values that are 0
  double fractional_values = 0; ///< measured values that are not whole numbers
};

/// Nonzero values needed before their unit is read from them.
inline constexpr double k_unit_evidence = 1000;

/// The share of measured values that were negative (and read as 0) from
/// which a run refines the background without --refine-background: those
/// zeros lift the dark pixels' mean as a background would. Frames with a
/// background subtracted have many (35 % with 2 counts per pixel subtracted
/// from sparse counts); photon counts and a detector's marks none.
inline constexpr double k_negative_share_for_background = 0.01;

/// Clipped frames: the frames' largest value (below the data type's
/// largest), at least k_clipped_at_least, held by at least k_clipped_values
/// values and k_clipped_share of the frames' count; a run masks the pixels
/// that reach it. Photon counts reach their largest value about once: the
/// largest of thousands of Poisson draws stands several deviations above
/// the next.
inline constexpr double k_clipped_at_least = 100, k_clipped_values = 10, k_clipped_share = 0.05;

/// True when `values` of the frames' values (over `frames` frames) share
/// their largest value `top`: a detector or a program clipped them there.
inline bool looks_clipped(double top, double values, std::size_t frames) {
  return top >= k_clipped_at_least && values >= std::max(k_clipped_values, k_clipped_share * double(frames));
}

/// Detector units per photon that the values imply, when no
/// --adu-per-photon says: 0 (unknown) for fractions; for whole numbers
/// (with at least k_unit_evidence nonzero values) their common step when it
/// exceeds 1 (counts scaled by a gain), 0 when none lies between 1 and 4
/// while at least 1 % are 0 (a detector's units above a noise threshold:
/// photon counts have ones and twos wherever they have zeros), else 1
/// (photon counts). `why`, when given, explains a result other than 1 for
/// whole numbers (else empty).
double adu_per_photon_implied(ValueSurvey const& survey, std::string* why = nullptr);

/// The largest value of each detector pixel over `data`'s frames: D * D
/// values, row-major, corner-centred as the frames are held (0 without
/// frames). Blocking.
template <class T, class ExecSpace>
std::vector<float> pixel_maxima(ExecSpace const& space, LocalData<T, ExecSpace> const& data);

/// 1 for each detector pixel (D * D, row-major, corner-centred) where some
/// frame of `data` holds NaN or infinity, else 0. Blocking.
template <class T, class ExecSpace>
std::vector<std::uint8_t> nonfinite_pixels(ExecSpace const& space, LocalData<T, ExecSpace> const& data);

/// Marks the pixels where `bad` (D * D, corner-centred) is nonzero as not
/// measured: clears them in the mask (made when every pixel was measured)
/// and zeroes them in every frame, as loading does with the file's mask.
/// Blocking.
template <class T, class ExecSpace>
void mask_pixels(ExecSpace const& space, LocalData<T, ExecSpace>& data, std::vector<std::uint8_t> const& bad);

/// The largest value of a detector's integer data type ("uint16" -> 65535,
/// as cxi's CxiInfo::data_type names them): where a counter saturates. 0 for
/// floating-point and 64-bit types (no meaningful ceiling).
double data_type_ceiling(std::string const& data_type);

/// True for a detector's integer data types ("uint16", "int32", ...): frames
/// stored as counts, whatever a dark frame or monitor later makes of them.
bool is_integer_type(std::string const& data_type);

/// A copy of `data` with only the local frames `keep` (local indices,
/// ascending), renumbered: frame keep[k] gets id new_ids[k], and the dataset
/// counts `global_frames` frames over all ranks. The mask and the tile origin
/// are kept.
/// Non-blocking.
template <class T, class ExecSpace>
LocalData<T, ExecSpace> select_frames(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                      std::vector<int> const& keep, std::vector<std::size_t> const& new_ids,
                                      std::size_t global_frames);

}  // namespace ptyko
