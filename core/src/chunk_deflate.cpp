#include "chunk_deflate.hpp"

#include "chunk_filters.hpp"
#include "host_threads.hpp"

#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cstring>

namespace ptyko::h5::impl {

namespace {

// Copies the chunk at `offset` out of the row-major array into `out`
// (the whole chunk's extent, zero past the array's end), narrowed as asked.
void gather_chunk(unsigned char const* data, std::vector<hsize_t> const& dims, std::vector<hsize_t> const& chunk,
                  std::vector<hsize_t> const& offset, std::size_t element_size, Narrowing narrowing,
                  unsigned char* out) {
  std::size_t const rank = dims.size();
  std::size_t chunk_elements = 1;
  for (hsize_t c : chunk) chunk_elements *= std::size_t(c);
  std::vector<hsize_t> extent(rank);  // the part of the chunk inside the array
  bool whole = true;
  for (std::size_t k = 0; k < rank; ++k) {
    extent[k] = std::min(chunk[k], dims[k] - offset[k]);
    whole = whole && extent[k] == chunk[k];
  }
  if (!whole) std::memset(out, 0, chunk_elements * element_size);
  std::size_t const floats = element_size / sizeof(float);  // per element, when narrowed
  for_each_run(extent, dims, offset, chunk, std::vector<hsize_t>(rank, 0),
               [&](std::size_t src, std::size_t dst, std::size_t n) {
                 if (narrowing == Narrowing::none) {
                   std::memcpy(out + dst * element_size, data + src * element_size, n * element_size);
                   return;
                 }
                 // IEEE round to nearest, as HDF5's double -> float conversion.
                 auto const* from = reinterpret_cast<double const*>(data) + src * floats;
                 float into[64];
                 for (std::size_t k = 0; k < n * floats; k += 64) {
                   std::size_t const m = std::min<std::size_t>(64, n * floats - k);
                   for (std::size_t q = 0; q < m; ++q) into[q] = static_cast<float>(from[k + q]);
                   std::memcpy(out + dst * element_size + k * sizeof(float), into, m * sizeof(float));
                 }
               });
}

}  // namespace

ChunksWritten write_deflated_chunks(hid_t ds, void const* data, std::vector<hsize_t> const& dims,
                                   std::vector<hsize_t> const& chunk, std::size_t element_size, Narrowing narrowing,
                                   int level, int threads) {
  PTYKO_ASSERT(!dims.empty() && dims.size() == chunk.size(), "write_deflated_chunks: ", dims.size(),
               " dimensions, a chunk of ", chunk.size());
  PTYKO_ASSERT(narrowing != Narrowing::other && (narrowing == Narrowing::none || element_size % sizeof(float) == 0),
               "write_deflated_chunks: no narrowing to elements of ", element_size, " bytes");
  auto const counts = chunk_counts(dims, chunk);
  std::size_t chunks = 1, chunk_elements = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    chunks *= std::size_t(counts[k]);
    chunk_elements *= std::size_t(chunk[k]);
  }
  auto const* bytes = static_cast<unsigned char const*>(data);
  std::size_t const chunk_bytes = chunk_elements * element_size;
  std::size_t const wave = chunks_per_wave(chunk_bytes, threads);
  std::vector<std::vector<unsigned char>> deflated(std::min(wave, chunks));
  for (std::size_t first = 0; first < chunks; first += wave) {
    std::size_t const n = std::min(wave, chunks - first);
    ptyko::impl::on_threads(n, threads, [&] {
      return [&, gathered = std::vector<unsigned char>(chunk_bytes),
              shuffled = std::vector<unsigned char>(chunk_bytes)](std::size_t j) mutable {
        gather_chunk(bytes, dims, chunk, chunk_offset(first + j, counts, chunk), element_size, narrowing,
                     gathered.data());
        shuffle_bytes(gathered.data(), chunk_elements, element_size, shuffled.data());
        deflated[j] = deflate_bytes(shuffled.data(), chunk_bytes, level);
      };
    });
    for (std::size_t j = 0; j < n; ++j) {
      auto const offset = chunk_offset(first + j, counts, chunk);
      if (H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset.data(), deflated[j].size(), deflated[j].data()) < 0)
        return {first + j, chunks};
    }
  }
  return {chunks, chunks};
}

}  // namespace ptyko::h5::impl
