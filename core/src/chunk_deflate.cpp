#include "chunk_deflate.hpp"

#include <ptyko/kernels/error.hpp>

#include <sched.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

namespace ptyko::h5::impl {

void shuffle_bytes(unsigned char const* in, std::size_t n, std::size_t element_size, unsigned char* out) {
  for (std::size_t b = 0; b < element_size; ++b) {
    unsigned char* plane = out + b * n;
    for (std::size_t i = 0; i < n; ++i) plane[i] = in[i * element_size + b];
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

int deflate_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int const cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  return std::clamp(cpus, 1, 16);
}

namespace {

// The grid of chunks over `dims`: how many along each dimension.
std::vector<hsize_t> chunk_counts(std::vector<hsize_t> const& dims, std::vector<hsize_t> const& chunk) {
  std::vector<hsize_t> c(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) c[k] = (dims[k] + chunk[k] - 1) / chunk[k];
  return c;
}

// Chunk number `index` (row-major over the grid) as its first element.
std::vector<hsize_t> chunk_offset(std::size_t index, std::vector<hsize_t> const& counts,
                                  std::vector<hsize_t> const& chunk) {
  std::vector<hsize_t> offset(counts.size());
  for (std::size_t k = counts.size(); k-- > 0;) {
    offset[k] = hsize_t(index % counts[k]) * chunk[k];
    index /= counts[k];
  }
  return offset;
}

// Copies the chunk at `offset` out of the row-major array into `out`
// (the whole chunk's extent, zero past the array's end), a run of its last
// dimension at a time.
void gather_chunk(unsigned char const* data, std::vector<hsize_t> const& dims, std::vector<hsize_t> const& chunk,
                  std::vector<hsize_t> const& offset, std::size_t element_size, unsigned char* out) {
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
  std::size_t const run = std::size_t(extent[rank - 1]) * element_size;
  std::vector<hsize_t> at(rank, 0);  // position inside the chunk, the last dimension held at 0
  while (true) {
    std::size_t src = 0, dst = 0;
    for (std::size_t k = 0; k < rank; ++k) {
      src = src * std::size_t(dims[k]) + std::size_t(offset[k] + at[k]);
      dst = dst * std::size_t(chunk[k]) + std::size_t(at[k]);
    }
    std::memcpy(out + dst * element_size, data + src * element_size, run);
    std::size_t k = rank - 1;  // next run: odometer over the leading dimensions
    while (k-- > 0) {
      if (++at[k] < extent[k]) break;
      at[k] = 0;
    }
    if (k == std::size_t(-1)) return;
  }
}

}  // namespace

ChunksWritten write_deflated_chunks(hid_t ds, void const* data, std::vector<hsize_t> const& dims,
                           std::vector<hsize_t> const& chunk, std::size_t element_size, int level, int threads) {
  PTYKO_ASSERT(!dims.empty() && dims.size() == chunk.size(), "write_deflated_chunks: ", dims.size(),
               " dimensions, a chunk of ", chunk.size());
  auto const counts = chunk_counts(dims, chunk);
  std::size_t chunks = 1, chunk_elements = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    chunks *= std::size_t(counts[k]);
    chunk_elements *= std::size_t(chunk[k]);
  }
  auto const* bytes = static_cast<unsigned char const*>(data);
  std::size_t const chunk_bytes = chunk_elements * element_size;
  // Waves of a few chunks per thread, at least 16 MiB of them (one frame
  // per chunk: hundreds): bounded memory, few thread starts.
  std::size_t const workers = std::size_t(std::max(1, threads));
  std::size_t const wave = std::max(4 * workers, (std::size_t(16) << 20) / std::max<std::size_t>(chunk_bytes, 1));
  std::vector<std::vector<unsigned char>> deflated(std::min(wave, chunks));
  for (std::size_t first = 0; first < chunks; first += wave) {
    std::size_t const n = std::min(wave, chunks - first);
    std::atomic<std::size_t> next{0};
    auto const work = [&] {
      std::vector<unsigned char> gathered(chunk_bytes), shuffled(chunk_bytes);
      for (std::size_t j = next++; j < n; j = next++) {
        gather_chunk(bytes, dims, chunk, chunk_offset(first + j, counts, chunk), element_size, gathered.data());
        shuffle_bytes(gathered.data(), chunk_elements, element_size, shuffled.data());
        deflated[j] = deflate_bytes(shuffled.data(), chunk_bytes, level);
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < std::min(workers, n); ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    for (std::size_t j = 0; j < n; ++j) {
      auto const offset = chunk_offset(first + j, counts, chunk);
      if (H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset.data(), deflated[j].size(), deflated[j].data()) < 0)
        return {first + j, chunks};
    }
  }
  return {chunks, chunks};
}

}  // namespace ptyko::h5::impl
