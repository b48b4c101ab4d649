// CXI files: write -> inspect -> read round trips, and files as other
// programs write them (layouts, units, links, dark frames and monitors).
// Detector orientation: tstCxiOrientation; crops, bins and chunked reads:
// tstCxiFrames; broken files: tstCxiErrors.
#include "cxi_test_files.hpp"

namespace {

using namespace ptyko;
namespace fs = std::filesystem;
using namespace ptyko::test;  // CXI paths, TempDirTest, expect_user_error, the helpers of cxi_test_files.hpp

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
    auto const frames = cxi_read_frames(info, {1});
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

}  // namespace
