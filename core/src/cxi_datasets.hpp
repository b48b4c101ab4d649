#pragma once
// Where a CXI file keeps what ptyko reads (CXI 1.6, NXcxi_ptycho and PyNX's
// names) and the checks its readers share: each problem is one UserError
// naming the file and the dataset, and saying what to do. Internal to the
// CXI readers and writer (cxi_*.cpp).

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/hdf5.hpp>

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace ptyko::impl {

inline constexpr char const* k_data = "/entry_1/data_1/data";
inline constexpr char const* k_detector_data = "/entry_1/instrument_1/detector_1/data";
inline constexpr char const* k_translation = "/entry_1/sample_1/geometry_1/translation";
inline constexpr char const* k_data_translation = "/entry_1/data_1/translation";
// NXcxi_ptycho keeps the scan's translations with the detector (and links
// them into data_1 and sample_1/geometry_1, where a file may lack them).
inline constexpr char const* k_detector_translation = "/entry_1/instrument_1/detector_1/translation";
inline constexpr char const* k_energy = "/entry_1/instrument_1/source_1/energy";
inline constexpr char const* k_wavelength = "/entry_1/instrument_1/source_1/wavelength";
// The photon energy where NeXus (NXcxi_ptycho, whose source_1/energy is the
// storage ring's) and CXI's Beam class keep it; preferred when present.
inline constexpr char const* k_beam_energy = "/entry_1/instrument_1/beam_1/energy";
inline constexpr char const* k_beam_incident_energy = "/entry_1/instrument_1/beam_1/incident_energy";
inline constexpr char const* k_beam_wavelength = "/entry_1/instrument_1/beam_1/incident_wavelength";
inline constexpr char const* k_distance = "/entry_1/instrument_1/detector_1/distance";
inline constexpr char const* k_pixel_x = "/entry_1/instrument_1/detector_1/x_pixel_size";
inline constexpr char const* k_pixel_y = "/entry_1/instrument_1/detector_1/y_pixel_size";
inline constexpr char const* k_mask = "/entry_1/instrument_1/detector_1/mask";
inline constexpr char const* k_dark = "/entry_1/instrument_1/detector_1/dark";            // PyNX
inline constexpr char const* k_data_dark = "/entry_1/instrument_1/detector_1/data_dark";  // the CXI specification
inline constexpr char const* k_basis = "/entry_1/instrument_1/detector_1/basis_vectors";
inline constexpr char const* k_corner = "/entry_1/instrument_1/detector_1/corner_position";
inline constexpr char const* k_monitor = "/entry_1/data_1/monitor";
inline constexpr char const* k_illumination = "/entry_1/instrument_1/source_1/illumination";
inline constexpr char const* k_truth = "/entry_1/ptyko_truth";
inline constexpr char const* k_truth_object = "/entry_1/ptyko_truth/object";
inline constexpr char const* k_truth_probe = "/entry_1/ptyko_truth/probe";
inline constexpr char const* k_truth_positions = "/entry_1/ptyko_truth/positions_px";
inline constexpr char const* k_truth_flux = "/entry_1/ptyko_truth/relative_flux";
inline constexpr char const* k_truth_background = "/entry_1/ptyko_truth/background";

/// Integer or float intensities (not complex, string or compound).
bool is_real_number_type(std::string const& type);

/// "(3, 128, 128)".
std::string shape_string(std::vector<std::size_t> const& dims);

/// (frames, y, x) of a frame stack stored as (frames, y, x), or as a raster
/// scan's (n1, n2, y, x) (NeXus, NXcxi_ptycho): n1 n2 frames in row-major
/// order. Empty for other ranks.
std::vector<std::size_t> stack_shape(std::vector<std::size_t> const& dims);

/// A 2-D (y, x) extent from (y, x) or (1, y, x).
bool is_frame_shaped(std::vector<std::size_t> const& dims, int ny, int nx);

/// "128x128" for a frame-shaped extent, else its shape_string.
std::string frame_size(std::vector<std::size_t> const& dims);

/// Dataset `path` of `f` holds real numbers (or complex ones, when allowed).
void require_numeric(h5::File const& f, char const* path, bool allow_complex);

/// Checks that `path` of `f` can be a mask of the stored frames; `what`
/// names it in messages ("mask", "--mask").
void check_mask_dataset(h5::File const& f, std::string const& path, CxiInfo const& info, char const* what);

/// The (M, a, b) extents of a complex stack stored as (M, a, b) or (a, b).
std::array<std::size_t, 3> stack_extents(std::vector<std::size_t> const& dims);

/// A complex (M, a, b) or (a, b) dataset as (M, a, b), checked finite;
/// `what` names it in messages, `label` is the View's.
HostComplex3 read_complex_stack(h5::File const& f, char const* path, char const* what, char const* label);

/// The file of `spec` (FILE or FILE:DATASET, split_file_dataset) open, and
/// the dataset: the named one, else the first of `places` that exists.
/// `option` ("--mask") and `what` ("mask") name them in messages.
std::pair<h5::File, std::string> open_file_dataset(std::string const& spec, char const* option, char const* what,
                                                   std::initializer_list<char const*> places);

/// The detector mask of `info`'s window (before binning: ny bin x nx bin)
/// as 1 = measured, from CXI's nonzero = bad, a --mask file's and the
/// detector's marks (CxiInfo::marked_pixels) (cxi_frames.cpp).
HostMask read_window_mask(h5::File const& f, CxiInfo const& info);

/// `count` frame indices spread evenly over a scan of `frames` (all of them
/// when it has fewer), from frame 0: the frames that --find-beam and the
/// search for a detector's marks look at.
std::vector<std::size_t> frames_spread_over_scan(std::size_t frames, std::size_t count);

/// The direct beam in stored pixels (CxiInfo::beam_found) of the frames in
/// `data` (cxi_find_beam.cpp).
std::array<int, 2> find_beam(h5::File const& f, std::string const& data, CxiInfo const& info);

}  // namespace ptyko::impl
