#pragma once
// Reading and writing CXI files (cxidb CXI format 1.6, the layout PyNX,
// PtyPy, ptychodus and cdtools use). See docs/conventions.md for units and
// signs. Every reader accepts files written by other programs: integer or
// float detector types, soft links, missing optional entries; every problem
// is reported as a one-line UserError naming the file and dataset.

#include <ptyko/core/detector_orientation.hpp>
#include <ptyko/core/geometry.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ptyko {

using HostFrames = Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace>;
using HostMask = Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, Kokkos::HostSpace>;
using HostComplex2 = Kokkos::View<Complex<double>**, Kokkos::LayoutRight, Kokkos::HostSpace>;
using HostReal2 = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
using HostComplex3 = Kokkos::View<Complex<double>***, Kokkos::LayoutRight, Kokkos::HostSpace>;

/// The frames to work with, made from the stored ones: a square window
/// (detectors are often larger than the useful far field, or not square),
/// then bin x bin pixels summed into one (oversampled data: frames of
/// size / bin pixels, each bin times larger; the object pixel stays
/// lambda z / (size p)). The window's centre pixel (size / 2, size / 2) is
/// the stored pixel (centre_y, centre_x), the zero spatial frequency (the
/// direct beam), which CXI files keep at (ny / 2, nx / 2) of the stored
/// frames: the default.
struct FrameCrop {
  int size = 0;                     ///< 0: the whole frames (which must then be square)
  std::optional<int> centre_y, centre_x;  ///< stored pixels; absent: ny / 2, nx / 2
  int bin = 1;                      ///< stored pixels per frame pixel along each axis; divides the size
  /// Centre the window on the direct beam as found in the frames
  /// (CxiInfo::beam_found) instead of a given centre; without a size, the
  /// largest square around it that the frames hold.
  bool find_beam = false;
};

/// FILE or FILE:DATASET, as --mask and --probe take them: the file and the
/// dataset (empty: none named). The text after the last ':' is a dataset
/// unless the whole text names an existing file.
std::pair<std::string, std::string> split_file_dataset(std::string const& spec);

/// A detector mask kept in another file (--mask): beamlines keep their
/// detectors' gap and dead-pixel masks apart from the scans.
struct MaskFile {
  /// FILE or FILE:DATASET (HDF5). Without a dataset: the CXI mask, then
  /// an Eiger master file's pixel_mask, then /mask.
  std::string spec;
  bool invert = false;  ///< the file marks measured pixels nonzero (default: nonzero = bad, as CXI)
};

/// The geometry given on the command line instead of the file's (a file
/// that lacks an entry or holds it in other units): photon energy in keV,
/// sample-detector distance and detector pixel size (both axes) in metres.
struct GeometryOverride {
  std::optional<double> energy_kev, distance_m, pixel_size_m;
};

/// What a CXI file holds, read without loading the frames.
struct CxiInfo {
  std::string path;
  std::string data_path;        ///< resolved path of the intensities (soft links followed)
  std::string translation_path; ///< resolved path of the (N, 3) translations
  std::size_t frames = 0;       ///< N
  int ny = 0, nx = 0;           ///< frame shape as read: the crop window's (binned) when cropped
  int stored_ny = 0, stored_nx = 0;  ///< frame shape in the file
  int window_y = 0, window_x = 0;    ///< first stored pixel of the window
  int bin = 1;                       ///< stored pixels per frame pixel along each axis (window: ny * bin)
  bool auto_crop = false;  ///< oblong frames without a crop: the largest centred square window is used
  std::string data_type;        ///< "uint16", "int32", "float32", ...
  /// In SI units: a dataset's units attribute (NeXus style, "mm", "eV", ...)
  /// is applied, as are those of the translations, basis and corner.
  std::optional<double> energy_joule, wavelength_m, distance_m, pixel_size_x_m, pixel_size_y_m;
  /// Where the photon energy and wavelength came from: beam_1's energy (as
  /// NXcxi_ptycho keeps it) or incident_energy (CXI's Beam class) before
  /// source_1's; empty when absent.
  std::string energy_path, wavelength_path;
  /// The entries that GeometryOverride replaced (cxi_override_geometry).
  bool energy_given = false, distance_given = false, pixel_size_given = false;
  /// How the stored frames sit against CXI's default detector orientation
  /// (detector_1/basis_vectors; absent: the default). The frames, the mask
  /// and the dark frame are read turned into the default orientation; crop
  /// windows and pixels named in messages stay in stored pixels. The pixel
  /// sizes come from the basis when the file gives no x/y_pixel_size.
  DetectorOrientation orientation;
  /// The direct beam in stored pixels (y, x) as detector_1/corner_position
  /// places it; absent without one. ptyko assumes the beam at the window's
  /// centre and only reports this (a frame may be re-centred with --crop).
  std::optional<std::array<double, 2>> beam_from_corner;
  /// The direct beam in stored pixels (y, x) as found in the frames
  /// (FrameCrop::find_beam): the brightest spot of the mean of up to 32
  /// frames spread over the scan, smoothed so that single hot pixels do not
  /// count, then the intensity centroid around it, rounded.
  std::optional<std::array<int, 2>> beam_found;
  bool has_mask = false;        ///< the file has a mask
  std::string mask_file, mask_dataset;  ///< a mask from another file (cxi_add_mask_file); empty: none
  bool mask_invert = false;     ///< that mask marks measured pixels nonzero
  /// Stored pixels (y * stored_nx + x) that hold the same negative whole
  /// number, or the integer type's largest value, in every frame looked at
  /// (cxi_mask_marked_pixels): a detector's marks of gaps and bad pixels,
  /// left out like the mask's pixels.
  std::vector<std::size_t> marked_pixels;
  std::vector<double> mark_values;  ///< the marks' values, ascending (at most 4)
  /// The file's dark frame (/entry_1/instrument_1/detector_1/dark, as PyNX
  /// writes it, or data_dark, as the specification names it) is subtracted
  /// from every frame, negative results set to 0.
  bool has_dark = false;
  std::string dark_path;  ///< where the dark frame is (when has_dark)
  /// Per frame: median(monitor) / monitor (/entry_1/data_1/monitor, the
  /// incident flux), applied to the frames; 0 for frames whose monitor is
  /// below a tenth of the median (no beam: they are then empty and skipped).
  /// Empty: no normalisation.
  std::vector<double> monitor_scale;
  int illumination_modes = 0;   ///< 0: no probe guess in the file
  bool has_truth = false;       ///< /entry_1/ptyko_truth present (simulated by ptyko)

  /// Geometry from the file; wavelength from energy when only that is given
  /// (the wavelength wins when both are), one pixel size for both axes when
  /// only one is given. Throws UserError naming the missing/invalid entry,
  /// also for an energy too large to be in joules (a file holding eV).
  Geometry geometry() const;
  /// True when the frames as read are not the stored ones (a crop window,
  /// binning): a probe guess in the file no longer fits them.
  bool resampled() const { return bin > 1 || ny != stored_ny || nx != stored_nx; }
  /// True when the window is smaller than the frames: the object pixel
  /// (lambda z / (window p)) differs from the file's own.
  bool windowed() const { return ny * bin != stored_ny || nx * bin != stored_nx; }
  /// A position (y, x) in the frames as read (pixels of ny x nx) in stored
  /// pixels of the file's frames (undoing orientation, binning and window).
  std::array<double, 2> stored_position(double y, double x) const;
};

/// Inspects `path`: checks it is HDF5 with the CXI data and translation
/// datasets, of consistent shapes, an optional dark frame and monitor (see
/// CxiInfo), numeric scalars (shape (), (1,) or one
/// repeated value) and a mask of the frames' shape. Throws UserError
/// otherwise. Geometry is checked by CxiInfo::geometry(), the probe guess by
/// cxi_read_illumination (both may come from elsewhere).
/// With a `crop`, the frames (and the mask) are read through its window,
/// which must lie inside the stored frames, and binned; without one,
/// oblong frames are read through the largest square window around their
/// centre (an even number of pixels; CxiInfo::auto_crop).
CxiInfo cxi_inspect(std::string const& path, FrameCrop const& crop = {});

/// Adds the mask of `mask` (MaskFile) to the file's own: a pixel is bad
/// when either marks it. Checks that it exists, is numeric and has the
/// stored frames' shape; UserError (naming --mask) otherwise.
void cxi_add_mask_file(CxiInfo& info, MaskFile const& mask);

/// Finds a detector's marks in the frames' window: measured pixels (by the
/// masks) that hold the same negative whole number, or the integer type's
/// largest value, in every frame with counts among up to 16 spread over the
/// scan, given at least 8 such frames (a Pilatus stores -1 in its gaps and
/// -2 at bad pixels; an Eiger stores 2^16 - 1 or 2^32 - 1 there, -1 when
/// read as int32; programs write -1 into float frames).
/// They go to CxiInfo::marked_pixels, which the mask then leaves out. Other
/// negative values vary from frame to frame: the noise of a subtracted
/// background, which cxi_read_frames reads as 0. Call once the window is
/// chosen (cxi_inspect's crop).
void cxi_mask_marked_pixels(CxiInfo& info);

/// Replaces the file's energy (and wavelength), distance or pixel size by
/// those `given` holds; UserError naming the option for values that are
/// not positive and finite, or an energy outside 0.1-1000 keV.
void cxi_override_geometry(CxiInfo& info, GeometryOverride const& given);

/// Translations (N rows of x, y, z in metres) as stored: the sample's
/// translation relative to the beam. (3, N) files are transposed. Values
/// that are not finite (NaN where a scan missed an encoder reading) are
/// returned as they are: stand_in_missing_positions (geometry.hpp) takes
/// those frames apart.
std::vector<std::array<double, 3>> cxi_read_translations(CxiInfo const& info);

/// Frames `indices` (any order, repeats allowed) as float, in the order
/// given, centred as stored, the dark frame subtracted and the monitor's
/// normalisation applied (CxiInfo::has_dark, monitor_scale). Reads only those frames (hyperslab selection of
/// consecutive runs), so each MPI rank can read just its own.
/// Pixels the masks mark bad, and a detector's marks
/// (cxi_mask_marked_pixels), are set to 0 and not checked (detectors store
/// NaN, -1 or their maximum there). NaN or infinite values at measured
/// pixels are returned as they are: load_local_data masks those pixels.
/// Other negative values (the noise of a subtracted background) become 0
/// (FrameReadBuffer counts them). A frame with NaN or infinity in most of
/// its measured pixels, or with negative values there and no positive one
/// (a failed readout), is returned as zeros, which a run skips. Throws
/// UserError on out-of-range indices and a request larger than memory.
HostFrames cxi_read_frames(CxiInfo const& info, std::vector<std::size_t> const& indices);

/// Memory that cxi_read_frames reads into, kept by a caller that reads a
/// scan in chunks: each chunk then reuses the pages the previous one
/// touched. A fresh chunk-sized allocation per call went back to the
/// system on release and was faulted in anew, page by page, which took
/// longer than inflating the frames (docs/performance.md, item 62).
struct FrameReadBuffer {
  HostFrames stored;  ///< the frames as stored (the crop window), before binning
  HostFrames binned;  ///< the binned frames (--bin)
  /// What the last call found: the frames (file indices) that held no
  /// intensity in most of their measured pixels (failed readouts), returned
  /// as zeros;
  std::vector<std::size_t> invalid_frames;
  /// the negative values at measured pixels, read as 0, and the most
  /// negative of them (0: none).
  std::size_t negative_values = 0;
  float most_negative = 0;
};

/// cxi_read_frames into `buffer`: the View returned points into it and is
/// valid until the next call with the same buffer.
HostFrames cxi_read_frames(CxiInfo const& info, std::vector<std::size_t> const& indices, FrameReadBuffer& buffer);

/// Detector mask as 1 = measured, 0 = bad (CXI stores nonzero = bad), with
/// that of cxi_add_mask_file; an all-ones mask when there is none.
HostMask cxi_read_mask(CxiInfo const& info);

/// Probe guess /entry_1/instrument_1/source_1/illumination as (M, ny, nx)
/// complex; (ny, nx) files give M = 1. Empty View when absent. The file's
/// guess is sampled for its stored frames: when the frames are read
/// otherwise (CxiInfo::resampled: --crop makes the object pixel larger,
/// --bin the field smaller), it is resampled onto theirs (resample_probe),
/// and `note`, when given, says so.
HostComplex3 cxi_read_illumination(CxiInfo const& info, std::string* note = nullptr);

/// A probe guess from another file (--probe), e.g. the result of an earlier
/// scan: `spec` is FILE or FILE:DATASET; without a dataset, a ptyko
/// result's /reconstruction/probe, else a CXI file's illumination. (M, ny,
/// nx) or (ny, nx), complex or real. A ptyko result's probe (pixel:
/// its object_pixel_size_m) and a CXI file's illumination (pixel: from that
/// file's geometry and stored frames) are resampled onto this run's frames
/// (ny, nx) and object pixel `object_pixel_m` (y, x metres) when either
/// differs, and `note` says so; any other dataset must have the frames'
/// shape as read (after --crop/--bin). UserError (naming --probe) otherwise.
HostComplex3 read_probe_guess(std::string const& spec, CxiInfo const& info,
                              std::array<double, 2> const& object_pixel_m, std::string* note = nullptr);

/// Ground truth written by `ptyko simulate` (absent in real data).
struct CxiTruth {
  HostComplex2 object;                             ///< (H, W)
  HostComplex3 probe;                              ///< (M, D, D)
  std::vector<std::array<double, 2>> positions_px; ///< (y, x) probe centres
  /// Each frame's incident flux over the mean (empty: the same for all).
  std::vector<double> relative_flux;
  /// The incoherent background of every frame, (D, D) mean counts, centred
  /// (extent 0: none).
  HostReal2 background;
};
std::optional<CxiTruth> cxi_read_truth(CxiInfo const& info);

/// Everything `cxi_write` stores.
struct CxiContents {
  HostFrames frames;                                ///< (N, D, D), centred
  std::vector<std::array<double, 3>> translations;  ///< (N) x, y, z metres
  Geometry geometry;
  HostMask mask;                                    ///< optional, 1 = measured
  HostComplex3 illumination;                        ///< optional probe guess
  std::optional<CxiTruth> truth;                    ///< optional ground truth
  /// Store frames as uint16/uint32 counts when they are whole numbers
  /// (as detectors do); else float32.
  bool integer_frames = true;
};

/// Writes a CXI 1.6 file (chunked, compressed) to a temporary name in the
/// same folder, then renames it to `path`: readers never see a half file.
void cxi_write(std::string const& path, CxiContents const& contents);

}  // namespace ptyko
