// A detector's marks of gaps and bad pixels: values that stay put.
//
// Detectors and the programs that convert their frames write a fixed value
// where a pixel has no intensity: a negative number (a Pilatus -1 in its gaps
// and -2 at bad pixels, an Eiger's 2^32 - 1 read as int32, -1 written into
// float frames) or the integer type's largest (an Eiger's 2^16 - 1 or
// 2^32 - 1 where it applies its pixel mask). Frames with a background
// subtracted hold negative values too, but those are noise: they vary from
// frame to frame and are read as 0; a counter that saturates now and then
// varies too (the warning about saturated pixels names those).
// A pixel is a mark when it holds the same such value in every frame that
// holds counts among up to 16 spread over the scan: noise that repeats one
// value in 8 frames or more is rare enough not to matter (the pixel would
// only be left free), and a pixel saturated in every frame holds no
// measurement either. The search stops at the first frame that leaves no
// pixel a candidate: files without such values cost one frame.
#include "cxi_datasets.hpp"

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/frame_stats.hpp>
#include <ptyko/core/hdf5.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ptyko {

using namespace impl;

namespace {
constexpr std::size_t k_frames_looked_at = 16;  // 2048 x 2048 int32: about 60 ms each
constexpr std::size_t k_frames_needed = 8;  // with counts; fewer: no marks are looked for
constexpr std::size_t k_values_named = 4;
}  // namespace

void cxi_mask_marked_pixels(CxiInfo& info) {
  info.marked_pixels.clear();
  info.mark_values.clear();
  auto f = h5::File::open_read(info.path);
  HostMask const measured = read_window_mask(f, info);  // the masks' own pixels need no marks
  int const wy = int(measured.extent(0)), wx = int(measured.extent(1));
  std::size_t const pixels = measured.span();
  h5::RowWindow window;
  if (info.windowed()) window = {std::size_t(info.window_y), std::size_t(info.window_x), std::size_t(wy), std::size_t(wx)};

  std::vector<float> frame(pixels);
  std::vector<float> mark(pixels, 0.f);  // the mark a pixel held in every frame so far; 0: none
  std::size_t with_counts = 0;
  double const type_ceiling = data_type_ceiling(info.data_type);  // 0 for floats: none
  // As read (float): 2^32 - 1 rounds to 2^32; a count below it does not reach it.
  // Float frames: no ceiling, and infinity is no count (load_local_data masks it).
  float const ceiling = type_ceiling > 0 ? float(type_ceiling) : std::numeric_limits<float>::infinity();
  for (std::size_t k : frames_spread_over_scan(info.frames, k_frames_looked_at)) {
    h5::read_rows(f, info.data_path, {k}, frame.data(), window);
    bool counts = false;  // a frame without (no beam, a failed readout) says nothing about marks
    for (std::size_t p = 0; p < pixels && !counts; ++p)
      counts = measured.data()[p] != 0 && frame[p] > 0 && frame[p] < ceiling;
    if (!counts) continue;
    bool candidates = false;
    for (std::size_t p = 0; p < pixels; ++p) {
      float const v = frame[p];
      bool const markable = (v < 0 && v == std::floor(v)) || (type_ceiling > 0 && v == ceiling);
      mark[p] = markable && (with_counts == 0 || mark[p] == v) ? v : 0.f;
      candidates |= mark[p] != 0;
    }
    ++with_counts;
    if (!candidates) return;
  }
  if (with_counts < k_frames_needed) return;
  for (int y = 0; y < wy; ++y)
    for (int x = 0; x < wx; ++x) {
      float const m = mark[std::size_t(y) * wx + x];
      if (m == 0 || measured(y, x) == 0) continue;
      info.marked_pixels.push_back(std::size_t(info.window_y + y) * std::size_t(info.stored_nx) +
                                   std::size_t(info.window_x + x));
      auto& values = info.mark_values;
      double const value = m == ceiling ? type_ceiling : double(m);
      if (values.size() < k_values_named && std::find(values.begin(), values.end(), value) == values.end())
        values.push_back(value);
    }
  std::sort(info.mark_values.begin(), info.mark_values.end());
}

}  // namespace ptyko
