#pragma once
// What reading and writing a chunked dataset on several threads share
// (chunk_deflate.hpp, chunk_inflate.hpp): HDF5's shuffle and deflate
// filters done by hand, byte for byte as HDF5 does them; the grid of chunks
// over a dataset; copies of boxes between row-major arrays, a run along the
// last dimension at a time. HDF5 runs a dataset's filters chunk by chunk
// in the calling thread, and its library is not thread-safe: chunks are
// read or written by one thread, and only the filters run on several
// (host_threads.hpp). Internal to core/src.

#include <hdf5.h>

#include <cstddef>
#include <vector>

namespace ptyko::h5::impl {

/// HDF5's shuffle filter on one chunk of n elements of `element_size`
/// bytes: byte b of element i goes to out[b * n + i].
void shuffle_bytes(unsigned char const* in, std::size_t n, std::size_t element_size, unsigned char* out);
/// Its inverse, what the filter does when a chunk is read.
void unshuffle_bytes(unsigned char const* in, std::size_t n, std::size_t element_size, unsigned char* out);

/// The zlib stream of `in` at `level`, as HDF5's deflate filter writes a
/// chunk (zlib's compress2).
std::vector<unsigned char> deflate_bytes(unsigned char const* in, std::size_t n, int level);
/// Inflates the zlib stream `in` (n bytes) into `out`; true when it is one
/// whole stream of exactly `out_bytes` bytes.
bool inflate_bytes(unsigned char const* in, std::size_t n, unsigned char* out, std::size_t out_bytes);

/// Chunks filtered per wave on `threads` threads: a few per thread, at
/// least 16 MiB of them (one frame per chunk: hundreds), for bounded memory
/// and few thread starts.
std::size_t chunks_per_wave(std::size_t chunk_bytes, int threads);

/// The grid of chunks over `dims`: how many along each dimension.
std::vector<hsize_t> chunk_counts(std::vector<hsize_t> const& dims, std::vector<hsize_t> const& chunk);
/// Chunk number `index` (row-major over the grid of `counts`) as its first element.
std::vector<hsize_t> chunk_offset(std::size_t index, std::vector<hsize_t> const& counts,
                                  std::vector<hsize_t> const& chunk);

/// Calls run(src, dst, length) for each run along the last dimension of a
/// box of `extent` elements that lies at `src_at` in a row-major array of
/// `src_dims` and at `dst_at` in one of `dst_dims`: src and dst are the
/// run's first element's indices in the two arrays. An empty box: no call.
template <class Run>
void for_each_run(std::vector<hsize_t> const& extent, std::vector<hsize_t> const& src_dims,
                  std::vector<hsize_t> const& src_at, std::vector<hsize_t> const& dst_dims,
                  std::vector<hsize_t> const& dst_at, Run&& run) {
  std::size_t const rank = extent.size();
  for (hsize_t e : extent)
    if (e == 0) return;
  std::vector<hsize_t> at(rank, 0);  // position inside the box, the last dimension held at 0
  while (true) {
    std::size_t src = 0, dst = 0;
    for (std::size_t k = 0; k < rank; ++k) {
      src = src * std::size_t(src_dims[k]) + std::size_t(src_at[k] + at[k]);
      dst = dst * std::size_t(dst_dims[k]) + std::size_t(dst_at[k] + at[k]);
    }
    run(src, dst, std::size_t(extent[rank - 1]));
    std::size_t k = rank - 1;  // next run: odometer over the leading dimensions
    while (k-- > 0) {
      if (++at[k] < extent[k]) break;
      at[k] = 0;
    }
    if (k == std::size_t(-1)) return;
  }
}

}  // namespace ptyko::h5::impl
