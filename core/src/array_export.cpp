// .npy and TIFF writers. Bytes are assembled explicitly in little-endian
// order so the files are the same on any host.

#include "atomic_output.hpp"

#include <ptyko/core/array_export.hpp>
#include <ptyko/kernels/error.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace ptyko {
namespace {

void put_u16(std::vector<unsigned char>& out, std::uint16_t v) {
  out.push_back(static_cast<unsigned char>(v & 0xff));
  out.push_back(static_cast<unsigned char>(v >> 8));
}

void put_u32(std::vector<unsigned char>& out, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<unsigned char>((v >> (8 * k)) & 0xff));
}

void put_f32(std::vector<unsigned char>& out, float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  put_u32(out, bits);
}

std::size_t element_count(std::string const& path, std::vector<std::size_t> const& shape) {
  std::size_t n = 1;
  for (std::size_t e : shape) {
    PTYKO_REQUIRE(e == 0 || n <= std::numeric_limits<std::size_t>::max() / e, path,
                  ": array too large to write");
    n *= e;
  }
  return n;
}

// The .npy v1.0 header: magic, version, little-endian header length, then
// the dict padded with spaces and ended by '\n' so the total is a multiple
// of 64 (numpy's own alignment, which lets readers memory-map the data).
std::vector<unsigned char> npy_header(std::string const& descr, std::vector<std::size_t> const& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (std::size_t k = 0; k < shape.size(); ++k) {
    dict += std::to_string(shape[k]);
    if (k + 1 < shape.size() || shape.size() == 1) dict += ",";  // a 1-tuple needs its comma
    if (k + 1 < shape.size()) dict += " ";
  }
  dict += "), }";
  constexpr std::size_t preamble = 10;  // magic (6) + version (2) + length (2)
  std::size_t const total = (preamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - preamble - dict.size() - 1, ' ');
  dict += '\n';
  PTYKO_ASSERT(dict.size() <= 0xffff, "npy header of ", dict.size(), " bytes does not fit version 1.0");
  std::vector<unsigned char> out{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  put_u16(out, static_cast<std::uint16_t>(dict.size()));
  out.insert(out.end(), dict.begin(), dict.end());
  return out;
}

// Writes `n` values in chunks (a whole object as bytes would double the
// memory), each converted by `emit(out, k)`.
template <class Emit>
void write_chunked(impl::AtomicOutput& out, std::size_t n, Emit&& emit) {
  std::vector<unsigned char> buf;
  constexpr std::size_t chunk = 1 << 16;
  for (std::size_t start = 0; start < n; start += chunk) {
    buf.clear();
    for (std::size_t k = start; k < std::min(n, start + chunk); ++k) emit(buf, k);
    out.write(buf.data(), buf.size());
  }
}

}  // namespace

void write_npy(std::string const& path, std::vector<std::size_t> const& shape, Complex<double> const* data) {
  std::size_t const n = element_count(path, shape);
  PTYKO_REQUIRE(n == 0 || data != nullptr, path, ": no data to write");
  impl::AtomicOutput out(path);
  auto const header = npy_header("<c8", shape);
  out.write(header.data(), header.size());
  write_chunked(out, n, [&](std::vector<unsigned char>& buf, std::size_t k) {
    put_f32(buf, static_cast<float>(data[k].real()));
    put_f32(buf, static_cast<float>(data[k].imag()));
  });
  out.commit();
}

void write_npy(std::string const& path, std::vector<std::size_t> const& shape, float const* data) {
  std::size_t const n = element_count(path, shape);
  PTYKO_REQUIRE(n == 0 || data != nullptr, path, ": no data to write");
  impl::AtomicOutput out(path);
  auto const header = npy_header("<f4", shape);
  out.write(header.data(), header.size());
  write_chunked(out, n, [&](std::vector<unsigned char>& buf, std::size_t k) { put_f32(buf, data[k]); });
  out.commit();
}

void write_npy(std::string const& path, HostComplex2 const& a) {
  // LayoutRight Views are C order, so data() is the row-major array.
  PTYKO_ASSERT(a.span_is_contiguous(), "write_npy of a non-contiguous View for ", path);
  write_npy(path, {a.extent(0), a.extent(1)}, a.data());
}

void write_npy(std::string const& path, HostComplex3 const& a) {
  PTYKO_ASSERT(a.span_is_contiguous(), "write_npy of a non-contiguous View for ", path);
  write_npy(path, {a.extent(0), a.extent(1), a.extent(2)}, a.data());
}

void write_tiff(std::string const& path, int height, int width, float const* data) {
  PTYKO_REQUIRE(height > 0 && width > 0 && data != nullptr, path, ": cannot write an empty image (", height,
                " x ", width, ")");
  std::uint64_t const bytes = std::uint64_t(height) * std::uint64_t(width) * 4;
  // Classic TIFF addresses everything with 32-bit offsets; the IFD follows
  // the pixels, so they must leave room for it.
  PTYKO_REQUIRE(bytes < 0xffff0000ull, path, ": image of ", height, " x ", width,
                " is too large for a classic TIFF (4 GiB); use --export npy");
  auto const data_bytes = static_cast<std::uint32_t>(bytes);

  // Layout: 8-byte header, pixels at 8, the IFD right after them (an even
  // offset, as TIFF requires), then the two resolution rationals.
  constexpr std::uint32_t data_offset = 8;
  std::uint32_t const ifd_offset = data_offset + data_bytes;
  constexpr std::uint16_t entries = 14;
  std::uint32_t const rational_offset = ifd_offset + 2 + 12 * entries + 4;

  std::vector<unsigned char> head{'I', 'I'};
  put_u16(head, 42);
  put_u32(head, ifd_offset);

  constexpr std::uint16_t k_short = 3, k_long = 4, k_rational = 5;
  std::vector<unsigned char> ifd;
  put_u16(ifd, entries);
  // Tags must be in ascending order. A SHORT value sits in the first two
  // bytes of the 4-byte value field.
  auto const entry = [&](std::uint16_t tag, std::uint16_t type, std::uint32_t value) {
    put_u16(ifd, tag);
    put_u16(ifd, type);
    put_u32(ifd, 1);
    if (type == k_short) {
      put_u16(ifd, static_cast<std::uint16_t>(value));
      put_u16(ifd, 0);
    } else {
      put_u32(ifd, value);
    }
  };
  entry(256, k_long, std::uint32_t(width));       // ImageWidth
  entry(257, k_long, std::uint32_t(height));      // ImageLength
  entry(258, k_short, 32);                        // BitsPerSample
  entry(259, k_short, 1);                         // Compression: none
  entry(262, k_short, 1);                         // PhotometricInterpretation: BlackIsZero
  entry(273, k_long, data_offset);                // StripOffsets
  entry(277, k_short, 1);                         // SamplesPerPixel
  entry(278, k_long, std::uint32_t(height));      // RowsPerStrip: one strip
  entry(279, k_long, data_bytes);                 // StripByteCounts
  entry(282, k_rational, rational_offset);        // XResolution (required by baseline)
  entry(283, k_rational, rational_offset + 8);    // YResolution
  entry(284, k_short, 1);                         // PlanarConfiguration: chunky
  entry(296, k_short, 1);                         // ResolutionUnit: none
  entry(339, k_short, 3);                         // SampleFormat: IEEE float
  put_u32(ifd, 0);                                // no further image
  for (int k = 0; k < 2; ++k) {                   // 1/1 for x and y
    put_u32(ifd, 1);
    put_u32(ifd, 1);
  }
  PTYKO_ASSERT(ifd.size() == 2 + 12 * entries + 4 + 16, "TIFF IFD of ", ifd.size(), " bytes");

  impl::AtomicOutput out(path);
  out.write(head.data(), head.size());
  write_chunked(out, std::size_t(height) * std::size_t(width),
                [&](std::vector<unsigned char>& buf, std::size_t k) { put_f32(buf, data[k]); });
  out.write(ifd.data(), ifd.size());
  out.commit();
}

std::vector<float> amplitude_of(HostComplex2 const& a) {
  std::vector<float> out(a.extent(0) * a.extent(1));
  for (std::size_t y = 0; y < a.extent(0); ++y)
    for (std::size_t x = 0; x < a.extent(1); ++x)
      out[y * a.extent(1) + x] = static_cast<float>(std::hypot(a(y, x).real(), a(y, x).imag()));
  return out;
}

std::vector<float> phase_of(HostComplex2 const& a) {
  std::vector<float> out(a.extent(0) * a.extent(1));
  for (std::size_t y = 0; y < a.extent(0); ++y)
    for (std::size_t x = 0; x < a.extent(1); ++x)
      out[y * a.extent(1) + x] = static_cast<float>(std::atan2(a(y, x).imag(), a(y, x).real()));
  return out;
}

}  // namespace ptyko
