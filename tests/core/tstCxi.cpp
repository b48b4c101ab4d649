// CXI files: write -> inspect -> read round trips, files as other programs
// write them, and one clear UserError per kind of broken file.
#include <ptyko/core/cxi.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/fftshift.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/core/probe_resample.hpp>
#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <cxi_paths.hpp>
#include <test_files.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace ptyko;
namespace fs = std::filesystem;

using namespace ptyko::test;  // CXI paths, TempDirTest, expect_user_error

// A fresh folder per test (test_files.hpp).
class Cxi : public TempDirTest {};

Geometry test_geometry(int d) {
  Geometry g;
  g.wavelength_m = 1.5e-10;
  g.distance_m = 2.5;
  g.pixel_size_y_m = 75e-6;
  g.pixel_size_x_m = 55e-6;
  g.detector_size = d;
  return g;
}

// Everything a simulated file holds; integer counts when `counts`.
CxiContents make_contents(std::size_t n, int d, bool counts, unsigned seed = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  CxiContents c;
  c.frames = HostFrames("frames", n, d, d);
  for (std::size_t k = 0; k < c.frames.size(); ++k) {
    double const v = 1000 * u(gen);
    c.frames.data()[k] = float(counts ? std::floor(v) : v);
  }
  for (std::size_t k = 0; k < n; ++k) c.translations.push_back({1e-6 * u(gen), -2e-6 * u(gen), 0.0});
  c.geometry = test_geometry(d);
  c.mask = HostMask("mask", d, d);
  Kokkos::deep_copy(c.mask, std::uint8_t(1));
  c.mask(0, 1) = 0;
  c.mask(d - 1, d - 2) = 0;
  c.illumination = HostComplex3("probe", 2, d, d);
  for (std::size_t k = 0; k < c.illumination.size(); ++k)
    c.illumination.data()[k] = Complex<double>(u(gen), -u(gen));
  CxiTruth t;
  t.object = HostComplex2("object", d + 5, d + 7);
  for (std::size_t k = 0; k < t.object.size(); ++k) t.object.data()[k] = Complex<double>(u(gen), u(gen));
  t.probe = HostComplex3("true probe", 1, d, d);
  for (std::size_t k = 0; k < t.probe.size(); ++k) t.probe.data()[k] = Complex<double>(u(gen), u(gen));
  for (std::size_t k = 0; k < n; ++k) t.positions_px.push_back({10 * u(gen), 20 * u(gen)});
  c.truth = t;
  c.integer_frames = counts;
  return c;
}

template <class A, class B>
void expect_same(A const& a, B const& b) {
  ASSERT_EQ(a.size(), b.size());
  for (unsigned r = 0; r < A::rank; ++r) ASSERT_EQ(a.extent(r), b.extent(r));
  for (std::size_t k = 0; k < a.size(); ++k) ASSERT_EQ(a.data()[k], b.data()[k]) << k;
}

// A minimal valid file as another program might write it, through the
// h5:: API so single parts can be broken: (N, D, D) data at the detector
// with the data_1 soft link, (N, 3) translations, energy, distance, pixel.
struct Builder {
  std::size_t n = 6;
  std::size_t d = 8;
  std::vector<float> frames;
  std::vector<double> translations;

  Builder() {
    frames.resize(n * d * d);
    for (std::size_t k = 0; k < frames.size(); ++k) frames[k] = float(k % 17);
    translations.resize(n * 3);
    for (std::size_t k = 0; k < translations.size(); ++k) translations[k] = 1e-7 * double(k);
  }
  // Writes everything except the paths in `skip`, then what `extra` adds.
  void write(std::string const& path, std::vector<std::string> const& skip = {},
             std::function<void(h5::File const&)> const& extra = {}) const {
    auto has = [&](char const* p) { return std::find(skip.begin(), skip.end(), p) == skip.end(); };
    auto f = h5::File::create(path);
    if (has(k_detector_data)) h5::write(f, k_detector_data, frames.data(), {n, d, d}, {}, "uint16");
    if (has(k_data)) h5::soft_link(f, k_detector_data, k_data);
    if (has(k_translation)) h5::write(f, k_translation, translations.data(), {n, 3});
    if (has(k_energy)) h5::write_scalar(f, k_energy, 1.2817e-15);
    if (has(k_distance)) h5::write_scalar(f, k_distance, 3.0);
    if (has(k_pixel_x)) h5::write_scalar(f, k_pixel_x, 75e-6);
    if (extra) extra(f);
    f.close();
  }
};

std::vector<std::size_t> all_indices(std::size_t n) {
  std::vector<std::size_t> v(n);
  std::iota(v.begin(), v.end(), std::size_t(0));
  return v;
}

// ------------------------------------------------------------------ round trips

TEST_F(Cxi, RoundTripEverything) {
  auto const path = file("scan.cxi");
  auto const c = make_contents(7, 16, true);
  cxi_write(path, c);

  auto const info = cxi_inspect(path);
  EXPECT_EQ(info.path, path);
  EXPECT_EQ(info.data_path, k_detector_data);  // /entry_1/data_1/data is a soft link to it
  EXPECT_EQ(info.translation_path, k_translation);
  EXPECT_EQ(info.frames, 7u);
  EXPECT_EQ(info.ny, 16);
  EXPECT_EQ(info.nx, 16);
  EXPECT_EQ(info.data_type, "uint16");
  EXPECT_TRUE(info.has_mask);
  EXPECT_EQ(info.illumination_modes, 2);
  EXPECT_TRUE(info.has_truth);
  ASSERT_TRUE(info.energy_joule && info.wavelength_m && info.distance_m);

  auto const g = info.geometry();
  EXPECT_DOUBLE_EQ(g.wavelength_m, c.geometry.wavelength_m);
  EXPECT_DOUBLE_EQ(*info.energy_joule, c.geometry.energy_joule());
  EXPECT_EQ(g.distance_m, c.geometry.distance_m);
  EXPECT_EQ(g.pixel_size_x_m, c.geometry.pixel_size_x_m);
  EXPECT_EQ(g.pixel_size_y_m, c.geometry.pixel_size_y_m);
  EXPECT_EQ(g.detector_size, 16);

  EXPECT_EQ(cxi_read_translations(info), c.translations);
  auto frames = cxi_read_frames(info, all_indices(7));
  // Pixels the mask marks bad read as 0; all others are identical.
  auto expected = HostFrames("expected", 7, 16, 16);
  Kokkos::deep_copy(expected, c.frames);
  for (int n = 0; n < 7; ++n) {
    expected(n, 0, 1) = 0;
    expected(n, 15, 14) = 0;
  }
  expect_same(frames, expected);
  expect_same(cxi_read_mask(info), c.mask);
  expect_same(cxi_read_illumination(info), c.illumination);
  auto const truth = cxi_read_truth(info);
  ASSERT_TRUE(truth);
  expect_same(truth->object, c.truth->object);
  expect_same(truth->probe, c.truth->probe);
  EXPECT_EQ(truth->positions_px, c.truth->positions_px);

  // The CXI conventions other programs rely on.
  auto f = h5::File::open_read(path);
  EXPECT_EQ(h5::read_scalar(f, "/cxi_version"), 160);
  EXPECT_EQ(h5::read_string_attribute(f, k_data, "axes"), "translation:y:x");
  EXPECT_EQ(h5::resolve(f, "/entry_1/data_1/translation"), k_translation);
  EXPECT_EQ(h5::type_name(f, k_mask), "uint32");
  auto const bad = h5::read<std::uint32_t>(f, k_mask);
  EXPECT_EQ(std::accumulate(bad.begin(), bad.end(), 0u), 2u);  // nonzero = bad
  EXPECT_EQ(h5::type_name(f, k_illumination), "complex128");
}

TEST_F(Cxi, MinimalFileHasNoOptionalParts) {
  auto const path = file("minimal.cxi");
  auto c = make_contents(3, 8, true);
  c.mask = HostMask();
  c.illumination = HostComplex3();
  c.truth.reset();
  cxi_write(path, c);
  auto const info = cxi_inspect(path);
  EXPECT_FALSE(info.has_mask);
  EXPECT_EQ(info.illumination_modes, 0);
  EXPECT_FALSE(info.has_truth);
  auto const mask = cxi_read_mask(info);
  ASSERT_EQ(mask.extent(0), 8u);
  for (std::size_t k = 0; k < mask.size(); ++k) EXPECT_EQ(mask.data()[k], 1);
  EXPECT_EQ(cxi_read_illumination(info).size(), 0u);
  EXPECT_FALSE(cxi_read_truth(info));
  expect_same(cxi_read_frames(info, all_indices(3)), c.frames);
}

TEST_F(Cxi, StorageTypeFollowsTheData) {
  struct Case {
    float value;
    bool integer_frames;
    char const* type;
  };
  for (auto const& k : {Case{7, true, "uint16"}, Case{65535, true, "uint16"}, Case{65536, true, "uint32"},
                        Case{7.5f, true, "float32"}, Case{-1, true, "float32"}, Case{7, false, "float32"}}) {
    auto const path = file("storage.cxi");
    auto c = make_contents(2, 4, true);
    c.frames(1, 2, 3) = k.value;
    c.integer_frames = k.integer_frames;
    c.mask = HostMask();
    cxi_write(path, c);
    auto const info = cxi_inspect(path);
    EXPECT_EQ(info.data_type, k.type) << k.value;
    auto const frames = cxi_read_frames(info, {1}, /*clip_negative=*/true);
    EXPECT_EQ(frames(0, 2, 3), std::max(k.value, 0.f));
  }
  // Fractional intensities survive as float32.
  auto const path = file("float.cxi");
  auto const c = make_contents(3, 8, false);
  cxi_write(path, c);
  auto const info = cxi_inspect(path);
  EXPECT_EQ(info.data_type, "float32");
  auto const frames = cxi_read_frames(info, {2});
  EXPECT_EQ(frames(0, 4, 5), c.frames(2, 4, 5));
}

TEST_F(Cxi, SubsetInRequestedOrder) {
  auto const path = file("subset.cxi");
  auto c = make_contents(12, 8, true);
  c.mask = HostMask();
  cxi_write(path, c);
  auto const info = cxi_inspect(path);
  std::vector<std::size_t> const idx = {9, 2, 3, 4, 2, 11, 0, 10};
  auto const frames = cxi_read_frames(info, idx);
  ASSERT_EQ(frames.extent(0), idx.size());
  for (std::size_t k = 0; k < idx.size(); ++k)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x) ASSERT_EQ(frames(k, y, x), c.frames(idx[k], y, x)) << k;
  EXPECT_EQ(cxi_read_frames(info, {}).extent(0), 0u);
}

TEST_F(Cxi, IntegerDetectorTypes) {
  for (char const* type : {"uint8", "int16", "int32", "uint32", "int64", "float64"}) {
    auto const path = file("types.cxi");
    Builder b;
    auto f = h5::File::create(path);
    h5::write(f, k_detector_data, b.frames.data(), {b.n, b.d, b.d}, {}, type);
    h5::write(f, k_translation, b.translations.data(), {b.n, 3});
    h5::write_scalar(f, k_wavelength, 1e-10);
    h5::write_scalar(f, k_distance, 3.0);
    h5::write_scalar(f, k_pixel_y, 75e-6);
    f.close();
    auto const info = cxi_inspect(path);
    EXPECT_EQ(info.data_type, type);
    EXPECT_EQ(info.data_path, k_detector_data);  // found without the data_1 link
    auto const frames = cxi_read_frames(info, all_indices(b.n));
    for (std::size_t k = 0; k < b.frames.size(); ++k) ASSERT_EQ(frames.data()[k], b.frames[k]) << type;
  }
}

// ------------------------------------------------------------------ layouts

TEST_F(Cxi, TransposedAndTwoColumnTranslations) {
  Builder b;
  // (3, N): row c holds coordinate c of every position.
  auto const t3 = file("t3.cxi");
  std::vector<double> transposed(3 * b.n);
  for (std::size_t n = 0; n < b.n; ++n)
    for (std::size_t c = 0; c < 3; ++c) transposed[c * b.n + n] = b.translations[n * 3 + c];
  auto write_translations = [&](std::string const& path, std::vector<double> const& v,
                                std::vector<std::size_t> const& dims, char const* where,
                                char const* units = nullptr) {
    auto f = h5::File::create(path);
    h5::write(f, k_detector_data, b.frames.data(), {b.n, b.d, b.d});
    h5::soft_link(f, k_detector_data, k_data);
    h5::write(f, where, v.data(), dims);
    if (units) h5::write_attribute(f, where, "units", units);
    h5::write_scalar(f, k_energy, 1.2817e-15);
    h5::write_scalar(f, k_distance, 3.0);
    h5::write_scalar(f, k_pixel_x, 75e-6);
    f.close();
  };
  write_translations(t3, transposed, {3, b.n}, k_translation);
  auto const info3 = cxi_inspect(t3);
  auto const r3 = cxi_read_translations(info3);
  for (std::size_t n = 0; n < b.n; ++n)
    for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(r3[n][c], b.translations[n * 3 + c]);

  // (N, 2): x, y with z = 0, found under /entry_1/data_1/translation only.
  auto const t2 = file("t2.cxi");
  std::vector<double> xy(2 * b.n);
  for (std::size_t n = 0; n < b.n; ++n) {
    xy[2 * n] = 1e-6 * double(n);
    xy[2 * n + 1] = -1e-6 * double(n);
  }
  write_translations(t2, xy, {b.n, 2}, "/entry_1/data_1/translation");
  auto const info2 = cxi_inspect(t2);
  EXPECT_EQ(info2.translation_path, "/entry_1/data_1/translation");
  auto const r2 = cxi_read_translations(info2);
  for (std::size_t n = 0; n < b.n; ++n) {
    EXPECT_EQ(r2[n][0], 1e-6 * double(n));
    EXPECT_EQ(r2[n][1], -1e-6 * double(n));
    EXPECT_EQ(r2[n][2], 0.0);
  }

  // NXcxi_ptycho: the translations with the detector only, in millimetres.
  auto const nx = file("nxcxi.cxi");
  std::vector<double> mm(b.translations);
  for (double& v : mm) v *= 1e3;
  write_translations(nx, mm, {b.n, 3}, "/entry_1/instrument_1/detector_1/translation", "mm");
  auto const info_nx = cxi_inspect(nx);
  EXPECT_EQ(info_nx.translation_path, "/entry_1/instrument_1/detector_1/translation");
  auto const r_nx = cxi_read_translations(info_nx);
  for (std::size_t n = 0; n < b.n; ++n)
    for (std::size_t c = 0; c < 3; ++c) EXPECT_NEAR(r_nx[n][c], b.translations[n * 3 + c], 1e-15);
}

TEST_F(Cxi, WavelengthOnlyEnergyOnlyAndOnePixelSize) {
  Builder b;
  auto const by_energy = file("energy.cxi");
  b.write(by_energy);  // energy, x pixel size only
  auto const ge = cxi_inspect(by_energy).geometry();
  EXPECT_DOUBLE_EQ(ge.wavelength_m, wavelength_from_energy(1.2817e-15));
  EXPECT_EQ(ge.pixel_size_y_m, 75e-6);  // y from x

  auto const by_wavelength = file("wavelength.cxi");
  // Wavelength, distance and the y pixel size only, as (1,) arrays.
  auto f = h5::File::create(by_wavelength);
  h5::write(f, k_detector_data, b.frames.data(), {b.n, b.d, b.d});
  h5::soft_link(f, k_detector_data, k_data);
  h5::write(f, k_translation, b.translations.data(), {b.n, 3});
  double const wl[1] = {2e-10}, px[1] = {55e-6}, dist[1] = {4.0};
  h5::write(f, k_wavelength, wl, {1});
  h5::write(f, k_pixel_y, px, {1});
  h5::write(f, k_distance, dist, {1});
  f.close();
  auto const info = cxi_inspect(by_wavelength);
  EXPECT_FALSE(info.energy_joule);
  auto const gw = info.geometry();
  EXPECT_EQ(gw.wavelength_m, 2e-10);
  EXPECT_EQ(gw.distance_m, 4.0);
  EXPECT_EQ(gw.pixel_size_x_m, 55e-6);
  EXPECT_EQ(gw.pixel_size_y_m, 55e-6);
  EXPECT_EQ(gw.detector_size, int(b.d));
}

// CXI's defaults are SI, and "non default units are defined using the units
// attribute" (CXI 1.6), as NeXus writers (NXcxi_ptycho) do: distance in mm,
// pixels and translations in um, energy in keV or eV. NXcxi_ptycho keeps
// the photon energy in beam_1 (its source_1/energy is the storage ring's).
TEST_F(Cxi, UnitsAttributesAreApplied) {
  Builder b;
  auto const si = file("si.cxi");
  b.write(si);
  CxiInfo const want = cxi_inspect(si);
  auto const want_t = cxi_read_translations(want);

  auto const nexus = file("units.cxi");
  std::vector<double> microns(b.translations);
  for (double& t : microns) t *= 1e6;
  b.write(nexus, {k_translation, k_energy, k_distance, k_pixel_x}, [&](h5::File const& f) {
    h5::write(f, k_translation, microns.data(), {b.n, 3});
    h5::write_attribute(f, k_translation, "units", "um");
    h5::write_scalar(f, k_distance, 3000.0);
    h5::write_attribute(f, k_distance, "units", "mm");
    h5::write_scalar(f, k_pixel_x, 75.0);
    h5::write_attribute(f, k_pixel_x, "units", "um");
    h5::write_scalar(f, "/entry_1/instrument_1/beam_1/energy", 1.2817e-15 / 1.602176634e-19);
    h5::write_attribute(f, "/entry_1/instrument_1/beam_1/energy", "units", "eV");
    h5::write_scalar(f, k_energy, 3.0);  // the machine's
    h5::write_attribute(f, k_energy, "units", "GeV");
  });
  CxiInfo const got = cxi_inspect(nexus);
  EXPECT_NEAR(*got.distance_m, *want.distance_m, 1e-12);
  EXPECT_NEAR(*got.pixel_size_x_m, *want.pixel_size_x_m, 1e-18);
  EXPECT_NEAR(*got.energy_joule, *want.energy_joule, 1e-27);
  EXPECT_EQ(got.energy_path, "/entry_1/instrument_1/beam_1/energy");
  auto const got_t = cxi_read_translations(got);
  ASSERT_EQ(got_t.size(), want_t.size());
  for (std::size_t n = 0; n < got_t.size(); ++n)
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(got_t[n][c], want_t[n][c], 1e-18) << n;

  // A unit ptyko does not know is refused, naming it.
  b.write(nexus, {}, [&](h5::File const& f) { h5::write_attribute(f, k_distance, "units", "furlong"); });
  expect_user_error([&] { cxi_inspect(nexus); }, nexus, {"distance", "\"furlong\"", "mm"});
  // A storage ring's energy alone is no photon energy.
  b.write(nexus, {k_energy}, [&](h5::File const& f) {
    h5::write_scalar(f, k_energy, 3.0);
    h5::write_attribute(f, k_energy, "units", "GeV");
  });
  expect_user_error([&] { cxi_inspect(nexus).geometry(); }, nexus, {"source_1/energy", "far too high"});
}

// A raster scan stored as NeXus does, frames (rows, columns, y, x) and
// translations (rows, columns, 3): read as its rows x columns frames in
// row-major order, also in any order, repeated and through a crop window.
TEST_F(Cxi, RasterScansOfRankFourAreReadRowByRow) {
  Builder b;  // 6 frames of 8 x 8
  auto const flat = file("flat.cxi"), raster = file("raster.cxi");
  b.write(flat);
  b.write(raster, {k_detector_data, k_data, k_translation}, [&](h5::File const& f) {
    h5::write(f, k_detector_data, b.frames.data(), {2, 3, b.d, b.d}, {}, "uint16");
    h5::soft_link(f, k_detector_data, k_data);
    h5::write(f, k_translation, b.translations.data(), {2, 3, 3});
  });
  FrameCrop crop;
  crop.size = 4;
  crop.centre_y = 3;
  crop.centre_x = 5;
  for (FrameCrop const& c : {FrameCrop{}, crop}) {
    CxiInfo const want = cxi_inspect(flat, c), got = cxi_inspect(raster, c);
    EXPECT_EQ(got.frames, b.n);
    EXPECT_EQ(got.ny, want.ny);
    std::vector<std::size_t> const ids{5, 0, 3, 2, 3, 1, 4};  // across the rows' ends, repeated
    expect_same(cxi_read_frames(got, ids), cxi_read_frames(want, ids));
    expect_same(cxi_read_frames(got, all_indices(b.n)), cxi_read_frames(want, all_indices(b.n)));
    EXPECT_EQ(cxi_read_translations(got), cxi_read_translations(want));
  }
}

TEST_F(Cxi, SoftLinkChainsAreFollowed) {
  Builder b;
  auto const path = file("links.cxi");
  auto f = h5::File::create(path);
  h5::write(f, "/raw/frames", b.frames.data(), {b.n, b.d, b.d}, {}, "uint16");
  h5::soft_link(f, "/raw/frames", k_detector_data);
  h5::soft_link(f, k_detector_data, k_data);
  h5::write(f, "/raw/positions", b.translations.data(), {b.n, 3});
  h5::soft_link(f, "/raw/positions", "/entry_1/data_1/translation");
  h5::write_scalar(f, k_energy, 1.2817e-15);
  h5::write_scalar(f, k_distance, 3.0);
  h5::write_scalar(f, k_pixel_x, 75e-6);
  f.close();
  auto const info = cxi_inspect(path);
  EXPECT_EQ(info.data_path, "/raw/frames");
  EXPECT_EQ(info.translation_path, "/raw/positions");
  auto const frames = cxi_read_frames(info, {5, 0});
  EXPECT_EQ(frames(0, 1, 2), b.frames[5 * b.d * b.d + 1 * b.d + 2]);
  EXPECT_EQ(frames(1, 1, 2), b.frames[1 * b.d + 2]);
}

// Beamline files keep the frames elsewhere: an external link to a raw data
// file, or a virtual dataset over several (Eiger's data_00000N files). Both
// read as if stored in place, with relative names resolved from the CXI
// file's folder.
TEST_F(Cxi, FramesThroughExternalLinksAndVirtualDatasets) {
  Builder b;
  std::size_t const half = b.n / 2, plane = b.d * b.d;
  for (int part = 0; part < 2; ++part) {
    auto f = h5::File::create(file("raw_" + std::to_string(part) + ".h5"));
    h5::write(f, "/entry/data/data", b.frames.data() + part * half * plane, {half, b.d, b.d}, {}, "uint16");
    f.close();
  }
  auto write_rest = [&](h5::File const& f, std::size_t frames) {
    h5::soft_link(f, k_detector_data, k_data);
    h5::write(f, k_translation, b.translations.data(), {frames, 3});
    h5::write_scalar(f, k_energy, 1.2817e-15);
    h5::write_scalar(f, k_distance, 3.0);
    h5::write_scalar(f, k_pixel_x, 75e-6);
  };
  {
    auto f = h5::File::create(file("linked.cxi"));
    h5::Handle lcpl(H5Pcreate(H5P_LINK_CREATE));
    H5Pset_create_intermediate_group(lcpl, 1);
    ASSERT_GE(H5Lcreate_external("raw_1.h5", "/entry/data/data", f.id(), k_detector_data, lcpl, H5P_DEFAULT), 0);
    write_rest(f, half);
    f.close();
  }
  {
    auto f = h5::File::create(file("virtual.cxi"));
    hsize_t const all[3] = {b.n, b.d, b.d}, part[3] = {half, b.d, b.d};
    h5::Handle vspace(H5Screate_simple(3, all, nullptr)), pspace(H5Screate_simple(3, part, nullptr));
    h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
    for (hsize_t p = 0; p < 2; ++p) {
      hsize_t const start[3] = {p * half, 0, 0};
      H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, nullptr, part, nullptr);
      std::string const src = "raw_" + std::to_string(p) + ".h5";
      ASSERT_GE(H5Pset_virtual(dcpl, vspace, src.c_str(), "/entry/data/data", pspace), 0);
    }
    H5Sselect_all(vspace);
    h5::Handle lcpl(H5Pcreate(H5P_LINK_CREATE));
    H5Pset_create_intermediate_group(lcpl, 1);
    h5::Handle ds(H5Dcreate2(f.id(), k_detector_data, H5T_STD_U16LE, vspace, lcpl, dcpl, H5P_DEFAULT));
    ASSERT_GE(ds.get(), 0);
    ds.reset();
    write_rest(f, b.n);
    f.close();
  }
  auto const cwd = fs::current_path();
  fs::current_path(fs::temp_directory_path());  // not the files' folder
  auto const linked = cxi_inspect(file("linked.cxi"));
  EXPECT_EQ(linked.frames, half);
  auto const lf = cxi_read_frames(linked, {2, 0});
  EXPECT_EQ(lf(0, 1, 2), b.frames[(half + 2) * plane + 1 * b.d + 2]);
  EXPECT_EQ(lf(1, 3, 4), b.frames[half * plane + 3 * b.d + 4]);
  auto const virt = cxi_inspect(file("virtual.cxi"));
  EXPECT_EQ(virt.frames, b.n);
  auto const vf = cxi_read_frames(virt, {half + 1, 1});  // one frame from each raw file
  EXPECT_EQ(vf(0, 5, 6), b.frames[(half + 1) * plane + 5 * b.d + 6]);
  EXPECT_EQ(vf(1, 5, 6), b.frames[1 * plane + 5 * b.d + 6]);
  fs::current_path(cwd);
}

// A dark frame and a monitor as PyNX stores them: the dark is subtracted
// (at least 0), the frames scaled to the median flux, and frames with less
// than a tenth of it zeroed (no beam: skipped as empty later).
TEST_F(Cxi, DarkFrameAndMonitorAreApplied) {
  Builder b;  // 6 frames of 8 x 8, values k % 17
  std::vector<float> dark(b.d * b.d, 2.f);
  dark[3 * b.d + 4] = 50.f;  // above every value: clipped to 0
  std::vector<double> monitor{100, 200, 100, 5, 100, 50};  // median 100; frame 3 has no beam
  auto const path = file("pynx.cxi");
  b.write(path);
  {
    h5::Handle id(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    ASSERT_GE(id.get(), 0);
    hsize_t const dd[2] = {b.d, b.d}, md[1] = {b.n};
    h5::Handle ds(H5Screate_simple(2, dd, nullptr)), ms(H5Screate_simple(1, md, nullptr));
    h5::Handle d(H5Dcreate2(id, "/entry_1/instrument_1/detector_1/dark", H5T_IEEE_F32LE, ds, H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT));
    ASSERT_GE(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, dark.data()), 0);
    h5::Handle m(H5Dcreate2(id, "/entry_1/data_1/monitor", H5T_IEEE_F64LE, ms, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT));
    ASSERT_GE(H5Dwrite(m, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, monitor.data()), 0);
  }
  CxiInfo const info = cxi_inspect(path);
  EXPECT_TRUE(info.has_dark);
  ASSERT_EQ(info.monitor_scale.size(), b.n);
  EXPECT_EQ(std::count(info.monitor_scale.begin(), info.monitor_scale.end(), 0.0), 1);
  std::vector<std::size_t> all(b.n);
  std::iota(all.begin(), all.end(), 0);
  auto const frames = cxi_read_frames(info, all);
  double const scale[] = {1, 0.5, 1, 0, 1, 2};
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < b.n; ++k)
    for (std::size_t y = 0; y < b.d; ++y)
      for (std::size_t x = 0; x < b.d; ++x) {
        double const raw = b.frames[(k * b.d + y) * b.d + x];
        double const want = std::max(raw - dark[y * b.d + x], 0.0) * scale[k];
        wrong += std::abs(frames(k, y, x) - want) > 1e-6 * (1 + want);
      }
  EXPECT_EQ(wrong, 0u);

  // What cannot be a monitor or a dark frame is refused, naming the way out.
  auto rewrite = [&](char const* dataset, std::vector<double> const& v, std::vector<std::size_t> const& dims) {
    b.write(path);
    h5::Handle id(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    std::vector<hsize_t> hd(dims.begin(), dims.end());
    h5::Handle sp(H5Screate_simple(int(hd.size()), hd.data(), nullptr));
    h5::Handle d(H5Dcreate2(id, dataset, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  };
  rewrite("/entry_1/data_1/monitor", {1, 2, 3}, {3});
  expect_user_error([&] { cxi_inspect(path); }, path, {"monitor", "3 values for 6 frames", "--no-monitor"});
  rewrite("/entry_1/data_1/monitor", {1, 2, -3, 4, 5, 6}, {6});
  expect_user_error([&] { cxi_inspect(path); }, path, {"monitor", "frame 2", "-3", "--no-monitor"});
  rewrite("/entry_1/instrument_1/detector_1/dark", std::vector<double>(16, 1.0), {4, 4});
  expect_user_error([&] { cxi_inspect(path); }, path, {"dark frame", "4x4", "8x8", "--no-dark"});
}

// ------------------------------------------------------------------ detector orientation

// A detector mounted otherwise than CXI's default (rows stepping along -y,
// columns along -x) says so in basis_vectors; its frames are read turned
// into the default orientation. The expected frames come from the
// specification's geometry, not from ptyko's mapping: stored pixel (u, v)
// sits at (u - c) b0 + (v - c) b1 from the beam (c = d / 2), and the same
// lab point sits at default pixel (c - Y / p_y, c - X / p_x).
TEST_F(Cxi, BasisVectorsTurnFramesIntoTheDefaultOrientation) {
  double const py = 75e-6, px = 55e-6;
  struct Case {
    char const* name;
    double b[2][3];     // steps in pixel sizes: x in px, y in py
    bool cdtools;       // stored as (3, 2)
    bool transpose, flip_y, flip_x;
  };
  std::vector<Case> const cases = {
      {"default", {{0, -1, 0}, {-1, 0, 0}}, false, false, false, false},
      {"cdtools' (3, 2) default", {{0, -1, 0}, {-1, 0, 0}}, true, false, false, false},
      {"rows up", {{0, 1, 0}, {-1, 0, 0}}, false, false, true, false},
      {"columns along +x", {{0, -1, 0}, {1, 0, 0}}, false, false, false, true},
      {"transposed", {{-1, 0, 0}, {0, -1, 0}}, false, true, false, false},
      {"transposed, both reversed", {{1, 0, 0}, {0, 1, 0}}, false, true, true, true},
      {"transposed, (3, 2), x reversed", {{1, 0, 0}, {0, -1, 0}}, true, true, false, true},
  };
  for (std::size_t d : {8u, 7u}) {
    int const c = int(d) / 2;
    // A value per lab point (whole pixels from the beam).
    auto lab_value = [](long X, long Y) { return float(1 + 40 * (Y + 20) + (X + 20)); };
    for (auto const& k : cases) {
      SCOPED_TRACE(std::string(k.name) + ", " + std::to_string(d) + " pixels");
      Builder b;
      b.d = d;
      b.n = 2;
      b.frames.assign(b.n * d * d, 0);
      b.translations.assign(b.n * 3, 0.0);
      std::vector<std::uint32_t> bad(d * d, 0);
      auto lab = [&](int u, int v) {  // (X, Y) in pixels of stored pixel (u, v)
        return std::array<long, 2>{std::lround((u - c) * k.b[0][0] + (v - c) * k.b[1][0]),
                                   std::lround((u - c) * k.b[0][1] + (v - c) * k.b[1][1])};
      };
      for (std::size_t f = 0; f < b.n; ++f)
        for (int u = 0; u < int(d); ++u)
          for (int v = 0; v < int(d); ++v) {
            auto const xy = lab(u, v);
            b.frames[(f * d + u) * d + v] = lab_value(xy[0], xy[1]) + float(f);
          }
      int const bad_u = 1, bad_v = int(d) - 2;
      bad[bad_u * d + bad_v] = 1;
      auto const path = file("oriented.cxi");
      b.write(path, {k_pixel_x}, [&](h5::File const& f) {  // pixel sizes from the basis
        std::vector<double> basis;
        if (k.cdtools) {
          for (int comp = 0; comp < 3; ++comp)
            for (int dim = 0; dim < 2; ++dim) basis.push_back(k.b[dim][comp] * (comp == 0 ? px : py));
          h5::write(f, k_basis, basis.data(), {3, 2});
        } else {
          for (int dim = 0; dim < 2; ++dim)
            for (int comp = 0; comp < 3; ++comp) basis.push_back(k.b[dim][comp] * (comp == 0 ? px : py));
          h5::write(f, k_basis, basis.data(), {2, 3});
        }
        h5::write(f, k_mask, bad.data(), {d, d});
      });
      CxiInfo const info = cxi_inspect(path);
      EXPECT_EQ(info.orientation.transpose, k.transpose);
      EXPECT_EQ(info.orientation.flip_y, k.flip_y);
      EXPECT_EQ(info.orientation.flip_x, k.flip_x);
      EXPECT_EQ(info.orientation.rotation_deg, 0.0);
      ASSERT_TRUE(info.pixel_size_x_m && info.pixel_size_y_m);
      EXPECT_DOUBLE_EQ(*info.pixel_size_x_m, px);
      EXPECT_DOUBLE_EQ(*info.pixel_size_y_m, py);

      auto const frames = cxi_read_frames(info, all_indices(b.n));
      auto const mask = cxi_read_mask(info);
      auto const xy = lab(bad_u, bad_v);
      int const bi = c - int(xy[1]), bj = c - int(xy[0]);
      // Every default pixel whose lab point the stored frames hold (all but
      // the Nyquist row / column of an even size when that axis reverses),
      // but the bad one (read as 0).
      std::size_t wrong = 0;
      for (std::size_t f = 0; f < b.n; ++f)
        for (int i = 0; i < int(d); ++i)
          for (int j = 0; j < int(d); ++j) {
            long const X = c - j, Y = c - i;
            if (std::abs(X) > (int(d) - 1) / 2 || std::abs(Y) > (int(d) - 1) / 2 || (i == bi && j == bj)) continue;
            wrong += frames(f, i, j) != lab_value(X, Y) + float(f);
          }
      EXPECT_EQ(wrong, 0u);
      // The bad pixel, and the stored pixel it came from.
      std::size_t measured = 0;
      for (std::size_t p = 0; p < mask.span(); ++p) measured += mask.data()[p];
      EXPECT_EQ(measured, d * d - 1);
      EXPECT_EQ(mask(bi, bj), 0);
      auto const back = info.stored_position(bi, bj);
      EXPECT_DOUBLE_EQ(back[0], bad_u);
      EXPECT_DOUBLE_EQ(back[1], bad_v);
    }
  }
}

TEST_F(Cxi, TurnedAndUnusableBasesAndTheBeamFromTheCorner) {
  Builder b;
  int const c = int(b.d) / 2;
  auto const path = file("basis.cxi");
  auto with = [&](std::vector<double> const& basis, std::vector<std::size_t> const& dims,
                  std::vector<double> const& corner = {}) {
    b.write(path, {}, [&](h5::File const& f) {
      h5::write(f, k_basis, basis.data(), dims);
      if (!corner.empty()) h5::write(f, k_corner, corner.data(), {corner.size()});
    });
  };
  double const p = 75e-6;  // the Builder's pixel size
  // Turned by atan(0.02) = 1.15 degrees about the beam: read along the
  // nearest axes, the angle reported.
  with({0.02 * p, -p, 0, -p, -0.02 * p, 0}, {2, 3});
  CxiInfo info = cxi_inspect(path);
  EXPECT_TRUE(info.orientation.is_default());
  EXPECT_NEAR(info.orientation.rotation_deg, 1.1457, 1e-3);

  // corner_position: the first pixel's outer corner; the beam 3 pixels
  // right of the centre (towards -x, larger column numbers) and on the
  // centre row.
  with({0, -p, 0, -p, 0, 0}, {2, 3}, {(c + 3.5) * p, (c + 0.5) * p, 3.0});
  info = cxi_inspect(path);
  ASSERT_TRUE(info.beam_from_corner.has_value());
  EXPECT_NEAR((*info.beam_from_corner)[0], c, 1e-9);
  EXPECT_NEAR((*info.beam_from_corner)[1], c + 3, 1e-9);

  // ptyko's own files state the default basis and a centred beam.
  auto const own = file("own.cxi");
  cxi_write(own, make_contents(3, 16, true));
  info = cxi_inspect(own);
  EXPECT_TRUE(info.orientation.is_default());
  ASSERT_TRUE(info.beam_from_corner.has_value());
  EXPECT_NEAR((*info.beam_from_corner)[0], 8, 1e-9);
  EXPECT_NEAR((*info.beam_from_corner)[1], 8, 1e-9);

  // What cannot be a basis is refused, naming the dataset.
  with({0, -p, -p, 0}, {2, 2});
  expect_user_error([&] { cxi_inspect(path); }, path, {"basis_vectors", "(2, 3)"});
  with({-p, 0, 0, -p, 0.1 * p, 0}, {2, 3});
  expect_user_error([&] { cxi_inspect(path); }, path, {"basis_vectors", "both frame dimensions step along x"});
  with({0, 0, p, -p, 0, 0}, {2, 3});
  expect_user_error([&] { cxi_inspect(path); }, path, {"basis_vectors", "dimension 0", "face the beam"});
  with({0, -p, 0, -p, 0, 0}, {2, 3}, {1.0, 2.0});
  expect_user_error([&] { cxi_inspect(path); }, path, {"corner_position", "2 values"});
}

// --find-beam: a diffraction pattern centred off the frames' centre, on a
// floor of counts, with a hot pixel brighter than the beam and a masked
// pixel brighter still; the window is centred on the pattern.
TEST_F(Cxi, FindBeamCentresTheWindowOnTheDirectBeam) {
  Builder b;
  std::size_t const ny = 40, nx = 56;
  int const cy = 23, cx = 31;
  b.n = 5;
  b.translations.assign(b.n * 3, 0.0);
  b.frames.assign(b.n * ny * nx, 0.f);
  std::vector<std::uint32_t> bad(ny * nx, 0);
  bad[5 * nx + 5] = 1;
  for (std::size_t f = 0; f < b.n; ++f)
    for (int y = 0; y < int(ny); ++y)
      for (int x = 0; x < int(nx); ++x) {
        // A disc of radius 6 (a pupil's far field) with a weaker ring, and
        // a floor of 3 counts.
        double const r = std::hypot(y - cy, x - cx);
        b.frames[(f * ny + y) * nx + x] = float(3 + (r <= 6 ? 500 : 0) + (r > 9 && r < 11 ? 40 : 0));
      }
  for (std::size_t f = 0; f < b.n; ++f) {
    b.frames[(f * ny + 2) * nx + 50] = 60000.f;  // hot
    b.frames[(f * ny + 5) * nx + 5] = 1e9f;      // masked
  }
  auto const path = file("offcentre.cxi");
  auto write = [&] {
    auto f = h5::File::create(path);
    h5::write(f, k_detector_data, b.frames.data(), {b.n, ny, nx}, {}, "float32");
    h5::write(f, k_translation, b.translations.data(), {b.n, 3});
    h5::write_scalar(f, k_energy, 1.2817e-15);
    h5::write_scalar(f, k_distance, 3.0);
    h5::write_scalar(f, k_pixel_x, 75e-6);
    h5::write(f, k_mask, bad.data(), {ny, nx});
    f.close();
  };
  write();
  FrameCrop crop;
  crop.size = 16;
  crop.find_beam = true;
  CxiInfo info = cxi_inspect(path, crop);
  ASSERT_TRUE(info.beam_found.has_value());
  EXPECT_EQ((*info.beam_found)[0], cy);
  EXPECT_EQ((*info.beam_found)[1], cx);
  EXPECT_EQ(info.window_y, cy - 8);
  EXPECT_EQ(info.window_x, cx - 8);
  // Without a size: the largest square around the beam (rows 23 - 17 to
  // 23 + 16: 34 pixels).
  crop.size = 0;
  info = cxi_inspect(path, crop);
  EXPECT_EQ(info.ny, 34);
  EXPECT_EQ(info.window_y, cy - 17);
  EXPECT_EQ(info.window_x, cx - 17);
  // A given centre and --find-beam contradict each other.
  crop.centre_y = 20;
  expect_user_error([&] { cxi_inspect(path, crop); }, path, {"--find-beam", "--crop-centre-y/-x"});
}

// ------------------------------------------------------------------ broken files

TEST_F(Cxi, MissingNotHdf5AndTruncatedFiles) {
  auto const missing = file("absent.cxi");
  expect_user_error([&] { cxi_inspect(missing); }, missing, {"no such file"});

  auto const text = file("text.cxi");
  std::ofstream(text) << "frame,x,y\n0,1,2\n";
  expect_user_error([&] { cxi_inspect(text); }, text, {"not an HDF5 file"});

  auto const cut = file("cut.cxi");
  cxi_write(cut, make_contents(20, 32, false));
  fs::resize_file(cut, fs::file_size(cut) / 2);
  expect_user_error([&] { cxi_inspect(cut); }, cut, {"truncated"});
}

TEST_F(Cxi, MissingDataOrTranslations) {
  Builder b;
  auto const no_data = file("no_data.cxi");
  b.write(no_data, {k_detector_data, k_data});
  expect_user_error([&] { cxi_inspect(no_data); }, no_data, {"no diffraction data", k_data, k_detector_data});

  auto const dangling = file("dangling.cxi");
  b.write(dangling, {k_detector_data});
  expect_user_error([&] { cxi_inspect(dangling); }, dangling, {k_data, k_detector_data, "does not exist"});

  auto const no_trans = file("no_trans.cxi");
  b.write(no_trans, {k_translation});
  expect_user_error([&] { cxi_inspect(no_trans); }, no_trans, {"no scan positions", k_translation});
}

// Writes a file whose data (or translations) have the given shape.
void write_shaped(std::string const& path, std::vector<std::size_t> const& data_dims,
                  std::vector<std::size_t> const& trans_dims) {
  std::size_t nd = 1, nt = 1;
  for (auto d : data_dims) nd *= d;
  for (auto d : trans_dims) nt *= d;
  std::vector<float> data(nd, 1.f);
  std::vector<double> trans(nt, 0.0);
  auto f = h5::File::create(path);
  h5::write(f, k_detector_data, data.data(), data_dims);
  h5::soft_link(f, k_detector_data, k_data);
  h5::write(f, k_translation, trans.data(), trans_dims);
  h5::write_scalar(f, k_energy, 1.2817e-15);
  h5::write_scalar(f, k_distance, 3.0);
  h5::write_scalar(f, k_pixel_x, 75e-6);
  f.close();
}

TEST_F(Cxi, WrongShapes) {
  auto const rank2 = file("rank2.cxi");
  write_shaped(rank2, {8, 8}, {1, 3});
  expect_user_error([&] { cxi_inspect(rank2); }, rank2, {"/entry_1/data_1/data has rank 2, expected (frames, y, x)"});

  auto const oblong = file("oblong.cxi");
  write_shaped(oblong, {3, 8, 10}, {3, 3});
  CxiInfo const auto_crop = cxi_inspect(oblong);  // the largest square around the centre
  EXPECT_TRUE(auto_crop.auto_crop);
  EXPECT_EQ(auto_crop.ny, 8);
  EXPECT_EQ(auto_crop.nx, 8);
  EXPECT_EQ(auto_crop.window_y, 0);
  EXPECT_EQ(auto_crop.window_x, 1);
  FrameCrop binned;
  binned.bin = 3;  // a multiple of 6 pixels: 6 x 6, binned to 2 x 2
  CxiInfo const b3 = cxi_inspect(oblong, binned);
  EXPECT_EQ(b3.ny, 2);
  EXPECT_EQ(b3.window_y, 1);
  EXPECT_EQ(b3.window_x, 2);
  auto const narrow = file("narrow.cxi");
  write_shaped(narrow, {3, 1, 10}, {3, 3});
  expect_user_error([&] { cxi_inspect(narrow); }, narrow, {"1x10", "too narrow"});

  auto const mismatch = file("mismatch.cxi");
  write_shaped(mismatch, {5, 8, 8}, {4, 3});
  expect_user_error([&] { cxi_inspect(mismatch); }, mismatch, {"5 frames", "4 translations", "must match"});

  auto const mismatch_t = file("mismatch_t.cxi");
  write_shaped(mismatch_t, {5, 8, 8}, {3, 7});
  expect_user_error([&] { cxi_inspect(mismatch_t); }, mismatch_t, {"5 frames", "7 translations"});

  auto const bad_trans = file("bad_trans.cxi");
  write_shaped(bad_trans, {5, 8, 8}, {5, 4});
  expect_user_error([&] { cxi_inspect(bad_trans); }, bad_trans, {k_translation, "(5, 4)", "(N, 3)"});
}

// Frame f's stored pixel (y, x) in the files of write_labelled_frames.
float labelled(std::size_t f, std::size_t y, std::size_t x) { return float(1000 * f + 20 * y + x); }

// n frames of ny x nx labelled pixels (uint16), zero translations, and a
// mask marking the stored pixels `bad` (y, x) bad.
void write_labelled_frames(std::string const& path, std::size_t n, std::size_t ny, std::size_t nx,
                           std::vector<std::array<std::size_t, 2>> const& bad) {
  std::vector<float> frames(n * ny * nx);
  for (std::size_t f = 0; f < n; ++f)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x) frames[(f * ny + y) * nx + x] = labelled(f, y, x);
  std::vector<std::uint8_t> mask(ny * nx, 0);
  for (auto const& p : bad) mask[p[0] * nx + p[1]] = 1;
  std::vector<double> trans(n * 3, 0.0);
  auto f = h5::File::create(path);
  h5::write(f, k_detector_data, frames.data(), {n, ny, nx}, {}, "uint16");
  h5::soft_link(f, k_detector_data, k_data);
  h5::write(f, k_translation, trans.data(), {n, 3});
  h5::write_scalar(f, k_energy, 1.2817e-15);
  h5::write_scalar(f, k_distance, 3.0);
  h5::write_scalar(f, k_pixel_x, 75e-6);
  h5::write(f, k_mask, mask.data(), {ny, nx});
  f.close();
}

// Oblong frames (3 of 10 x 14, every value naming its frame, row and
// column) read through a 6 x 6 crop around the beam at (4, 9): rows 1-6,
// columns 6-11, frames and mask alike, and the geometry of 6-pixel frames.
// Without a centre the window sits around the frames' centre (5, 7). A
// crop larger than the frames or leaving them is refused.
TEST_F(Cxi, CropReadsTheWindowAroundTheBeam) {
  std::size_t const n = 3, ny = 10, nx = 14;
  auto const path = file("oblong.cxi");
  write_labelled_frames(path, n, ny, nx, {{2, 7}, {0, 0}});  // bad: inside the window at (1, 1), and outside
  FrameCrop crop;
  crop.size = 6;
  crop.centre_y = 4;
  crop.centre_x = 9;
  CxiInfo const info = cxi_inspect(path, crop);
  EXPECT_TRUE(info.resampled());
  EXPECT_TRUE(info.windowed());
  EXPECT_EQ(info.ny, 6);
  EXPECT_EQ(info.nx, 6);
  EXPECT_EQ(info.stored_ny, 10);
  EXPECT_EQ(info.stored_nx, 14);
  EXPECT_EQ(info.geometry().detector_size, 6);
  HostFrames const read = cxi_read_frames(info, {2, 0});
  HostMask const m = cxi_read_mask(info);
  ASSERT_EQ(read.extent(1), 6u);
  ASSERT_EQ(read.extent(2), 6u);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 6; ++x) {
      bool const bad = y == 1 && x == 1;
      EXPECT_EQ(m(y, x), bad ? 0 : 1) << y << ", " << x;
      EXPECT_EQ(read(0, y, x), bad ? 0.f : labelled(2, y + 1, x + 6)) << y << ", " << x;
      EXPECT_EQ(read(1, y, x), bad ? 0.f : labelled(0, y + 1, x + 6)) << y << ", " << x;
    }

  FrameCrop centred;
  centred.size = 4;
  CxiInfo const c = cxi_inspect(path, centred);
  EXPECT_EQ(c.window_y, 3);  // centre (5, 7) at window pixel (2, 2)
  EXPECT_EQ(c.window_x, 5);
  EXPECT_EQ(cxi_read_frames(c, {1})(0, 2, 2), float(1000 + 20 * 5 + 7));

  FrameCrop large;
  large.size = 12;
  expect_user_error([&] { cxi_inspect(path, large); }, path, {"--crop 12", "10x14", "at most 10"});
  FrameCrop outside = crop;
  outside.centre_y = 1;
  expect_user_error([&] { cxi_inspect(path, outside); }, path, {"(y, x) = (1, 9)", "leaves", "rows -2 to 3"});
}

// Binning: 8 x 12 frames (values naming frame, row and column), the 6 x 6
// window around (4, 6) (rows 1-6, columns 3-8) binned 2 x 2 into 3 x 3
// frames of 2x larger pixels. A bad stored pixel, (3, 6), makes its binned
// pixel bad and zero. A bin that does not divide the window is refused.
TEST_F(Cxi, BinSumsBlocksAndMarksBinsWithABadPixelBad) {
  std::size_t const n = 2, ny = 8, nx = 12;
  auto const path = file("fine.cxi");
  write_labelled_frames(path, n, ny, nx, {{3, 6}});
  FrameCrop crop;
  crop.size = 6;
  crop.centre_y = 4;
  crop.centre_x = 6;
  crop.bin = 2;
  CxiInfo const info = cxi_inspect(path, crop);
  EXPECT_EQ(info.ny, 3);
  EXPECT_EQ(info.nx, 3);
  EXPECT_EQ(info.bin, 2);
  Geometry const g = info.geometry();
  EXPECT_EQ(g.detector_size, 3);
  EXPECT_EQ(g.pixel_size_x_m, 150e-6);
  EXPECT_DOUBLE_EQ(g.object_pixel_size_x(), cxi_inspect(path, FrameCrop{6, 4, 6, 1}).geometry().object_pixel_size_x());
  HostFrames const read = cxi_read_frames(info, {1, 0});
  HostMask const m = cxi_read_mask(info);
  for (std::size_t f = 0; f < n; ++f)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 3; ++x) {
        bool const bad = y == 1 && x == 1;  // stored rows 3-4, columns 5-6
        float sum = 0;
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j) sum += labelled(1 - f, 1 + 2 * y + i, 3 + 2 * x + j);
        EXPECT_EQ(m(y, x), bad ? 0 : 1) << y << ", " << x;
        EXPECT_EQ(read(f, y, x), bad ? 0.f : sum) << f << ": " << y << ", " << x;
      }
  FrameCrop odd = crop;
  odd.bin = 4;
  expect_user_error([&] { cxi_inspect(path, odd); }, path, {"--bin 4", "6-pixel crop", "multiple of 4"});
}

// A scan read in chunks through one FrameReadBuffer (as load_frames reads
// a rank's frames): each chunk equals the same frames read on their own,
// whether the buffer has more room than the chunk or must grow, with and
// without binning; and the chunk returned lies in the buffer's memory.
TEST_F(Cxi, ChunksReadIntoOneBufferEqualFramesReadAlone) {
  std::size_t const n = 7, ny = 8, nx = 12;
  auto const path = file("chunks.cxi");
  write_labelled_frames(path, n, ny, nx, {{3, 6}});
  for (int bin : {1, 2}) {
    CxiInfo const info = cxi_inspect(path, FrameCrop{8, 4, 6, bin});
    FrameReadBuffer buffer;
    std::vector<std::vector<std::size_t>> const chunks = {{0, 1, 2}, {6}, {3, 4, 5, 6, 0}, {2, 1}};
    for (auto const& chunk : chunks) {
      HostFrames const alone = cxi_read_frames(info, chunk);
      HostFrames const reused = cxi_read_frames(info, chunk, /*clip_negative=*/false, buffer);
      HostFrames const& room = bin == 1 ? buffer.stored : buffer.binned;
      EXPECT_EQ(reused.data(), room.data()) << "bin " << bin;
      EXPECT_GE(room.span(), reused.span());
      ASSERT_EQ(reused.extent(0), chunk.size());
      ASSERT_EQ(reused.extent(1), alone.extent(1));
      ASSERT_EQ(reused.extent(2), alone.extent(2));
      for (std::size_t k = 0; k < alone.span(); ++k)
        ASSERT_EQ(reused.data()[k], alone.data()[k]) << "bin " << bin << ", value " << k;
    }
    EXPECT_EQ((bin == 1 ? buffer.stored : buffer.binned).extent(0), 5u) << "grew to the largest chunk only";
  }
}

// A rank's frames as load_local_data holds them: each the file's frame of
// its id, un-shifted (zero frequency at [0][0]), through several 512-frame
// chunks whose shifts run on threads in blocks of 16; kept as counts while
// every value is one, else widened to float32 where the first non-count
// chunk comes.
TEST_F(Cxi, LoadedFramesAreTheFilesUnshiftedThroughEveryChunk) {
  std::size_t const n = 1100;
  int const d = 8;
  auto c = make_contents(n, d, /*counts=*/false);
  for (std::size_t f = 0; f < n; ++f)  // counts up to frame 700: the second chunk widens the stack
    for (int k = 0; k < d * d; ++k)
      if (f < 700) c.frames.data()[f * d * d + k] = std::floor(c.frames.data()[f * d * d + k]);
  Kokkos::deep_copy(c.mask, std::uint8_t(1));  // masked pixels would be zeroed
  auto const path = file("stack.cxi");
  cxi_write(path, c);
  ScanLayout const layout = read_scan_layout(path, LoadOptions{});
  using Exec = Kokkos::DefaultExecutionSpace;
  std::vector<std::size_t> ascending(n), backwards(n - 7);
  std::iota(ascending.begin(), ascending.end(), std::size_t(0));
  for (std::size_t k = 0; k < backwards.size(); ++k) backwards[k] = n - 1 - k;
  struct Case {
    char const* name;
    std::vector<std::size_t> ids;
    bool counts;
  };
  std::vector<std::size_t> const first(ascending.begin(), ascending.begin() + 601);  // counts, 2 chunks
  for (Case const& one : {Case{"every frame", ascending, false}, Case{"backwards", backwards, false},
                          Case{"the counts", first, true}}) {
    SCOPED_TRACE(one.name);
    // References, not structured bindings: the lambda below captures them.
    std::vector<std::size_t> const& ids = one.ids;
    bool const counts = one.counts;
    auto const data = load_local_data<float, Exec>(Exec(), layout, ids, 0, 0, layout.grid.height,
                                                   layout.grid.width, LoadOptions{});
    EXPECT_EQ(data.frames.is_counts(), counts);
    ASSERT_EQ(data.frames.extent(0), ids.size());
    data.frames.visit([&](auto const& stack) {
      auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stack);  // device -> host: the stack
      std::vector<float> expected(std::size_t(d) * d);
      for (std::size_t f = 0; f < ids.size(); ++f) {
        ifftshift2(&c.frames(ids[f], 0, 0), expected.data(), d, d);
        for (int k = 0; k < d * d; ++k)
          ASSERT_EQ(float(h.data()[f * d * d + std::size_t(k)]), expected[std::size_t(k)])
              << "frame " << f << " (id " << ids[f] << "), pixel " << k;
      }
    });
  }
}

TEST_F(Cxi, NonFiniteAndNegativeIntensities) {
  auto c = make_contents(6, 8, false);
  c.frames(3, 2, 5) = std::numeric_limits<float>::quiet_NaN();
  auto const nan = file("nan.cxi");
  cxi_write(nan, c);
  auto const info = cxi_inspect(nan);
  expect_user_error([&] { cxi_read_frames(info, {0, 1, 3}); }, nan, {"frame 3", "NaN", "(2, 5)"});
  EXPECT_NO_THROW(cxi_read_frames(info, {0, 1, 2, 4, 5}));  // only the frames read are checked

  c.frames(3, 2, 5) = std::numeric_limits<float>::infinity();
  auto const inf = file("inf.cxi");
  cxi_write(inf, c);
  expect_user_error([&] { cxi_read_frames(cxi_inspect(inf), {3}); }, inf, {"frame 3", "infinite"});

  c.frames(3, 2, 5) = 1;
  c.frames(4, 1, 1) = -2.5f;
  auto const neg = file("neg.cxi");
  cxi_write(neg, c);
  auto const ninfo = cxi_inspect(neg);
  expect_user_error([&] { cxi_read_frames(ninfo, {4}); }, neg, {"frame 4", "negative", "--clip-negative"});
  auto const clipped = cxi_read_frames(ninfo, {4, 3}, /*clip_negative=*/true);
  EXPECT_EQ(clipped(0, 1, 1), 0.f);
  EXPECT_EQ(clipped(0, 1, 2), c.frames(4, 1, 2));
  EXPECT_EQ(clipped(1, 2, 5), 1.f);
}

// Bad pixels (mask nonzero) commonly hold NaN or -1: they read as 0.
TEST_F(Cxi, MaskedBadPixelsAreZeroedNotChecked) {
  auto c = make_contents(2, 8, false);
  c.mask(2, 5) = 0;
  c.mask(3, 3) = 0;
  c.frames(1, 2, 5) = std::numeric_limits<float>::quiet_NaN();
  c.frames(0, 3, 3) = -1;
  auto const path = file("masked.cxi");
  cxi_write(path, c);
  auto const frames = cxi_read_frames(cxi_inspect(path), {0, 1});
  EXPECT_EQ(frames(1, 2, 5), 0.f);
  EXPECT_EQ(frames(0, 3, 3), 0.f);
  EXPECT_EQ(frames(0, 4, 4), c.frames(0, 4, 4));
}

// A detector mask kept in another file (--mask), as beamlines keep them:
// added to the file's own mask, at the default places (CXI, an Eiger master
// file's pixel_mask) or a named dataset, inverted on request, through a crop
// window; its bad pixels are zeroed and not checked like the file's.
TEST_F(Cxi, MaskFromAnotherFile) {
  auto c = make_contents(2, 8, false);  // the file's own mask: (0, 1) and (7, 6) bad
  c.frames(1, 2, 5) = std::numeric_limits<float>::quiet_NaN();
  auto const path = file("scan.cxi");
  cxi_write(path, c);
  std::vector<std::uint32_t> gaps(64, 0);  // Eiger's pixel_mask: nonzero = bad, uint32
  gaps[2 * 8 + 5] = 1;
  gaps[4 * 8 + 0] = 8;
  {
    auto f = h5::File::create(file("eiger_master.h5"));
    h5::write(f, "/entry/instrument/detector/detectorSpecific/pixel_mask", gaps.data(), {8, 8});
    std::vector<std::uint8_t> good(64, 1);  // a mask with 1 = measured
    good[6 * 8 + 6] = 0;
    h5::write(f, "/masks/good_pixels", good.data(), {8, 8});
    h5::write(f, "/masks/small", good.data(), {4, 16});
    f.close();
  }
  auto bad_pixels = [](HostMask const& m) {
    std::vector<std::array<int, 2>> bad;
    for (int y = 0; y < int(m.extent(0)); ++y)
      for (int x = 0; x < int(m.extent(1)); ++x)
        if (!m(y, x)) bad.push_back({y, x});
    return bad;
  };
  using Bad = std::vector<std::array<int, 2>>;

  CxiInfo info = cxi_inspect(path);
  cxi_add_mask_file(info, {file("eiger_master.h5"), false});
  EXPECT_EQ(info.mask_dataset, "/entry/instrument/detector/detectorSpecific/pixel_mask");
  EXPECT_EQ(bad_pixels(cxi_read_mask(info)), (Bad{{0, 1}, {2, 5}, {4, 0}, {7, 6}}));
  auto const frames = cxi_read_frames(info, {0, 1});  // the NaN at (2, 5) is masked: no error
  EXPECT_EQ(frames(1, 2, 5), 0.f);
  EXPECT_EQ(frames(0, 4, 0), 0.f);
  EXPECT_EQ(frames(0, 4, 1), c.frames(0, 4, 1));

  CxiInfo inverted = cxi_inspect(path);
  cxi_add_mask_file(inverted, {file("eiger_master.h5") + ":masks/good_pixels", true});
  EXPECT_EQ(bad_pixels(cxi_read_mask(inverted)), (Bad{{0, 1}, {6, 6}, {7, 6}}));

  FrameCrop crop;  // rows and columns 2-5
  crop.size = 4;
  CxiInfo windowed = cxi_inspect(path, crop);
  cxi_add_mask_file(windowed, {file("eiger_master.h5"), false});
  EXPECT_EQ(bad_pixels(cxi_read_mask(windowed)), (Bad{{0, 3}}));

  CxiInfo any = cxi_inspect(path);
  expect_user_error([&] { cxi_add_mask_file(any, {file("none.h5"), false}); }, {"--mask", "none.h5", "no such file"});
  expect_user_error([&] { cxi_add_mask_file(any, {file("eiger_master.h5") + ":/masks/other", false}); },
                    {"--mask", "has no dataset /masks/other"});
  expect_user_error([&] { cxi_add_mask_file(any, {file("eiger_master.h5") + ":/masks/small", false}); },
                    {"--mask", "/masks/small", "4x16", "8x8"});
  {
    auto f = h5::File::create(file("plain.h5"));
    h5::write(f, "/something", gaps.data(), {8, 8});
    f.close();
  }
  expect_user_error([&] { cxi_add_mask_file(any, {file("plain.h5"), false}); },
                    {"--mask", "plain.h5", "no mask at", "pixel_mask", "plain.h5:/path/to/mask"});
}

TEST_F(Cxi, FrameIndexOutOfRange) {
  auto const path = file("range.cxi");
  cxi_write(path, make_contents(4, 8, true));
  auto const info = cxi_inspect(path);
  expect_user_error([&] { cxi_read_frames(info, {0, 4}); }, path, {"frame index 4", "out of range", "4 frames"});
}

TEST_F(Cxi, MissingOrInvalidGeometry) {
  Builder b;
  auto const no_energy = file("no_energy.cxi");
  b.write(no_energy, {k_energy});
  auto const info = cxi_inspect(no_energy);  // inspect reports, geometry() refuses
  expect_user_error([&] { info.geometry(); }, no_energy, {"neither", k_energy, k_wavelength, "add one"});

  auto const no_distance = file("no_distance.cxi");
  b.write(no_distance, {k_distance});
  expect_user_error([&] { cxi_inspect(no_distance).geometry(); }, no_distance, {k_distance, "missing"});

  auto const no_pixel = file("no_pixel.cxi");
  b.write(no_pixel, {k_pixel_x});
  expect_user_error([&] { cxi_inspect(no_pixel).geometry(); }, no_pixel, {k_pixel_x, k_pixel_y});

  auto write_with = [&](std::string const& path, char const* entry, double value) {
    auto f = h5::File::create(path);
    h5::write(f, k_detector_data, b.frames.data(), {b.n, b.d, b.d});
    h5::write(f, k_translation, b.translations.data(), {b.n, 3});
    h5::write_scalar(f, k_energy, 1.2817e-15);
    h5::write_scalar(f, k_distance, 3.0);
    h5::write_scalar(f, k_pixel_x, 75e-6);
    h5::write_scalar(f, entry, value);
    f.close();
  };
  auto const zero_distance = file("zero_distance.cxi");
  write_with(zero_distance, k_distance, 0.0);
  expect_user_error([&] { cxi_inspect(zero_distance).geometry(); }, zero_distance, {k_distance, "positive"});

  auto const ev = file("ev.cxi");
  write_with(ev, k_energy, 8000.0);  // eV stored where joules belong
  expect_user_error([&] { cxi_inspect(ev).geometry(); }, ev, {k_energy, "joules"});

  auto const negative_pixel = file("negative_pixel.cxi");
  write_with(negative_pixel, k_pixel_x, -75e-6);
  expect_user_error([&] { cxi_inspect(negative_pixel).geometry(); }, negative_pixel, {"pixel size", "positive"});

  auto const nan_energy = file("nan_energy.cxi");
  write_with(nan_energy, k_energy, std::nan(""));
  expect_user_error([&] { cxi_inspect(nan_energy); }, nan_energy, {k_energy, "finite"});

  auto const per_frame = file("per_frame.cxi");
  {
    // A distance per frame, all equal, is accepted as one value.
    std::vector<double> d(b.n, 3.0);
    auto f = h5::File::create(per_frame);
    h5::write(f, k_detector_data, b.frames.data(), {b.n, b.d, b.d});
    h5::write(f, k_translation, b.translations.data(), {b.n, 3});
    h5::write_scalar(f, k_energy, 1.2817e-15);
    h5::write(f, k_distance, d.data(), {b.n});
    h5::write_scalar(f, k_pixel_x, 75e-6);
    f.close();
  }
  EXPECT_EQ(cxi_inspect(per_frame).geometry().distance_m, 3.0);
}

// A minimal CXI file of three ny x nx frames at one place: data (linked
// from data_1), translations, 8 keV, 3 m, 75 um pixels.
void write_three_frames(h5::File const& f, float const* frames, int ny, int nx) {
  h5::write(f, k_detector_data, frames, {3, std::size_t(ny), std::size_t(nx)});
  h5::soft_link(f, k_detector_data, k_data);
  std::vector<double> t(9, 0.0);
  h5::write(f, k_translation, t.data(), {3, 3});
  h5::write_scalar(f, k_energy, 1.2817e-15);
  h5::write_scalar(f, k_distance, 3.0);
  h5::write_scalar(f, k_pixel_x, 75e-6);
}

TEST_F(Cxi, MaskAndProbeGuessOfWrongShape) {
  auto c = make_contents(3, 16, true);
  c.truth.reset();
  // cxi_write refuses inconsistent contents before creating anything.
  auto bad = c;
  bad.mask = HostMask("small mask", 8, 8);
  auto const refused = file("refused.cxi");
  expect_user_error([&] { cxi_write(refused, bad); }, refused, {"mask", "8x8", "16x16"});
  bad = c;
  bad.illumination = HostComplex3("small probe", 1, 8, 8);
  expect_user_error([&] { cxi_write(refused, bad); }, refused, {"probe guess is 8x8 but frames are 16x16"});
  EXPECT_FALSE(fs::exists(refused));

  // Files with a mask or probe guess of the wrong size.
  std::vector<std::uint8_t> small_mask(8 * 8, 0);
  std::vector<Complex<float>> small_probe(8 * 8, Complex<float>(1, 0));
  auto const mask_file = file("mask.cxi");
  auto const probe_file = file("probe.cxi");
  auto rebuild = [&](std::string const& path, auto add) {
    auto f = h5::File::create(path);
    write_three_frames(f, c.frames.data(), 16, 16);
    add(f);
    f.close();
  };
  rebuild(mask_file, [&](h5::File const& f) { h5::write(f, k_mask, small_mask.data(), {8, 8}); });
  expect_user_error([&] { cxi_inspect(mask_file); }, mask_file, {"mask", k_mask, "8x8 but frames are 16x16"});

  rebuild(probe_file, [&](h5::File const& f) { h5::write(f, k_illumination, small_probe.data(), {8, 8}); });
  auto const info = cxi_inspect(probe_file);  // the probe guess is optional input
  EXPECT_EQ(info.illumination_modes, 1);
  expect_user_error([&] { cxi_read_illumination(info); }, probe_file, {"probe guess is 8x8 but frames are 16x16"});

  // A real-valued (16, 16) probe guess is one mode with zero phase.
  std::vector<float> real_probe(16 * 16, 2.f);
  rebuild(probe_file, [&](h5::File const& f) { h5::write(f, k_illumination, real_probe.data(), {16, 16}); });
  auto const probe = cxi_read_illumination(cxi_inspect(probe_file));
  ASSERT_EQ(probe.extent(0), 1u);
  EXPECT_EQ(probe(0, 3, 4), Complex<double>(2, 0));
}

// A probe guess sampled for the stored frames is resampled onto the frames
// as read (tstProbeResample checks the resampling itself): --crop to half
// the frames doubles the object pixel over the same field; --bin 2 keeps the
// pixel over half the field, the centred window; oblong stored frames read
// through their square window change the pixel along the long axis only.
// Each says what it did. --probe resamples a ptyko result's probe (its
// object_pixel_size_m) and a CXI file's illumination (its geometry) onto
// this run's object pixel; a dataset whose pixel is unknown must fit.
TEST_F(Cxi, ProbeGuessIsResampledOntoTheFramesAsRead) {
  auto const path = file("guess.cxi");
  auto write = [&](std::string const& to, int ny, int nx) {
    std::vector<float> frames(std::size_t(3) * ny * nx, 1.f);
    std::vector<Complex<float>> guess(std::size_t(2) * ny * nx);
    for (int m = 0; m < 2; ++m)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x) {
          double const r2 = std::pow(y - ny / 2, 2) + std::pow(x - nx / 2, 2);
          guess[(std::size_t(m) * ny + y) * nx + x] =
              Complex<float>(float(std::exp(-r2 / (18.0 + 6 * m))), float(0.01 * (x - y) * (m + 1)));
        }
    auto f = h5::File::create(to);
    write_three_frames(f, frames.data(), ny, nx);
    h5::write(f, k_illumination, guess.data(), {2, std::size_t(ny), std::size_t(nx)});
    f.close();
  };
  write(path, 32, 32);
  HostComplex3 const stored = cxi_read_illumination(cxi_inspect(path));
  ASSERT_EQ(stored.extent(1), 32u);

  FrameCrop crop;
  crop.size = 16;
  std::string note;
  HostComplex3 const cropped = cxi_read_illumination(cxi_inspect(path, crop), &note);
  HostComplex3 const expected = resample_probe(stored, {0.5, 0.5}, 16, 16, {1.0, 1.0}, path).probe;
  ASSERT_EQ(cropped.extent(0), 2u);
  ASSERT_EQ(cropped.extent(1), 16u);
  for (std::size_t k = 0; k < expected.span(); ++k) ASSERT_EQ(cropped.data()[k], expected.data()[k]) << k;
  for (char const* part : {"resampled", "32 x 32", "16 x 16", "--crop/--bin", "0.5 x 0.5"})
    EXPECT_NE(note.find(part), std::string::npos) << part << " not in: " << note;

  FrameCrop bin;
  bin.bin = 2;
  HostComplex3 const binned = cxi_read_illumination(cxi_inspect(path, bin));
  ASSERT_EQ(binned.extent(1), 16u);
  for (int m = 0; m < 2; ++m)
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x) ASSERT_EQ(binned(m, y, x), stored(m, y + 8, x + 8)) << m << y << x;

  auto const oblong = file("oblong_guess.cxi");
  write(oblong, 24, 32);
  note.clear();
  HostComplex3 const square = cxi_read_illumination(cxi_inspect(oblong), &note);
  HostComplex3 const whole = [&] {
    auto f = h5::File::open_read(oblong);
    auto const v = h5::read<Complex<double>>(f, k_illumination);
    HostComplex3 p("whole", 2, 24, 32);
    std::copy(v.begin(), v.end(), p.data());
    return p;
  }();
  HostComplex3 const along_x = resample_probe(whole, {1.0, 0.75}, 24, 24, {1.0, 1.0}, oblong).probe;
  ASSERT_EQ(square.extent(2), 24u);
  for (std::size_t k = 0; k < along_x.span(); ++k) ASSERT_EQ(square.data()[k], along_x.data()[k]) << k;
  EXPECT_NE(note.find("24 x 32"), std::string::npos) << note;

  // --probe: a ptyko result's probe of 4e-8 m pixels onto this run's 8e-8 m,
  // and the same sampling as it is.
  CxiInfo const run = cxi_inspect(path, crop);
  auto const result = file("result.h5");
  {
    auto f = h5::File::create(result);
    h5::write(f, "/reconstruction/probe", stored.data(), {2, 32, 32});
    double const px[2] = {4e-8, 4e-8};
    h5::write(f, "/reconstruction/object_pixel_size_m", px, {2});
    h5::write(f, "/other", stored.data(), {2, 32, 32});
  }
  note.clear();
  HostComplex3 const from_result = read_probe_guess(result, run, {8e-8, 8e-8}, &note);
  for (std::size_t k = 0; k < expected.span(); ++k) ASSERT_EQ(from_result.data()[k], expected.data()[k]) << k;
  for (char const* part : {"--probe", "32 x 32", "4e-08", "16 x 16", "8e-08"})
    EXPECT_NE(note.find(part), std::string::npos) << part << " not in: " << note;
  note.clear();
  HostComplex3 const as_is = read_probe_guess(result, cxi_inspect(path), {4e-8, 4e-8}, &note);
  EXPECT_TRUE(note.empty()) << note;
  for (std::size_t k = 0; k < stored.span(); ++k) ASSERT_EQ(as_is.data()[k], stored.data()[k]) << k;
  expect_user_error([&] { read_probe_guess(result + ":/other", run, {8e-8, 8e-8}); }, result,
                    {"--probe /other", "32x32", "16x16", "pixel size is unknown"});

  // A CXI file's illumination: its object pixel is lambda z / (32 p), 194
  // nm (8 keV, 3 m, 75 um); onto a run with pixels twice that.
  Geometry const g = cxi_inspect(path).geometry();
  double const own = g.wavelength_m * g.distance_m / (32 * 75e-6);
  HostComplex3 const from_cxi = read_probe_guess(path, run, {2 * own, 2 * own});
  for (std::size_t k = 0; k < expected.span(); ++k)
    ASSERT_NEAR(Kokkos::abs(from_cxi.data()[k] - expected.data()[k]), 0.0, 1e-12) << k;
}

TEST_F(Cxi, ComplexDataRefused) {
  auto const path = file("complex.cxi");
  std::vector<Complex<float>> data(2 * 4 * 4);
  std::vector<double> t(6, 0.0);
  auto f = h5::File::create(path);
  h5::write(f, k_detector_data, data.data(), {2, 4, 4});
  h5::write(f, k_translation, t.data(), {2, 3});
  f.close();
  expect_user_error([&] { cxi_inspect(path); }, path, {"complex64", "intensities"});
}

// A huge declared dataset is refused before any allocation.
TEST_F(Cxi, ReadLargerThanMemoryRefused) {
  auto const path = file("huge.cxi");
  std::size_t const n = std::size_t(1) << 20;
  {
    auto f = h5::File::create(path);
    hsize_t dims[3] = {n, 4096, 4096}, chunk[3] = {1, 4096, 4096};
    h5::Handle s(H5Screate_simple(3, dims, nullptr));
    h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(dcpl, 3, chunk);
    h5::Handle lcpl(H5Pcreate(H5P_LINK_CREATE));
    H5Pset_create_intermediate_group(lcpl, 1);
    h5::Handle ds(H5Dcreate2(f.id(), k_detector_data, H5T_STD_U16LE, s, lcpl, dcpl, H5P_DEFAULT));
    ASSERT_TRUE(ds.valid());
    ds.reset();
    // Translations of the right count, never read here.
    hsize_t tdims[2] = {n, 3};
    h5::Handle ts(H5Screate_simple(2, tdims, nullptr));
    h5::Handle tds(H5Dcreate2(f.id(), k_translation, H5T_IEEE_F64LE, ts, lcpl, H5P_DEFAULT, H5P_DEFAULT));
    ASSERT_TRUE(tds.valid());
    tds.reset();
    f.close();
  }
  auto const info = cxi_inspect(path);
  EXPECT_EQ(info.frames, n);
  expect_user_error([&] { cxi_read_frames(info, all_indices(n)); }, path, {"GiB", "memory", "fewer frames"});
}

TEST_F(Cxi, WriteIntoMissingFolder) {
  auto const path = file("no/folder/out.cxi");
  expect_user_error([&] { cxi_write(path, make_contents(2, 4, true)); }, path, {"does not exist"});
}

}  // namespace
