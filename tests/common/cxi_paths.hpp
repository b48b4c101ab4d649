#pragma once
// Dataset paths of a CXI file, spelled out from the CXI format for the tests
// that write files as other programs do (independent of core's own names).

namespace ptyko::test {

constexpr char const* k_data = "/entry_1/data_1/data";
constexpr char const* k_detector_data = "/entry_1/instrument_1/detector_1/data";
constexpr char const* k_translation = "/entry_1/sample_1/geometry_1/translation";
constexpr char const* k_energy = "/entry_1/instrument_1/source_1/energy";
constexpr char const* k_wavelength = "/entry_1/instrument_1/source_1/wavelength";
constexpr char const* k_distance = "/entry_1/instrument_1/detector_1/distance";
constexpr char const* k_pixel_x = "/entry_1/instrument_1/detector_1/x_pixel_size";
constexpr char const* k_pixel_y = "/entry_1/instrument_1/detector_1/y_pixel_size";
constexpr char const* k_mask = "/entry_1/instrument_1/detector_1/mask";
constexpr char const* k_illumination = "/entry_1/instrument_1/source_1/illumination";
constexpr char const* k_basis = "/entry_1/instrument_1/detector_1/basis_vectors";
constexpr char const* k_corner = "/entry_1/instrument_1/detector_1/corner_position";

}  // namespace ptyko::test
