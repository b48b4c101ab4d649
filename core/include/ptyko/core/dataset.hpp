#pragma once
// From a CXI file to what a rank reconstructs: the scan layout every rank
// shares (geometry, object grid, all probe positions) and the rank's own
// frames on the device, un-shifted to corner-centred, with positions in the
// rank's object tile. Each rank reads only its frames.

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/geometry.hpp>
#include <ptyko/core/state.hpp>

#include <array>
#include <string>
#include <vector>

namespace ptyko {

struct LoadOptions {
  PositionConvention convention;
  /// Look for no detector's marks (cxi_mask_marked_pixels, which would mask
  /// their pixels): negative marks are then read as 0 like every other
  /// negative value (--clip-negative).
  bool clip_negative = false;
  int margin = 8;              ///< object pixels kept beyond the outermost patches
  FrameCrop crop;              ///< the window of the stored frames to use (--crop)
  MaskFile mask;               ///< a detector mask from another file (--mask); empty spec: none
  bool use_dark = true;        ///< subtract the file's dark frame (--no-dark: not)
  bool use_monitor = true;     ///< normalise the frames by the file's monitor (--no-monitor: not)
  GeometryOverride geometry;   ///< --energy-kev, --distance, --pixel-size instead of the file's
  /// Hold the frames as float32 even when they are counts: a run that
  /// scales them (intensity refinement) then never holds both forms.
  bool float_frames = false;
};

/// What every rank knows about a scan.
struct ScanLayout {
  CxiInfo info;
  Geometry geometry;
  ObjectGrid grid;
  /// Probe centre of every frame, (y, x) global object pixels.
  std::vector<std::array<double, 2>> positions_px;
  /// Frames without a finite translation in the file, in increasing order:
  /// their positions_px are stand-ins (stand_in_missing_positions) and a
  /// run skips them.
  std::vector<std::size_t> unplaced;
};

/// Reads the file's metadata and translations (not the frames) and builds
/// the object grid. Throws UserError for unusable files.
ScanLayout read_scan_layout(std::string const& path, LoadOptions const& options);

/// Reads frames `ids` (global frame indices) of the layout's file and moves
/// them to the device: intensities un-shifted (ifftshift), the mask likewise
/// (empty View when every pixel is measured), positions relative to the tile
/// whose (0, 0) is global pixel (tile_y, tile_x). Pixels where a frame holds
/// NaN or infinity are masked (LocalData::nonfinite_pixels names them; other
/// ranks' must be masked too, which is collective and the caller's);
/// negative values become 0 (LocalData::negative_values counts them). Throws
/// UserError when a patch would leave a tile of height x width pixels.
template <class T, class ExecSpace>
LocalData<T, ExecSpace> load_local_data(ExecSpace const& space, ScanLayout const& layout,
                                        std::vector<std::size_t> const& ids, int tile_y, int tile_x,
                                        int tile_height, int tile_width, LoadOptions const& options);

}  // namespace ptyko
