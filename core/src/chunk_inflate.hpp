#pragma once
// Reading a block of a deflated dataset with its chunks inflated on several
// threads. HDF5 inflates chunk by chunk in the calling thread and then
// converts the values: 10 000 frames of 128 x 128 uint16 (one frame per
// chunk, shuffled and deflated, as ptyko, h5py and most beamline writers
// store them) took 1.2 s of a 1.6 s load on one core. Here one thread reads
// the chunks' stored bytes (H5Dread_chunk) and every thread the process
// may run on inflates, un-shuffles and converts them straight into the
// caller's block (the filters: chunk_filters.hpp). Only pipelines this
// code knows exactly qualify; anything else, and any chunk not stored as
// expected, is left to HDF5. Internal to core/src/hdf5.cpp.

#include <hdf5.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace ptyko::h5::impl {

/// How a dataset's chunks are read without HDF5's filters.
struct InflatePlan {
  std::vector<hsize_t> dims, chunk;
  std::vector<H5Z_filter_t> filters;  ///< the pipeline in write order: deflate, shuffle then deflate, ...
  std::size_t element_size = 0;       ///< bytes per value in the file
  /// Converts n stored values (native order) to float.
  void (*to_float)(unsigned char const* in, std::size_t n, float* out) = nullptr;
};

/// The plan for `ds` when it is chunked, its filters are deflate with or
/// without shuffle and nothing else, and its file type is a native-order
/// integer (8 to 64 bits) or float (32, 64 bits); otherwise none.
std::optional<InflatePlan> inflate_plan(hid_t ds);

/// Reads the box of `count` elements at `start` of the dataset, converted
/// to float, into `out` (row-major over `count`), inflating on at most
/// `threads` threads, a wave of at least 16 MiB of chunks at a time. False
/// when a chunk is missing (never written: HDF5 gives it the fill value),
/// unreadable or not what its filters make (then `out` holds anything, and
/// the caller reads the box through HDF5, which names the problem).
bool read_inflated_box(hid_t ds, InflatePlan const& plan, std::vector<hsize_t> const& start,
                       std::vector<hsize_t> const& count, float* out, int threads);

}  // namespace ptyko::h5::impl
