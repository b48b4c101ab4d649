#include "result_io.hpp"

#include <ptyko/core/background_refinement.hpp>
#include <ptyko/core/checkpoint.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/huge_pages.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace ptyko {
namespace {

constexpr char const* group = "/checkpoint";

std::string at(char const* name) { return std::string(group) + "/" + name; }

template <class Int>
void write_uint(h5::File const& f, char const* name, Int value) {
  std::uint64_t const v = std::uint64_t(value);
  h5::write(f, at(name), &v, {}, {false});
}

std::uint64_t read_uint(h5::File const& f, std::string const& path, char const* name) {
  auto const v = h5::read<std::uint64_t>(f, at(name));
  PTYKO_REQUIRE(v.size() == 1, path, ": ", at(name), " is not a single number: not a ptyko checkpoint");
  return v[0];
}

/// The extents of a host View, as HDF5 dimensions.
template <class View>
std::vector<std::size_t> dims_of(View const& v) {
  std::vector<std::size_t> d;
  for (unsigned r = 0; r < View::rank; ++r) d.push_back(v.extent(r));
  return d;
}

/// Writes a complex field (object, probe or a velocity) in the run's precision.
template <class View>
void write_field(h5::File const& f, char const* name, View const& v, bool double_precision) {
  h5::write(f, at(name), v.data(), dims_of(v), {}, double_precision ? "complex128" : "complex64");
}

/// Reads a complex field stored as `like` is shaped (`what` names `like` in
/// the error).
template <class View>
View read_field(h5::File const& f, std::string const& path, char const* name, View const& like, char const* what) {
  std::vector<std::size_t> dims;
  auto const values = h5::read<Complex<double>>(f, at(name), &dims);
  PTYKO_REQUIRE(dims == dims_of(like), path, ": ", at(name), " does not match ", what);
  View out(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ptyko::checkpoint::") + name), like.layout());
  std::copy(values.begin(), values.end(), out.data());
  return out;
}

}  // namespace

void write_checkpoint(std::string const& path, Checkpoint const& c) {
  PTYKO_REQUIRE(c.epoch >= 0 && std::size_t(c.epoch) == c.result.cost.size(), path, ": checkpoint at epoch ",
                c.epoch, " with a history of ", c.result.cost.size(), " epochs");
  h5::AtomicFile out(path);
  h5::File const& f = out.file();
  impl::write_result_datasets(f, c.result);
  write_uint(f, "epoch", c.epoch);
  write_uint(f, "seed", c.seed);
  write_uint(f, "rng_state", c.rng_state);
  write_uint(f, "ranks", c.ranks);
  h5::write_string(f, at("strategy"), c.strategy);
  h5::write_string(f, at("precision"), c.double_precision ? "double" : "single");
  h5::write_string(f, at("input"), c.input);
  // The run's state where /reconstruction does not hold it exactly: double
  // precision, or a result with the phase ramp removed.
  bool const own = c.state_object.extent(0) > 0;
  if (c.double_precision || own) {
    write_field(f, "object", own ? c.state_object : c.result.object, c.double_precision);
    write_field(f, "probe", own ? c.state_probe : c.result.probe, c.double_precision);
  }
  if (c.object_velocity.extent(0) > 0) {  // momentum's (core/momentum.hpp)
    write_field(f, "object_velocity", c.object_velocity, c.double_precision);
    write_field(f, "probe_velocity", c.probe_velocity, c.double_precision);
  }
  out.commit();
}

bool is_checkpoint(std::string const& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  try {
    auto f = h5::File::open_read(path);
    return h5::exists(f, at("epoch"));
  } catch (UserError const&) {
    return false;
  }
}

Checkpoint read_checkpoint(std::string const& path) {
  h5::File f = h5::File::open_read(path);
  PTYKO_REQUIRE(h5::exists(f, at("epoch")), path,
                ": not a ptyko checkpoint (no /checkpoint group): give a result written by ptyko reconstruct");
  Checkpoint c;
  c.result = impl::read_result_datasets(f, path);
  c.epoch = int(read_uint(f, path, "epoch"));
  c.seed = read_uint(f, path, "seed");
  c.rng_state = read_uint(f, path, "rng_state");
  c.ranks = int(read_uint(f, path, "ranks"));
  c.strategy = h5::read_string(f, at("strategy"));
  std::string const precision = h5::read_string(f, at("precision"));
  PTYKO_REQUIRE(precision == "single" || precision == "double", path, ": ", at("precision"), " is '", precision,
                "': expected single or double");
  c.double_precision = precision == "double";
  c.input = h5::read_string(f, at("input"));
  if (h5::exists(f, at("object"))) {
    c.result.object = read_field(f, path, "object", c.result.object, "/reconstruction/object");
    c.result.probe = read_field(f, path, "probe", c.result.probe, "/reconstruction/probe");
  }
  if (h5::exists(f, at("object_velocity"))) {
    c.object_velocity = read_field(f, path, "object_velocity", c.result.object, "/reconstruction/object");
    c.probe_velocity = read_field(f, path, "probe_velocity", c.result.probe, "/reconstruction/probe");
  }
  PTYKO_REQUIRE(c.result.cost.size() == std::size_t(c.epoch), path, ": the checkpoint is at epoch ", c.epoch,
                " but its cost history has ", c.result.cost.size(), " entries: the file is damaged");
  return c;
}

template <class T, class ExecSpace>
State<T, ExecSpace> state_from_checkpoint(ExecSpace const& space, Checkpoint const& c, int tile_y, int tile_x,
                                          int tile_height, int tile_width) {
  using Mem = typename ExecSpace::memory_space;
  auto const& object = c.result.object;
  auto const& probe = c.result.probe;
  PTYKO_REQUIRE(tile_y >= 0 && tile_x >= 0 && tile_height >= 1 && tile_width >= 1 &&
                    std::size_t(tile_y + tile_height) <= object.extent(0) &&
                    std::size_t(tile_x + tile_width) <= object.extent(1),
                "the checkpoint's object (", object.extent(0), " x ", object.extent(1),
                " pixels) does not hold the tile ", tile_height, " x ", tile_width, " at (", tile_y, ", ", tile_x,
                "): it belongs to another input or position convention");
  // The tile of a whole object-shaped field, and a probe-shaped field, on
  // the device. Blocking.
  auto const tile_of = [&](HostComplex2 const& whole, char const* label) {
    ComplexView2<T, Mem> tile(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), tile_height,
                              tile_width);
    advise_huge_pages(tile);  // before the first touch (on host spaces, h is the tile)
    auto h = Kokkos::create_mirror_view(tile);
    for (int y = 0; y < tile_height; ++y)
      for (int x = 0; x < tile_width; ++x) {
        Complex<double> const v = whole(tile_y + y, tile_x + x);
        h(y, x) = Complex<T>(T(v.real()), T(v.imag()));
      }
    Kokkos::deep_copy(space, tile, h);  // host -> device: an object tile, once
    return tile;
  };
  auto const probe_of = [&](HostComplex3 const& p, char const* label) {
    ComplexView3<T, Mem> out(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), p.extent(0),
                             p.extent(1), p.extent(2));
    auto h = Kokkos::create_mirror_view(out);
    for (std::size_t k = 0; k < p.span(); ++k) h.data()[k] = Complex<T>(T(p.data()[k].real()), T(p.data()[k].imag()));
    Kokkos::deep_copy(space, out, h);  // host -> device: probe modes, once
    return out;
  };
  State<T, ExecSpace> state;
  state.object = tile_of(object, "ptyko::State::object");
  state.probe = probe_of(probe, "ptyko::State::probe");
  if (c.object_velocity.extent(0) > 0) {  // momentum's, as the run left them
    state.object_velocity = tile_of(c.object_velocity, "ptyko::State::object_velocity");
    state.probe_velocity = probe_of(c.probe_velocity, "ptyko::State::probe_velocity");
  }
  state.tile_y = tile_y;
  state.tile_x = tile_x;
  state.epoch = c.epoch;
  state.cost = c.result.cost;
  state.epoch_seconds = c.result.epoch_seconds;
  state.bytes_moved = c.result.bytes_moved;
  state.epoch_seconds.resize(std::size_t(c.epoch), 0.0);
  state.bytes_moved.resize(std::size_t(c.epoch), 0.0);
  state.rng_state = c.rng_state;
  set_background(space, state, c.result.background);  // the model's background, when the run refined one
  fence(space, "ptyko::state_from_checkpoint");
  return state;
}

#define PTYKO_INSTANTIATE(T)                                                                                \
  template State<T, Kokkos::DefaultExecutionSpace> state_from_checkpoint<T, Kokkos::DefaultExecutionSpace>( \
      Kokkos::DefaultExecutionSpace const&, Checkpoint const&, int, int, int, int);
PTYKO_INSTANTIATE(float)
PTYKO_INSTANTIATE(double)
#undef PTYKO_INSTANTIATE

}  // namespace ptyko
