// Broken CXI files and inputs: one clear UserError per kind (missing or
// truncated files, missing datasets, wrong shapes, bad values, masks and
// probe guesses that do not fit, refused data), naming the file and the fix.
#include "cxi_test_files.hpp"

namespace {

using namespace ptyko;
namespace fs = std::filesystem;
using namespace ptyko::test;  // CXI paths, TempDirTest, expect_user_error, the helpers of cxi_test_files.hpp

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


TEST_F(Cxi, NonFiniteAndNegativeIntensities) {
  auto c = make_contents(6, 8, false);
  c.frames(3, 2, 5) = std::numeric_limits<float>::quiet_NaN();
  auto const nan = file("nan.cxi");
  cxi_write(nan, c);
  // Non-finite values at measured pixels are read as they are: loading
  // masks their pixels (tstReconstructRun, MasksPixelsThatHoldNaN).
  auto const info = cxi_inspect(nan);
  auto const read = cxi_read_frames(info, {0, 1, 3});
  EXPECT_TRUE(std::isnan(read(2, 2, 5)));
  EXPECT_EQ(read(2, 2, 4), c.frames(3, 2, 4));

  c.frames(3, 2, 5) = std::numeric_limits<float>::infinity();
  auto const inf = file("inf.cxi");
  cxi_write(inf, c);
  EXPECT_TRUE(std::isinf(cxi_read_frames(cxi_inspect(inf), {3})(0, 2, 5)));

  // Negative values (a subtracted background's noise) are read as 0 and
  // counted, the most negative kept.
  c.frames(3, 2, 5) = 1;
  c.frames(4, 1, 1) = -2.5f;
  c.frames(3, 0, 7) = -0.25f;
  auto const neg = file("neg.cxi");
  cxi_write(neg, c);
  auto const ninfo = cxi_inspect(neg);
  FrameReadBuffer buffer;
  auto const clipped = cxi_read_frames(ninfo, {4, 3, 0}, buffer);
  EXPECT_EQ(clipped(0, 1, 1), 0.f);
  EXPECT_EQ(clipped(0, 1, 2), c.frames(4, 1, 2));
  EXPECT_EQ(clipped(1, 2, 5), 1.f);
  EXPECT_EQ(clipped(1, 0, 7), 0.f);
  EXPECT_EQ(buffer.negative_values, 2u);
  EXPECT_EQ(buffer.most_negative, -2.5f);
  EXPECT_TRUE(buffer.invalid_frames.empty());
  cxi_read_frames(ninfo, {0, 1}, buffer);  // each call says what it found
  EXPECT_EQ(buffer.negative_values, 0u);
  EXPECT_EQ(buffer.most_negative, 0.f);

  // A frame of negative values and no counts (a failed readout that wrote
  // -1 everywhere) is read as zeros and named; negative values beside
  // counts are not.
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) {
      c.frames(1, y, x) = -1;
      c.frames(2, y, x) = (x + y) % 2 ? -1.f : 3.f;
    }
  auto const failed = file("failed.cxi");
  cxi_write(failed, c);
  auto const read_failed = cxi_read_frames(cxi_inspect(failed), {1, 2}, buffer);
  EXPECT_EQ(buffer.invalid_frames, std::vector<std::size_t>{1});
  EXPECT_EQ(read_failed(1, 0, 0), 3.f);
  EXPECT_EQ(read_failed(1, 1, 0), 0.f);
  EXPECT_EQ(read_failed(0, 3, 3), 0.f);
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
