// Frames compressed by other programs' HDF5 filter plugins (Eiger data:
// Bitshuffle/LZ4; also LZ4, BZip2, LZF) read as stored, and a filter this
// HDF5 cannot load is named in a one-line error with the fix.
//
// The plugins come from Debian's bitshuffle and hdf5-filter-plugin packages
// (scripts/install-deps); the latter installs only for the serial HDF5,
// whose plugin folder ptyko's h5 layer adds next to the MPI flavour's.
#include <ptyko/core/hdf5.hpp>
#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <test_files.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace ptyko;
using namespace ptyko::test;

class Hdf5Filters : public TempDirTest {};

constexpr std::size_t k_frames = 6, k_side = 24;

std::vector<std::uint16_t> frames() {
  std::vector<std::uint16_t> v(k_frames * k_side * k_side);
  // Like detector frames: mostly small counts, some bright pixels (LZF
  // refuses chunks it cannot shrink).
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::uint16_t(k % 37 == 0 ? 40000 + k % 1000 : (k / 7) % 5);
  return v;
}

/// Writes `frames()` at /data, one chunk per frame, through the filter `id`
/// with parameters `cd` (mandatory: the write fails if it is missing).
void write_filtered(std::string const& path, H5Z_filter_t id, std::vector<unsigned> const& cd) {
  auto f = h5::File::create(path);
  ASSERT_GT(H5Zfilter_avail(id), 0) << "HDF5 filter " << id
                                    << " cannot be loaded: install bitshuffle hdf5-filter-plugin (scripts/install-deps)";
  hsize_t const dims[3] = {k_frames, k_side, k_side}, chunk[3] = {1, k_side, k_side};
  h5::Handle space(H5Screate_simple(3, dims, nullptr));
  h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  ASSERT_GE(H5Pset_chunk(dcpl, 3, chunk), 0);
  ASSERT_GE(H5Pset_filter(dcpl, id, H5Z_FLAG_MANDATORY, cd.size(), cd.data()), 0);
  h5::Handle ds(H5Dcreate2(f.id(), "data", H5T_STD_U16LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  ASSERT_GE(ds.get(), 0);
  auto const v = frames();
  ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  // Chunks are compressed when flushed: a filter that fails there leaves
  // them unwritten, which only the storage size shows.
  ASSERT_GE(H5Fflush(f.id(), H5F_SCOPE_LOCAL), 0);
  ASSERT_GT(H5Dget_storage_size(ds), 0u) << "filter " << id << " wrote nothing";
  ds.reset();
  f.close();
}

TEST_F(Hdf5Filters, CompressedFramesReadAsStored) {
  struct Case {
    char const* name;
    H5Z_filter_t id;
    std::vector<unsigned> cd;
  };
  // Bitshuffle's parameters: block size 0 (automatic), LZ4 compression (2).
  for (Case const& c : {Case{"bitshuffle-lz4", 32008, {0, 0, 0, 0, 2}}, Case{"lz4", 32004, {}},
                        Case{"bzip2", 307, {}}, Case{"lzf", 32000, {}}}) {
    SCOPED_TRACE(c.name);
    std::string const path = file(std::string(c.name) + ".h5");
    write_filtered(path, c.id, c.cd);
    if (HasFatalFailure()) return;
    auto const f = h5::File::open_read(path);
    std::vector<float> got(k_frames * k_side * k_side);
    h5::read_rows(f, "/data", {4, 1, 2}, got.data());
    auto const want = frames();
    std::size_t const row = k_side * k_side;
    std::size_t mismatches = 0;
    for (std::size_t q = 0; q < 3; ++q) {
      std::size_t const r = std::vector<std::size_t>{4, 1, 2}[q];
      for (std::size_t k = 0; k < row; ++k) mismatches += got[q * row + k] != float(want[r * row + k]);
    }
    EXPECT_EQ(mismatches, 0u);
  }
}

// A pass-through filter registered under a test id (256-511 are HDF5's
// testing range), used to write, then unregistered: reading then needs a
// filter that no plugin provides.
htri_t always(hid_t, hid_t, hid_t) { return 1; }
std::size_t pass_through(unsigned, std::size_t, unsigned const*, std::size_t nbytes, std::size_t*, void**) {
  return nbytes;
}

TEST_F(Hdf5Filters, MissingFilterIsNamedWithTheFix) {
  H5Z_filter_t const id = 300;
  H5Z_class2_t const cls{H5Z_CLASS_T_VERS, id, 1, 1, "ptyko test filter", always, nullptr, pass_through};
  ASSERT_GE(H5Zregister(&cls), 0);
  write_filtered(file("odd.h5"), id, {});
  ASSERT_GE(H5Zunregister(id), 0);
  auto const f = h5::File::open_read(file("odd.h5"));
  std::vector<float> got(k_frames * k_side * k_side);
  expect_user_error([&] { h5::read_rows(f, "/data", {0, 1}, got.data()); },
                    {"odd.h5", "/data", "HDF5 filter 300", "ptyko test filter", "HDF5_PLUGIN_PATH",
                     "hdf5-filter-plugin"});
}

}  // namespace
