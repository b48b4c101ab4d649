// The HDF5 layer: type round trips (h5py's complex convention), scalars,
// strings, attributes, soft links, row reads, atomic writes, open errors.
#include <ptyko/core/hdf5.hpp>
#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <test_files.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace ptyko;
namespace fs = std::filesystem;
using namespace ptyko::test;  // TempDirTest, expect_user_error

// A fresh folder per test (test_files.hpp).
class Hdf5 : public TempDirTest {};

template <class T>
std::vector<T> iota_values(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t k = 0; k < n; ++k) {
    if constexpr (std::is_arithmetic_v<T>) v[k] = T(k % 100);
    else v[k] = T(0.5 * double(k), -0.25 * double(k));
  }
  return v;
}

template <class T>
class Hdf5Types : public Hdf5 {};
using AllTypes = ::testing::Types<std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t,
                                  std::uint32_t, std::int64_t, std::uint64_t, float, double, Complex<float>,
                                  Complex<double>, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Hdf5Types, AllTypes);

std::string expected_name(std::int8_t) { return "int8"; }
std::string expected_name(std::uint8_t) { return "uint8"; }
std::string expected_name(std::int16_t) { return "int16"; }
std::string expected_name(std::uint16_t) { return "uint16"; }
std::string expected_name(std::int32_t) { return "int32"; }
std::string expected_name(std::uint32_t) { return "uint32"; }
std::string expected_name(std::int64_t) { return "int64"; }
std::string expected_name(std::uint64_t) { return "uint64"; }
std::string expected_name(float) { return "float32"; }
std::string expected_name(double) { return "float64"; }
template <class R>
std::string expected_name(Complex<R>) { return sizeof(R) == 4 ? "complex64" : "complex128"; }
template <class R>
std::string expected_name(std::complex<R>) { return sizeof(R) == 4 ? "complex64" : "complex128"; }

TYPED_TEST(Hdf5Types, RoundTrip) {
  using T = TypeParam;
  auto const path = this->file("types.h5");
  auto const v = iota_values<T>(2 * 3 * 5);
  for (bool compress : {true, false}) {
    {
      auto f = h5::File::create(path);
      h5::write(f, "/a/b/data", v.data(), {2, 3, 5}, h5::WriteOptions{compress});
      f.close();
    }
    auto f = h5::File::open_read(path);
    std::vector<std::size_t> dims;
    auto const r = h5::read<T>(f, "/a/b/data", &dims);
    EXPECT_EQ(dims, (std::vector<std::size_t>{2, 3, 5}));
    EXPECT_EQ(h5::shape(f, "/a/b/data"), dims);
    EXPECT_EQ(h5::type_name(f, "/a/b/data"), expected_name(T{}));
    ASSERT_EQ(r.size(), v.size());
    for (std::size_t k = 0; k < v.size(); ++k) EXPECT_EQ(r[k], v[k]) << k;
  }
}

// h5py reads compound {r, i} of two floats as numpy complex.
TEST_F(Hdf5, ComplexIsCompoundOfRAndI) {
  auto const path = file("complex.h5");
  auto const c64 = iota_values<Complex<float>>(4);
  auto const c128 = iota_values<std::complex<double>>(4);
  {
    auto f = h5::File::create(path);
    h5::write(f, "/c64", c64.data(), {4});
    h5::write(f, "/c128", c128.data(), {2, 2});
    f.close();
  }
  auto f = h5::File::open_read(path);
  for (auto [name, size] : {std::pair{"/c64", std::size_t(4)}, std::pair{"/c128", std::size_t(8)}}) {
    h5::Handle ds(H5Dopen2(f.id(), name, H5P_DEFAULT));
    h5::Handle t(H5Dget_type(ds));
    ASSERT_EQ(H5Tget_class(t), H5T_COMPOUND);
    ASSERT_EQ(H5Tget_nmembers(t), 2);
    EXPECT_EQ(H5Tget_size(t), 2 * size);
    for (unsigned m = 0; m < 2; ++m) {
      char* member = H5Tget_member_name(t, m);
      EXPECT_STREQ(member, m == 0 ? "r" : "i");
      H5free_memory(member);
      h5::Handle mt(H5Tget_member_type(t, m));
      EXPECT_EQ(H5Tget_class(mt), H5T_FLOAT);
      EXPECT_EQ(H5Tget_size(mt), size);
      EXPECT_EQ(H5Tget_member_offset(t, m), m * size);
    }
  }
  // Precision converts both ways through the compound members.
  auto const as128 = h5::read<Complex<double>>(f, "/c64");
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(as128[k], Complex<double>(c64[k].real(), c64[k].imag()));
  // Real readers refuse complex data with a clear message.
  expect_user_error([&] { h5::read<double>(f, "/c64"); }, {path, "/c64", "complex"});
}

TEST_F(Hdf5, ConversionsAndStoredAs) {
  auto const path = file("conv.h5");
  std::vector<float> counts = {0, 1, 2, 65535, 7, 3};
  std::vector<double> real = {1.5, -2, 3};
  {
    auto f = h5::File::create(path);
    h5::write(f, "/counts16", counts.data(), {2, 3}, {}, "uint16");
    h5::write(f, "/counts32", counts.data(), {2, 3}, {}, "uint32");
    h5::write(f, "/real", real.data(), {3}, {}, "float32");
    h5::write(f, "/c", iota_values<Complex<double>>(3).data(), {3}, {}, "complex64");
    f.close();
  }
  auto f = h5::File::open_read(path);
  EXPECT_EQ(h5::type_name(f, "/counts16"), "uint16");
  EXPECT_EQ(h5::type_name(f, "/counts32"), "uint32");
  EXPECT_EQ(h5::type_name(f, "/real"), "float32");
  EXPECT_EQ(h5::type_name(f, "/c"), "complex64");
  EXPECT_EQ(h5::read<float>(f, "/counts16"), counts);
  EXPECT_EQ(h5::read<std::int64_t>(f, "/counts32"), (std::vector<std::int64_t>{0, 1, 2, 65535, 7, 3}));
  EXPECT_EQ(h5::read<double>(f, "/real"), real);
  // Real data read as complex: zero imaginary part.
  auto const c = h5::read<Complex<double>>(f, "/real");
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(c[k], Complex<double>(real[k], 0));
}

TEST_F(Hdf5, ChunkingAndCompression) {
  auto const path = file("chunks.h5");
  std::vector<std::uint16_t> frames(4 * 8 * 8, 3);
  {
    auto f = h5::File::create(path);
    h5::write(f, "/frames", frames.data(), {4, 8, 8});
    h5::write(f, "/plain", frames.data(), {4, 8, 8}, h5::WriteOptions{false});
    f.close();
  }
  auto f = h5::File::open_read(path);
  h5::Handle ds(H5Dopen2(f.id(), "/frames", H5P_DEFAULT));
  h5::Handle dcpl(H5Dget_create_plist(ds));
  ASSERT_EQ(H5Pget_layout(dcpl), H5D_CHUNKED);
  hsize_t chunk[3] = {};
  ASSERT_EQ(H5Pget_chunk(dcpl, 3, chunk), 3);
  EXPECT_EQ(chunk[0], 1u);  // one frame per chunk
  EXPECT_EQ(chunk[1], 8u);
  EXPECT_EQ(chunk[2], 8u);
  std::vector<H5Z_filter_t> filters;
  for (int k = 0; k < H5Pget_nfilters(dcpl); ++k) {
    unsigned flags = 0;
    std::size_t n = 0;
    filters.push_back(H5Pget_filter2(dcpl, unsigned(k), &flags, &n, nullptr, 0, nullptr, nullptr));
  }
  EXPECT_EQ(filters, (std::vector<H5Z_filter_t>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}));
  h5::Handle plain(H5Dopen2(f.id(), "/plain", H5P_DEFAULT));
  h5::Handle pcpl(H5Dget_create_plist(plain));
  EXPECT_EQ(H5Pget_layout(pcpl), H5D_CONTIGUOUS);
}

// Large datasets stored as they are in memory are shuffled and deflated on
// several threads and written chunk by chunk (core/src/chunk_deflate.cpp):
// what any reader gets back must be the data, and every stored chunk must
// be byte for byte what HDF5's own filter pipeline writes for it (a second
// dataset written through H5Dwrite with the same chunks and filters).
TEST_F(Hdf5, LargeDatasetsDeflateOnThreadsAsHdf5Would) {
  auto const path = file("large.h5");
  // An object of 1111 x 1000 complex64 (8.9 MB): chunks of 278 rows, the
  // last one across the end; frames of 64 x 64 uint16, one per chunk; and
  // an object in double precision stored as complex64, and a double image
  // stored as float32 (a result's object and a picture-sized map), narrowed
  // while they are deflated.
  std::size_t const H = 1111, W = 1000, N = 300, D = 64;
  std::vector<Complex<float>> object(H * W);
  std::vector<Complex<double>> fine(H * W);
  std::vector<double> map(H * W);
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.01);
  for (std::size_t y = 0; y < H; ++y)
    for (std::size_t x = 0; x < W; ++x) {
      std::size_t const k = y * W + x;
      fine[k] = Complex<double>(0.8 + 0.1 * std::sin(0.03 * double(x)) + noise(rng),
                                0.3 * std::cos(0.02 * double(y)) + noise(rng));
      object[k] = Complex<float>(float(fine[k].real()), float(fine[k].imag()));
      map[k] = 1e-3 * double(k) + noise(rng);
    }
  std::vector<std::uint16_t> frames(N * D * D);
  std::poisson_distribution<int> counts(3.0);
  for (auto& c : frames) c = std::uint16_t(counts(rng));
  // The double compound h5py writes for complex128, {r, i}: HDF5 narrows it to the file's complex64.
  h5::Handle fine_type(H5Tcreate(H5T_COMPOUND, 2 * sizeof(double)));
  H5Tinsert(fine_type, "r", 0, H5T_NATIVE_DOUBLE);
  H5Tinsert(fine_type, "i", sizeof(double), H5T_NATIVE_DOUBLE);
  struct Copy {
    char const* ours;
    char const* theirs;
    hid_t memory_type;  // -1: the file type
    std::vector<hsize_t> dims, chunk;
    void const* data;
  };
  hid_t const native_double = H5T_NATIVE_DOUBLE;  // a comma expression: not inside the braces (nvcc)
  std::vector<Copy> const copies = {
      {"/object", "/object_by_hdf5", -1, {H, W}, {278, W}, object.data()},
      {"/frames", "/frames_by_hdf5", -1, {N, D, D}, {1, D, D}, frames.data()},
      {"/fine", "/fine_by_hdf5", fine_type.get(), {H, W}, {278, W}, fine.data()},
      {"/map", "/map_by_hdf5", native_double, {H, W}, {556, W}, map.data()},
  };
  {
    auto f = h5::File::create(path);
    h5::write(f, "/object", object.data(), {H, W});
    h5::write(f, "/frames", frames.data(), {N, D, D});
    h5::write(f, "/fine", fine.data(), {H, W}, {}, "complex64");
    h5::write(f, "/map", map.data(), {H, W}, {}, "float32");
    // The same through HDF5's filter pipeline (and its conversion).
    for (auto const& c : copies) {
      h5::Handle src(H5Dopen2(f.id(), c.ours, H5P_DEFAULT));
      h5::Handle type(H5Dget_type(src));
      h5::Handle space(H5Screate_simple(int(c.dims.size()), c.dims.data(), nullptr));
      h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
      H5Pset_chunk(dcpl, int(c.chunk.size()), c.chunk.data());
      H5Pset_shuffle(dcpl);
      H5Pset_deflate(dcpl, 4);
      h5::Handle ds(H5Dcreate2(f.id(), c.theirs, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
      ASSERT_GE(H5Dwrite(ds, c.memory_type < 0 ? type.get() : c.memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.data),
                0)
          << c.ours;
    }
    f.close();
  }
  auto f = h5::File::open_read(path);
  EXPECT_EQ(h5::read<Complex<float>>(f, "/object"), object);
  EXPECT_EQ(h5::read<std::uint16_t>(f, "/frames"), frames);
  EXPECT_EQ(h5::read<Complex<float>>(f, "/fine"), object);
  for (auto const& c : copies) {
    SCOPED_TRACE(c.ours);
    int const rank = int(c.dims.size());
    h5::Handle a(H5Dopen2(f.id(), c.ours, H5P_DEFAULT)), b(H5Dopen2(f.id(), c.theirs, H5P_DEFAULT));
    h5::Handle acpl(H5Dget_create_plist(a)), bcpl(H5Dget_create_plist(b));
    std::vector<hsize_t> ca(3), cb(3);
    ASSERT_EQ(H5Pget_chunk(acpl, 3, ca.data()), rank);
    ASSERT_EQ(H5Pget_chunk(bcpl, 3, cb.data()), rank);
    ca.resize(std::size_t(rank));
    cb.resize(std::size_t(rank));
    EXPECT_EQ(ca, c.chunk);
    EXPECT_EQ(cb, c.chunk);
    h5::Handle space(H5Dget_space(a));
    hsize_t stored = 0;
    ASSERT_GE(H5Dget_num_chunks(a, space, &stored), 0);
    hsize_t const chunks = (c.dims[0] + c.chunk[0] - 1) / c.chunk[0];
    EXPECT_EQ(stored, chunks);
    std::size_t differ = 0;
    for (hsize_t k = 0; k < chunks; ++k) {
      std::vector<hsize_t> offset(std::size_t(rank), 0);
      offset[0] = k * ca[0];
      hsize_t na = 0, nb = 0;
      ASSERT_GE(H5Dget_chunk_storage_size(a, offset.data(), &na), 0);
      ASSERT_GE(H5Dget_chunk_storage_size(b, offset.data(), &nb), 0);
      std::vector<unsigned char> ba(na), bb(nb);
      std::uint32_t fa = 1, fb = 1;
      ASSERT_GE(H5Dread_chunk(a, H5P_DEFAULT, offset.data(), &fa, ba.data()), 0);
      ASSERT_GE(H5Dread_chunk(b, H5P_DEFAULT, offset.data(), &fb, bb.data()), 0);
      EXPECT_EQ(fa, 0u);
      EXPECT_EQ(fb, 0u);
      differ += ba != bb;
    }
    EXPECT_EQ(differ, 0u) << "chunks stored unlike HDF5's conversion, shuffle and deflate";
    h5::Handle type(H5Dget_type(a));
    EXPECT_LT(H5Dget_storage_size(a), hsize_t(H5Sget_simple_extent_npoints(space)) * H5Tget_size(type))
        << "not compressed";
  }
}

TEST_F(Hdf5, ScalarsAndStrings) {
  auto const path = file("scalars.h5");
  {
    auto f = h5::File::create(path);
    h5::write_scalar(f, "/g/x", 1.25e-10);
    h5::write_scalar_int(f, "/g/version", 160);
    double one[1] = {7.5};
    h5::write(f, "/g/one", one, {1});
    double three[3] = {1, 2, 3};
    h5::write(f, "/g/three", three, {3});
    h5::write_string(f, "/g/name", "ptyko – ünïcode");
    h5::write_string(f, "/g/name", "replaced");  // writers replace existing data
    // A fixed-length, space-padded string as other writers make them.
    h5::Handle t(H5Tcopy(H5T_C_S1));
    H5Tset_size(t, 8);
    H5Tset_strpad(t, H5T_STR_SPACEPAD);
    h5::Handle s(H5Screate(H5S_SCALAR));
    h5::Handle ds(H5Dcreate2(f.id(), "/g/fixed", t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    char const text[9] = "abc     ";
    ASSERT_GE(H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, text), 0);
    f.close();
  }
  auto f = h5::File::open_read(path);
  EXPECT_EQ(h5::read_scalar(f, "/g/x"), 1.25e-10);
  EXPECT_EQ(h5::shape(f, "/g/x"), std::vector<std::size_t>{});
  EXPECT_EQ(h5::read_scalar(f, "/g/version"), 160);
  EXPECT_EQ(h5::type_name(f, "/g/version"), "int64");
  EXPECT_EQ(h5::read_scalar(f, "/g/one"), 7.5);
  expect_user_error([&] { h5::read_scalar(f, "/g/three"); }, {path, "/g/three", "(3)", "single value"});
  EXPECT_EQ(h5::read_string(f, "/g/name"), "replaced");
  EXPECT_EQ(h5::type_name(f, "/g/name"), "string");
  EXPECT_EQ(h5::read_string(f, "/g/fixed"), "abc");
  expect_user_error([&] { h5::read_string(f, "/g/x"); }, {path, "/g/x", "not a string"});
  expect_user_error([&] { h5::read_scalar(f, "/g/name"); }, {path, "/g/name", "string"});
  expect_user_error([&] { h5::read_scalar(f, "/g/missing"); }, {path, "/g/missing", "missing"});
  expect_user_error([&] { h5::read<float>(f, "/g"); }, {path, "/g", "group"});
}

TEST_F(Hdf5, Attributes) {
  auto const path = file("attrs.h5");
  {
    auto f = h5::File::create(path);
    float d[2] = {1, 2};
    h5::write(f, "/data", d, {2});
    h5::soft_link(f, "/data", "/link");
    h5::write_attribute(f, "/data", "axes", "translation:y:x");
    h5::write_attribute(f, "/link", "scale", 2.5);  // through the link, onto /data
    h5::write_attribute(f, "/data", "scale", 3.5);  // replaces
    f.close();
  }
  auto f = h5::File::open_read(path);
  EXPECT_EQ(h5::read_string_attribute(f, "/data", "axes"), "translation:y:x");
  EXPECT_EQ(h5::read_string_attribute(f, "/link", "axes"), "translation:y:x");
  EXPECT_EQ(h5::read_scalar_attribute(f, "/data", "scale"), 3.5);
  expect_user_error([&] { h5::read_string_attribute(f, "/data", "nope"); }, {path, "/data", "nope"});
  expect_user_error([&] { h5::read_scalar_attribute(f, "/data", "axes"); }, {path, "axes", "not a single number"});
}

TEST_F(Hdf5, SoftLinksExistsAndResolve) {
  auto const path = file("links.h5");
  {
    auto f = h5::File::create(path);
    float d[1] = {4};
    h5::write(f, "/entry_1/instrument_1/detector_1/data", d, {1});
    h5::soft_link(f, "/entry_1/instrument_1/detector_1/data", "/entry_1/data_1/data");
    h5::soft_link(f, "/entry_1/data_1/data", "/chain/second");           // link to a link
    h5::soft_link(f, "/entry_1/instrument_1", "/entry_1/inst");           // link to a group
    h5::soft_link(f, "detector_1/data", "/entry_1/instrument_1/relative"); // relative target
    h5::soft_link(f, "/entry_1/nowhere/data", "/entry_1/dangling");
    h5::soft_link(f, "/cycle_b", "/cycle_a");
    h5::soft_link(f, "/cycle_a", "/cycle_b");
    f.close();
  }
  auto f = h5::File::open_read(path);
  EXPECT_TRUE(h5::exists(f, "/"));
  EXPECT_TRUE(h5::exists(f, "/entry_1/data_1/data"));
  EXPECT_TRUE(h5::exists(f, "/chain/second"));
  EXPECT_TRUE(h5::exists(f, "/entry_1/inst/detector_1/data"));
  EXPECT_TRUE(h5::exists(f, "/entry_1/instrument_1/relative"));
  EXPECT_FALSE(h5::exists(f, "/entry_1/dangling"));
  EXPECT_TRUE(h5::link_exists(f, "/entry_1/dangling"));
  EXPECT_FALSE(h5::exists(f, "/entry_1/dangling/deeper"));
  EXPECT_FALSE(h5::link_exists(f, "/entry_1/dangling/deeper"));
  EXPECT_FALSE(h5::exists(f, "/no/such/path"));
  EXPECT_FALSE(h5::link_exists(f, "/no/such/path"));
  EXPECT_FALSE(h5::exists(f, "/cycle_a"));

  std::string const target = "/entry_1/instrument_1/detector_1/data";
  EXPECT_EQ(h5::resolve(f, "/entry_1/data_1/data"), target);
  EXPECT_EQ(h5::resolve(f, "/chain/second"), target);
  EXPECT_EQ(h5::resolve(f, "/entry_1/inst/detector_1/data"), target);
  EXPECT_EQ(h5::resolve(f, "/entry_1/instrument_1/relative"), target);
  EXPECT_EQ(h5::resolve(f, target), target);
  EXPECT_EQ(h5::read_scalar(f, "/chain/second"), 4);
  expect_user_error([&] { h5::resolve(f, "/entry_1/dangling"); },
                    {path, "/entry_1/dangling", "/entry_1/nowhere", "does not exist"});
  expect_user_error([&] { h5::resolve(f, "/cycle_a"); }, {path, "cycle"});
  expect_user_error([&] { h5::read<float>(f, "/entry_1/dangling"); }, {path, "/entry_1/dangling", "dangling"});
}

TEST_F(Hdf5, ReadRowsAnyOrder) {
  auto const path = file("rows.h5");
  std::size_t const n = 40, ny = 3, nx = 4, row = ny * nx;
  std::vector<std::uint16_t> v(n * row);
  std::iota(v.begin(), v.end(), std::uint16_t(0));
  {
    auto f = h5::File::create(path);
    h5::write(f, "/frames", v.data(), {n, ny, nx});
    std::vector<double> line(n);
    std::iota(line.begin(), line.end(), 0.0);
    h5::write(f, "/line", line.data(), {n});
    f.close();
  }
  auto f = h5::File::open_read(path);
  auto check = [&](std::vector<std::size_t> const& rows) {
    std::vector<float> out(rows.size() * row, -1.f);
    h5::read_rows(f, "/frames", rows, out.data());
    for (std::size_t k = 0; k < rows.size(); ++k)
      for (std::size_t p = 0; p < row; ++p) ASSERT_EQ(out[k * row + p], float(v[rows[k] * row + p])) << k;
  };
  check({0, 1, 2, 3, 10, 11, 39});                  // sorted: read in place
  check({7, 3, 3, 39, 0, 8, 9, 10, 7, 2});          // unsorted, repeated
  check({5});
  check({});
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t(0));
  std::mt19937 gen(1);
  std::shuffle(all.begin(), all.end(), gen);
  check(all);
  std::vector<std::size_t> every_other;  // many separate runs in one selection
  for (std::size_t k = 0; k < n; k += 2) every_other.push_back(k);
  check(every_other);

  std::vector<float> line(3);
  h5::read_rows(f, "/line", {9, 1, 30}, line.data());
  EXPECT_EQ(line, (std::vector<float>{9, 1, 30}));
  expect_user_error([&] { h5::read_rows(f, "/frames", {1, 40}, line.data()); },
                    {path, "/frames", "40", "out of range"});
}

// Many runs (more than one selection batch) stay fast and correct.
TEST_F(Hdf5, ReadRowsManyRuns) {
  auto const path = file("runs.h5");
  std::size_t const n = 3000;
  std::vector<float> v(n * 2);
  std::iota(v.begin(), v.end(), 0.f);
  {
    auto f = h5::File::create(path);
    h5::write(f, "/rows", v.data(), {n, 2});
    f.close();
  }
  auto f = h5::File::open_read(path);
  std::vector<std::size_t> rows;
  for (std::size_t k = n; k-- > 0;) {
    if (k % 3 != 1) rows.push_back(k);  // descending, runs of two
  }
  std::vector<float> out(rows.size() * 2);
  h5::read_rows(f, "/rows", rows, out.data());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    ASSERT_EQ(out[2 * k], v[2 * rows[k]]);
    ASSERT_EQ(out[2 * k + 1], v[2 * rows[k] + 1]);
  }
}

TEST_F(Hdf5, BoolEnumReadsAsIntegers) {
  auto const path = file("bool.h5");
  {
    auto f = h5::File::create(path);
    // h5py's numpy bool: an int8 enum {FALSE = 0, TRUE = 1}.
    h5::Handle t(H5Tenum_create(H5T_NATIVE_INT8));
    std::int8_t no = 0, yes = 1;
    H5Tenum_insert(t, "FALSE", &no);
    H5Tenum_insert(t, "TRUE", &yes);
    hsize_t dims[1] = {4};
    h5::Handle s(H5Screate_simple(1, dims, nullptr));
    h5::Handle ds(H5Dcreate2(f.id(), "/flags", t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    std::int8_t v[4] = {0, 1, 1, 0};
    ASSERT_GE(H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    f.close();
  }
  auto f = h5::File::open_read(path);
  EXPECT_EQ(h5::type_name(f, "/flags"), "enum");
  EXPECT_EQ(h5::read<std::int32_t>(f, "/flags"), (std::vector<std::int32_t>{0, 1, 1, 0}));
  EXPECT_EQ(h5::read<double>(f, "/flags"), (std::vector<double>{0, 1, 1, 0}));
}

TEST_F(Hdf5, OpenErrors) {
  expect_user_error([&] { h5::File::open_read(file("absent.h5")); }, {file("absent.h5"), "no such file"});
  expect_user_error([&] { h5::File::open_read(m_dir.string()); }, {m_dir.string(), "folder"});
  std::ofstream(file("text.h5")) << "this is not HDF5\n";
  expect_user_error([&] { h5::File::open_read(file("text.h5")); }, {file("text.h5"), "not an HDF5 file"});
  std::ofstream(file("empty.h5")).close();
  expect_user_error([&] { h5::File::open_read(file("empty.h5")); }, {file("empty.h5"), "empty"});

  // A file cut in half (an interrupted copy) fails cleanly, naming the cause.
  auto const cut = file("cut.h5");
  {
    auto f = h5::File::create(cut);
    std::vector<double> v(20000, 1.0);
    h5::write(f, "/v", v.data(), {v.size()}, h5::WriteOptions{false});
    f.close();
  }
  fs::resize_file(cut, fs::file_size(cut) / 2);
  expect_user_error([&] { h5::File::open_read(cut); }, {cut, "truncated"});

  if (::geteuid() != 0) {  // root reads everything
    auto const locked = file("locked.h5");
    h5::File::create(locked).close();
    fs::permissions(locked, fs::perms::none);
    expect_user_error([&] { h5::File::open_read(locked); }, {locked, "cannot be read"});
  }
}

TEST_F(Hdf5, MemoryCheck) {
  auto const path = file("huge.h5");
  {
    // A dataset declared far larger than memory: chunks are only allocated
    // when written, so the file stays tiny.
    auto f = h5::File::create(path);
    hsize_t dims[3] = {1u << 20, 4096, 4096}, chunk[3] = {1, 4096, 4096};
    h5::Handle s(H5Screate_simple(3, dims, nullptr));
    h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(dcpl, 3, chunk);
    h5::Handle ds(H5Dcreate2(f.id(), "/huge", H5T_STD_U16LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    ASSERT_TRUE(ds.valid());
    ds.reset();
    f.close();
  }
  auto f = h5::File::open_read(path);
  expect_user_error([&] { h5::read<float>(f, "/huge"); }, {path, "/huge", "GiB", "memory"});
  expect_user_error([&] { h5::check_fits_in_memory(f, "/x", 1e30, "read less"); }, {path, "/x", "read less"});
  EXPECT_NO_THROW(h5::check_fits_in_memory(f, "/x", 1024));
}

TEST_F(Hdf5, AtomicFileCommit) {
  auto const path = file("out.h5");
  {
    h5::AtomicFile out(path);
    EXPECT_EQ(out.path(), path);
    EXPECT_EQ(out.file().name(), path);  // messages name the final file
    h5::write_scalar(out.file(), "/x", 1.0);
    EXPECT_FALSE(fs::exists(path));      // nothing visible before commit
    EXPECT_TRUE(fs::exists(path + ".tmp-" + std::to_string(::getpid())));
    out.commit();
  }
  ASSERT_TRUE(fs::exists(path));
  EXPECT_EQ(listing(), std::vector<std::string>{"out.h5"});
  {
    auto f = h5::File::open_read(path);
    EXPECT_EQ(h5::read_scalar(f, "/x"), 1.0);
  }
  // Replacing an existing file.
  {
    h5::AtomicFile out(path);
    h5::write_scalar(out.file(), "/x", 2.0);
    out.commit();
  }
  auto f = h5::File::open_read(path);
  EXPECT_EQ(h5::read_scalar(f, "/x"), 2.0);
}

TEST_F(Hdf5, AtomicFileAbortKeepsOldFile) {
  auto const path = file("out.h5");
  {
    auto f = h5::File::create(path);
    h5::write_scalar(f, "/x", 1.0);
    f.close();
  }
  try {
    h5::AtomicFile out(path);
    h5::write_scalar(out.file(), "/x", 2.0);
    throw std::runtime_error("interrupted");
  } catch (std::runtime_error const&) {
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"out.h5"});  // no temp left
  auto f = h5::File::open_read(path);
  EXPECT_EQ(h5::read_scalar(f, "/x"), 1.0);
}

TEST_F(Hdf5, AtomicFileUnwritableFolder) {
  auto const missing = file("no/such/folder/out.h5");
  expect_user_error([&] { h5::AtomicFile out(missing); }, {missing, "does not exist"});
  std::ofstream(file("plain")) << "x";
  auto const under_file = file("plain/out.h5");
  expect_user_error([&] { h5::AtomicFile out(under_file); }, {under_file, "not a folder"});
  expect_user_error([&] { h5::AtomicFile out(m_dir.string()); }, {m_dir.string(), "is a folder"});
  if (::geteuid() != 0) {  // root writes everywhere
    fs::create_directory(m_dir / "locked");
    fs::permissions(m_dir / "locked", fs::perms::owner_read | fs::perms::owner_exec);
    auto const locked = (m_dir / "locked" / "out.h5").string();
    expect_user_error([&] { h5::AtomicFile out(locked); }, {locked, "cannot write in folder"});
  }
}

}  // namespace
