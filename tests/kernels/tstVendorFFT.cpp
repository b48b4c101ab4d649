// VendorFFT, the plan cache of the cuFFT and hipFFT backends, driven on the
// host through a stand-in vendor (a naive DFT that records what it is given):
// one plan per batch size, one shared work area sized by the largest batch at
// construction, grown (and handed to every plan) when a later plan needs
// more, none for a plan that needs none, failures named.
#include <ptyko/kernels/impl/fft_vendor.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstddef>
#include <string>
#include <vector>

namespace {

using namespace ptyko;
using Host = Kokkos::DefaultHostExecutionSpace;

/// The stand-in vendor: handles index `plans`; work bytes per frame count
/// come from `need`; make_plan fails for `fail_frames`.
struct FakeVendor {
  struct Plan {
    int ny = 0, nx = 0, frames = 0;
    std::size_t need = 0;
    void* area = nullptr;
    bool destroyed = false;
  };
  static inline std::vector<Plan> plans;
  static inline std::size_t (*need)(int frames) = nullptr;
  static inline int fail_frames = -1;

  using handle = int;
  using complex = Complex<double>;
  static constexpr char const* name = "FakeFFT";
  static int create(handle* h) {
    plans.emplace_back();
    *h = int(plans.size()) - 1;
    return 0;
  }
  static void destroy(handle h) { plans[h].destroyed = true; }
  static int make_plan(handle h, int ny, int nx, int frames, std::size_t* bytes) {
    if (frames == fail_frames) return 5;
    plans[h].ny = ny, plans[h].nx = nx, plans[h].frames = frames;
    *bytes = plans[h].need = need(frames);
    return 0;
  }
  static int set_work_area(handle h, void* area) {
    plans[h].area = area;
    return 0;
  }
  static int set_stream(handle, int) { return 0; }
  static int stream(Host const&) { return 0; }
  /// Unnormalised 2-D DFT of every frame; status 7 without a needed area.
  static int exec(handle h, complex* in, complex* out, bool forward) {
    Plan const& p = plans[h];
    if (p.need > 0 && p.area == nullptr) return 7;
    std::size_t const size = std::size_t(p.ny) * p.nx;
    std::vector<complex> result(size);
    double const sign = forward ? -1 : 1;
    for (int f = 0; f < p.frames; ++f) {
      complex const* x = in + f * size;
      for (int ky = 0; ky < p.ny; ++ky)
        for (int kx = 0; kx < p.nx; ++kx) {
          std::complex<double> s = 0;
          for (int y = 0; y < p.ny; ++y)
            for (int xx = 0; xx < p.nx; ++xx) {
              complex const v = x[y * p.nx + xx];
              s += std::complex<double>(v.real(), v.imag()) *
                   std::polar(1.0, sign * 2 * M_PI * (double(ky) * y / p.ny + double(kx) * xx / p.nx));
            }
          result[ky * p.nx + kx] = complex(s.real(), s.imag());
        }
      std::copy(result.begin(), result.end(), out + f * size);
    }
    return 0;
  }
};

using Backend = impl::VendorFFT<FakeVendor, double, Host>;

class VendorFFT : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeVendor::plans.clear();
    FakeVendor::fail_frames = -1;
    // 100 bytes per frame, none for 3 frames, 1000 per frame beyond 8.
    FakeVendor::need = [](int frames) -> std::size_t {
      return frames == 3 ? 0 : std::size_t(frames) * (frames > 8 ? 1000 : 100);
    };
  }
  /// Runs `frames` frames of a ramp through `fft` and checks frame 0
  /// against its DFT at one frequency (ky, kx) = (1, 2) (frames of 3 x 3 or more).
  static void run(Backend& fft, int frames, int ny, int nx) {
    std::vector<Complex<double>> in(std::size_t(frames) * ny * nx), out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = Complex<double>(double(i % 7), -double(i % 3));
    fft.execute(Host(), frames, in.data(), out.data(), true);
    std::complex<double> expected = 0;
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        expected += std::complex<double>(in[y * nx + x].real(), in[y * nx + x].imag()) *
                    std::polar(1.0, -2 * M_PI * (1.0 * y / ny + 2.0 * x / nx));
    EXPECT_NEAR(out[1 * nx + 2].real(), expected.real(), 1e-9);
    EXPECT_NEAR(out[1 * nx + 2].imag(), expected.imag(), 1e-9);
  }
  /// Every live plan that needs an area holds the shared one, large enough.
  static void expect_shared(Backend const& fft) {
    for (auto const& p : FakeVendor::plans) {
      if (p.need == 0) continue;
      EXPECT_EQ(p.area, fft.work_area()) << p.frames << " frames";
      EXPECT_GE(fft.work_area_bytes(), p.need) << p.frames << " frames";
    }
  }
};

TEST_F(VendorFFT, OnePlanPerBatchSizeSharingOneAreaSizedAtConstruction) {
  Backend fft(Host(), 8, 4, 6);
  ASSERT_EQ(fft.plans(), 1u);  // the largest batch's, before any transform
  EXPECT_EQ(fft.work_area_bytes(), 800u);
  void const* const area = fft.work_area();
  for (int frames : {8, 2, 5, 2, 8}) run(fft, frames, 4, 6);
  EXPECT_EQ(fft.plans(), 3u);             // 8, 2 and 5 frames
  EXPECT_EQ(fft.work_area(), area);       // smaller batches fit: never reallocated
  EXPECT_EQ(fft.work_area_bytes(), 800u);  // not 800 + 200 + 500
  expect_shared(fft);
}

TEST_F(VendorFFT, APlanThatNeedsNoAreaGetsNone) {
  Backend fft(Host(), 4, 3, 3);
  run(fft, 3, 3, 3);
  ASSERT_EQ(FakeVendor::plans.size(), 2u);
  EXPECT_EQ(FakeVendor::plans[1].frames, 3);
  EXPECT_EQ(FakeVendor::plans[1].area, nullptr);
}

TEST_F(VendorFFT, ALargerNeedGrowsTheAreaForEveryPlan) {
  Backend fft(Host(), 4, 4, 4);
  run(fft, 2, 4, 4);
  void const* const before = fft.work_area();
  run(fft, 10, 4, 4);  // 10000 bytes > 400
  EXPECT_EQ(fft.work_area_bytes(), 10000u);
  EXPECT_NE(fft.work_area(), before);
  expect_shared(fft);  // the plans made before point at the new area too
  run(fft, 2, 4, 4);   // and still run
  run(fft, 4, 4, 4);
}

TEST_F(VendorFFT, AFailedPlanIsNamedAndReleased) {
  FakeVendor::fail_frames = 6;
  Backend fft(Host(), 8, 4, 4);
  std::vector<Complex<double>> data(6 * 16);
  try {
    fft.execute(Host(), 6, data.data(), data.data(), true);
    FAIL() << "expected an error";
  } catch (std::exception const& e) {
    EXPECT_NE(std::string(e.what()).find("FakeFFT call make_plan failed with code 5"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(FakeVendor::plans.back().destroyed);
  EXPECT_EQ(fft.plans(), 1u);
}

TEST_F(VendorFFT, DestroysItsPlans) {
  {
    Backend fft(Host(), 4, 3, 3);
    run(fft, 1, 3, 3);
  }
  ASSERT_EQ(FakeVendor::plans.size(), 2u);
  for (auto const& p : FakeVendor::plans) EXPECT_TRUE(p.destroyed);
}

}  // namespace
