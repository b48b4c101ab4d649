// Probe guesses: the one a CXI file carries, and --probe (a ptyko
// result's probe or another CXI file's), resampled onto the frames as read
// where their pixel differs.
#include "cxi_datasets.hpp"

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/core/probe_resample.hpp>
#include <ptyko/kernels/error.hpp>

#include <fmt/format.h>

#include <optional>

namespace ptyko {

using namespace impl;  // the datasets' names and shared checks (cxi_datasets.hpp)

HostComplex3 cxi_read_illumination(CxiInfo const& info, std::string* note) {
  auto f = h5::File::open_read(info.path);
  if (!h5::exists(f, k_illumination)) return {};
  require_numeric(f, k_illumination, true);
  auto const dims = h5::shape(f, k_illumination);
  if (dims.size() == 2 || dims.size() == 3) {
    // The guess is sampled for the stored frames.
    auto const e = stack_extents(dims);
    PTYKO_REQUIRE(e[1] == std::size_t(info.stored_ny) && e[2] == std::size_t(info.stored_nx), info.path,
                  ": probe guess is ", e[1], "x", e[2], " but frames are ", info.stored_ny, "x", info.stored_nx, " (",
                  k_illumination, "): they must match");
  }
  auto guess = read_complex_stack(f, k_illumination, "probe guess", "ptyko::cxi::illumination");
  if (!info.resampled()) return guess;
  // Object pixels lambda z / (n p): the window's n = ny * bin stored pixels
  // against the stored frames' (the unit: this run's object pixel).
  ProbePixel const stored = {double(info.ny * info.bin) / info.stored_ny, double(info.nx * info.bin) / info.stored_nx};
  auto resampled = resample_probe(guess, stored, info.ny, info.nx, {1.0, 1.0}, info.path);
  if (note)
    *note = fmt::format("{}: the probe guess ({}, {} x {} pixels for the stored frames) resampled onto the {} x {} "
                        "frames that --crop/--bin make (its pixel: {:.4g} x {:.4g} of theirs)",
                        info.path, k_illumination, info.stored_ny, info.stored_nx, info.ny, info.nx, stored[0],
                        stored[1]);
  return resampled.probe;
}

namespace {

// The object pixel (y, x metres) a probe dataset was sampled with, when
// its file says: a ptyko result's, or a CXI file's from its geometry and
// stored frames.
std::optional<ProbePixel> probe_pixel_of(h5::File const& f, std::string const& dataset) {
  std::string const result_pixel = "/reconstruction/object_pixel_size_m";
  if (dataset == "/reconstruction/probe" && h5::exists(f, result_pixel.c_str())) {
    auto const v = h5::read<double>(f, result_pixel.c_str());
    if (v.size() == 2) return ProbePixel{v[0], v[1]};
    return std::nullopt;
  }
  if (dataset != k_illumination) return std::nullopt;
  try {
    CxiInfo const src = cxi_inspect(f.name());
    Geometry const g = src.geometry();
    return ProbePixel{g.wavelength_m * g.distance_m / (src.stored_ny * g.pixel_size_y_m),
                      g.wavelength_m * g.distance_m / (src.stored_nx * g.pixel_size_x_m)};
  } catch (UserError const&) {
    return std::nullopt;  // no frames or no geometry: the pixel is unknown
  }
}

}  // namespace

HostComplex3 read_probe_guess(std::string const& spec, CxiInfo const& info, std::array<double, 2> const& object_pixel_m,
                              std::string* note) {
  // A ptyko result's probe, then a CXI file's.
  auto const [f, dataset] = open_file_dataset(spec, "--probe", "probe", {"/reconstruction/probe", k_illumination});
  std::string const& file = f.name();
  require_numeric(f, dataset.c_str(), true);
  auto const dims = h5::shape(f, dataset);
  auto const pixel = probe_pixel_of(f, dataset);
  if (!pixel && (dims.size() == 2 || dims.size() == 3)) {
    auto const e = stack_extents(dims);
    PTYKO_REQUIRE(e[1] == std::size_t(info.ny) && e[2] == std::size_t(info.nx), file, ": --probe ", dataset, " is ",
                  e[1], "x", e[2], " but frames are ", info.ny, "x", info.nx,
                  info.resampled() ? " after --crop/--bin" : "",
                  ", and its pixel size is unknown (neither a ptyko result nor a CXI file with its geometry): they "
                  "must match");
  }
  auto guess = read_complex_stack(f, dataset.c_str(), "--probe", "ptyko::cxi::probe_guess");
  bool const same_shape = guess.extent(1) == std::size_t(info.ny) && guess.extent(2) == std::size_t(info.nx);
  if (!pixel || (same_shape && same_pixel(*pixel, object_pixel_m))) return guess;
  auto resampled = resample_probe(guess, *pixel, info.ny, info.nx, object_pixel_m, "--probe " + spec);
  if (note)
    *note = fmt::format("--probe {}: {} x {} pixels of {:.4g} x {:.4g} m resampled onto this run's {} x {} of {:.4g} x "
                        "{:.4g} m{}",
                        spec, guess.extent(1), guess.extent(2), (*pixel)[0], (*pixel)[1], info.ny, info.nx,
                        object_pixel_m[0], object_pixel_m[1],
                        resampled.scale_error > 1e-3
                            ? fmt::format(" (whole pixels scale it by up to {:.2g} %)", 100 * resampled.scale_error)
                            : std::string());
  return resampled.probe;
}
}  // namespace ptyko
