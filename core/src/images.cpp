// PNG previews of a result. Everything is drawn on the host into a Picture
// and encoded with libpng; text uses a small built-in bitmap font so that
// no font file has to be found at run time (clusters rarely have one).

#include "atomic_output.hpp"
#include "host_threads.hpp"

#include <ptyko/core/images.hpp>
#include <ptyko/kernels/error.hpp>

#include <fmt/format.h>
#include <png.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ptyko {
namespace {

// ------------------------------------------------------------------ PNG encoding

// libpng reports errors by calling this, which must not return; it keeps
// the message for the exception thrown once we are back in C++ frames.
struct PngErrorState {
  char message[256];
};

extern "C" void on_png_error(png_structp png, png_const_charp msg) {
  auto* state = static_cast<PngErrorState*>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof(state->message), "%s", msg ? msg : "unknown libpng error");
  png_longjmp(png, 1);
}

extern "C" void on_png_warning(png_structp, png_const_charp) {}  // warnings are not worth a line

// True when every pixel is gray (the object's amplitude and phase): such a
// picture is stored as one 8-bit channel, a third of the bytes to deflate
// and the same pixels to any reader.
bool is_gray(Picture const& pic) {
  bool gray = true;
  for (std::size_t k = 0; gray && k < pic.rgb.size(); k += 3)
    gray = pic.rgb[k] == pic.rgb[k + 1] && pic.rgb[k] == pic.rgb[k + 2];
  return gray;
}

// Encodes `pic` into `fp`, as gray levels when `gray_row` (room for a row
// of them) is given. libpng leaves through longjmp on error, which skips
// destructors, so this frame holds no C++ object with one: only the two
// libpng structs (set before setjmp, freed on both paths) and plain
// values. Returns false with the message in `state` on failure.
bool encode_png(std::FILE* fp, Picture const& pic, png_byte* gray_row, PngErrorState* state) {
  bool const gray = gray_row != nullptr;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, state, on_png_error, on_png_warning);
  if (!png) {
    std::snprintf(state->message, sizeof(state->message), "libpng could not allocate its state");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(state->message, sizeof(state->message), "libpng could not allocate its state");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_init_io(png, fp);
  png_set_IHDR(png, info, png_uint_32(pic.width), png_uint_32(pic.height), 8,
               gray ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  // zlib's fastest level instead of its default 6: the end of a run with a
  // 2097 x 2095 object (HDF5 result and four pictures) 2.7 -> 1.35 s, the
  // pictures within -14 % .. +1 % of their size (docs/performance.md).
  png_set_compression_level(png, 1);
  png_write_info(png, info);
  std::size_t const stride = std::size_t(pic.width) * 3;
  for (int y = 0; y < pic.height; ++y) {
    png_byte const* row = pic.rgb.data() + std::size_t(y) * stride;
    if (gray) {
      for (int x = 0; x < pic.width; ++x) gray_row[x] = row[3 * std::size_t(x)];
      row = gray_row;
    }
    png_write_row(png, row);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

// ------------------------------------------------------------------ font

// 5x7 glyphs, one string per row, '#' = ink. Hand-made; lower case letters
// sit on the same baseline as digits (descenders are folded into the cell).
struct Glyph {
  char c;
  std::array<char const*, 7> rows;
};

// clang-format off
constexpr Glyph k_font[] = {
    {' ', {".....", ".....", ".....", ".....", ".....", ".....", "....."}},
    {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
    {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
    {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
    {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
    {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
    {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
    {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
    {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
    {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
    {'a', {".....", ".....", ".###.", "....#", ".####", "#...#", ".####"}},
    {'b', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."}},
    {'c', {".....", ".....", ".###.", "#....", "#....", "#...#", ".###."}},
    {'d', {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"}},
    {'e', {".....", ".....", ".###.", "#...#", "#####", "#....", ".###."}},
    {'f', {"..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."}},
    {'g', {".....", ".....", ".####", "#...#", ".####", "....#", ".###."}},
    {'h', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
    {'i', {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."}},
    {'j', {"...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.."}},
    {'k', {"#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."}},
    {'l', {".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'m', {".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"}},
    {'n', {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
    {'o', {".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."}},
    {'p', {".....", ".....", "####.", "#...#", "####.", "#....", "#...."}},
    {'q', {".....", ".....", ".##.#", "#..##", ".####", "....#", "....#"}},
    {'r', {".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."}},
    {'s', {".....", ".....", ".###.", "#....", ".###.", "....#", "####."}},
    {'t', {".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."}},
    {'u', {".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"}},
    {'v', {".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
    {'w', {".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."}},
    {'x', {".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"}},
    {'y', {".....", ".....", "#...#", "#...#", ".####", "....#", ".###."}},
    {'z', {".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"}},
    {'A', {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'B', {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."}},
    {'C', {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."}},
    {'D', {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."}},
    {'E', {"#####", "#....", "#....", "####.", "#....", "#....", "#####"}},
    {'F', {"#####", "#....", "#....", "####.", "#....", "#....", "#...."}},
    {'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"}},
    {'H', {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'I', {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'J', {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."}},
    {'K', {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"}},
    {'L', {"#....", "#....", "#....", "#....", "#....", "#....", "#####"}},
    {'M', {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"}},
    {'N', {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"}},
    {'O', {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'P', {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."}},
    {'Q', {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"}},
    {'R', {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"}},
    {'S', {".####", "#....", "#....", ".###.", "....#", "....#", "####."}},
    {'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
    {'U', {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'V', {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
    {'W', {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."}},
    {'X', {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"}},
    {'Y', {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."}},
    {'Z', {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"}},
    {'%', {"##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"}},
    {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
    {':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."}},
    {'-', {".....", ".....", ".....", ".###.", ".....", ".....", "....."}},
    {'+', {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."}},
    {'(', {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."}},
    {')', {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."}},
    {',', {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."}},
    {'/', {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."}},
    {'_', {".....", ".....", ".....", ".....", ".....", ".....", "#####"}},
    {'=', {".....", ".....", "#####", ".....", "#####", ".....", "....."}},
    {'\'', {"..#..", "..#..", ".#...", ".....", ".....", ".....", "....."}},
    {'?', {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."}},
    {'[', {".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###."}},
    {']', {".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###."}},
    {'*', {".....", "..#..", "#.#.#", ".###.", "#.#.#", "..#..", "....."}},
};
// clang-format on

constexpr int k_glyph_w = 5, k_glyph_h = 7, k_glyph_advance = 6;

Glyph const& glyph(char c) {
  for (auto const& g : k_font)
    if (g.c == c) return g;
  for (auto const& g : k_font)
    if (g.c == '?') return g;
  return k_font[0];
}

// ------------------------------------------------------------------ drawing helpers

struct Rgb {
  std::uint8_t r, g, b;
};

constexpr Rgb k_black{0, 0, 0};
constexpr Rgb k_grid{225, 225, 225};
constexpr Rgb k_curve{31, 119, 180};
constexpr Rgb k_muted{120, 120, 120};

void put(Picture& pic, int x, int y, Rgb c) { pic.set(x, y, c.r, c.g, c.b); }

void fill_rect(Picture& pic, int x0, int y0, int w, int h, Rgb c) {
  for (int y = y0; y < y0 + h; ++y)
    for (int x = x0; x < x0 + w; ++x) put(pic, x, y, c);
}

void text(Picture& pic, int x, int y, std::string const& s, int scale, Rgb c) {
  draw_text(pic, x, y, s, scale, c.r, c.g, c.b);
}

// Bresenham's line from (x0, y0) to (x1, y1), both ends included.
void line(Picture& pic, int x0, int y0, int x1, int y1, Rgb c) {
  int const dx = std::abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
  int const dy = -std::abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  for (;;) {
    put(pic, x0, y0, c);
    if (x0 == x1 && y0 == y1) break;
    int const e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

// 0.5 and 99.5 percentiles (nearest rank) of the finite values; (0, 0)
// when there is none.
std::pair<double, double> robust_range(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
               values.end());
  if (values.empty()) return {0.0, 0.0};
  auto const last = double(values.size() - 1);
  auto const lo_at = values.begin() + std::ptrdiff_t(std::floor(0.005 * last));
  auto const hi_at = values.begin() + std::ptrdiff_t(std::ceil(0.995 * last));
  std::nth_element(values.begin(), lo_at, values.end());
  double const lo = *lo_at;
  std::nth_element(values.begin(), hi_at, values.end());
  return {lo, *hi_at};
}

// Row-major (H, W) values to a gray picture, clipped to the robust range.
Picture gray_picture(std::vector<double> const& values, int height, int width) {
  auto const [lo, hi] = robust_range(values);
  Picture pic(width, height, 0);
  for (std::size_t k = 0; k < values.size(); ++k) {
    double const v = values[k];
    std::uint8_t level = 0;  // non-finite: black
    if (std::isfinite(v)) {
      if (hi > lo) {
        double const t = std::clamp((v - lo) / (hi - lo), 0.0, 1.0);
        level = std::uint8_t(std::lround(255.0 * t));
      } else {
        level = 128;  // a flat image: mid gray says "no contrast", not "nothing"
      }
    }
    std::fill_n(&pic.rgb[3 * k], 3, level);
  }
  return pic;
}

void require_object(HostComplex2 const& object, char const* what) {
  PTYKO_REQUIRE(object.extent(0) > 0 && object.extent(1) > 0, what, ": the object is empty (",
                object.extent(0), " x ", object.extent(1), ")");
}

// Hue = phase (0 rad red, 2 pi/3 green, -2 pi/3 blue), value = v, full
// saturation: the usual complex colour wheel.
Rgb wheel_colour(double phase, double v) {
  constexpr double two_pi = 6.283185307179586;
  double hue = std::fmod(phase, two_pi) / two_pi;
  if (hue < 0) hue += 1.0;
  double const h6 = hue * 6.0;
  int const sector = std::min(5, int(h6));
  double const f = h6 - sector;
  double const q = v * (1 - f), t = v * f;
  double r = 0, g = 0, b = 0;
  switch (sector) {
    case 0: r = v, g = t, b = 0; break;
    case 1: r = q, g = v, b = 0; break;
    case 2: r = 0, g = v, b = t; break;
    case 3: r = 0, g = q, b = v; break;
    case 4: r = t, g = 0, b = v; break;
    default: r = v, g = 0, b = q; break;
  }
  auto const byte = [](double x) { return std::uint8_t(std::lround(255.0 * std::clamp(x, 0.0, 1.0))); };
  return {byte(r), byte(g), byte(b)};
}

std::string percent_label(double fraction) {
  double const pct = 100.0 * fraction;
  char buf[32];
  if (!std::isfinite(pct))
    std::snprintf(buf, sizeof(buf), "?");
  else if (pct == 0.0 || std::abs(pct) >= 0.1)
    std::snprintf(buf, sizeof(buf), "%.1f %%", pct);
  else  // a weak mode: "0.0 %" would hide that it exists at all
    std::snprintf(buf, sizeof(buf), "%.1e %%", pct);
  return buf;
}

// Smallest of 1, 2, 5, 10, 20, ... giving at most `max_ticks` steps over `span`.
long nice_step(double span, int max_ticks) {
  long step = 1;
  for (int k = 0;; k = (k + 1) % 3) {
    if (span / double(step) <= max_ticks) return step;
    step = k == 1 ? step / 2 * 5 : step * 2;  // 1 -> 2 -> 5 -> 10 -> 20 -> 50 ...
  }
}

std::string decade_label(int d) { return "1e" + std::to_string(d); }

// A horizontal axis counting first..last (epochs, frames) over the columns
// left..right under a plot from `top` to `bottom`: grid lines, ticks at
// `first` and the multiples of a round step, their numbers, and `label`
// centred under them. column(e) is where count e lies.
struct CountAxis {
  long first, last;
  int left, right;
  int column(double e) const {
    return last > first ? left + int(std::lround((e - first) / double(last - first) * (right - left)))
                        : (left + right) / 2;
  }
};

CountAxis count_axis(Picture& pic, long first, long last, int left, int right, int top, int bottom,
                     std::string const& label, int ts) {
  CountAxis const axis{first, last, left, right};
  long const step = nice_step(double(last - first), 8);
  std::vector<long> ticks{first};
  for (long e = (first / step + 1) * step; e <= last; e += step)
    if (e != first) ticks.push_back(e);
  for (long e : ticks) {
    int const x = axis.column(double(e));
    line(pic, x, top, x, bottom, k_grid);
    line(pic, x, bottom, x, bottom + 4, k_black);
    std::string const s = std::to_string(e);
    text(pic, x - text_width(s, ts) / 2, bottom + 8, s, ts, k_black);
  }
  text(pic, (left + right - text_width(label, ts)) / 2, pic.height - 20, label, ts, k_black);
  return axis;
}

}  // namespace

// ------------------------------------------------------------------ public

void write_png(std::string const& path, Picture const& pic) {
  PTYKO_REQUIRE(pic.width > 0 && pic.height > 0, path, ": cannot write an empty picture (", pic.width, " x ",
                pic.height, ")");
  PTYKO_ASSERT(pic.rgb.size() == std::size_t(pic.width) * pic.height * 3, "picture of ", pic.width, " x ",
               pic.height, " holds ", pic.rgb.size(), " bytes");
  impl::AtomicOutput out(path);
  PngErrorState state{};
  std::vector<png_byte> gray_row(is_gray(pic) ? std::size_t(pic.width) : 0);
  PTYKO_REQUIRE(encode_png(out.file(), pic, gray_row.empty() ? nullptr : gray_row.data(), &state), path, ": cannot write the PNG (", state.message, ")");
  out.commit();
}

int text_height(int scale) { return k_glyph_h * std::max(1, scale); }

int text_width(std::string const& s, int scale) {
  scale = std::max(1, scale);
  return s.empty() ? 0 : int(s.size()) * k_glyph_advance * scale - (k_glyph_advance - k_glyph_w) * scale;
}

void draw_text(Picture& pic, int x, int y, std::string const& s, int scale, std::uint8_t r, std::uint8_t g,
               std::uint8_t b) {
  scale = std::max(1, scale);
  for (char const c : s) {
    Glyph const& gl = glyph(c);
    for (int row = 0; row < k_glyph_h; ++row)
      for (int col = 0; col < k_glyph_w; ++col)
        if (gl.rows[row][col] == '#')
          for (int dy = 0; dy < scale; ++dy)
            for (int dx = 0; dx < scale; ++dx) pic.set(x + col * scale + dx, y + row * scale + dy, r, g, b);
    x += k_glyph_advance * scale;
  }
}

Picture object_amplitude_picture(HostComplex2 const& object) {
  require_object(object, "object amplitude picture");
  int const h = int(object.extent(0)), w = int(object.extent(1));
  std::vector<double> amp(std::size_t(h) * w);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      auto const o = object(y, x);
      amp[std::size_t(y) * w + x] = std::hypot(o.real(), o.imag());
    }
  return gray_picture(amp, h, w);
}

Picture object_phase_picture(HostComplex2 const& object) {
  require_object(object, "object phase picture");
  int const h = int(object.extent(0)), w = int(object.extent(1));
  // The sum of the object is the amplitude-weighted circular mean of its
  // phase: rotating by its conjugate is exact for any global offset and,
  // unlike subtracting an arithmetic mean of arg(), cannot wrap.
  double sr = 0, si = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      auto const o = object(y, x);
      if (std::isfinite(o.real()) && std::isfinite(o.imag())) sr += o.real(), si += o.imag();
    }
  double const norm = std::hypot(sr, si);
  double cr = 1, ci = 0;  // conj(mean phasor)
  if (norm > 0 && std::isfinite(norm)) cr = sr / norm, ci = -si / norm;
  std::vector<double> phase(std::size_t(h) * w);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      auto const o = object(y, x);
      double const re = o.real() * cr - o.imag() * ci, im = o.real() * ci + o.imag() * cr;
      phase[std::size_t(y) * w + x] = std::atan2(im, re);
    }
  return gray_picture(phase, h, w);
}

Picture probe_picture(HostComplex3 const& probe, std::vector<double> const& power_fractions) {
  int const modes = int(probe.extent(0)), ny = int(probe.extent(1)), nx = int(probe.extent(2));
  PTYKO_REQUIRE(modes > 0 && ny > 0 && nx > 0, "probe picture: the probe is empty (", modes, " x ", ny, " x ", nx,
                ")");
  constexpr int min_width = 128, margin = 6, gap = 6, label_gap = 4;
  int const zoom = std::max(1, (min_width + nx - 1) / nx);
  int const tile_w = nx * zoom, tile_h = ny * zoom;

  bool const with_fractions = int(power_fractions.size()) == modes;
  std::vector<std::string> labels;
  int label_w = 0;
  for (int m = 0; m < modes; ++m) {
    labels.push_back("mode " + std::to_string(m) + (with_fractions ? ": " + percent_label(power_fractions[m]) : ""));
    label_w = std::max(label_w, text_width(labels.back()));
  }
  int const text_scale = tile_w >= 2 * label_w ? 2 : 1;  // bigger text under big probes
  int const col_w = std::max(tile_w, label_w * text_scale);  // text_width is linear in the scale
  Picture pic(2 * margin + modes * col_w + (modes - 1) * gap,
              margin + tile_h + label_gap + text_height(text_scale) + margin);

  for (int m = 0; m < modes; ++m) {
    double peak = 0;
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        auto const p = probe(m, y, x);
        double const a = std::hypot(p.real(), p.imag());
        if (std::isfinite(a)) peak = std::max(peak, a);
      }
    int const x0 = margin + m * (col_w + gap) + (col_w - tile_w) / 2;
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        auto const p = probe(m, y, x);
        double const a = std::hypot(p.real(), p.imag());
        Rgb const c = peak > 0 && std::isfinite(a) ? wheel_colour(std::atan2(p.imag(), p.real()), a / peak) : k_black;
        fill_rect(pic, x0 + x * zoom, margin + y * zoom, zoom, zoom, c);
      }
    int const tw = text_width(labels[m], text_scale);
    text(pic, margin + m * (col_w + gap) + (col_w - tw) / 2, margin + tile_h + label_gap, labels[m], text_scale,
         k_black);
  }
  return pic;
}

Picture convergence_picture(std::vector<double> const& cost, std::string const& title) {
  constexpr int width = 640, height = 400, ts = 2;  // ts: text scale
  constexpr int left = 76, right = width - 20, top = 36, bottom = height - 52;
  Picture pic(width, height);
  text(pic, (width - text_width(title, ts)) / 2, 10, title, ts, k_black);

  int const n = int(cost.size());
  std::vector<int> valid;
  for (int k = 0; k < n; ++k)
    if (std::isfinite(cost[k]) && cost[k] > 0) valid.push_back(k);

  // x: epoch e (1-based).
  CountAxis axis{1, n, left, right};
  if (n > 0)
    axis = count_axis(pic, 1, n, left, right, top, bottom, "epoch", ts);
  else
    text(pic, (left + right - text_width("epoch", ts)) / 2, height - 20, "epoch", ts, k_black);
  auto const ex = [&](double e) { return axis.column(e); };

  if (valid.empty()) {
    std::string const s = n == 0 ? "no epochs" : "no cost measured";
    text(pic, (left + right - text_width(s, ts)) / 2, (top + bottom) / 2, s, ts, k_muted);
  } else {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int k : valid) lo = std::min(lo, cost[k]), hi = std::max(hi, cost[k]);
    int const d_lo = int(std::floor(std::log10(lo)));
    int d_hi = int(std::ceil(std::log10(hi)));
    if (d_hi <= d_lo) d_hi = d_lo + 1;
    auto const ey = [&](double c) {
      double const t = (std::log10(c) - d_lo) / double(d_hi - d_lo);
      return bottom - int(std::lround(t * (bottom - top)));
    };
    int const d_step = int(nice_step(d_hi - d_lo, 8));
    for (int d = d_lo; d <= d_hi; ++d) {
      int const y = ey(std::pow(10.0, d));
      if ((d - d_lo) % d_step != 0) continue;
      line(pic, left, y, right, y, k_grid);
      line(pic, left - 4, y, left, y, k_black);
      std::string const s = decade_label(d);
      text(pic, left - 8 - text_width(s, ts), y - text_height(ts) / 2, s, ts, k_black);
    }
    if (d_hi - d_lo <= 6)  // minor ticks at 2..9 x 10^d while they stay apart
      for (int d = d_lo; d < d_hi; ++d)
        for (int m = 2; m <= 9; ++m) {
          int const y = ey(m * std::pow(10.0, d));
          line(pic, left - 2, y, left, y, k_black);
        }
    // The curve, thickened to 2 pixels, joining measured epochs across gaps.
    int px = -1, py = -1;
    for (int k : valid) {
      int const x = ex(k + 1), y = ey(cost[k]);
      if (px >= 0) {
        line(pic, px, py, x, y, k_curve);
        line(pic, px, py + 1, x, y + 1, k_curve);
      }
      if (valid.size() <= 60) fill_rect(pic, x - 2, y - 2, 5, 5, k_curve);  // markers while they stay apart
      px = x, py = y;
    }
  }
  line(pic, left, top, left, bottom, k_black);
  line(pic, left, bottom, right, bottom, k_black);
  return pic;
}

Picture flux_picture(std::vector<double> const& flux) {
  constexpr int width = 640, height = 400, ts = 2;
  constexpr int left = 76, right = width - 20, top = 36, bottom = height - 52;
  Picture pic(width, height);
  std::vector<int> valid;  // frames with a flux (skipped frames hold 0)
  double sum = 0, square = 0, lo = 1, hi = 1;
  for (std::size_t k = 0; k < flux.size(); ++k)
    if (std::isfinite(flux[k]) && flux[k] > 0) {
      valid.push_back(int(k));
      sum += flux[k];
      square += flux[k] * flux[k];
      lo = std::min(lo, flux[k]);
      hi = std::max(hi, flux[k]);
    }
  double const m = valid.empty() ? 1 : sum / double(valid.size());
  double const rms = valid.empty() ? 0 : std::sqrt(std::max(0.0, square / double(valid.size()) - m * m));
  char title[64];
  std::snprintf(title, sizeof(title), "relative flux (%.1f %% rms)", 100 * rms);
  text(pic, (width - text_width(title, ts)) / 2, 10, title, ts, k_black);
  long const n = long(flux.size());
  CountAxis const axis = count_axis(pic, 0, std::max(0L, n - 1), left, right, top, bottom, "frame", ts);

  // y: linear from below the smallest to above the largest flux (1 always
  // inside), ticks at a round step of 1, 2 or 5 times a power of ten.
  double const pad = std::max(0.02, 0.05 * (hi - lo));
  lo -= pad;
  hi += pad;
  double const unit = std::pow(10.0, std::floor(std::log10(hi - lo)) - 1);
  double const step = double(nice_step((hi - lo) / unit, 8)) * unit;
  auto const ey = [&](double v) { return bottom - int(std::lround((v - lo) / (hi - lo) * (bottom - top))); };
  for (double v = std::ceil(lo / step) * step; v <= hi; v += step) {
    int const y = ey(v);
    line(pic, left, y, right, y, k_grid);
    line(pic, left - 4, y, left, y, k_black);
    char label[32];
    std::snprintf(label, sizeof(label), "%.*f", step < 0.1 ? 2 : 1, v);
    text(pic, left - 8 - text_width(label, ts), y - text_height(ts) / 2, label, ts, k_black);
  }
  line(pic, left, ey(1.0), right, ey(1.0), k_muted);  // the mean flux
  for (int k : valid) fill_rect(pic, axis.column(k) - 1, ey(flux[k]) - 1, 3, 3, k_curve);
  line(pic, left, top, left, bottom, k_black);
  line(pic, left, bottom, right, bottom, k_black);
  return pic;
}

Picture background_picture(HostReal2 const& background) {
  int const h = int(background.extent(0)), w = int(background.extent(1));
  PTYKO_REQUIRE(h > 0 && w > 0, "background picture: no background");
  int const zoom = std::max(1, (256 + std::max(h, w) - 1) / std::max(h, w));
  double counts = 0;
  std::vector<double> level(std::size_t(h) * w);
  for (std::size_t k = 0; k < level.size(); ++k) {
    counts += background.data()[k];
    level[k] = std::log10(1 + std::max(0.0, background.data()[k]));
  }
  Picture const small = gray_picture(level, h, w);
  int const ts = 2, top = 36;
  Picture pic(std::max(w * zoom, 320), h * zoom + top);
  std::string const title = fmt::format("background: {:.4g} counts per frame", counts);
  text(pic, (pic.width - text_width(title, ts)) / 2, 10, title, ts, k_black);
  int const left = (pic.width - w * zoom) / 2;
  for (int y = 0; y < h * zoom; ++y)
    for (int x = 0; x < w * zoom; ++x)
      std::copy_n(&small.rgb[3 * (std::size_t(y / zoom) * w + x / zoom)], 3,
                  &pic.rgb[3 * (std::size_t(y + top) * pic.width + left + x)]);
  return pic;
}

std::string result_output_stem(std::string const& result_path) {
  namespace fs = std::filesystem;
  fs::path p(result_path);
  PTYKO_REQUIRE(p.has_filename(), result_path, ": not a file name (the pictures are named after it)");
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == ".h5" || ext == ".hdf5" || ext == ".cxi") p.replace_extension();
  return p.string();
}

std::vector<std::string> result_picture_paths(std::string const& result_path) {
  std::string const stem = result_output_stem(result_path);
  return {stem + "_object_phase.png", stem + "_object_amplitude.png", stem + "_probe.png",
          stem + "_convergence.png"};
}

Picture positions_picture(std::vector<std::array<double, 2>> const& file_positions,
                          std::vector<std::array<double, 2>> const& refined) {
  constexpr int side = 640, margin = 24, top = 40, ts = 2;
  constexpr Rgb k_file{150, 150, 150}, k_moved{214, 39, 40};
  std::size_t const n = std::min(file_positions.size(), refined.size());
  double y0 = std::numeric_limits<double>::infinity(), y1 = -y0, x0 = y0, x1 = -y0, squares = 0, largest = 0;
  for (std::size_t k = 0; k < n; ++k) {
    y0 = std::min(y0, file_positions[k][0]);
    y1 = std::max(y1, file_positions[k][0]);
    x0 = std::min(x0, file_positions[k][1]);
    x1 = std::max(x1, file_positions[k][1]);
    double const d = std::hypot(refined[k][0] - file_positions[k][0], refined[k][1] - file_positions[k][1]);
    squares += d * d;
    largest = std::max(largest, d);
  }
  double const rms = n > 0 ? std::sqrt(squares / double(n)) : 0;
  double const extent = n > 0 ? std::max({y1 - y0, x1 - x0, 1.0}) : 1.0;
  // The exaggeration: 1, 2, 5, 10, 20, ... so that the rms move shows at
  // about 2 % of the extent.
  double exaggeration = 1;
  if (rms > 0)
    for (double decade = 1; decade < 1e6; decade *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if (m * decade * rms <= 0.02 * extent) exaggeration = m * decade;
  double const scale = double(side - 2 * margin) / extent;
  int const width = n > 0 ? int(std::lround((x1 - x0) * scale)) + 2 * margin : side;
  int const height = n > 0 ? int(std::lround((y1 - y0) * scale)) + 2 * margin + top : side;
  Picture pic(std::max(width, 320), height);
  std::string const title = fmt::format("moves x{:g}: rms {:.2f} px, max {:.2f} px", exaggeration, rms, largest);
  text(pic, (pic.width - text_width(title, ts)) / 2, 10, title, ts, k_black);
  auto const px = [&](double x) { return margin + int(std::lround((x - x0) * scale)); };
  auto const py = [&](double y) { return top + margin + int(std::lround((y - y0) * scale)); };
  for (std::size_t k = 0; k < n; ++k) {
    int const fx = px(file_positions[k][1]), fy = py(file_positions[k][0]);
    int const rx = px(file_positions[k][1] + exaggeration * (refined[k][1] - file_positions[k][1]));
    int const ry = py(file_positions[k][0] + exaggeration * (refined[k][0] - file_positions[k][0]));
    line(pic, fx, fy, rx, ry, k_moved);
    fill_rect(pic, fx - 1, fy - 1, 3, 3, k_file);
    fill_rect(pic, rx - 1, ry - 1, 3, 3, k_moved);
  }
  return pic;
}

std::vector<std::string> write_result_pictures(std::string const& result_path, HostComplex2 const& object,
                                               HostComplex3 const& probe,
                                               std::vector<double> const& power_fractions,
                                               std::vector<double> const& cost, std::string const& noise_model,
                                               std::vector<std::array<double, 2>> const& file_positions,
                                               std::vector<std::array<double, 2>> const& refined_positions,
                                               std::vector<double> const& relative_flux,
                                               HostReal2 const& background) {
  auto paths = result_picture_paths(result_path);
  // Each picture drawn and encoded on a thread of its own where the process
  // may run on several CPUs: a large object's two pictures take most of the
  // time (about 0.3 s each at 2097 x 2095), and libpng encodes on one.
  std::vector<std::function<Picture()>> draw = {
      [&] { return object_phase_picture(object); }, [&] { return object_amplitude_picture(object); },
      [&] { return probe_picture(probe, power_fractions); },
      [&] { return convergence_picture(cost, noise_model.empty() ? "cost" : "cost (" + noise_model + ")"); }};
  if (!refined_positions.empty() && refined_positions.size() == file_positions.size()) {
    paths.push_back(result_output_stem(result_path) + "_positions.png");
    draw.emplace_back([&] { return positions_picture(file_positions, refined_positions); });
  }
  if (!relative_flux.empty()) {
    paths.push_back(result_output_stem(result_path) + "_flux.png");
    draw.emplace_back([&] { return flux_picture(relative_flux); });
  }
  if (background.extent(0) > 0) {
    paths.push_back(result_output_stem(result_path) + "_background.png");
    draw.emplace_back([&] { return background_picture(background); });
  }
  // A failure (e.g. a missing folder) names the first picture that failed,
  // whichever thread met it first.
  std::vector<std::exception_ptr> failed(draw.size());
  impl::on_threads(draw.size(), impl::host_threads(), [&] {
    return [&](std::size_t j) {
      try {
        write_png(paths[j], draw[j]());
      } catch (...) {
        failed[j] = std::current_exception();
      }
    };
  });
  for (auto const& f : failed)
    if (f) std::rethrow_exception(f);
  return paths;
}

}  // namespace ptyko
