// Writing a CXI 1.6 file (ptyko simulate): frames, translations, geometry,
// the detector's orientation and the beam's place on it, mask, probe guess
// and truth, into a temporary file renamed when complete.
#include "cxi_datasets.hpp"

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cmath>

namespace ptyko {

using namespace impl;  // the datasets' names and shared checks (cxi_datasets.hpp)

namespace {

// The frames' storage type: detector counts as the narrowest unsigned type
// holding them, anything else as float32.
std::string frame_storage(HostFrames const& frames, bool integer_frames) {
  if (!integer_frames) return "float32";
  float max = 0;
  for (std::size_t k = 0; k < frames.span(); ++k) {
    float const v = frames.data()[k];
    if (!(v >= 0) || v != std::floor(v)) return "float32";  // negative, fractional or NaN
    max = std::max(max, v);
  }
  if (max <= 65535.f) return "uint16";
  if (double(max) <= 4294967295.0) return "uint32";
  return "float32";
}

// A contiguous copy when a View is strided (a subview); else the View itself.
template <class View>
View contiguous(View const& v) {
  if (v.span_is_contiguous()) return v;
  View copy(Kokkos::view_alloc(Kokkos::WithoutInitializing, v.label()), v.layout());
  Kokkos::deep_copy(copy, v);
  return copy;
}

}  // namespace

void cxi_write(std::string const& path, CxiContents const& c) {
  std::size_t const n = c.frames.extent(0), ny = c.frames.extent(1), nx = c.frames.extent(2);
  PTYKO_REQUIRE(n > 0, path, ": no frames to write");
  PTYKO_REQUIRE(ny == nx, path, ": frames are ", ny, "x", nx, "; CXI files for ptyko hold square frames");
  PTYKO_REQUIRE(c.translations.size() == n, path, ": ", n, " frames but ", c.translations.size(),
                " translations: they must match");
  Geometry g = c.geometry;
  if (g.detector_size == 0) g.detector_size = int(nx);
  PTYKO_REQUIRE(g.detector_size == int(nx), path, ": geometry says ", g.detector_size,
                "-pixel frames but the frames are ", nx, " pixels wide");
  g.validate(path.c_str());
  bool const has_mask = c.mask.size() > 0;
  PTYKO_REQUIRE(!has_mask || (c.mask.extent(0) == ny && c.mask.extent(1) == nx), path, ": mask is ",
                c.mask.extent(0), "x", c.mask.extent(1), " but frames are ", ny, "x", nx);
  bool const has_probe = c.illumination.size() > 0;
  PTYKO_REQUIRE(!has_probe || (c.illumination.extent(1) == ny && c.illumination.extent(2) == nx), path,
                ": probe guess is ", c.illumination.extent(1), "x", c.illumination.extent(2),
                " but frames are ", ny, "x", nx);
  if (c.truth) {
    PTYKO_REQUIRE(c.truth->object.size() > 0 && c.truth->probe.size() > 0, path,
                  ": the ground truth lacks its object or probe");
    PTYKO_REQUIRE(c.truth->positions_px.size() == n, path, ": ", n, " frames but ",
                  c.truth->positions_px.size(), " true positions");
    PTYKO_REQUIRE(c.truth->relative_flux.empty() || c.truth->relative_flux.size() == n, path, ": ", n,
                  " frames but ", c.truth->relative_flux.size(), " true fluxes");
  }

  h5::AtomicFile out(path);
  auto& f = out.file();
  h5::write_scalar_int(f, "/cxi_version", 160);

  auto const frames = contiguous(c.frames);
  h5::write(f, k_detector_data, frames.data(), {n, ny, nx}, {}, frame_storage(frames, c.integer_frames));
  h5::write_attribute(f, k_detector_data, "axes", "translation:y:x");
  h5::soft_link(f, k_detector_data, k_data);

  std::vector<double> t(3 * n);
  for (std::size_t k = 0; k < n; ++k) std::copy(c.translations[k].begin(), c.translations[k].end(), &t[3 * k]);
  h5::write(f, k_translation, t.data(), {n, 3});
  h5::soft_link(f, k_translation, k_data_translation);

  h5::write_scalar(f, k_energy, g.energy_joule());
  h5::write_scalar(f, k_wavelength, g.wavelength_m);
  h5::write_scalar(f, k_distance, g.distance_m);
  h5::write_scalar(f, k_pixel_x, g.pixel_size_x_m);
  h5::write_scalar(f, k_pixel_y, g.pixel_size_y_m);
  // The specification's default orientation, stated, and the direct beam
  // on the centre pixel (ny / 2, nx / 2), whose centre lies half a pixel
  // inside the corner of its own and the first pixel's.
  double const basis[6] = {0, -g.pixel_size_y_m, 0, -g.pixel_size_x_m, 0, 0};
  h5::write(f, k_basis, basis, {2, 3});
  double const corner[3] = {(double(nx / 2) + 0.5) * g.pixel_size_x_m, (double(ny / 2) + 0.5) * g.pixel_size_y_m,
                            g.distance_m};
  h5::write(f, k_corner, corner, {3});

  if (has_mask) {
    auto const mask = contiguous(c.mask);
    std::vector<std::uint32_t> bad(ny * nx);
    for (std::size_t k = 0; k < bad.size(); ++k) bad[k] = mask.data()[k] == 0 ? 1 : 0;
    h5::write(f, k_mask, bad.data(), {ny, nx});
  }
  if (has_probe) {
    auto const probe = contiguous(c.illumination);
    h5::write(f, k_illumination, probe.data(), {probe.extent(0), ny, nx});
  }
  if (c.truth) {
    auto const obj = contiguous(c.truth->object);
    h5::write(f, k_truth_object, obj.data(), {obj.extent(0), obj.extent(1)});
    auto const probe = contiguous(c.truth->probe);
    h5::write(f, k_truth_probe, probe.data(), {probe.extent(0), probe.extent(1), probe.extent(2)});
    std::vector<double> pos(2 * n);
    for (std::size_t k = 0; k < n; ++k) {
      pos[2 * k] = c.truth->positions_px[k][0];
      pos[2 * k + 1] = c.truth->positions_px[k][1];
    }
    h5::write(f, k_truth_positions, pos.data(), {n, 2});
    if (!c.truth->relative_flux.empty()) h5::write(f, k_truth_flux, c.truth->relative_flux.data(), {n});
    if (c.truth->background.extent(0) > 0)
      h5::write(f, k_truth_background, c.truth->background.data(),
                {c.truth->background.extent(0), c.truth->background.extent(1)});
  }
  out.commit();
}
}  // namespace ptyko
