#pragma once
// Looking at the loaded frames before a reconstruction: per-frame totals and
// the brightest pixels (for the warnings about low counts, saturated pixels
// and empty frames), and dropping frames (empty ones are skipped).

#include <ptyko/core/state.hpp>

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

/// The largest value of each detector pixel over `data`'s frames: D * D
/// values, row-major, corner-centred as the frames are held (0 without
/// frames). Blocking.
template <class T, class ExecSpace>
std::vector<float> pixel_maxima(ExecSpace const& space, LocalData<T, ExecSpace> const& data);

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
