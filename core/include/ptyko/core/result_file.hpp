#pragma once
// The result of a reconstruction, as an HDF5 file (complex as the {r, i}
// compound, so h5py reads it directly), written to a temporary name and
// renamed:
//   /reconstruction/object              (H, W) complex
//   /reconstruction/probe               (M, D, D) complex
//   /reconstruction/positions_px        (N, 2) probe centres (y, x), object pixels (refined, if they were)
//   /reconstruction/file_positions_px   (N, 2) the file's, when position refinement ran
//   /reconstruction/object_pixel_size_m (2) (y, x)
//   /reconstruction/object_origin_px    (2) (y, x) the object pixel under the beam at translation 0:
//                                       the beam at translation t lies on pixel origin - (t_y / dy, t_x / dx)
//   /reconstruction/cost                (epochs), attribute noise_model
//   /reconstruction/counting_noise_cost scalar: the cost per frame counting noise alone leaves (noise_floor.hpp)
//   /reconstruction/epoch_seconds       (epochs)
//   /reconstruction/bytes_moved         (epochs) bytes rank 0 moved
//   /reconstruction/mode_power_fractions (M)
//   /reconstruction/object_error        (epochs) NRMSE against a known truth (if any; NaN where not measured)
//   /reconstruction/relative_flux       (N) each frame's incident flux over the mean, when intensity refinement ran
//   /reconstruction/background          (D, D) incoherent background, counts per frame and pixel, centred, in
//                                       the frames' orientation as ptyko reads them, when background refinement ran
//   /reconstruction/config              resolved options, TOML text
//   /reconstruction/provenance          version, Kokkos backend, ranks, input
// and, for programs that read CXI (core/src/result_cxi.cpp), /cxi_version and
// /entry_1/image_1/data (the object), image_2/data and
// instrument_1/source_1/illumination (the probe), linked to the above, with
// the strongest mode alone in image_1/process_1/final_illumination.

#include <ptyko/core/cxi.hpp>

#include <array>
#include <string>
#include <vector>

namespace ptyko {

struct ResultContents {
  HostComplex2 object;
  HostComplex3 probe;
  std::vector<std::array<double, 2>> positions_px;
  /// The file's positions when positions_px holds refined ones (else empty).
  std::vector<std::array<double, 2>> file_positions_px;
  std::array<double, 2> object_pixel_size_m{0, 0};
  /// (y, x): the object pixel the beam lies on at translation 0 (the
  /// positions' metres 0, ObjectGrid::origin_y / origin_x).
  std::array<double, 2> object_origin_px{0, 0};
  std::vector<double> cost;
  /// The cost per frame counting noise alone would leave (0: not known).
  double counting_noise_cost = 0;
  std::string noise_model;
  std::vector<double> epoch_seconds;
  std::vector<double> bytes_moved;
  std::vector<double> mode_power_fractions;
  std::vector<double> object_error;
  /// Each frame's relative incident flux (intensity refinement; else empty).
  std::vector<double> relative_flux;
  /// The incoherent background of every frame, (D, D) counts, centred
  /// (background refinement; else extent 0).
  HostReal2 background;
  std::string config;
  std::string provenance;
};

/// Writes `path` atomically (temporary file + rename).
void write_result(std::string const& path, ResultContents const& r);

/// Reads a result file written by write_result.
ResultContents read_result(std::string const& path);

}  // namespace ptyko
