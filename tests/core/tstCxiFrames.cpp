// Reading CXI frames: crops around the beam, binning, chunked reads into one
// buffer, and the un-shift of every frame as loaded.
#include "cxi_test_files.hpp"

namespace {

using namespace ptyko;
using namespace ptyko::test;  // CXI paths, TempDirTest, expect_user_error, the helpers of cxi_test_files.hpp

// Frame f's stored pixel (y, x) in the files of write_labelled_frames.
float labelled(std::size_t f, std::size_t y, std::size_t x) { return float(1000 * f + 20 * y + x); }

// n frames of ny x nx `values` stored as `type`, zero translations, and a
// mask marking the stored pixels `bad` (y, x) bad.
template <class V>
void write_frames(std::string const& path, std::vector<V> const& values, std::size_t n, std::size_t ny,
                  std::size_t nx, char const* type, std::vector<std::array<std::size_t, 2>> const& bad) {
  std::vector<std::uint8_t> mask(ny * nx, 0);
  for (auto const& p : bad) mask[p[0] * nx + p[1]] = 1;
  std::vector<double> trans(n * 3, 0.0);
  auto f = h5::File::create(path);
  h5::write(f, k_detector_data, values.data(), {n, ny, nx}, {}, type);
  h5::soft_link(f, k_detector_data, k_data);
  h5::write(f, k_translation, trans.data(), {n, 3});
  h5::write_scalar(f, k_energy, 1.2817e-15);
  h5::write_scalar(f, k_distance, 3.0);
  h5::write_scalar(f, k_pixel_x, 75e-6);
  h5::write(f, k_mask, mask.data(), {ny, nx});
  f.close();
}

// n frames of ny x nx labelled pixels (uint16), as write_frames.
void write_labelled_frames(std::string const& path, std::size_t n, std::size_t ny, std::size_t nx,
                           std::vector<std::array<std::size_t, 2>> const& bad) {
  std::vector<float> frames(n * ny * nx);
  for (std::size_t f = 0; f < n; ++f)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x) frames[(f * ny + y) * nx + x] = labelled(f, y, x);
  write_frames(path, frames, n, ny, nx, "uint16", bad);
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
      HostFrames const reused = cxi_read_frames(info, chunk, buffer);
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

// A detector's marks: the stored pixels (2, 7) and (3, 8) hold -1 and -2 in
// every frame (int32, a Pilatus's gaps and bad pixels), (5, 10) the type's
// largest value (an Eiger's, where it applies its mask), (4, 9) holds -1 but
// -4 in frame 10 (noise that varies: read as 0, not masked), (0, 0) is a
// mark outside the 6 x 6 window around (4, 9) (rows 1-6, columns 6-11), and
// frame 5 holds no counts, which says nothing about marks. The marks are
// masked in the window and read as 0 without being counted as negative
// values; with fewer than 8 frames holding counts none are looked for.
TEST_F(Cxi, DetectorMarksAreMasked) {
  std::size_t const ny = 10, nx = 14;
  auto write = [&](std::string const& path, std::size_t n) {
    std::vector<double> frames(n * ny * nx);  // double: exact for every int32
    for (std::size_t f = 0; f < n; ++f)
      for (std::size_t p = 0; p < ny * nx; ++p) frames[f * ny * nx + p] = f == 5 ? 0.0 : double(1 + (f + p) % 7);
    for (std::size_t f = 0; f < n; ++f) {
      double* frame = frames.data() + f * ny * nx;
      frame[2 * nx + 7] = -1;
      frame[3 * nx + 8] = -2;
      frame[4 * nx + 9] = f == 10 ? -4 : -1;
      frame[5 * nx + 10] = 2147483647.0;
      frame[6 * nx + 11] = f % 2 ? 2147483647.0 : 5.0;  // saturated now and then: no mark
      frame[0] = -1;
    }
    write_frames(path, frames, n, ny, nx, "int32", {});
  };
  FrameCrop crop;
  crop.size = 6;
  crop.centre_y = 4;
  crop.centre_x = 9;
  auto const path = file("marks.cxi");
  write(path, 40);
  CxiInfo info = cxi_inspect(path, crop);
  cxi_mask_marked_pixels(info);
  EXPECT_EQ(info.marked_pixels, (std::vector<std::size_t>{2 * nx + 7, 3 * nx + 8, 5 * nx + 10}));
  EXPECT_EQ(info.mark_values, (std::vector<double>{-2, -1, 2147483647.0}));
  HostMask const mask = cxi_read_mask(info);
  EXPECT_EQ(mask(1, 1), 0);
  EXPECT_EQ(mask(2, 2), 0);
  EXPECT_EQ(mask(3, 3), 1);
  EXPECT_EQ(mask(4, 4), 0);
  EXPECT_EQ(mask(5, 5), 1);
  EXPECT_EQ(mask(0, 0), 1);
  std::vector<std::size_t> all(40);
  for (std::size_t f = 0; f < all.size(); ++f) all[f] = f;
  FrameReadBuffer buffer;
  HostFrames const frames = cxi_read_frames(info, all, buffer);
  EXPECT_EQ(buffer.negative_values, 40u);  // (4, 9), in every frame
  EXPECT_EQ(buffer.most_negative, -4.f);
  EXPECT_TRUE(buffer.invalid_frames.empty());
  for (std::size_t f = 0; f < all.size(); ++f) {
    EXPECT_EQ(frames(f, 1, 1), 0.f);
    EXPECT_EQ(frames(f, 3, 3), 0.f);
    EXPECT_EQ(frames(f, 0, 1), f == 5 ? 0.f : float(1 + (f + 1 * nx + 7) % 7));
  }

  auto const few = file("few.cxi");
  write(few, 8);  // frame 5 holds no counts: 7 that do
  CxiInfo few_info = cxi_inspect(few, crop);
  cxi_mask_marked_pixels(few_info);
  EXPECT_TRUE(few_info.marked_pixels.empty());
}

}  // namespace
