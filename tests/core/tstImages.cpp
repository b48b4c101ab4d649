// PNG pictures of a result: written atomically, read back with libpng, and
// checked for what a person looking at them relies on (gray ordering, phase
// offset invariance, one tile per probe mode, visible text and curve).
#include <ptyko/core/images.hpp>
#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <test_files.hpp>

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace ptyko;
namespace fs = std::filesystem;
using namespace ptyko::test;  // TempDirTest, user_error

// A fresh folder per test (test_files.hpp).
class Images : public TempDirTest {};

// Reads a PNG as 8-bit RGB with libpng's simplified API (no setjmp needed).
Picture read_png(std::string const& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << "cannot read " << path << ": " << image.message;
    return {};
  }
  image.format = PNG_FORMAT_RGB;
  Picture pic(int(image.width), int(image.height));
  if (!png_image_finish_read(&image, nullptr, pic.rgb.data(), 0, nullptr)) {
    ADD_FAILURE() << "cannot decode " << path << ": " << image.message;
    png_image_free(&image);
    return {};
  }
  return pic;
}

int gray(Picture const& pic, int x, int y) { return pic.at(x, y)[0]; }

// True when the PNG at `path` holds one gray channel (no colour).
bool stored_gray(std::string const& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << "cannot read " << path << ": " << image.message;
    return false;
  }
  bool const gray = (image.format & PNG_FORMAT_FLAG_COLOR) == 0;
  png_image_free(&image);
  return gray;
}

bool is_white(Picture const& pic, int x, int y) {
  auto const* p = pic.at(x, y);
  return p[0] == 255 && p[1] == 255 && p[2] == 255;
}

// The convergence curve's blue (31, 119, 180), told apart from black, gray
// and white by its blue excess.
bool is_curve(Picture const& pic, int x, int y) {
  auto const* p = pic.at(x, y);
  return p[2] > 150 && p[2] > p[0] + 80;
}

HostComplex2 make_object(int h, int w) { return HostComplex2("object", h, w); }

TEST_F(Images, PngRoundTripIsExactAndLeavesNoTemporary) {
  Picture pic(7, 5, 0);
  pic.set(0, 0, 255, 0, 0);
  pic.set(6, 4, 0, 255, 0);
  pic.set(3, 2, 10, 20, 30);
  pic.set(-1, 9, 1, 1, 1);  // outside: ignored
  std::string const path = file("pic.png");
  write_png(path, pic);
  Picture const back = read_png(path);
  ASSERT_EQ(back.width, 7);
  ASSERT_EQ(back.height, 5);
  EXPECT_EQ(back.rgb, pic.rgb);
  EXPECT_FALSE(stored_gray(path)) << "a picture with colours stored as gray";
  EXPECT_EQ(listing(), std::vector<std::string>{"pic.png"});

  // Overwriting an existing picture replaces it whole.
  write_png(path, Picture(3, 2, 100));
  Picture const again = read_png(path);
  EXPECT_EQ(again.width, 3);
  EXPECT_EQ(again.height, 2);
  EXPECT_EQ(listing(), std::vector<std::string>{"pic.png"});
}

TEST_F(Images, PngWriteFailuresThrowUserErrorNamingTheFile) {
  std::string const missing = file("no-such-folder/pic.png");
  std::string const msg = user_error([&] { write_png(missing, Picture(4, 4)); });
  EXPECT_EQ(msg.rfind(missing, 0), 0u) << msg;
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_TRUE(listing().empty());

  std::string const empty = file("empty.png");
  std::string const msg2 = user_error([&] { write_png(empty, Picture()); });
  EXPECT_EQ(msg2.rfind(empty, 0), 0u) << msg2;
  EXPECT_TRUE(listing().empty());

  // libpng itself refuses (width above its 1e6 default limit): its error
  // comes back through longjmp as a UserError, the temporary is removed.
  std::string const wide = file("wide.png");
  std::string const msg4 = user_error([&] { write_png(wide, Picture(1000001, 1)); });
  EXPECT_EQ(msg4.rfind(wide + ": cannot write the PNG (", 0), 0u) << msg4;
  EXPECT_EQ(msg4.find('\n'), std::string::npos) << msg4;
  EXPECT_TRUE(listing().empty());

  // A folder under the name: refused, nothing left behind.
  fs::create_directories(m_dir / "taken.png" / "inside");
  std::string const taken = file("taken.png");
  std::string const msg3 = user_error([&] { write_png(taken, Picture(4, 4)); });
  EXPECT_EQ(msg3.rfind(taken, 0), 0u) << msg3;
  EXPECT_EQ(listing(), std::vector<std::string>{"taken.png"});
}

TEST_F(Images, AmplitudeGrayFollowsAmplitude) {
  int const h = 40, w = 50;
  auto obj = make_object(h, w);
  // Amplitude grows with the row-major index; the phase varies too and
  // must not matter.
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double const a = 0.2 + 0.001 * (y * w + x);
      double const p = 0.3 * x - 0.2 * y;
      obj(y, x) = Complex<double>(a * std::cos(p), a * std::sin(p));
    }
  Picture const pic = object_amplitude_picture(obj);
  ASSERT_EQ(pic.width, w);
  ASSERT_EQ(pic.height, h);
  for (int k = 1; k < h * w; ++k)
    ASSERT_LE(gray(pic, (k - 1) % w, (k - 1) / w), gray(pic, k % w, k / w)) << "at index " << k;
  EXPECT_EQ(gray(pic, 0, 0), 0);
  EXPECT_EQ(gray(pic, w - 1, h - 1), 255);
  EXPECT_LT(gray(pic, 5, 10), gray(pic, 5, 30));  // brighter object, brighter gray
  auto const* p = pic.at(7, 7);
  EXPECT_TRUE(p[0] == p[1] && p[1] == p[2]) << "not gray";

  // Written and read back, the same picture, stored as one gray channel
  // (a third of the bytes to deflate).
  write_png(file("amp.png"), pic);
  EXPECT_EQ(read_png(file("amp.png")).rgb, pic.rgb);
  EXPECT_TRUE(stored_gray(file("amp.png")));
}

TEST_F(Images, AmplitudeScalingIgnoresAFewWildPixels) {
  int const h = 40, w = 40;
  auto obj = make_object(h, w);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) obj(y, x) = Complex<double>(1.0 + 0.5 * x / (w - 1), 0.0);
  obj(0, 0) = Complex<double>(1e6, 0.0);  // a hot pixel outside the scan
  obj(1, 0) = Complex<double>(std::numeric_limits<double>::quiet_NaN(), 0.0);
  Picture const pic = object_amplitude_picture(obj);
  // Without percentiles everything but the hot pixel would be black.
  EXPECT_LE(gray(pic, 1, 20), 10);
  EXPECT_GE(gray(pic, w - 2, 20), 230);
  EXPECT_GT(gray(pic, w / 2, 20), 90);
  EXPECT_LT(gray(pic, w / 2, 20), 170);
  EXPECT_EQ(gray(pic, 0, 0), 255);  // clipped, not wrapped
  EXPECT_EQ(gray(pic, 0, 1), 0);    // NaN drawn black

  // A flat object is mid gray (no contrast), not black.
  auto flat = make_object(4, 4);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) flat(y, x) = Complex<double>(0.0, 2.0);
  EXPECT_EQ(gray(object_amplitude_picture(flat), 2, 2), 128);
}

TEST_F(Images, PhasePictureIgnoresAGlobalPhaseOffset) {
  int const h = 32, w = 48;
  auto obj = make_object(h, w);
  auto shifted = make_object(h, w);
  double const offset = 2.9;  // pushes phases across +-pi: a naive picture wraps
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double const a = 0.5 + 0.5 * (x % 7) / 6.0;
      double const p = -1.0 + 2.0 * x / (w - 1) + 0.1 * std::sin(0.3 * y);
      obj(y, x) = Complex<double>(a * std::cos(p), a * std::sin(p));
      shifted(y, x) = Complex<double>(a * std::cos(p + offset), a * std::sin(p + offset));
    }
  Picture const a = object_phase_picture(obj);
  Picture const b = object_phase_picture(shifted);
  ASSERT_EQ(a.width, w);
  ASSERT_EQ(a.height, h);
  ASSERT_EQ(b.width, w);
  ASSERT_EQ(b.height, h);
  int worst = 0;
  for (std::size_t k = 0; k < a.rgb.size(); ++k) worst = std::max(worst, std::abs(int(a.rgb[k]) - int(b.rgb[k])));
  EXPECT_LE(worst, 1);
  // And the phase ramp reads left (dark) to right (bright) in both.
  EXPECT_LT(gray(a, 3, 10), gray(a, w / 2, 10));
  EXPECT_LT(gray(a, w / 2, 10), gray(a, w - 4, 10));
  EXPECT_LT(gray(b, 3, 10), gray(b, w - 4, 10));
}

HostComplex3 make_probe(int modes, int d) {
  HostComplex3 probe("probe", modes, d, d);
  for (int m = 0; m < modes; ++m)
    for (int y = 0; y < d; ++y)
      for (int x = 0; x < d; ++x) {
        double const r2 = (y - d / 2.0) * (y - d / 2.0) + (x - d / 2.0) * (x - d / 2.0);
        double const a = std::exp(-r2 / (0.05 * d * d)) / (m + 1);
        double const p = 0.2 * m * x;
        probe(m, y, x) = Complex<double>(a * std::cos(p), a * std::sin(p));
      }
  return probe;
}

TEST_F(Images, ProbePictureHasOneTilePerModeAndLabels) {
  Picture const one = probe_picture(make_probe(1, 32), {1.0});
  Picture const three = probe_picture(make_probe(3, 32), {0.813, 0.15, 0.037});
  EXPECT_GE(one.width, 128);  // a 32-pixel probe is enlarged
  EXPECT_GE(one.height, 128);
  EXPECT_GT(three.width, 2 * one.width);
  EXPECT_LT(three.width, 3 * one.width + 20);
  EXPECT_EQ(three.height, one.height);

  // A mode of constant phase 0 is red (hue 0) where it is strong; its
  // weak corners are dark.
  HostComplex3 flat("flat", 1, 16, 16);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) flat(0, y, x) = Complex<double>(y == 8 && x == 8 ? 2.0 : 1e-3, 0.0);
  Picture const red = probe_picture(flat, {});
  int const cx = red.width / 2;
  // Pixel (8, 8) of the 16-pixel mode, enlarged 8x, starts at margin + 64.
  int cy = -1;
  for (int y = 0; y < red.height && cy < 0; ++y)
    if (red.at(cx, y)[0] > 200 && red.at(cx, y)[1] < 30) cy = y;
  ASSERT_GE(cy, 0) << "no red pixel in the middle column";
  EXPECT_LT(red.at(cx, cy)[2], 30);
  auto const* corner = red.at(cx - 60, cy - 60);
  EXPECT_LT(int(corner[0]) + corner[1] + corner[2], 10);

  // The labels are drawn below the tiles: dark pixels in the text band.
  int ink = 0;
  for (int y = three.height - 14; y < three.height; ++y)
    for (int x = 0; x < three.width; ++x) ink += three.at(x, y)[0] < 100;
  EXPECT_GT(ink, 50);

  // Fractions that do not match the modes are left out, not an error.
  EXPECT_NO_THROW(probe_picture(make_probe(2, 8), {0.5}));
  EXPECT_THROW(probe_picture(HostComplex3("empty", 0, 8, 8), {}), UserError);
}

TEST_F(Images, TextRendererDrawsInkInsideItsBox) {
  std::string const s = "mode 0: 81.3 % e+1e-3";
  Picture pic(200, 30);
  draw_text(pic, 4, 6, s, 1);
  int ink = 0, outside = 0;
  for (int y = 0; y < pic.height; ++y)
    for (int x = 0; x < pic.width; ++x)
      if (!is_white(pic, x, y)) {
        ++ink;
        bool const inside = x >= 4 && x < 4 + text_width(s) && y >= 6 && y < 6 + text_height();
        outside += !inside;
      }
  EXPECT_GT(ink, 60);
  EXPECT_EQ(outside, 0);
  EXPECT_EQ(text_width(s), int(s.size()) * 6 - 1);
  EXPECT_EQ(text_height(3), 21);

  // Scale 2 draws each font pixel as 2x2.
  Picture big(400, 40);
  draw_text(big, 0, 0, s, 2);
  int big_ink = 0;
  for (std::size_t k = 0; k < big.rgb.size(); k += 3) big_ink += big.rgb[k] != 255;
  EXPECT_EQ(big_ink, 4 * ink);

  // Spaces draw nothing; characters without a glyph draw '?', not nothing.
  Picture blank(20, 10);
  draw_text(blank, 0, 0, "   ");
  EXPECT_EQ(std::count(blank.rgb.begin(), blank.rgb.end(), 255), long(blank.rgb.size()));
  Picture unknown(20, 10), question(20, 10);
  draw_text(unknown, 0, 0, "~");
  draw_text(question, 0, 0, "?");
  EXPECT_EQ(unknown.rgb, question.rgb);
  EXPECT_NE(std::count(unknown.rgb.begin(), unknown.rgb.end(), 255), long(unknown.rgb.size()));

  // Colour and clipping at the picture edges.
  Picture edge(10, 5);
  draw_text(edge, 7, 2, "88", 1, 200, 0, 0);
  EXPECT_EQ(edge.at(7, 2)[0], 255);  // '8' starts with a blank column...
  EXPECT_EQ(edge.at(8, 2)[0], 200);  // ...then ink in the chosen colour
  EXPECT_EQ(edge.at(8, 2)[1], 0);
}

// Columns of the curve pixels, and the mean row of the curve in a column.
std::vector<int> curve_columns(Picture const& pic) {
  std::vector<int> cols;
  for (int x = 0; x < pic.width; ++x)
    for (int y = 0; y < pic.height; ++y)
      if (is_curve(pic, x, y)) {
        cols.push_back(x);
        break;
      }
  return cols;
}

double curve_row(Picture const& pic, int x) {
  double sum = 0;
  int n = 0;
  for (int y = 0; y < pic.height; ++y)
    if (is_curve(pic, x, y)) sum += y, ++n;
  return n ? sum / n : -1;
}

TEST_F(Images, ConvergencePictureDrawsTheCurve) {
  std::vector<double> cost;
  for (int k = 0; k < 80; ++k) cost.push_back(5e4 * std::pow(0.9, k));
  Picture const pic = convergence_picture(cost, "cost (gaussian)");
  EXPECT_EQ(pic.width, 640);
  EXPECT_EQ(pic.height, 400);
  auto const cols = curve_columns(pic);
  ASSERT_GT(cols.size(), 400u);  // a line across most of the plot, no gaps
  for (std::size_t k = 1; k < cols.size(); ++k) EXPECT_EQ(cols[k], cols[k - 1] + 1) << "gap at column " << cols[k];
  // Decreasing cost: the curve goes down the picture (rows grow downwards).
  EXPECT_LT(curve_row(pic, cols.front()), curve_row(pic, cols.back()) - 100);
  // Title and tick labels: black ink above the plot and left of it.
  int title_ink = 0, label_ink = 0;
  for (int y = 0; y < 30; ++y)
    for (int x = 0; x < pic.width; ++x) title_ink += pic.at(x, y)[0] < 50;
  for (int y = 40; y < 340; ++y)
    for (int x = 0; x < 60; ++x) label_ink += pic.at(x, y)[0] < 50;
  EXPECT_GT(title_ink, 100);
  EXPECT_GT(label_ink, 100);

  write_png(file("conv.png"), pic);
  EXPECT_EQ(read_png(file("conv.png")).rgb, pic.rgb);
}

TEST_F(Images, ConvergencePictureSkipsNaNAndNonPositive) {
  // DM measures every few epochs and reports NaN in between.
  std::vector<double> cost(40, std::numeric_limits<double>::quiet_NaN());
  for (int k = 0; k < 40; k += 5) cost[k] = 1e3 / (k + 1);
  cost[12] = -1.0;
  cost[13] = 0.0;
  cost[14] = std::numeric_limits<double>::infinity();
  Picture const pic = convergence_picture(cost, "cost (poisson)");
  auto const cols = curve_columns(pic);
  ASSERT_GT(cols.size(), 400u);  // measured epochs joined across the gaps
  EXPECT_LT(curve_row(pic, cols.front()), curve_row(pic, cols.back()));

  // Nothing measured, or no epochs: axes and a note, no curve, no throw.
  Picture const none = convergence_picture(std::vector<double>(10, std::nan("")), "cost");
  EXPECT_TRUE(curve_columns(none).empty());
  Picture const empty = convergence_picture({}, "cost");
  EXPECT_TRUE(curve_columns(empty).empty());
  EXPECT_EQ(empty.width, 640);

  // One epoch: a visible marker.
  EXPECT_FALSE(curve_columns(convergence_picture({42.0}, "cost")).empty());
  // A flat curve (one decade only) still draws.
  EXPECT_FALSE(curve_columns(convergence_picture(std::vector<double>(5, 3.0), "cost")).empty());
}

// Relative fluxes: a dot per frame with a flux, brighter frames higher up,
// skipped frames (0) left out, the frame axis spanning all of them.
TEST_F(Images, FluxPictureDotsEachFrame) {
  std::vector<double> flux(100, 1.0);
  flux[10] = 1.3;
  flux[90] = 0.7;
  flux[50] = 0.0;  // skipped
  Picture const pic = flux_picture(flux);
  EXPECT_EQ(pic.width, 640);
  auto const cols = curve_columns(pic);
  ASSERT_GT(cols.size(), 150u);  // 99 dots of 3 pixels, most apart
  // Frame 10 (1.3) above the line of the others, frame 90 (0.7) below.
  int const x10 = 76 + int(std::lround(10.0 / 99 * (620 - 76))), x90 = 76 + int(std::lround(90.0 / 99 * (620 - 76)));
  int const x20 = 76 + int(std::lround(20.0 / 99 * (620 - 76))), x50 = 76 + int(std::lround(50.0 / 99 * (620 - 76)));
  EXPECT_LT(curve_row(pic, x10), curve_row(pic, x20) - 50);
  EXPECT_GT(curve_row(pic, x90), curve_row(pic, x20) + 50);
  EXPECT_EQ(std::count(cols.begin(), cols.end(), x50), 0) << "the skipped frame has no dot";
  // No frames with a flux: axes only.
  EXPECT_TRUE(curve_columns(flux_picture(std::vector<double>(3, 0.0))).empty());
  write_png(file("flux.png"), pic);
}

TEST_F(Images, BackgroundPictureIsEnlargedAndBrightWhereTheBackgroundIs) {
  HostReal2 background("background", 32, 32);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 32; ++x) background(y, x) = (y >= 8 && y < 16) ? 100.0 : 1.0;  // a bright band
  Picture const pic = background_picture(background);
  EXPECT_EQ(pic.width, 320);  // 32 pixels enlarged 8 times = 256, the title's width 320
  EXPECT_EQ(pic.height, 256 + 36);
  int const left = (320 - 256) / 2;
  auto const gray = [&](int y, int x) { return int(pic.rgb[3 * (std::size_t(36 + y) * pic.width + left + x)]); };
  EXPECT_EQ(gray(12 * 8, 100), 255);  // in the band
  EXPECT_EQ(gray(2 * 8, 100), 0);     // outside
  EXPECT_EQ(gray(30 * 8 + 7, 255), 0);
  EXPECT_THROW(background_picture(HostReal2()), UserError);
  write_png(file("background.png"), pic);
}

TEST_F(Images, ResultPicturePathsStripTheResultExtension) {
  auto const p = result_picture_paths("runs/out.h5");
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], "runs/out_object_phase.png");
  EXPECT_EQ(p[1], "runs/out_object_amplitude.png");
  EXPECT_EQ(p[2], "runs/out_probe.png");
  EXPECT_EQ(p[3], "runs/out_convergence.png");
  EXPECT_EQ(result_picture_paths("a.b/out.HDF5")[2], "a.b/out_probe.png");
  EXPECT_EQ(result_picture_paths("out.cxi")[3], "out_convergence.png");
  EXPECT_EQ(result_picture_paths("out.v2")[2], "out.v2_probe.png");  // not a result extension: kept
  EXPECT_EQ(result_picture_paths("/abs/dir/run")[1], "/abs/dir/run_object_amplitude.png");
  EXPECT_EQ(result_output_stem("runs/out.Cxi"), "runs/out");
  EXPECT_THROW(result_output_stem("runs/"), UserError);
}

TEST_F(Images, WriteResultPicturesWritesFourReadablePngs) {
  auto obj = make_object(24, 30);
  for (int y = 0; y < 24; ++y)
    for (int x = 0; x < 30; ++x) obj(y, x) = Complex<double>(1.0 + 0.01 * x, 0.02 * y);
  auto const paths = write_result_pictures(file("run.h5"), obj, make_probe(2, 16), {0.9, 0.1}, {3.0, 2.0, 1.5},
                                           "gaussian");
  ASSERT_EQ(paths.size(), 4u);
  EXPECT_EQ(paths[0], file("run_object_phase.png"));
  for (auto const& p : paths) {
    Picture const pic = read_png(p);
    EXPECT_GT(pic.width, 0) << p;
  }
  EXPECT_EQ(read_png(paths[0]).width, 30);
  EXPECT_EQ(read_png(paths[1]).height, 24);
  EXPECT_EQ(read_png(paths[3]).width, 640);
  EXPECT_EQ(listing(), (std::vector<std::string>{"run_convergence.png", "run_object_amplitude.png",
                                                 "run_object_phase.png", "run_probe.png"}));
  // Into a missing folder: UserError naming the first picture.
  std::string const missing = file("gone/run.h5");
  std::string const msg = user_error(
      [&] { write_result_pictures(missing, obj, make_probe(1, 8), {}, {}, ""); });
  EXPECT_EQ(msg.rfind(file("gone/run_object_phase.png"), 0), 0u) << msg;

  // With refined positions (and the file's): a fifth picture of the moves.
  std::vector<std::array<double, 2>> const file_positions{{10, 10}, {10, 30}, {30, 10}, {30, 30}};
  auto refined = file_positions;
  refined[3] = {30.5, 29.5};
  auto const with_moves = write_result_pictures(file("moved.h5"), obj, make_probe(1, 8), {}, {1.0}, "gaussian",
                                                file_positions, refined);
  ASSERT_EQ(with_moves.size(), 5u);
  EXPECT_EQ(with_moves[4], file("moved_positions.png"));
  EXPECT_GT(read_png(with_moves[4]).width, 0);
}

// The moves of position refinement: file positions in gray, a red line
// along each move (exaggerated) to a red dot. Unmoved positions show no
// gray (their red dot covers it); a moved one shows its gray dot apart.
TEST_F(Images, PositionsPictureShowsTheMoves) {
  std::vector<std::array<double, 2>> const file_positions{{0, 0}, {0, 100}, {100, 0}, {100, 100}, {50, 50}};
  auto count = [](Picture const& pic, int r, int g, int b) {
    int n = 0;
    for (int y = 0; y < pic.height; ++y)
      for (int x = 0; x < pic.width; ++x) {
        auto const* p = pic.at(x, y);
        n += p[0] == r && p[1] == g && p[2] == b;
      }
    return n;
  };
  Picture const still = positions_picture(file_positions, file_positions);
  EXPECT_EQ(count(still, 150, 150, 150), 0);
  EXPECT_EQ(count(still, 214, 39, 40), 5 * 9);
  auto moved = file_positions;
  moved[4] = {50.3, 49.6};  // 0.5 px, rms 0.22 px: drawn 5 times longer (2 % of 100 px)
  Picture const pic = positions_picture(file_positions, moved);
  EXPECT_EQ(count(pic, 150, 150, 150), 9);
  EXPECT_GT(count(pic, 214, 39, 40), 5 * 9);
}

}  // namespace
