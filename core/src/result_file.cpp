#include "result_io.hpp"

#include <ptyko/core/hdf5.hpp>
#include <ptyko/core/result_file.hpp>
#include <ptyko/kernels/error.hpp>

namespace ptyko {
namespace {

constexpr char const* root = "/reconstruction";

void write_vector(h5::File const& f, std::string const& name, std::vector<double> const& v) {
  h5::write(f, std::string(root) + "/" + name, v.data(), {v.size()}, {false});
}

std::vector<double> read_vector(h5::File const& f, std::string const& name) {
  std::string const path = std::string(root) + "/" + name;
  return h5::exists(f, path) ? h5::read<double>(f, path) : std::vector<double>{};
}

void write_positions(h5::File const& f, std::string const& name, std::vector<std::array<double, 2>> const& p) {
  std::vector<double> v;
  v.reserve(2 * p.size());
  for (auto const& q : p) v.insert(v.end(), {q[0], q[1]});
  h5::write(f, std::string(root) + "/" + name, v.data(), {p.size(), 2}, {false});
}

std::vector<std::array<double, 2>> read_positions(h5::File const& f, std::string const& name) {
  auto const v = read_vector(f, name);
  std::vector<std::array<double, 2>> p;
  for (std::size_t k = 0; k + 1 < v.size(); k += 2) p.push_back({v[k], v[k + 1]});
  return p;
}

}  // namespace

void impl::write_result_datasets(h5::File const& f, ResultContents const& r) {
  std::string const base = root;
  h5::write(f, base + "/object", r.object.data(), {r.object.extent(0), r.object.extent(1)}, {}, "complex64");
  h5::write(f, base + "/probe", r.probe.data(), {r.probe.extent(0), r.probe.extent(1), r.probe.extent(2)}, {},
            "complex64");
  write_positions(f, "positions_px", r.positions_px);
  if (!r.file_positions_px.empty()) write_positions(f, "file_positions_px", r.file_positions_px);
  h5::write(f, base + "/object_pixel_size_m", r.object_pixel_size_m.data(), {2}, {false});
  h5::write(f, base + "/object_origin_px", r.object_origin_px.data(), {2}, {false});
  write_vector(f, "cost", r.cost);
  h5::write_attribute(f, base + "/cost", "noise_model", r.noise_model);
  if (r.counting_noise_cost > 0) h5::write_scalar(f, base + "/counting_noise_cost", r.counting_noise_cost);
  write_vector(f, "epoch_seconds", r.epoch_seconds);
  write_vector(f, "bytes_moved", r.bytes_moved);
  write_vector(f, "mode_power_fractions", r.mode_power_fractions);
  if (!r.object_error.empty()) write_vector(f, "object_error", r.object_error);
  if (!r.relative_flux.empty()) write_vector(f, "relative_flux", r.relative_flux);
  if (r.background.extent(0) > 0)
    h5::write(f, base + "/background", r.background.data(), {r.background.extent(0), r.background.extent(1)},
              {false}, "float32");
  h5::write_string(f, base + "/config", r.config);
  h5::write_string(f, base + "/provenance", r.provenance);
  write_result_cxi(f, r);
}

void write_result(std::string const& path, ResultContents const& r) {
  h5::AtomicFile out(path);
  impl::write_result_datasets(out.file(), r);
  out.commit();
}

ResultContents read_result(std::string const& path) {
  h5::File f = h5::File::open_read(path);
  return impl::read_result_datasets(f, path);
}

ResultContents impl::read_result_datasets(h5::File const& f, std::string const& path) {
  std::string const base = root;
  PTYKO_REQUIRE(h5::exists(f, base + "/object") && h5::exists(f, base + "/probe"), path,
                ": not a ptyko result file (no /reconstruction/object and probe)");
  ResultContents r;
  std::vector<std::size_t> dims;
  auto obj = h5::read<Complex<double>>(f, base + "/object", &dims);
  PTYKO_REQUIRE(dims.size() == 2, path, ": /reconstruction/object is not 2-D");
  r.object = HostComplex2("ptyko::result::object", dims[0], dims[1]);
  std::copy(obj.begin(), obj.end(), r.object.data());
  auto probe = h5::read<Complex<double>>(f, base + "/probe", &dims);
  PTYKO_REQUIRE(dims.size() == 3, path, ": /reconstruction/probe is not (modes, D, D)");
  r.probe = HostComplex3("ptyko::result::probe", dims[0], dims[1], dims[2]);
  std::copy(probe.begin(), probe.end(), r.probe.data());
  r.positions_px = read_positions(f, "positions_px");
  r.file_positions_px = read_positions(f, "file_positions_px");
  auto px = read_vector(f, "object_pixel_size_m");
  if (px.size() == 2) r.object_pixel_size_m = {px[0], px[1]};
  auto const origin = read_vector(f, "object_origin_px");
  if (origin.size() == 2) r.object_origin_px = {origin[0], origin[1]};
  r.cost = read_vector(f, "cost");
  if (h5::exists(f, base + "/cost")) r.noise_model = h5::read_string_attribute(f, base + "/cost", "noise_model");
  if (h5::exists(f, base + "/counting_noise_cost"))
    r.counting_noise_cost = h5::read_scalar(f, base + "/counting_noise_cost");
  r.epoch_seconds = read_vector(f, "epoch_seconds");
  r.bytes_moved = read_vector(f, "bytes_moved");
  r.mode_power_fractions = read_vector(f, "mode_power_fractions");
  r.object_error = read_vector(f, "object_error");
  r.relative_flux = read_vector(f, "relative_flux");
  if (h5::exists(f, base + "/background")) {
    auto background = h5::read<double>(f, base + "/background", &dims);
    PTYKO_REQUIRE(dims.size() == 2 && dims[0] == r.probe.extent(1) && dims[1] == r.probe.extent(2), path,
                  ": /reconstruction/background is not the probe's D x D");
    r.background = HostReal2("ptyko::result::background", dims[0], dims[1]);
    std::copy(background.begin(), background.end(), r.background.data());
  }
  if (h5::exists(f, base + "/config")) r.config = h5::read_string(f, base + "/config");
  if (h5::exists(f, base + "/provenance")) r.provenance = h5::read_string(f, base + "/provenance");
  return r;
}

}  // namespace ptyko
