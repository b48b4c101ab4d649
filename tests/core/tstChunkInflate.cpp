// Deflated datasets read with their chunks inflated on several threads
// (core/src/chunk_inflate.cpp): every value must be what HDF5's own filter
// pipeline and conversion give, for chunks across frames and across the
// dataset's end, every type a detector writes, shuffle or not, chunks
// stored with a filter skipped, and a raster scan's rank-4 stack. What the
// code does not know exactly (another byte order, a checksum filter, a
// chunk never written) must be left to HDF5, and read the same.
#include "chunk_inflate.hpp"

#include <ptyko/core/hdf5.hpp>

#include <gtest/gtest.h>

#include <test_files.hpp>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace ptyko;
using namespace ptyko::test;

class ChunkInflate : public TempDirTest {};

// Values a detector might store, for type `type` (negatives for signed and
// float types, large ones where the type holds them).
std::vector<double> values(std::size_t n, hid_t type) {
  bool const is_signed = H5Tget_class(type) == H5T_FLOAT || H5Tget_sign(type) == H5T_SGN_2;
  double const top = H5Tget_size(type) == 1 ? 250 : 60000;
  std::vector<double> v(n);
  for (std::size_t k = 0; k < n; ++k) {
    double x = double((k * 2654435761u) % 997) / 997.0;  // scattered in [0, 1)
    v[k] = k % 29 == 0 ? top * x : double(k % 7);
    if (is_signed && k % 5 == 0) v[k] = -v[k];
    if (H5Tget_class(type) == H5T_FLOAT) v[k] += 0.125 * double(k % 3);
  }
  return v;
}

struct Layout {
  std::vector<hsize_t> dims, chunk;
  hid_t type;                     // file type
  std::vector<H5Z_filter_t> filters;  // in write order
};

// HDF5's predefined file types, read once: their macros expand to comma
// expressions, which nvcc's front end rejects inside a braced initialiser.
struct FileTypes {
  hid_t u8 = H5T_STD_U8LE, i16 = H5T_STD_I16LE, u16 = H5T_STD_U16LE, u16be = H5T_STD_U16BE;
  hid_t i32 = H5T_STD_I32LE, u32 = H5T_STD_U32LE, i64 = H5T_STD_I64LE;
  hid_t f32 = H5T_IEEE_F32LE, f64 = H5T_IEEE_F64LE;
};

// Writes `layout` at /data through HDF5's filters; values() converted by HDF5.
void write_dataset(h5::File const& f, Layout const& l, char const* name = "data") {
  h5::Handle space(H5Screate_simple(int(l.dims.size()), l.dims.data(), nullptr));
  h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  ASSERT_GE(H5Pset_chunk(dcpl, int(l.chunk.size()), l.chunk.data()), 0);
  for (auto id : l.filters) {
    if (id == H5Z_FILTER_SHUFFLE) H5Pset_shuffle(dcpl);
    if (id == H5Z_FILTER_DEFLATE) H5Pset_deflate(dcpl, 4);
    if (id == H5Z_FILTER_FLETCHER32) H5Pset_fletcher32(dcpl);
  }
  h5::Handle ds(H5Dcreate2(f.id(), name, l.type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  ASSERT_GE(ds.get(), 0);
  std::size_t n = 1;
  for (auto d : l.dims) n *= std::size_t(d);
  auto const v = values(n, l.type);
  ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
}

// The box read through HDF5 alone (its filters, its conversion to float).
std::vector<float> hdf5_box(hid_t ds, std::vector<hsize_t> const& start, std::vector<hsize_t> const& count) {
  h5::Handle fspace(H5Dget_space(ds));
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  h5::Handle mspace(H5Screate_simple(int(count.size()), count.data(), nullptr));
  std::size_t n = 1;
  for (auto c : count) n *= std::size_t(c);
  std::vector<float> out(n, -1.0f);
  EXPECT_GE(H5Dread(ds, H5T_NATIVE_FLOAT, mspace, fspace, H5P_DEFAULT, out.data()), 0);
  return out;
}

// Boxes of a rank-3 (n, y, x) or rank-4 dataset: the whole, one inside a
// single chunk, and ones across chunk edges and up to the dataset's end.
std::vector<std::pair<std::vector<hsize_t>, std::vector<hsize_t>>> boxes(std::vector<hsize_t> const& d) {
  std::vector<std::pair<std::vector<hsize_t>, std::vector<hsize_t>>> b;
  b.push_back({std::vector<hsize_t>(d.size(), 0), d});
  std::vector<hsize_t> s(d.size()), c(d.size());
  for (std::size_t k = 0; k < d.size(); ++k) {
    s[k] = d[k] / 3;
    c[k] = d[k] - d[k] / 3 - 1;
  }
  b.push_back({s, c});
  for (std::size_t k = 0; k < d.size(); ++k) {
    s[k] = d[k] - 1;
    c[k] = 1;
  }
  b.push_back({s, c});
  for (std::size_t k = 0; k < d.size(); ++k) {
    s[k] = 1;
    c[k] = d[k] - 1;
  }
  b.push_back({s, c});
  return b;
}

TEST_F(ChunkInflate, BoxesReadAsHdf5ReadsThem) {
  FileTypes const t;
  std::vector<H5Z_filter_t> const shuffled{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}, plain{H5Z_FILTER_DEFLATE};
  std::vector<Layout> const layouts = {
      {{40, 24, 20}, {1, 24, 20}, t.u16, shuffled},   // ptyko's and h5py's frame stacks
      {{40, 24, 20}, {7, 10, 8}, t.u16, shuffled},    // chunks across frames and the end
      {{40, 24, 20}, {7, 10, 8}, t.i32, plain},
      {{40, 24, 20}, {3, 24, 20}, t.u32, shuffled},
      {{40, 24, 20}, {5, 7, 20}, t.f64, shuffled},
      {{40, 24, 20}, {4, 24, 9}, t.f32, plain},
      {{40, 24, 20}, {2, 5, 5}, t.u8, shuffled},
      {{40, 24, 20}, {6, 6, 6}, t.i16, shuffled},
      {{40, 24, 20}, {8, 8, 8}, t.i64, plain},
      {{5, 9, 24, 20}, {1, 4, 24, 20}, t.u32, shuffled},  // a raster scan's (n1, n2, y, x)
  };
  auto const path = file("layouts.h5");
  {
    auto f = h5::File::create(path);
    for (std::size_t k = 0; k < layouts.size(); ++k) write_dataset(f, layouts[k], ("d" + std::to_string(k)).c_str());
    f.close();
  }
  auto f = h5::File::open_read(path);
  for (std::size_t k = 0; k < layouts.size(); ++k) {
    SCOPED_TRACE("layout " + std::to_string(k));
    h5::Handle ds(H5Dopen2(f.id(), ("d" + std::to_string(k)).c_str(), H5P_DEFAULT));
    auto const plan = h5::impl::inflate_plan(ds);
    ASSERT_TRUE(plan.has_value()) << "a deflated native-order dataset must be read on threads";
    for (int threads : {1, 3}) {
      for (auto const& [start, count] : boxes(layouts[k].dims)) {
        auto const expected = hdf5_box(ds, start, count);
        std::vector<float> got(expected.size(), -2.0f);
        ASSERT_TRUE(h5::impl::read_inflated_box(ds, *plan, start, count, got.data(), threads));
        EXPECT_EQ(got, expected) << threads << " threads";
      }
    }
  }
}

// A chunk may be stored with filters skipped (HDF5 skips an optional
// filter that fails, and H5Dwrite_chunk stores what it is given): the
// chunk's filter mask says which, and the read must undo only the others.
TEST_F(ChunkInflate, ChunksWithSkippedFiltersReadAsHdf5ReadsThem) {
  FileTypes const t;
  Layout const l{{6, 8, 8}, {1, 8, 8}, t.u16, {H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}};
  auto const path = file("skipped.h5");
  {
    auto f = h5::File::create(path);
    write_dataset(f, l);
    h5::Handle ds(H5Dopen2(f.id(), "data", H5P_DEFAULT));
    // Frame 2 stored shuffled, not deflated (mask bit 1); frame 4 as it is (bits 0 and 1).
    std::vector<std::uint16_t> frame(64);
    std::iota(frame.begin(), frame.end(), std::uint16_t(300));
    std::vector<unsigned char> shuffled(128);
    for (std::size_t i = 0; i < 64; ++i) {
      shuffled[i] = static_cast<unsigned char>(frame[i] & 0xff);
      shuffled[64 + i] = static_cast<unsigned char>(frame[i] >> 8);
    }
    hsize_t const two[3] = {2, 0, 0}, four[3] = {4, 0, 0};
    ASSERT_GE(H5Dwrite_chunk(ds, H5P_DEFAULT, 2u, two, shuffled.size(), shuffled.data()), 0);
    ASSERT_GE(H5Dwrite_chunk(ds, H5P_DEFAULT, 3u, four, 128, frame.data()), 0);
    ds.reset();
    f.close();
  }
  auto f = h5::File::open_read(path);
  h5::Handle ds(H5Dopen2(f.id(), "data", H5P_DEFAULT));
  auto const plan = h5::impl::inflate_plan(ds);
  ASSERT_TRUE(plan.has_value());
  std::vector<hsize_t> const start{0, 0, 0}, count = l.dims;
  auto const expected = hdf5_box(ds, start, count);
  EXPECT_EQ(expected[2 * 64 + 5], 305.0f);  // the chunks written by hand are what HDF5 reads
  EXPECT_EQ(expected[4 * 64 + 63], 363.0f);
  std::vector<float> got(expected.size());
  ASSERT_TRUE(h5::impl::read_inflated_box(ds, *plan, start, count, got.data(), 2));
  EXPECT_EQ(got, expected);
}

// What is left to HDF5: another byte order and a checksum filter (no
// plan), a chunk never written (the box is refused: HDF5 fills it). The
// public row reader gives HDF5's values for all of them, and for rows
// asked in any order, repeated, and through a window.
TEST_F(ChunkInflate, OtherLayoutsAreLeftToHdf5AndRowsReadTheSame) {
  FileTypes const t;
  std::vector<Layout> const layouts = {
      {{12, 16, 16}, {1, 16, 16}, t.u16, {H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}},  // threads
      {{12, 16, 16}, {1, 16, 16}, t.u16be, {H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}},  // big-endian
      {{12, 16, 16}, {1, 16, 16}, t.u16, {H5Z_FILTER_FLETCHER32, H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}},
      {{12, 16, 16}, {5, 16, 16}, t.u16, {H5Z_FILTER_SHUFFLE}},  // not deflated
  };
  auto const path = file("others.h5");
  {
    auto f = h5::File::create(path);
    for (std::size_t k = 0; k < layouts.size(); ++k) write_dataset(f, layouts[k], ("d" + std::to_string(k)).c_str());
    // A stack with frames 6 to 11 never written: those chunks are missing.
    h5::Handle space(H5Screate_simple(3, layouts[0].dims.data(), nullptr));
    h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(dcpl, 3, layouts[0].chunk.data());
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 4);
    std::uint16_t const fill = 9;
    H5Pset_fill_value(dcpl, H5T_NATIVE_UINT16, &fill);
    h5::Handle ds(H5Dcreate2(f.id(), "partial", H5T_STD_U16LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    hsize_t const start[3] = {0, 0, 0}, count[3] = {6, 16, 16};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    h5::Handle mspace(H5Screate_simple(3, count, nullptr));
    std::vector<std::uint16_t> half(6 * 256, 4);
    ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_UINT16, mspace, space, H5P_DEFAULT, half.data()), 0);
    ds.reset();
    f.close();
  }
  auto f = h5::File::open_read(path);
  std::vector<std::string> const names{"d0", "d1", "d2", "d3", "partial"};
  for (std::size_t k = 0; k < names.size(); ++k) {
    SCOPED_TRACE(names[k]);
    h5::Handle ds(H5Dopen2(f.id(), names[k].c_str(), H5P_DEFAULT));
    auto const plan = h5::impl::inflate_plan(ds);
    EXPECT_EQ(plan.has_value(), k == 0 || names[k] == "partial");
    std::vector<hsize_t> const whole{12, 16, 16};
    if (names[k] == "partial") {
      std::vector<float> got(12 * 256);
      EXPECT_FALSE(h5::impl::read_inflated_box(ds, *plan, {0, 0, 0}, whole, got.data(), 2))
          << "a missing chunk must be left to HDF5 (its fill value)";
      EXPECT_TRUE(h5::impl::read_inflated_box(ds, *plan, {1, 0, 0}, {5, 16, 16}, got.data(), 2));
    }
    auto const all = hdf5_box(ds, {0, 0, 0}, whole);
    if (names[k] == "partial") {
      EXPECT_EQ(all[5 * 256], 4.0f);
      EXPECT_EQ(all[6 * 256], 9.0f);
    }
    std::vector<std::size_t> const rows{7, 3, 3, 11, 0, 6, 5};
    std::vector<float> got(rows.size() * 256, -1.0f);
    h5::read_rows(f, "/" + names[k], rows, got.data());
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t p = 0; p < 256; ++p)
        ASSERT_EQ(got[r * 256 + p], all[rows[r] * 256 + p]) << "row " << rows[r] << " pixel " << p;
    h5::RowWindow const window{3, 5, 9, 7};
    std::vector<float> windowed(rows.size() * 63, -1.0f);
    h5::read_rows(f, "/" + names[k], rows, windowed.data(), window);
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t y = 0; y < 9; ++y)
        for (std::size_t x = 0; x < 7; ++x)
          ASSERT_EQ(windowed[(r * 9 + y) * 7 + x], all[rows[r] * 256 + (3 + y) * 16 + 5 + x]);
  }
}

}  // namespace
