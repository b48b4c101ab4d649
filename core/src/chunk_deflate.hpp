#pragma once
// Writing a large dataset whose filters are HDF5's shuffle then deflate on
// several threads. HDF5 runs a dataset's filters chunk by chunk in the
// calling thread: a 2097 x 2095 complex64 object (35 MB, mantissas that
// hardly compress) deflates at about 45 MB/s, 0.8 s per object-sized
// dataset of every result and checkpoint, and a 10 000 x 10 000 object
// 18 s. Here the chunks are shuffled and deflated on the threads this
// process may run on, exactly as the filters would (the file is the same
// to any reader: the dataset keeps its filter pipeline), and written in
// order with H5Dwrite_chunk (the filters: chunk_filters.hpp). Internal to
// core/src/hdf5.cpp.

#include <hdf5.h>

#include <cstddef>
#include <vector>

namespace ptyko::h5::impl {

/// How the data's values become the file's: as they are, or doubles
/// narrowed to floats (the file's element then holds element_size / 4 of
/// them: float32, complex64), rounded as HDF5's conversion rounds them.
/// Other conversions are HDF5's (H5Dwrite).
enum class Narrowing { none, double_to_float, other };

/// Writes `data` (row-major, `dims`, each element `element_size` bytes in
/// the dataset's file type, or twice that as doubles when narrowed) into `ds`, chunked as `chunk` with the filters
/// shuffle then deflate(level) and nothing else: every chunk shuffled and
/// deflated on `threads` threads, a few chunks per thread at a time, and
/// written in order. Chunks across the dataset's end are zero past it.
/// Stops at the first chunk HDF5 refuses; returns the chunks written and
/// their total (none written: the caller may fall back to H5Dwrite).
struct ChunksWritten {
  std::size_t written = 0, total = 0;
};
ChunksWritten write_deflated_chunks(hid_t ds, void const* data, std::vector<hsize_t> const& dims,
                                   std::vector<hsize_t> const& chunk, std::size_t element_size, Narrowing narrowing,
                                   int level, int threads);

}  // namespace ptyko::h5::impl
