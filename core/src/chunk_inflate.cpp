#include "chunk_inflate.hpp"

#include "chunk_filters.hpp"
#include "host_threads.hpp"

#include <ptyko/core/hdf5.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <utility>

namespace ptyko::h5::impl {

namespace {

template <class T>
void convert(unsigned char const* in, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, in + i * sizeof(T), sizeof(T));  // chunk bytes carry no alignment
    out[i] = static_cast<float>(v);
  }
}

// The conversion for a file type equal (size, order, sign, padding) to a
// native one; none for anything else (big-endian data, odd precisions).
template <class T>
bool match(hid_t ftype, hid_t native, InflatePlan& plan) {
  if (H5Tequal(ftype, native) <= 0) return false;
  plan.element_size = sizeof(T);
  plan.to_float = &convert<T>;
  return true;
}

bool native_number(hid_t ftype, InflatePlan& plan) {
  return match<std::uint8_t>(ftype, H5T_NATIVE_UINT8, plan) || match<std::int8_t>(ftype, H5T_NATIVE_INT8, plan) ||
         match<std::uint16_t>(ftype, H5T_NATIVE_UINT16, plan) ||
         match<std::int16_t>(ftype, H5T_NATIVE_INT16, plan) ||
         match<std::uint32_t>(ftype, H5T_NATIVE_UINT32, plan) ||
         match<std::int32_t>(ftype, H5T_NATIVE_INT32, plan) ||
         match<std::uint64_t>(ftype, H5T_NATIVE_UINT64, plan) ||
         match<std::int64_t>(ftype, H5T_NATIVE_INT64, plan) || match<float>(ftype, H5T_NATIVE_FLOAT, plan) ||
         match<double>(ftype, H5T_NATIVE_DOUBLE, plan);
}

}  // namespace

std::optional<InflatePlan> inflate_plan(hid_t ds) {
  InflatePlan plan;
  Handle const ftype(H5Dget_type(ds));
  if (!ftype.valid() || !native_number(ftype, plan)) return std::nullopt;
  Handle const space(H5Dget_space(ds));
  int const rank = space.valid() ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank <= 0) return std::nullopt;
  plan.dims.resize(std::size_t(rank));
  H5Sget_simple_extent_dims(space, plan.dims.data(), nullptr);
  Handle const dcpl(H5Dget_create_plist(ds));
  if (!dcpl.valid() || H5Pget_layout(dcpl) != H5D_CHUNKED) return std::nullopt;
  plan.chunk.resize(std::size_t(rank));
  if (H5Pget_chunk(dcpl, rank, plan.chunk.data()) != rank) return std::nullopt;
  int const filters = H5Pget_nfilters(dcpl);
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0;
    std::size_t values = 0;
    unsigned config = 0;
    H5Z_filter_t const id = H5Pget_filter2(dcpl, unsigned(i), &flags, &values, nullptr, 0, nullptr, &config);
    plan.filters.push_back(id);
  }
  // Shuffle (if any) before deflate, once each: what h5py, ptyko and
  // HDF5's own tools write. Other orders and filters are HDF5's to read.
  bool const known = plan.filters == std::vector<H5Z_filter_t>{H5Z_FILTER_DEFLATE} ||
                     plan.filters == std::vector<H5Z_filter_t>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE};
  if (!known) return std::nullopt;
  return plan;
}

bool read_inflated_box(hid_t ds, InflatePlan const& plan, std::vector<hsize_t> const& start,
                       std::vector<hsize_t> const& count, float* out, int threads) {
  std::size_t const rank = plan.dims.size();
  if (start.size() != rank || count.size() != rank) return false;
  std::size_t chunk_elements = 1;
  std::vector<hsize_t> first(rank), grid(rank);  // the chunks the box meets: first, and how many, per dimension
  for (std::size_t k = 0; k < rank; ++k) {
    if (count[k] == 0) return true;
    chunk_elements *= std::size_t(plan.chunk[k]);
    first[k] = start[k] / plan.chunk[k];
    grid[k] = (start[k] + count[k] - 1) / plan.chunk[k] - first[k] + 1;
  }
  std::size_t chunks = 1;
  for (hsize_t g : grid) chunks *= std::size_t(g);
  std::size_t const chunk_bytes = chunk_elements * plan.element_size;
  std::size_t const wave = chunks_per_wave(chunk_bytes, threads);

  struct Stored {
    std::vector<hsize_t> offset;
    std::vector<unsigned char> bytes;
    std::uint32_t skipped = 0;  // bit i: filter i was not applied to this chunk
  };
  std::vector<Stored> stored(std::min(wave, chunks));
  // A chunk's bytes with its filters undone, backwards, each into the
  // scratch buffer it does not read; nullptr when they do not give a whole
  // chunk.
  auto const unfiltered = [&](Stored const& s, std::vector<unsigned char>& a,
                              std::vector<unsigned char>& b) -> unsigned char const* {
    unsigned char const* data = s.bytes.data();
    std::size_t size = s.bytes.size();
    for (std::size_t i = plan.filters.size(); i-- > 0;) {
      if (s.skipped & (std::uint32_t(1) << i)) continue;
      unsigned char* into = data == a.data() ? b.data() : a.data();
      if (plan.filters[i] == H5Z_FILTER_DEFLATE) {
        if (!inflate_bytes(data, size, into, chunk_bytes)) return nullptr;
      } else {  // shuffle
        if (size != chunk_bytes) return nullptr;
        unshuffle_bytes(data, chunk_elements, plan.element_size, into);
      }
      data = into;
      size = chunk_bytes;
    }
    return size == chunk_bytes ? data : nullptr;
  };
  for (std::size_t done = 0; done < chunks; done += wave) {
    std::size_t const n = std::min(wave, chunks - done);
    // HDF5 is not thread-safe: this thread reads the stored bytes.
    for (std::size_t j = 0; j < n; ++j) {
      Stored& s = stored[j];
      s.offset = chunk_offset(done + j, grid, plan.chunk);
      for (std::size_t k = 0; k < rank; ++k) s.offset[k] += first[k] * plan.chunk[k];
      hsize_t size = 0;
      if (H5Dget_chunk_storage_size(ds, s.offset.data(), &size) < 0 || size == 0) return false;
      s.bytes.resize(std::size_t(size));
      if (H5Dread_chunk(ds, H5P_DEFAULT, s.offset.data(), &s.skipped, s.bytes.data()) < 0) return false;
    }
    std::atomic<bool> failed{false};
    ptyko::impl::on_threads(n, threads, [&] {
      return [&, a = std::vector<unsigned char>(chunk_bytes),
              b = std::vector<unsigned char>(chunk_bytes)](std::size_t j) mutable {
        Stored const& s = stored[j];
        unsigned char const* const data = unfiltered(s, a, b);
        if (data == nullptr) {
          failed = true;
          return;
        }
        // The part of the chunk inside the box (a chunk may run past both).
        std::vector<hsize_t> extent(rank), in_chunk(rank), in_box(rank);
        for (std::size_t k = 0; k < rank; ++k) {
          hsize_t const lo = std::max(start[k], s.offset[k]);
          hsize_t const hi = std::min(start[k] + count[k], s.offset[k] + plan.chunk[k]);
          extent[k] = hi - lo;
          in_chunk[k] = lo - s.offset[k];
          in_box[k] = lo - start[k];
        }
        for_each_run(extent, plan.chunk, in_chunk, count, in_box, [&](std::size_t src, std::size_t dst, std::size_t len) {
          plan.to_float(data + src * plan.element_size, len, out + dst);
        });
      };
    });
    if (failed) return false;
  }
  return true;
}

}  // namespace ptyko::h5::impl
