// --find-beam: where the direct beam falls on the stored frames.
#include "cxi_datasets.hpp"

#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cmath>

namespace ptyko::impl {

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
  std::vector<float> frame(pixels);
  for (std::size_t k : frames_spread_over_scan(info.frames, 32)) {
    h5::read_rows(f, data, {k}, frame.data());
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
}  // namespace ptyko::impl
