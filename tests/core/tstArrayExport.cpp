// .npy and TIFF export: files parsed back byte by byte against the formats'
// specifications (NumPy NEP 1 / format.py, TIFF 6.0 baseline).
#include <ptyko/core/array_export.hpp>
#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <test_files.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace ptyko;
namespace fs = std::filesystem;
using namespace ptyko::test;  // TempDirTest, expect_user_error

// A fresh folder per test (test_files.hpp).
class ArrayExport : public TempDirTest {};

std::vector<unsigned char> read_bytes(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint16_t u16(std::vector<unsigned char> const& b, std::size_t at) {
  return std::uint16_t(b.at(at) | (b.at(at + 1) << 8));
}

std::uint32_t u32(std::vector<unsigned char> const& b, std::size_t at) {
  return std::uint32_t(b.at(at)) | (std::uint32_t(b.at(at + 1)) << 8) | (std::uint32_t(b.at(at + 2)) << 16) |
         (std::uint32_t(b.at(at + 3)) << 24);
}

float f32(std::vector<unsigned char> const& b, std::size_t at) {
  std::uint32_t const bits = u32(b, at);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Splits an .npy file into its header dict and the offset of the data,
// checking the fixed parts of the format on the way.
std::string npy_dict(std::vector<unsigned char> const& b, std::size_t* data_offset) {
  EXPECT_GE(b.size(), 10u);
  EXPECT_EQ(b[0], 0x93);
  EXPECT_EQ(std::string(b.begin() + 1, b.begin() + 6), "NUMPY");
  EXPECT_EQ(b[6], 1);  // version 1.0
  EXPECT_EQ(b[7], 0);
  std::size_t const len = u16(b, 8);
  *data_offset = 10 + len;
  EXPECT_EQ(*data_offset % 64, 0u) << "data not 64-byte aligned";
  EXPECT_LE(*data_offset, b.size());
  std::string dict(b.begin() + 10, b.begin() + std::ptrdiff_t(*data_offset));
  EXPECT_EQ(dict.back(), '\n');
  return dict;
}

void expect_contains(std::string const& s, std::string const& part) {
  EXPECT_NE(s.find(part), std::string::npos) << "'" << part << "' not in: " << s;
}

TEST_F(ArrayExport, NpyComplex2dHeaderAndValues) {
  HostComplex2 a("a", 2, 3);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) a(y, x) = Complex<double>(y + 0.1 * x, -1.0 / (1 + y + x));
  std::string const path = file("object.npy");
  write_npy(path, a);
  auto const b = read_bytes(path);
  std::size_t off = 0;
  std::string const dict = npy_dict(b, &off);
  EXPECT_EQ(dict.rfind("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u) << dict;
  ASSERT_EQ(b.size(), off + 6 * 8);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) {
      std::size_t const at = off + 8 * std::size_t(y * 3 + x);  // C order: x fastest
      EXPECT_EQ(f32(b, at), float(a(y, x).real()));
      EXPECT_EQ(f32(b, at + 4), float(a(y, x).imag()));
    }
  EXPECT_EQ(listing(), std::vector<std::string>{"object.npy"});  // no temporary left
}

TEST_F(ArrayExport, NpyShapesAndFloat) {
  HostComplex3 p("p", 2, 4, 4);
  p(1, 3, 2) = Complex<double>(7.0, 8.0);
  write_npy(file("probe.npy"), p);
  auto const b = read_bytes(file("probe.npy"));
  std::size_t off = 0;
  expect_contains(npy_dict(b, &off), "'shape': (2, 4, 4)");
  ASSERT_EQ(b.size(), off + 32 * 8);
  std::size_t const at = off + 8 * (16 + 3 * 4 + 2);
  EXPECT_EQ(f32(b, at), 7.0f);
  EXPECT_EQ(f32(b, at + 4), 8.0f);

  std::vector<float> const v{1.5f, -2.0f, 3.25f, 0.0f, 1e-7f};
  write_npy(file("v.npy"), {5}, v.data());
  auto const c = read_bytes(file("v.npy"));
  std::string const d = npy_dict(c, &off);
  expect_contains(d, "'descr': '<f4'");
  expect_contains(d, "'shape': (5,)");  // a 1-tuple keeps its comma
  ASSERT_EQ(c.size(), off + 5 * 4);
  for (std::size_t k = 0; k < v.size(); ++k) EXPECT_EQ(f32(c, off + 4 * k), v[k]);

  // A scalar has shape ().
  float const s = 4.0f;
  write_npy(file("s.npy"), std::vector<std::size_t>{}, &s);
  auto const e = read_bytes(file("s.npy"));
  expect_contains(npy_dict(e, &off), "'shape': ()");
  EXPECT_EQ(f32(e, off), 4.0f);
}

struct TiffEntry {
  std::uint16_t type;
  std::uint32_t count, value;
};

TEST_F(ArrayExport, TiffIsBaselineFloat) {
  int const h = 3, w = 5;
  std::vector<float> img(h * w);
  for (int k = 0; k < h * w; ++k) img[k] = 0.5f * k - 3.0f;
  std::string const path = file("amp.tiff");
  write_tiff(path, h, w, img.data());
  auto const b = read_bytes(path);
  ASSERT_GE(b.size(), 8u);
  EXPECT_EQ(b[0], 'I');
  EXPECT_EQ(b[1], 'I');
  EXPECT_EQ(u16(b, 2), 42);
  std::uint32_t const ifd = u32(b, 4);
  EXPECT_EQ(ifd % 2, 0u);  // word aligned
  std::uint16_t const n = u16(b, ifd);
  std::map<std::uint16_t, TiffEntry> tags;
  std::uint16_t previous = 0;
  for (std::uint16_t k = 0; k < n; ++k) {
    std::size_t const at = ifd + 2 + 12 * std::size_t(k);
    std::uint16_t const tag = u16(b, at);
    EXPECT_GT(tag, previous) << "tags out of order";
    previous = tag;
    TiffEntry e{u16(b, at + 2), u32(b, at + 4), 0};
    e.value = e.type == 3 ? u16(b, at + 8) : u32(b, at + 8);
    tags[tag] = e;
  }
  EXPECT_EQ(u32(b, ifd + 2 + 12 * std::size_t(n)), 0u);  // a single image
  auto const value = [&](std::uint16_t tag) {
    EXPECT_TRUE(tags.count(tag)) << "tag " << tag << " missing";
    EXPECT_EQ(tags[tag].count, 1u) << "tag " << tag;
    return tags[tag].value;
  };
  EXPECT_EQ(value(256), std::uint32_t(w));  // ImageWidth
  EXPECT_EQ(value(257), std::uint32_t(h));  // ImageLength
  EXPECT_EQ(value(258), 32u);               // BitsPerSample
  EXPECT_EQ(value(259), 1u);                // no compression
  EXPECT_EQ(value(262), 1u);                // BlackIsZero
  EXPECT_EQ(value(277), 1u);                // SamplesPerPixel
  EXPECT_EQ(value(278), std::uint32_t(h));  // one strip
  EXPECT_EQ(value(279), std::uint32_t(h * w * 4));
  EXPECT_EQ(value(339), 3u);                // IEEE float
  EXPECT_EQ(tags[258].type, 3);             // SHORT
  std::uint32_t const xres = value(282);
  EXPECT_EQ(tags[282].type, 5);             // RATIONAL
  EXPECT_EQ(u32(b, xres), 1u);
  EXPECT_EQ(u32(b, xres + 4), 1u);
  std::uint32_t const strip = value(273);
  ASSERT_LE(strip + std::size_t(h * w * 4), b.size());
  for (int k = 0; k < h * w; ++k) EXPECT_EQ(f32(b, strip + 4 * std::size_t(k)), img[k]);
  EXPECT_EQ(listing(), std::vector<std::string>{"amp.tiff"});
}

TEST_F(ArrayExport, FailuresThrowUserErrorNamingTheFile) {
  std::vector<float> img(4, 1.0f);
  for (std::string const name : {"gone/a.tiff", "gone/a.npy"}) {
    std::string const path = file(name);
    expect_user_error(
        [&] {
          if (name.find(".tiff") != std::string::npos)
            write_tiff(path, 2, 2, img.data());
          else
            write_npy(path, {4}, img.data());
        },
        path, {});
  }
  EXPECT_THROW(write_tiff(file("empty.tiff"), 0, 3, img.data()), UserError);
  EXPECT_TRUE(listing().empty());
}

TEST_F(ArrayExport, AmplitudeAndPhase) {
  HostComplex2 a("a", 1, 3);
  a(0, 0) = Complex<double>(3.0, 4.0);
  a(0, 1) = Complex<double>(-1.0, 0.0);
  a(0, 2) = Complex<double>(0.0, -2.0);
  auto const amp = amplitude_of(a);
  auto const ph = phase_of(a);
  ASSERT_EQ(amp.size(), 3u);
  EXPECT_FLOAT_EQ(amp[0], 5.0f);
  EXPECT_FLOAT_EQ(amp[1], 1.0f);
  EXPECT_FLOAT_EQ(amp[2], 2.0f);
  EXPECT_FLOAT_EQ(ph[0], float(std::atan2(4.0, 3.0)));
  EXPECT_FLOAT_EQ(ph[1], float(M_PI));
  EXPECT_FLOAT_EQ(ph[2], float(-M_PI / 2));
}

}  // namespace
