// The CXI readers' shared checks (cxi_datasets.hpp).
#include "cxi_datasets.hpp"

#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace ptyko::impl {

namespace fs = std::filesystem;

bool is_real_number_type(std::string const& t) {
  return t.rfind("uint", 0) == 0 || t.rfind("int", 0) == 0 || t == "float32" || t == "float64";
}

std::string shape_string(std::vector<std::size_t> const& dims) {
  std::string s = "(";
  for (std::size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + std::to_string(dims[k]);
  return s + ")";
}

std::vector<std::size_t> stack_shape(std::vector<std::size_t> const& dims) {
  if (dims.size() == 3) return dims;
  if (dims.size() == 4) return {dims[0] * dims[1], dims[2], dims[3]};
  return {};
}

bool is_frame_shaped(std::vector<std::size_t> const& dims, int ny, int nx) {
  if (dims.size() == 3 && dims[0] != 1) return false;
  if (dims.size() != 2 && dims.size() != 3) return false;
  return dims[dims.size() - 2] == std::size_t(ny) && dims[dims.size() - 1] == std::size_t(nx);
}

std::string frame_size(std::vector<std::size_t> const& dims) {
  if (dims.size() >= 2) return std::to_string(dims[dims.size() - 2]) + "x" + std::to_string(dims.back());
  return shape_string(dims);
}

void require_numeric(h5::File const& f, char const* path, bool allow_complex) {
  std::string const type = h5::type_name(f, path);
  bool const ok = is_real_number_type(type) || (allow_complex && type.rfind("complex", 0) == 0);
  PTYKO_REQUIRE(ok, f.name(), ": ", path, " holds ", type, " values; expected ",
                allow_complex ? "complex or real numbers" : "real numbers");
}

void check_mask_dataset(h5::File const& f, std::string const& path, CxiInfo const& info, char const* what) {
  auto const dims = h5::shape(f, path);
  PTYKO_REQUIRE(is_frame_shaped(dims, info.stored_ny, info.stored_nx), f.name(), ": ", what, " ", path, " is ",
                frame_size(dims), " but frames are ", info.stored_ny, "x", info.stored_nx, ": they must match");
  std::string const type = h5::type_name(f, path);
  PTYKO_REQUIRE(is_real_number_type(type) || type == "enum", f.name(), ": ", what, " ", path, " holds ", type,
                " values; expected integers (nonzero = bad pixel)");
}

std::array<std::size_t, 3> stack_extents(std::vector<std::size_t> const& dims) {
  if (dims.size() == 2) return {1, dims[0], dims[1]};
  return {dims[0], dims[1], dims[2]};
}

HostComplex3 read_complex_stack(h5::File const& f, char const* path, char const* what, char const* label) {
  auto const dims = h5::shape(f, path);
  PTYKO_REQUIRE(dims.size() == 2 || dims.size() == 3, f.name(), ": ", what, " ", path, " has shape ",
                shape_string(dims), "; expected (modes, y, x) or (y, x)");
  auto const e = stack_extents(dims);
  PTYKO_REQUIRE(e[0] >= 1 && e[1] >= 1 && e[2] >= 1, f.name(), ": ", what, " ", path, " is empty (shape ",
                shape_string(dims), ")");
  auto const v = h5::read<Complex<double>>(f, path);
  HostComplex3 out(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), e[0], e[1], e[2]);
  for (std::size_t k = 0; k < v.size(); ++k) {
    PTYKO_REQUIRE(std::isfinite(v[k].real()) && std::isfinite(v[k].imag()), f.name(), ": ", what, " ", path,
                  " holds NaN or infinite values");
    out.data()[k] = v[k];
  }
  return out;
}

std::pair<h5::File, std::string> open_file_dataset(std::string const& spec, char const* option, char const* what,
                                                   std::initializer_list<char const*> places) {
  auto [file, dataset] = split_file_dataset(spec);
  std::error_code ec;
  PTYKO_REQUIRE(!file.empty(), option, " ", spec, ": name a file, FILE or FILE:DATASET");
  PTYKO_REQUIRE(fs::exists(file, ec), option, " ", spec, ": ", file, ": no such file");
  auto f = h5::File::open_read(file);
  if (dataset.empty()) {
    for (char const* p : places)
      if (h5::exists(f, p)) {
        dataset = p;
        break;
      }
    std::string tried;
    for (char const* p : places) tried += (tried.empty() ? "" : ", ") + std::string(p);
    PTYKO_REQUIRE(!dataset.empty(), option, " ", file, ": no ", what, " at ", tried, ": name the dataset, ", option,
                  " ", file, ":/path/to/", what);
  } else {
    if (dataset.front() != '/') dataset = "/" + dataset;
    PTYKO_REQUIRE(h5::exists(f, dataset), option, " ", spec, ": ", file, " has no dataset ", dataset);
  }
  return {std::move(f), dataset};
}

std::vector<std::size_t> frames_spread_over_scan(std::size_t frames, std::size_t count) {
  count = std::min(count, frames);
  std::vector<std::size_t> ids(count);
  for (std::size_t k = 0; k < count; ++k) ids[k] = k * frames / count;
  return ids;
}

}  // namespace ptyko::impl
