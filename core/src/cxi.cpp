// CXI 1.6 reading and writing on top of ptyko::h5. Readers accept what other
// programs write (integer detectors, soft links, (3, N) translations, scalars
// of shape () or (1,)); each problem is one UserError naming the file and the
// dataset, and saying what to do.
#include "cxi_units.hpp"

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/detector_orientation.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/core/probe_resample.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/huge_pages.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace ptyko {

namespace {

namespace fs = std::filesystem;

constexpr char const* k_data = "/entry_1/data_1/data";
constexpr char const* k_detector_data = "/entry_1/instrument_1/detector_1/data";
constexpr char const* k_translation = "/entry_1/sample_1/geometry_1/translation";
constexpr char const* k_data_translation = "/entry_1/data_1/translation";
// NXcxi_ptycho keeps the scan's translations with the detector (and links
// them into data_1 and sample_1/geometry_1, where a file may lack them).
constexpr char const* k_detector_translation = "/entry_1/instrument_1/detector_1/translation";
constexpr char const* k_energy = "/entry_1/instrument_1/source_1/energy";
constexpr char const* k_wavelength = "/entry_1/instrument_1/source_1/wavelength";
// The photon energy where NeXus (NXcxi_ptycho, whose source_1/energy is the
// storage ring's) and CXI's Beam class keep it; preferred when present.
constexpr char const* k_beam_energy = "/entry_1/instrument_1/beam_1/energy";
constexpr char const* k_beam_incident_energy = "/entry_1/instrument_1/beam_1/incident_energy";
constexpr char const* k_beam_wavelength = "/entry_1/instrument_1/beam_1/incident_wavelength";
constexpr char const* k_distance = "/entry_1/instrument_1/detector_1/distance";
constexpr char const* k_pixel_x = "/entry_1/instrument_1/detector_1/x_pixel_size";
constexpr char const* k_pixel_y = "/entry_1/instrument_1/detector_1/y_pixel_size";
constexpr char const* k_mask = "/entry_1/instrument_1/detector_1/mask";
constexpr char const* k_dark = "/entry_1/instrument_1/detector_1/dark";            // PyNX
constexpr char const* k_data_dark = "/entry_1/instrument_1/detector_1/data_dark";  // the CXI specification
constexpr char const* k_basis = "/entry_1/instrument_1/detector_1/basis_vectors";
constexpr char const* k_corner = "/entry_1/instrument_1/detector_1/corner_position";
constexpr char const* k_monitor = "/entry_1/data_1/monitor";
constexpr char const* k_illumination = "/entry_1/instrument_1/source_1/illumination";
constexpr char const* k_truth = "/entry_1/ptyko_truth";
constexpr char const* k_truth_object = "/entry_1/ptyko_truth/object";
constexpr char const* k_truth_probe = "/entry_1/ptyko_truth/probe";
constexpr char const* k_truth_positions = "/entry_1/ptyko_truth/positions_px";
constexpr char const* k_truth_flux = "/entry_1/ptyko_truth/relative_flux";
constexpr char const* k_truth_background = "/entry_1/ptyko_truth/background";

// Above this a file's "energy" cannot be in joules: 1e-12 J is 6 MeV, beyond
// any photon or electron source used for ptychography.
constexpr double k_max_energy_joule = 1e-12;

bool is_real_number_type(std::string const& t) {
  return t.rfind("uint", 0) == 0 || t.rfind("int", 0) == 0 || t == "float32" || t == "float64";
}

std::string shape_string(std::vector<std::size_t> const& dims) {
  std::string s = "(";
  for (std::size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + std::to_string(dims[k]);
  return s + ")";
}

std::size_t count(std::vector<std::size_t> const& dims) {
  std::size_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

// The first of `candidates` that leads to an object. A dangling soft link
// among them is reported (resolve names its missing target), since it means
// the file was written wrongly, not that the entry is absent.
std::string find_first(h5::File const& f, std::initializer_list<char const*> candidates) {
  for (char const* p : candidates) {
    if (h5::exists(f, p)) return p;
    if (h5::link_exists(f, p)) h5::resolve(f, p);  // throws, naming the missing target
  }
  return {};
}

// A single number that may be stored as shape (), (1,) or, as some
// beamlines do, repeated once per frame; in SI units (its units attribute
// applied).
std::optional<double> read_optional_scalar(h5::File const& f, char const* path, impl::Quantity q) {
  if (!h5::exists(f, path)) return std::nullopt;
  std::string const type = h5::type_name(f, path);
  PTYKO_REQUIRE(is_real_number_type(type), f.name(), ": ", path, " holds ", type,
                " values; expected a number");
  auto const dims = h5::shape(f, path);
  std::size_t const n = count(dims);
  PTYKO_REQUIRE(n >= 1, f.name(), ": ", path, " is empty; expected a number");
  PTYKO_REQUIRE(n <= (std::size_t(1) << 24), f.name(), ": ", path, " has shape ", shape_string(dims),
                "; expected a single number");
  auto const v = h5::read<double>(f, path);
  for (double x : v) {
    PTYKO_REQUIRE(std::isfinite(x), f.name(), ": ", path, " is ", x, "; expected a finite number");
    PTYKO_REQUIRE(x == v[0], f.name(), ": ", path, " holds ", n,
                  " different values; ptyko needs a single value for the whole scan");
  }
  return v[0] * impl::unit_factor(f, path, q);
}

// How the translations are laid out: (N, 3), (N, 2) or transposed (3, N).
struct TranslationLayout {
  bool transposed = false;
  std::size_t columns = 3;
};

TranslationLayout translation_layout(std::string const& file, std::string const& tpath,
                                     std::vector<std::size_t> const& stored_dims, std::size_t frames,
                                     std::string const& data_path) {
  // A raster scan's (n1, n2, 3) translations are its n1 n2 frames' (N, 3).
  std::vector<std::size_t> dims = stored_dims;
  if (dims.size() == 3 && (dims[2] == 3 || dims[2] == 2)) dims = {dims[0] * dims[1], dims[2]};
  PTYKO_REQUIRE(dims.size() == 2, file, ": ", tpath, " has shape ", shape_string(dims),
                "; expected (N, 3) translations x, y, z in metres");
  bool const rows = dims[1] == 3 || dims[1] == 2;
  // (3, 3) is ambiguous; CXI's (N, 3) wins.
  bool const transposed = !rows && dims[0] == 3;
  PTYKO_REQUIRE(rows || transposed, file, ": ", tpath, " has shape ", shape_string(dims),
                "; expected (N, 3) translations x, y, z in metres");
  std::size_t const n = transposed ? dims[1] : dims[0];
  PTYKO_REQUIRE(n == frames, file, ": ", data_path, " has ", frames, " frames but ", tpath, " has ", n,
                " translations: they must match, one position per frame");
  return {transposed, transposed ? 3 : dims[1]};
}

// (frames, y, x) of a frame stack stored as (frames, y, x), or as a raster
// scan's (n1, n2, y, x) (NeXus, NXcxi_ptycho): n1 n2 frames in row-major
// order. Empty for other ranks.
std::vector<std::size_t> stack_shape(std::vector<std::size_t> const& dims) {
  if (dims.size() == 3) return dims;
  if (dims.size() == 4) return {dims[0] * dims[1], dims[2], dims[3]};
  return {};
}

// A 2-D (y, x) extent from (y, x) or (1, y, x).
bool is_frame_shaped(std::vector<std::size_t> const& dims, int ny, int nx) {
  if (dims.size() == 3 && dims[0] != 1) return false;
  if (dims.size() != 2 && dims.size() != 3) return false;
  return dims[dims.size() - 2] == std::size_t(ny) && dims[dims.size() - 1] == std::size_t(nx);
}

std::string frame_size(std::vector<std::size_t> const& dims) {
  if (dims.size() >= 2) return std::to_string(dims[dims.size() - 2]) + "x" + std::to_string(dims.back());
  return shape_string(dims);
}

// Makes `info` read the crop's window of its stored frames (stored_ny x
// stored_nx), binned: the window's centre pixel (size / 2) is the crop's
// centre. Without a size the window is the whole (square) frames.
void set_crop_window(CxiInfo& info, FrameCrop const& crop) {
  int const n = crop.size > 0 ? crop.size : info.stored_ny;
  int const b = crop.bin;
  PTYKO_REQUIRE(n <= info.stored_ny && n <= info.stored_nx, info.path, ": --crop ", n, " is larger than the ",
                info.stored_ny, "x", info.stored_nx, " frames: give at most ", std::min(info.stored_ny, info.stored_nx));
  PTYKO_REQUIRE(b >= 1 && n % b == 0, info.path, ": --bin ", b, " does not divide the ", n, "-pixel ",
                crop.size > 0 ? "crop" : "frames", ": give a --crop that is a multiple of ", b);
  int const cy = crop.centre_y.value_or(info.stored_ny / 2), cx = crop.centre_x.value_or(info.stored_nx / 2);
  int const y0 = cy - n / 2, x0 = cx - n / 2;
  PTYKO_REQUIRE(y0 >= 0 && x0 >= 0 && y0 + n <= info.stored_ny && x0 + n <= info.stored_nx, info.path,
                ": the ", n, "x", n, " crop around the beam at (y, x) = (", cy, ", ", cx, ") leaves the ",
                info.stored_ny, "x", info.stored_nx, " frames (rows ", y0, " to ", y0 + n - 1, ", columns ", x0,
                " to ", x0 + n - 1, "): give a smaller --crop or a centre (--crop-centre-y/-x) further inside");
  info.ny = info.nx = n / b;
  info.bin = b;
  info.window_y = y0;
  info.window_x = x0;
}

// Sums bin x bin blocks of each of the n (ny bin) x (nx bin) images in
// `fine` into (ny, nx) images in `coarse`.
template <class T, class Out>
void bin_images(T const* fine, std::size_t n, int ny, int nx, int bin, Out* coarse) {
  std::size_t const fine_nx = std::size_t(nx) * bin;
  for (std::size_t k = 0; k < n; ++k) {
    T const* f = fine + k * std::size_t(ny) * bin * fine_nx;
    Out* c = coarse + k * std::size_t(ny) * nx;
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        Out sum = 0;
        for (int i = 0; i < bin; ++i)
          for (int j = 0; j < bin; ++j) sum += Out(f[(std::size_t(y) * bin + i) * fine_nx + std::size_t(x) * bin + j]);
        c[std::size_t(y) * nx + x] = sum;
      }
  }
}

// Index in a stored (stored_ny x stored_nx) detector array of the window's
// pixel (y, x).
std::size_t stored_pixel(CxiInfo const& info, int y, int x) {
  return std::size_t(info.window_y + y) * std::size_t(info.stored_nx) + std::size_t(info.window_x + x);
}

// Checks that `path` of `f` can be a mask of the stored frames; `what`
// names it in messages ("mask", "--mask").
void check_mask_dataset(h5::File const& f, std::string const& path, CxiInfo const& info, char const* what) {
  auto const dims = h5::shape(f, path);
  PTYKO_REQUIRE(is_frame_shaped(dims, info.stored_ny, info.stored_nx), f.name(), ": ", what, " ", path, " is ",
                frame_size(dims), " but frames are ", info.stored_ny, "x", info.stored_nx, ": they must match");
  std::string const type = h5::type_name(f, path);
  PTYKO_REQUIRE(is_real_number_type(type) || type == "enum", f.name(), ": ", what, " ", path, " holds ", type,
                " values; expected integers (nonzero = bad pixel)");
}

// Clears the measured flag of the window's pixels that the mask `path` of
// `f` marks bad (nonzero; zero when `invert`).
void apply_mask_dataset(h5::File const& f, std::string const& path, CxiInfo const& info, bool invert,
                        HostMask const& mask) {
  // Read as double: exact for every integer a mask holds, keeps negative
  // values of signed masks nonzero, and NaN in a float mask counts as bad.
  // A small (detector-sized) array: read whole, then the crop window kept.
  auto const v = h5::read<double>(f, path);
  for (int y = 0; y < int(mask.extent(0)); ++y)
    for (int x = 0; x < int(mask.extent(1)); ++x) {
      double const m = v[stored_pixel(info, y, x)];
      if ((m != 0) != invert) mask(y, x) = 0;
    }
}

// The detector mask of the window (before binning: ny bin x nx bin) as
// 1 = measured, from CXI's nonzero = bad, and that of a --mask file.
HostMask read_window_mask(h5::File const& f, CxiInfo const& info) {
  int const wy = info.ny * info.bin, wx = info.nx * info.bin;
  HostMask mask(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ptyko::cxi::mask")), wy, wx);
  Kokkos::deep_copy(mask, std::uint8_t(1));
  if (h5::exists(f, k_mask)) {
    check_mask_dataset(f, k_mask, info, "mask");
    apply_mask_dataset(f, k_mask, info, false, mask);
  }
  if (!info.mask_file.empty()) {
    auto const m = h5::File::open_read(info.mask_file);
    apply_mask_dataset(m, info.mask_dataset, info, info.mask_invert, mask);
  }
  return mask;
}

// frames -= the window of the dark frame, at least 0, on measured pixels
// (the others are 0 already).
void subtract_dark(h5::File const& f, CxiInfo const& info, HostMask const& window_mask, HostFrames const& frames) {
  auto const v = h5::read<double>(f, info.dark_path);
  int const wy = int(frames.extent(1)), wx = int(frames.extent(2));
  std::vector<float> dark(std::size_t(wy) * wx);
  for (int y = 0; y < wy; ++y)
    for (int x = 0; x < wx; ++x) {
      double const d = v[stored_pixel(info, y, x)];
      PTYKO_REQUIRE(!window_mask(y, x) || std::isfinite(d), f.name(), ": dark frame ", info.dark_path,
                    " is not finite at pixel (y, x) = (", info.window_y + y, ", ", info.window_x + x,
                    "): fix it or mask the pixel");
      dark[std::size_t(y) * wx + x] = window_mask(y, x) ? float(d) : 0.f;
    }
  std::size_t const pixels = dark.size();
  for (std::size_t k = 0; k < frames.extent(0); ++k) {
    float* frame = frames.data() + k * pixels;
    for (std::size_t p = 0; p < pixels; ++p) frame[p] = std::max(frame[p] - dark[p], 0.f);
  }
}

// The binned mask of a window mask: a binned pixel is measured when all of
// its stored pixels are (a sum with a bad pixel in it is no measurement).
HostMask bin_mask(HostMask const& fine, CxiInfo const& info) {
  if (info.bin == 1) return fine;
  HostMask mask(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ptyko::cxi::mask")), info.ny, info.nx);
  std::vector<int> bad(std::size_t(info.ny) * info.nx);
  std::vector<int> fine_bad(fine.span());
  for (std::size_t k = 0; k < fine.span(); ++k) fine_bad[k] = fine.data()[k] == 0;
  bin_images(fine_bad.data(), 1, info.ny, info.nx, info.bin, bad.data());
  for (std::size_t k = 0; k < bad.size(); ++k) mask.data()[k] = bad[k] == 0 ? 1 : 0;
  return mask;
}

// The mask of the frames as read (cropped, binned, in the default orientation).
HostMask read_mask(h5::File const& f, CxiInfo const& info) {
  HostMask mask = bin_mask(read_window_mask(f, info), info);
  orient_images(mask.data(), 1, info.ny, info.orientation);
  return mask;
}

// The (M, a, b) extents of a complex stack stored as (M, a, b) or (a, b).
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

void require_numeric(h5::File const& f, char const* path, bool allow_complex) {
  std::string const type = h5::type_name(f, path);
  bool const ok = is_real_number_type(type) || (allow_complex && type.rfind("complex", 0) == 0);
  PTYKO_REQUIRE(ok, f.name(), ": ", path, " holds ", type, " values; expected ",
                allow_complex ? "complex or real numbers" : "real numbers");
}

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

// The direct beam in stored pixels (CxiInfo::beam_found): the mean of up to
// 32 frames spread over the scan (the file's bad pixels left out), cleared
// of hot pixels by a 3 x 3 median, its brightest spot after a box sum over
// (2 r + 1)^2 pixels, then the centre of the half-maximum region around it,
// rounded to a pixel.
std::array<int, 2> find_beam(h5::File const& f, std::string const& data, CxiInfo const& info) {
  int const ny = info.stored_ny, nx = info.stored_nx;
  std::size_t const pixels = std::size_t(ny) * nx;
  std::vector<double> mean(pixels, 0.0);
  std::vector<char> bad(pixels, 0);
  if (h5::exists(f, k_mask) && is_frame_shaped(h5::shape(f, k_mask), ny, nx)) {
    auto const m = h5::read<double>(f, k_mask);
    for (std::size_t p = 0; p < pixels; ++p) bad[p] = m[p] != 0;
  }
  std::size_t const count = std::min<std::size_t>(info.frames, 32);
  std::vector<float> frame(pixels);
  for (std::size_t k = 0; k < count; ++k) {
    h5::read_rows(f, data, {k * info.frames / count}, frame.data());
    for (std::size_t p = 0; p < pixels; ++p)
      if (!bad[p] && std::isfinite(frame[p]) && frame[p] > 0) mean[p] += frame[p];
  }
  // A 3 x 3 median first: hot pixels (alone or in pairs) weigh nothing,
  // while the beam's spot, many pixels wide, stays.
  {
    std::vector<double> median(pixels);
    double v[9];
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        int k = 0;
        for (int i = std::max(0, y - 1); i <= std::min(ny - 1, y + 1); ++i)
          for (int j = std::max(0, x - 1); j <= std::min(nx - 1, x + 1); ++j) v[k++] = mean[std::size_t(i) * nx + j];
        std::nth_element(v, v + k / 2, v + k);
        median[std::size_t(y) * nx + x] = v[k / 2];
      }
    mean.swap(median);
  }
  // Box sums from the summed-area table.
  std::vector<double> area(std::size_t(ny + 1) * (nx + 1), 0.0);
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      area[std::size_t(y + 1) * (nx + 1) + x + 1] = mean[std::size_t(y) * nx + x] + area[std::size_t(y) * (nx + 1) + x + 1] +
                                                   area[std::size_t(y + 1) * (nx + 1) + x] - area[std::size_t(y) * (nx + 1) + x];
  int const r = std::max(2, std::min(ny, nx) / 32);
  auto box = [&](int y, int x) {
    int const y0 = std::max(0, y - r), y1 = std::min(ny, y + r + 1), x0 = std::max(0, x - r), x1 = std::min(nx, x + r + 1);
    return area[std::size_t(y1) * (nx + 1) + x1] - area[std::size_t(y0) * (nx + 1) + x1] -
           area[std::size_t(y1) * (nx + 1) + x0] + area[std::size_t(y0) * (nx + 1) + x0];
  };
  int by = ny / 2, bx = nx / 2;
  double best = -1;
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      if (double const b = box(y, x); b > best) {
        best = b;
        by = y;
        bx = x;
      }
  PTYKO_REQUIRE(best > 0, info.path, ": --find-beam: the frames hold no counts to find the beam in");
  // The centre of the bright spot around it: the pixels connected to it
  // that reach half its (median-filtered) brightness, each counted once (a
  // flat-topped spot, a pupil's far field, has no single brightest point;
  // a peaked one's half-maximum region sits on its peak).
  double const half = 0.5 * mean[std::size_t(by) * nx + bx];
  std::vector<char> seen(pixels, 0);
  std::vector<std::size_t> stack{std::size_t(by) * nx + bx};
  seen[stack.back()] = 1;
  double n = 0, my = 0, mx = 0;
  while (!stack.empty()) {
    std::size_t const p = stack.back();
    stack.pop_back();
    int const y = int(p / nx), x = int(p % nx);
    n += 1;
    my += y;
    mx += x;
    int const next[4][2] = {{y - 1, x}, {y + 1, x}, {y, x - 1}, {y, x + 1}};
    for (auto const& q : next) {
      if (q[0] < 0 || q[0] >= ny || q[1] < 0 || q[1] >= nx) continue;
      std::size_t const k = std::size_t(q[0]) * nx + q[1];
      if (!seen[k] && mean[k] >= half) {
        seen[k] = 1;
        stack.push_back(k);
      }
    }
  }
  by = int(std::lround(my / n));
  bx = int(std::lround(mx / n));
  return {by, bx};
}

// The detector's orientation (basis_vectors) and the direct beam's place on
// it (corner_position), with the pixel sizes the basis gives where the file
// has no x_pixel_size / y_pixel_size (cdtools, and the specification, make
// the basis the primary description).
void read_detector_placement(h5::File const& f, CxiInfo& info) {
  std::vector<double> basis(6);  // (2, 3): the steps of rows and columns
  if (h5::exists(f, k_basis)) {
    require_numeric(f, k_basis, false);
    std::vector<std::size_t> dims;
    auto values = h5::read<double>(f, k_basis, &dims);
    double const metres = impl::unit_factor(f, k_basis, impl::Quantity::length);
    for (double& v : values) v *= metres;
    info.orientation = orientation_from_basis(values, dims, info.path + ": " + k_basis);
    if (!info.pixel_size_x_m) info.pixel_size_x_m = info.orientation.pixel_x_m;
    if (!info.pixel_size_y_m) info.pixel_size_y_m = info.orientation.pixel_y_m;
    basis = info.orientation.basis;
  } else {
    double const px = info.pixel_size_x_m.value_or(info.pixel_size_y_m.value_or(0));
    double const py = info.pixel_size_y_m.value_or(px);
    if (!(px > 0 && py > 0)) return;  // CxiInfo::geometry() names the missing size
    basis = {0, -py, 0, -px, 0, 0};
  }
  if (!h5::exists(f, k_corner)) return;
  require_numeric(f, k_corner, false);
  auto corner = h5::read<double>(f, k_corner);
  for (double& c : corner) c *= impl::unit_factor(f, k_corner, impl::Quantity::length);
  PTYKO_REQUIRE(corner.size() == 3, info.path, ": ", k_corner, " holds ", corner.size(),
                " values; expected the (x, y, z) of the first pixel's corner in metres");
  for (double c : corner)
    PTYKO_REQUIRE(std::isfinite(c), info.path, ": ", k_corner, " holds ", c, "; expected finite metres");
  info.beam_from_corner = beam_from_corner({corner[0], corner[1], corner[2]}, basis);
}

}  // namespace

// ------------------------------------------------------------------ CxiInfo

Geometry CxiInfo::geometry() const {
  Geometry g;
  std::string const& wpath = wavelength_path.empty() ? std::string(k_wavelength) : wavelength_path;
  std::string const& epath = energy_path.empty() ? std::string(k_energy) : energy_path;
  if (wavelength_m) {
    PTYKO_REQUIRE(*wavelength_m > 0, path, ": ", wpath, " is ", *wavelength_m,
                  " m: it must be a positive wavelength in metres");
    g.wavelength_m = *wavelength_m;
  } else if (energy_joule) {
    PTYKO_REQUIRE(*energy_joule > 0, path, ": ", epath, " is ", *energy_joule,
                  " J: it must be a positive energy in joules");
    PTYKO_REQUIRE(*energy_joule <= k_max_energy_joule, path, ": ", epath, " is ", *energy_joule,
                  " J, far too high for a photon: CXI stores the energy in joules (8 keV is 1.2817e-15 J); if the "
                  "file holds eV, multiply by 1.602176634e-19 or give the dataset units = \"eV\"");
    g.wavelength_m = wavelength_from_energy(*energy_joule);
  } else {
    PTYKO_FAIL(path, ": neither ", k_energy, " nor ", k_wavelength,
               " is present: add one (energy in J or wavelength in m)");
  }
  PTYKO_REQUIRE(distance_m.has_value(), path, ": ", k_distance,
                " is missing: add the sample-detector distance in metres");
  PTYKO_REQUIRE(*distance_m > 0, path, ": ", k_distance, " is ", *distance_m,
                " m: it must be a positive sample-detector distance in metres");
  g.distance_m = *distance_m;
  PTYKO_REQUIRE(pixel_size_x_m || pixel_size_y_m, path, ": neither ", k_pixel_x, " nor ", k_pixel_y,
                " is present: add the detector pixel size in metres");
  // Square pixels are the rule: one size stands for both.
  g.pixel_size_x_m = pixel_size_x_m ? *pixel_size_x_m : *pixel_size_y_m;
  g.pixel_size_y_m = pixel_size_y_m ? *pixel_size_y_m : *pixel_size_x_m;
  PTYKO_REQUIRE(g.pixel_size_x_m > 0 && g.pixel_size_y_m > 0, path, ": detector pixel size (", k_pixel_y,
                ", ", k_pixel_x, ") is ", g.pixel_size_y_m, " x ", g.pixel_size_x_m,
                " m: both must be positive sizes in metres");
  // Binned frames have pixels bin times larger (the object pixel stays).
  g.pixel_size_x_m *= bin;
  g.pixel_size_y_m *= bin;
  g.detector_size = nx;
  g.validate(path.c_str());
  return g;
}

std::array<double, 2> CxiInfo::stored_position(double y, double x) const {
  auto const p = unorient_position(y, x, ny, orientation);
  // The centre of the (binned) pixel, in stored pixels.
  return {window_y + bin * p[0] + 0.5 * (bin - 1), window_x + bin * p[1] + 0.5 * (bin - 1)};
}

// ------------------------------------------------------------------ readers

CxiInfo cxi_inspect(std::string const& path, FrameCrop const& requested) {
  CxiInfo info;
  info.path = path;
  auto f = h5::File::open_read(path);

  std::string const data = find_first(f, {k_data, k_detector_data});
  PTYKO_REQUIRE(!data.empty(), path, ": no diffraction data: neither ", k_data, " nor ", k_detector_data,
                " exists");
  info.data_path = h5::resolve(f, data);
  info.data_type = h5::type_name(f, data);
  PTYKO_REQUIRE(is_real_number_type(info.data_type), path, ": ", data, " holds ", info.data_type,
                " values; expected intensities as integers or floats");
  auto const stored_dims = h5::shape(f, data);
  auto const dims = stack_shape(stored_dims);
  PTYKO_REQUIRE(dims.size() == 3, path, ": ", data, " has rank ", stored_dims.size(),
                ", expected (frames, y, x) or a raster scan's (rows, columns, y, x)");
  PTYKO_REQUIRE(dims[0] > 0, path, ": ", data, " holds no frames (shape ", shape_string(dims), ")");
  PTYKO_REQUIRE(dims[1] <= std::size_t(std::numeric_limits<int>::max()) &&
                    dims[2] <= std::size_t(std::numeric_limits<int>::max()),
                path, ": frames in ", data, " are ", dims[1], "x", dims[2], " pixels: too large");
  info.frames = dims[0];
  info.stored_ny = info.ny = int(dims[1]);
  info.stored_nx = info.nx = int(dims[2]);
  FrameCrop crop = requested;
  if (crop.find_beam) {
    PTYKO_REQUIRE(!crop.centre_y && !crop.centre_x, path,
                  ": --find-beam and --crop-centre-y/-x both place the window: give one of them");
    auto const beam = find_beam(f, data, info);
    info.beam_found = beam;
    crop.centre_y = beam[0];
    crop.centre_x = beam[1];
    if (crop.size == 0) {
      // The largest square around the beam that the frames hold, a
      // multiple of 2 bin pixels.
      int const half = std::min({beam[0], beam[1], info.stored_ny - beam[0], info.stored_nx - beam[1]});
      crop.size = 2 * half / (2 * crop.bin) * (2 * crop.bin);
      PTYKO_REQUIRE(crop.size > 0, path, ": the beam found at stored pixel (y, x) = (", beam[0], ", ", beam[1],
                    ") is on the frames' edge: give --crop-centre-y/-x");
    }
  }
  if (crop.size == 0 && info.stored_ny != info.stored_nx) {
    // Oblong frames (a detector of several modules): the largest square
    // around their centre, a multiple of 2 bin pixels, unless a crop is
    // given. CxiInfo::auto_crop tells the caller, who says so.
    int const step = 2 * crop.bin;
    FrameCrop square = crop;
    square.size = std::min(info.stored_ny, info.stored_nx) / step * step;
    PTYKO_REQUIRE(square.size > 0, path, ": frames in ", data, " are ", info.stored_ny, "x", info.stored_nx,
                  ": too narrow for a square window", crop.bin > 1 ? " of the --bin" : "");
    set_crop_window(info, square);
    info.auto_crop = true;
  } else if (crop.size > 0 || crop.bin != 1) {
    set_crop_window(info, crop);
  }

  std::string const trans = find_first(f, {k_translation, k_data_translation, k_detector_translation});
  PTYKO_REQUIRE(!trans.empty(), path, ": no scan positions: none of ", k_translation, ", ", k_data_translation,
                " or ", k_detector_translation, " exists: add the (N, 3) sample translations in metres");
  require_numeric(f, trans.c_str(), false);
  translation_layout(path, trans, h5::shape(f, trans), info.frames, data);
  info.translation_path = h5::resolve(f, trans);

  using impl::Quantity;
  info.energy_path = find_first(f, {k_beam_energy, k_beam_incident_energy, k_energy});
  if (!info.energy_path.empty()) info.energy_joule = read_optional_scalar(f, info.energy_path.c_str(), Quantity::energy);
  info.wavelength_path = find_first(f, {k_wavelength, k_beam_wavelength});
  if (!info.wavelength_path.empty())
    info.wavelength_m = read_optional_scalar(f, info.wavelength_path.c_str(), Quantity::length);
  info.distance_m = read_optional_scalar(f, k_distance, Quantity::length);
  info.pixel_size_x_m = read_optional_scalar(f, k_pixel_x, Quantity::length);
  info.pixel_size_y_m = read_optional_scalar(f, k_pixel_y, Quantity::length);
  read_detector_placement(f, info);

  // The mask is always used, so a wrong one fails here, before any reading.
  info.has_mask = h5::exists(f, k_mask);
  if (info.has_mask) check_mask_dataset(f, k_mask, info, "mask");
  // The probe guess is optional input (a run may take it from elsewhere):
  // its shape is checked by cxi_read_illumination.
  if (h5::exists(f, k_illumination)) {
    auto const idims = h5::shape(f, k_illumination);
    info.illumination_modes = idims.size() == 3 ? int(idims[0]) : 1;
  }
  info.has_truth = h5::exists(f, k_truth);

  // Corrections other programs store with the data (PyNX: a dark frame and
  // the incident flux per frame).
  info.dark_path = find_first(f, {k_dark, k_data_dark});
  info.has_dark = !info.dark_path.empty();
  if (info.has_dark) {
    auto const ddims = h5::shape(f, info.dark_path);
    PTYKO_REQUIRE(is_frame_shaped(ddims, info.stored_ny, info.stored_nx), path, ": dark frame ", info.dark_path,
                  " is ", frame_size(ddims), " but frames are ", info.stored_ny, "x", info.stored_nx,
                  ": they must match (or run with --no-dark)");
    require_numeric(f, info.dark_path.c_str(), false);
  }
  if (h5::exists(f, k_monitor)) {
    require_numeric(f, k_monitor, false);
    std::vector<std::size_t> mdims;
    auto const monitor = h5::read<double>(f, k_monitor, &mdims);
    PTYKO_REQUIRE(monitor.size() == info.frames, path, ": monitor ", k_monitor, " has ", monitor.size(),
                  " values for ", info.frames, " frames: one per frame (or run with --no-monitor)");
    std::vector<double> sorted;
    for (std::size_t n = 0; n < monitor.size(); ++n) {
      PTYKO_REQUIRE(std::isfinite(monitor[n]) && monitor[n] >= 0, path, ": monitor ", k_monitor, " of frame ", n,
                    " is ", monitor[n], ": it must be a finite flux >= 0 (or run with --no-monitor)");
      if (monitor[n] > 0) sorted.push_back(monitor[n]);
    }
    PTYKO_REQUIRE(!sorted.empty(), path, ": monitor ", k_monitor,
                  " is 0 for every frame: no beam, or not a flux (run with --no-monitor)");
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    double const median = sorted[sorted.size() / 2];
    info.monitor_scale.resize(monitor.size());
    for (std::size_t n = 0; n < monitor.size(); ++n)
      info.monitor_scale[n] = monitor[n] >= 0.1 * median ? median / monitor[n] : 0.0;
  }
  return info;
}

std::pair<std::string, std::string> split_file_dataset(std::string const& spec) {
  std::error_code ec;
  auto const colon = spec.rfind(':');
  if (colon == std::string::npos || fs::exists(spec, ec)) return {spec, ""};
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

namespace {

// The file of `spec` (FILE or FILE:DATASET, split_file_dataset) open, and
// the dataset: the named one, else the first of `places` that exists.
// `option` ("--mask") and `what` ("mask") name them in messages.
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

}  // namespace

void cxi_add_mask_file(CxiInfo& info, MaskFile const& mask) {
  // Where other programs keep a detector mask: CXI, an Eiger master file
  // (NeXus), a plain file.
  auto const [f, dataset] = open_file_dataset(mask.spec, "--mask", "mask",
                                              {k_mask, "/entry/instrument/detector/detectorSpecific/pixel_mask",
                                               "/entry/instrument/detector/pixel_mask", "/mask"});
  check_mask_dataset(f, dataset, info, "--mask");
  info.mask_file = f.name();
  info.mask_dataset = dataset;
  info.mask_invert = mask.invert;
}

std::vector<std::array<double, 3>> cxi_read_translations(CxiInfo const& info) {
  auto f = h5::File::open_read(info.path);
  std::vector<std::size_t> dims;
  auto const v = h5::read<double>(f, info.translation_path, &dims);
  auto const layout = translation_layout(info.path, info.translation_path, dims, info.frames, info.data_path);
  double const metres = impl::unit_factor(f, info.translation_path, impl::Quantity::length);
  std::vector<std::array<double, 3>> out(info.frames, {0.0, 0.0, 0.0});
  for (std::size_t n = 0; n < info.frames; ++n) {
    for (std::size_t c = 0; c < layout.columns; ++c) {
      double const t = layout.transposed ? v[c * info.frames + n] : v[n * layout.columns + c];
      PTYKO_REQUIRE(std::isfinite(t), info.path, ": translation ", n, " in ", info.translation_path,
                    " is not a finite number");
      out[n][c] = t * metres;
    }
  }
  return out;
}

namespace {

/// An (n, ny, nx) View over `buffer`'s memory, which grows (uninitialised,
/// on huge pages where it holds whole ones) when it has less room.
HostFrames frames_in(HostFrames& buffer, std::size_t n, int ny, int nx) {
  std::size_t const need = n * std::size_t(ny) * std::size_t(nx);
  if (buffer.data() == nullptr || buffer.span() < need) {
    buffer = HostFrames();  // the old room goes before the new one comes
    buffer = HostFrames(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ptyko::cxi::frames")), n, ny, nx);
    advise_huge_pages(buffer);
  }
  return HostFrames(buffer.data(), n, ny, nx);
}

}  // namespace

HostFrames cxi_read_frames(CxiInfo const& info, std::vector<std::size_t> const& indices, bool clip_negative) {
  FrameReadBuffer own;  // made to measure: its View is the frames, and keeps their memory
  cxi_read_frames(info, indices, clip_negative, own);
  return info.bin == 1 ? own.stored : own.binned;
}

HostFrames cxi_read_frames(CxiInfo const& info, std::vector<std::size_t> const& indices, bool clip_negative,
                           FrameReadBuffer& buffer) {
  PTYKO_ASSERT(!info.data_path.empty(), "cxi_read_frames needs a CxiInfo from cxi_inspect");
  for (std::size_t k = 0; k < indices.size(); ++k) {
    PTYKO_REQUIRE(indices[k] < info.frames, info.path, ": frame index ", indices[k],
                  " is out of range: the file has ", info.frames, " frames (0 to ", info.frames - 1, ")");
  }
  auto f = h5::File::open_read(info.path);
  auto const dims = stack_shape(h5::shape(f, info.data_path));
  PTYKO_REQUIRE(dims.size() == 3 && dims[0] == info.frames && dims[1] == std::size_t(info.stored_ny) &&
                    dims[2] == std::size_t(info.stored_nx),
                info.path, ": ", info.data_path, " is now ", shape_string(dims),
                ": the file changed since it was inspected");
  // The window's stored pixels, read as they are, checked, then binned.
  int const wy = info.ny * info.bin, wx = info.nx * info.bin;
  std::size_t const pixels = std::size_t(wy) * std::size_t(wx);
  h5::check_fits_in_memory(f, info.data_path, double(indices.size()) * double(pixels) * sizeof(float),
                           "read fewer frames per process (run on more MPI ranks or nodes)");
  HostFrames frames = frames_in(buffer.stored, indices.size(), wy, wx);
  h5::RowWindow window;  // the whole frames unless cropped (then only the window is read)
  if (info.windowed())
    window = {std::size_t(info.window_y), std::size_t(info.window_x), std::size_t(wy), std::size_t(wx)};
  h5::read_rows(f, info.data_path, indices, frames.data(), window);

  // Bad pixels often hold NaN, -1 or the type's maximum: they are zeroed
  // (so that no NaN reaches the solvers, where NaN * 0 is still NaN) and
  // not checked. Pixels are named in stored coordinates.
  HostMask const mask = read_window_mask(f, info);
  auto const* measured = mask.data();
  float const largest = std::numeric_limits<float>::max();
  for (std::size_t k = 0; k < indices.size(); ++k) {
    float* frame = frames.data() + k * pixels;
    // The common frame, every measured value an ordinary intensity, in two
    // branch-free passes that vectorise (a branch per value kept the check
    // scalar); any other frame takes the loop below, which names the pixel.
    int unusual = 0;
    for (std::size_t p = 0; p < pixels; ++p) {
      float const v = frame[p];
      unusual |= int(measured[p] != 0) & (int(!(v >= 0.f)) | int(!(v <= largest)));
    }
    if (unusual == 0) {
      for (std::size_t p = 0; p < pixels; ++p) frame[p] = measured[p] != 0 ? frame[p] : 0.f;
      continue;
    }
    for (std::size_t p = 0; p < pixels; ++p) {
      float& v = frame[p];
      if (measured[p] == 0) {
        v = 0;
        continue;
      }
      if (v >= 0 && v <= largest) continue;  // an ordinary value beside the unusual ones
      std::size_t const y = info.window_y + p / wx, x = info.window_x + p % wx;
      PTYKO_REQUIRE(std::isfinite(v), info.path, ": frame ", indices[k], " of ", info.data_path, " has ",
                    std::isnan(v) ? "a NaN" : "an infinite", " intensity at pixel (y, x) = (", y, ", ", x,
                    "): fix the data or mark the pixel bad (in ", k_mask, " or a --mask file)");
      PTYKO_REQUIRE(clip_negative, info.path, ": frame ", indices[k], " of ", info.data_path,
                    " has a negative intensity (", v, ") at pixel (y, x) = (", y, ", ", x,
                    "): intensities must be >= 0; use --clip-negative to set negative values to zero");
      v = 0;
    }
  }
  if (info.has_dark) subtract_dark(f, info, mask, frames);
  if (!info.monitor_scale.empty())
    for (std::size_t k = 0; k < indices.size(); ++k) {
      float const s = float(info.monitor_scale[indices[k]]);
      float* frame = frames.data() + k * pixels;
      for (std::size_t p = 0; p < pixels; ++p) frame[p] *= s;
    }
  if (info.bin == 1) {
    orient_images(frames.data(), indices.size(), info.ny, info.orientation);
    return frames;
  }
  HostFrames binned = frames_in(buffer.binned, indices.size(), info.ny, info.nx);
  bin_images(frames.data(), indices.size(), info.ny, info.nx, info.bin, binned.data());
  // A binned pixel with a bad stored pixel is bad (read_mask): zero, like every bad pixel.
  HostMask const coarse = bin_mask(mask, info);
  for (std::size_t k = 0; k < indices.size(); ++k)
    for (std::size_t p = 0; p < coarse.span(); ++p)
      if (coarse.data()[p] == 0) binned.data()[k * coarse.span() + p] = 0;
  orient_images(binned.data(), indices.size(), info.ny, info.orientation);
  return binned;
}

HostMask cxi_read_mask(CxiInfo const& info) {
  auto f = h5::File::open_read(info.path);
  return read_mask(f, info);
}

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

std::optional<CxiTruth> cxi_read_truth(CxiInfo const& info) {
  auto f = h5::File::open_read(info.path);
  if (!h5::exists(f, k_truth)) return std::nullopt;
  CxiTruth truth;
  for (char const* p : {k_truth_object, k_truth_probe, k_truth_positions}) {
    PTYKO_REQUIRE(h5::exists(f, p), info.path, ": ", k_truth, " lacks ", p);
    require_numeric(f, p, std::string(p) != k_truth_positions);
  }
  auto const odims = h5::shape(f, k_truth_object);
  PTYKO_REQUIRE(odims.size() == 2, info.path, ": ", k_truth_object, " has shape ", shape_string(odims),
                "; expected (H, W)");
  auto const obj = h5::read<Complex<double>>(f, k_truth_object);
  truth.object = HostComplex2(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ptyko::cxi::truth_object")),
                              odims[0], odims[1]);
  std::copy(obj.begin(), obj.end(), truth.object.data());
  truth.probe = read_complex_stack(f, k_truth_probe, "true probe", "ptyko::cxi::truth_probe");
  std::vector<std::size_t> pdims;
  auto const pos = h5::read<double>(f, k_truth_positions, &pdims);
  PTYKO_REQUIRE(pdims.size() == 2 && pdims[1] == 2, info.path, ": ", k_truth_positions, " has shape ",
                shape_string(pdims), "; expected (N, 2) pixel positions (y, x)");
  truth.positions_px.resize(pdims[0]);
  for (std::size_t n = 0; n < pdims[0]; ++n) truth.positions_px[n] = {pos[2 * n], pos[2 * n + 1]};
  if (h5::exists(f, k_truth_flux)) truth.relative_flux = h5::read<double>(f, k_truth_flux);
  if (h5::exists(f, k_truth_background)) {
    std::vector<std::size_t> bdims;
    auto const b = h5::read<double>(f, k_truth_background, &bdims);
    PTYKO_REQUIRE(bdims.size() == 2, info.path, ": ", k_truth_background, " has shape ", shape_string(bdims),
                  "; expected (D, D)");
    truth.background = HostReal2("ptyko::cxi::truth_background", bdims[0], bdims[1]);
    std::copy(b.begin(), b.end(), truth.background.data());
  }
  return truth;
}

// ------------------------------------------------------------------ writer

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
