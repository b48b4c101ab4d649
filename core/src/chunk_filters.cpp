#include "chunk_filters.hpp"

#include <ptyko/kernels/error.hpp>

#include <zlib.h>

#include <algorithm>
#include <limits>

namespace ptyko::h5::impl {

void shuffle_bytes(unsigned char const* in, std::size_t n, std::size_t element_size, unsigned char* out) {
  for (std::size_t b = 0; b < element_size; ++b) {
    unsigned char* plane = out + b * n;
    for (std::size_t i = 0; i < n; ++i) plane[i] = in[i * element_size + b];
  }
}

void unshuffle_bytes(unsigned char const* in, std::size_t n, std::size_t element_size, unsigned char* out) {
  for (std::size_t b = 0; b < element_size; ++b) {
    unsigned char const* plane = in + b * n;
    for (std::size_t i = 0; i < n; ++i) out[i * element_size + b] = plane[i];
  }
}

std::vector<unsigned char> deflate_bytes(unsigned char const* in, std::size_t n, int level) {
  uLongf size = compressBound(uLong(n));
  std::vector<unsigned char> out(size);
  int const rc = compress2(out.data(), &size, in, uLong(n), level);
  PTYKO_REQUIRE(rc == Z_OK, "zlib could not deflate a chunk of ", n, " bytes (error ", rc, ")");
  out.resize(size);
  return out;
}

bool inflate_bytes(unsigned char const* in, std::size_t n, unsigned char* out, std::size_t out_bytes) {
  if (n > std::numeric_limits<uInt>::max() || out_bytes > std::numeric_limits<uInt>::max()) return false;
  // uncompress() itself, but told apart: a stream that ends early or holds
  // more than `out_bytes` is not this chunk.
  uLongf size = uLongf(out_bytes);
  uLong source = uLong(n);
  int const rc = uncompress2(out, &size, in, &source);
  return rc == Z_OK && size == out_bytes;
}

std::size_t chunks_per_wave(std::size_t chunk_bytes, int threads) {
  std::size_t const workers = std::size_t(std::max(1, threads));
  return std::max(4 * workers, (std::size_t(16) << 20) / std::max<std::size_t>(chunk_bytes, 1));
}

std::vector<hsize_t> chunk_counts(std::vector<hsize_t> const& dims, std::vector<hsize_t> const& chunk) {
  std::vector<hsize_t> c(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) c[k] = (dims[k] + chunk[k] - 1) / chunk[k];
  return c;
}

std::vector<hsize_t> chunk_offset(std::size_t index, std::vector<hsize_t> const& counts,
                                  std::vector<hsize_t> const& chunk) {
  std::vector<hsize_t> offset(counts.size());
  for (std::size_t k = counts.size(); k-- > 0;) {
    offset[k] = hsize_t(index % counts[k]) * chunk[k];
    index /= counts[k];
  }
  return offset;
}

}  // namespace ptyko::h5::impl
