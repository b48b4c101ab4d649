// What a CXI file holds (cxi_inspect): its frames and the window read of
// them, the scan's translations, the geometry, the detector's placement and
// the corrections stored with the data. Readers accept what other programs
// write (integer detectors, soft links, (3, N) translations, scalars of
// shape () or (1,), NeXus units).
#include "cxi_datasets.hpp"
#include "cxi_units.hpp"

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/detector_orientation.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace ptyko {

using namespace impl;  // the datasets' names and shared checks (cxi_datasets.hpp)

namespace {

namespace fs = std::filesystem;

// Above this a file's "energy" cannot be in joules: 1e-12 J is 6 MeV, beyond
// any photon or electron source used for ptychography.
constexpr double k_max_energy_joule = 1e-12;

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

// The frames' dataset: its path, type and (frames, y, x) shape.
std::string inspect_frames(h5::File const& f, CxiInfo& info) {
  std::string const& path = info.path;
  std::string const data = find_first(f, {k_data, k_detector_data});
  // A result of ptyko reconstruct holds a CXI image, not frames: say how to continue it.
  PTYKO_REQUIRE(!data.empty() || !h5::exists(f, "/reconstruction/object"), path,
                ": a result of ptyko reconstruct, not diffraction data: continue it with --resume ", path,
                ", or give the CXI file it was made from");
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
  return data;
}

// The window of the stored frames that is read: --crop / --bin, around
// the beam --find-beam finds, or the largest square of oblong frames.
void choose_window(h5::File const& f, std::string const& data, FrameCrop const& requested, CxiInfo& info) {
  std::string const& path = info.path;
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
}

// The scan's translations (checked against the frames) and the geometry:
// energy or wavelength, distance, pixel sizes, the detector's placement.
void inspect_scan_and_geometry(h5::File const& f, std::string const& data, CxiInfo& info) {
  std::string const& path = info.path;
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
}

// The monitor's flux per frame (PyNX's data_1/monitor) as the factor that
// brings each frame to the median flux; frames below 10 % of it (no beam)
// get 0.
std::vector<double> monitor_scale(h5::File const& f, CxiInfo const& info) {
  std::string const& path = info.path;
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
  std::vector<double> scale(monitor.size());
  for (std::size_t n = 0; n < monitor.size(); ++n)
    scale[n] = monitor[n] >= 0.1 * median ? median / monitor[n] : 0.0;
  return scale;
}

// The mask, the probe guess's modes, the truth, and the corrections other
// programs store with the data.
void inspect_extras(h5::File const& f, CxiInfo& info) {
  std::string const& path = info.path;
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
  if (h5::exists(f, k_monitor)) info.monitor_scale = monitor_scale(f, info);
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
                  "file holds eV, multiply by 1.602176634e-19, give the dataset units = \"eV\" or give --energy-kev");
    g.wavelength_m = wavelength_from_energy(*energy_joule);
  } else {
    PTYKO_FAIL(path, ": neither ", k_energy, " nor ", k_wavelength,
               " is present: add one (energy in J or wavelength in m) or give --energy-kev");
  }
  PTYKO_REQUIRE(distance_m.has_value(), path, ": ", k_distance,
                " is missing: add the sample-detector distance in metres or give --distance");
  PTYKO_REQUIRE(*distance_m > 0, path, ": ", k_distance, " is ", *distance_m,
                " m: it must be a positive sample-detector distance in metres");
  g.distance_m = *distance_m;
  PTYKO_REQUIRE(pixel_size_x_m || pixel_size_y_m, path, ": neither ", k_pixel_x, " nor ", k_pixel_y,
                " is present: add the detector pixel size in metres or give --pixel-size");
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

void cxi_override_geometry(CxiInfo& info, GeometryOverride const& given) {
  auto const positive = [](std::optional<double> const& v, char const* option, char const* unit) {
    PTYKO_REQUIRE(!v || (std::isfinite(*v) && *v > 0), option, " must be a positive ", unit, ", got ", v.value_or(0));
  };
  positive(given.energy_kev, "--energy-kev", "photon energy in keV");
  positive(given.distance_m, "--distance", "sample-detector distance in metres");
  positive(given.pixel_size_m, "--pixel-size", "detector pixel size in metres");
  if (given.energy_kev) {
    PTYKO_REQUIRE(*given.energy_kev >= 0.1 && *given.energy_kev <= 1000, "--energy-kev ", *given.energy_kev,
                  ": the photon energy in keV (0.1 to 1000; 8 keV is 1.55 angstrom)");
    info.energy_joule = *given.energy_kev * 1e3 * electron_volt;
    info.wavelength_m.reset();  // the file's wavelength would win over the given energy
    info.energy_given = true;
  }
  if (given.distance_m) info.distance_m = *given.distance_m, info.distance_given = true;
  if (given.pixel_size_m)
    info.pixel_size_x_m = info.pixel_size_y_m = *given.pixel_size_m, info.pixel_size_given = true;
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
  std::string const data = inspect_frames(f, info);
  choose_window(f, data, requested, info);
  inspect_scan_and_geometry(f, data, info);
  inspect_extras(f, info);
  return info;
}

std::pair<std::string, std::string> split_file_dataset(std::string const& spec) {
  std::error_code ec;
  auto const colon = spec.rfind(':');
  if (colon == std::string::npos || fs::exists(spec, ec)) return {spec, ""};
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

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
      out[n][c] = t * metres;
    }
  }
  return out;
}
}  // namespace ptyko
