// The CXI face of a result file: the places where programs that read CXI
// look for a reconstruction, linked to ptyko's own /reconstruction datasets
// (no second copy of the object). CXI 1.6 keeps processed images in the
// Image class, /entry_1/image_N/data, with data_space and data_type; SHARP
// (ALS) and the NSLS-II HXN pipeline put the object there and the probe in
// image_1/process_1/final_illumination; ptychodus and others read a probe
// from /entry_1/instrument_1/source_1/illumination. docs/usage.md lists them.
#include "result_io.hpp"

#include <ptyko/core/hdf5.hpp>
#include <ptyko/core/result_file.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace ptyko::impl {
namespace {

constexpr char const* k_object = "/reconstruction/object";
constexpr char const* k_probe = "/reconstruction/probe";
constexpr char const* k_config = "/reconstruction/config";

// The mode that carries the most power: a reader that expects one 2-D
// probe gets the one that matters most.
std::size_t strongest_mode(HostComplex3 const& probe) {
  std::size_t best = 0;
  double best_power = -1;
  for (std::size_t m = 0; m < probe.extent(0); ++m) {
    double power = 0;
    for (std::size_t y = 0; y < probe.extent(1); ++y)
      for (std::size_t x = 0; x < probe.extent(2); ++x) {
        auto const v = probe(m, y, x);
        power += double(v.real()) * v.real() + double(v.imag()) * v.imag();
      }
    if (power > best_power) best = m, best_power = power;
  }
  return best;
}

void write_real_space_image(h5::File const& f, std::string const& group, std::string const& title,
                            std::array<double, 2> const& pixel_m, std::size_t rows, std::size_t columns) {
  h5::write_string(f, group + "/title", title);
  h5::write_string(f, group + "/data_space", "real");
  // A phased (complex) field; CXI's "amplitude" implies one.
  h5::write_string(f, group + "/data_type", "amplitude");
  h5::write_scalar_int(f, group + "/dimensionality", 2);
  // Width, height and depth in metres (x, y, z, as CXI orders them).
  double const size[3] = {double(columns) * pixel_m[1], double(rows) * pixel_m[0], 0.0};
  h5::write(f, group + "/image_size", size, {3});
  // Not in the specification, but where PyNX and others keep the pixel.
  h5::write_scalar(f, group + "/x_pixel_size", pixel_m[1]);
  h5::write_scalar(f, group + "/y_pixel_size", pixel_m[0]);
  h5::write_attribute(f, group, "NX_class", "NXdata");
  h5::write_attribute(f, group, "signal", "data");
}

}  // namespace

void write_result_cxi(h5::File const& f, ResultContents const& r) {
  h5::write_scalar_int(f, "/cxi_version", 160);
  std::string const program = r.provenance.substr(0, r.provenance.find('\n'));
  h5::write_string(f, "/entry_1/program_name", program.empty() ? "ptyko" : program);
  h5::write_attribute(f, "/", "default", "entry_1");
  h5::write_attribute(f, "/entry_1", "NX_class", "NXentry");
  h5::write_attribute(f, "/entry_1", "default", "image_1");

  // image_1: the object, (H, W) rows along y, as /reconstruction/object.
  std::string const image_1 = "/entry_1/image_1";
  h5::soft_link(f, k_object, image_1 + "/data");
  write_real_space_image(f, image_1, "object", r.object_pixel_size_m, r.object.extent(0), r.object.extent(1));
  std::string const process = image_1 + "/process_1";
  h5::write_string(f, process + "/program", "ptyko");
  if (!r.config.empty()) h5::soft_link(f, k_config, process + "/configuration");
  if (r.probe.extent(0) > 0) {
    std::size_t const m = strongest_mode(r.probe);
    std::size_t const d0 = r.probe.extent(1), d1 = r.probe.extent(2);
    std::vector<Complex<double>> mode(d0 * d1);
    for (std::size_t y = 0; y < d0; ++y)
      for (std::size_t x = 0; x < d1; ++x) mode[y * d1 + x] = r.probe(m, y, x);
    h5::write(f, process + "/final_illumination", mode.data(), {d0, d1}, {}, "complex64");
  }

  // image_2: every probe mode, (M, D, D), as /reconstruction/probe.
  std::string const image_2 = "/entry_1/image_2";
  h5::soft_link(f, k_probe, image_2 + "/data");
  write_real_space_image(f, image_2, "probe modes (mode, y, x)", r.object_pixel_size_m, r.probe.extent(1),
                         r.probe.extent(2));
  h5::soft_link(f, k_probe, "/entry_1/instrument_1/source_1/illumination");
}

}  // namespace ptyko::impl
