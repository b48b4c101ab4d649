// A result file read the way other programs read CXI: the object at
// /entry_1/image_1/data (CXI's Image class), every probe mode at
// /entry_1/image_2/data and /entry_1/instrument_1/source_1/illumination, the
// strongest mode alone at image_1/process_1/final_illumination (SHARP's
// place), the sizes in metres; and a result given where frames are expected
// is refused with the way to continue it.
#include <ptyko/core/cxi.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/core/result_file.hpp>

#include <gtest/gtest.h>

#include <test_files.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace ptyko;
using namespace ptyko::test;

// The result stores complex64: compare at single precision.
void expect_same_single(Complex<double> a, Complex<double> b, std::string const& where) {
  EXPECT_FLOAT_EQ(float(a.real()), float(b.real())) << where;
  EXPECT_FLOAT_EQ(float(a.imag()), float(b.imag())) << where;
}

class ResultFile : public TempDirTest {
 protected:
  // Object 5 x 7; probe of two 4 x 4 modes, the second the stronger.
  static ResultContents contents() {
    ResultContents r;
    r.object = HostComplex2("object", 5, 7);
    for (std::size_t k = 0; k < r.object.span(); ++k)
      r.object.data()[k] = Complex<double>(0.25 + 0.5 * double(k), -0.125 * double(k));
    r.probe = HostComplex3("probe", 2, 4, 4);
    for (std::size_t y = 0; y < 4; ++y)
      for (std::size_t x = 0; x < 4; ++x) {
        r.probe(0, y, x) = Complex<double>(0.1 * double(y), 0.05 * double(x));
        r.probe(1, y, x) = Complex<double>(1.0 + double(x), -0.5 * double(y));
      }
    r.object_pixel_size_m = {2e-8, 3e-8};  // (y, x)
    r.object_origin_px = {40.25, -3.5};
    r.counting_noise_cost = 812.5;
    r.config = "[solver]\nepochs = 9\n";
    r.provenance = "ptyko 9.8.7\nkokkos 4.6.1 (Serial)\nranks 1\n";
    return r;
  }
};

TEST_F(ResultFile, IsAlsoACxiImageOfObjectAndProbe) {
  ResultContents const r = contents();
  std::string const path = file("out.h5");
  write_result(path, r);
  h5::File f = h5::File::open_read(path);

  EXPECT_EQ(h5::read_scalar(f, "/cxi_version"), 160);
  EXPECT_EQ(h5::read_string(f, "/entry_1/program_name"), "ptyko 9.8.7");

  std::vector<std::size_t> dims;
  auto const object = h5::read<Complex<double>>(f, "/entry_1/image_1/data", &dims);
  ASSERT_EQ(dims, (std::vector<std::size_t>{5, 7}));
  for (std::size_t k = 0; k < object.size(); ++k) expect_same_single(object[k], r.object.data()[k], "object");
  EXPECT_EQ(h5::read_string(f, "/entry_1/image_1/data_space"), "real");
  EXPECT_EQ(h5::read_string(f, "/entry_1/image_1/data_type"), "amplitude");
  auto const size = h5::read<double>(f, "/entry_1/image_1/image_size");
  ASSERT_EQ(size.size(), 3u);
  EXPECT_DOUBLE_EQ(size[0], 7 * 3e-8);  // width: columns along x
  EXPECT_DOUBLE_EQ(size[1], 5 * 2e-8);  // height: rows along y
  EXPECT_DOUBLE_EQ(h5::read_scalar(f, "/entry_1/image_1/x_pixel_size"), 3e-8);
  EXPECT_DOUBLE_EQ(h5::read_scalar(f, "/entry_1/image_1/y_pixel_size"), 2e-8);
  EXPECT_EQ(h5::read_string(f, "/entry_1/image_1/process_1/configuration"), r.config);

  for (char const* where : {"/entry_1/image_2/data", "/entry_1/instrument_1/source_1/illumination"}) {
    auto const probe = h5::read<Complex<double>>(f, where, &dims);
    ASSERT_EQ(dims, (std::vector<std::size_t>{2, 4, 4})) << where;
    for (std::size_t k = 0; k < probe.size(); ++k) expect_same_single(probe[k], r.probe.data()[k], where);
  }
  // One 2-D probe for readers that expect one: the stronger mode.
  auto const strongest = h5::read<Complex<double>>(f, "/entry_1/image_1/process_1/final_illumination", &dims);
  ASSERT_EQ(dims, (std::vector<std::size_t>{4, 4}));
  for (std::size_t y = 0; y < 4; ++y)
    for (std::size_t x = 0; x < 4; ++x) expect_same_single(strongest[y * 4 + x], r.probe(1, y, x), "strongest");

  // ptyko reads its own result back unchanged.
  ResultContents const back = read_result(path);
  for (std::size_t k = 0; k < r.object.span(); ++k)
    expect_same_single(back.object.data()[k], r.object.data()[k], "back");
  EXPECT_EQ(back.object_origin_px, r.object_origin_px);
  EXPECT_EQ(back.counting_noise_cost, r.counting_noise_cost);
  EXPECT_EQ(back.object_pixel_size_m, r.object_pixel_size_m);
}

TEST_F(ResultFile, GivenAsFramesIsRefusedNamingResume) {
  std::string const path = file("out.h5");
  write_result(path, contents());
  expect_user_error([&] { cxi_inspect(path); }, path, {"a result of ptyko reconstruct", "--resume " + path});
}

}  // namespace
