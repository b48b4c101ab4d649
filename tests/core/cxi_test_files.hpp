#pragma once
// What the CXI tests share: a fresh folder per test, a geometry, the
// contents of a simulated file, a minimal file as another program writes it
// (Builder), and View comparisons.
#include <ptyko/core/cxi.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/fftshift.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/core/probe_resample.hpp>
#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <cxi_paths.hpp>
#include <test_files.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace ptyko::test {

// A fresh folder per test (test_files.hpp).
class Cxi : public TempDirTest {};

inline Geometry test_geometry(int d) {
  Geometry g;
  g.wavelength_m = 1.5e-10;
  g.distance_m = 2.5;
  g.pixel_size_y_m = 75e-6;
  g.pixel_size_x_m = 55e-6;
  g.detector_size = d;
  return g;
}

// Everything a simulated file holds; integer counts when `counts`.
inline CxiContents make_contents(std::size_t n, int d, bool counts, unsigned seed = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  CxiContents c;
  c.frames = HostFrames("frames", n, d, d);
  for (std::size_t k = 0; k < c.frames.size(); ++k) {
    double const v = 1000 * u(gen);
    c.frames.data()[k] = float(counts ? std::floor(v) : v);
  }
  for (std::size_t k = 0; k < n; ++k) c.translations.push_back({1e-6 * u(gen), -2e-6 * u(gen), 0.0});
  c.geometry = test_geometry(d);
  c.mask = HostMask("mask", d, d);
  Kokkos::deep_copy(c.mask, std::uint8_t(1));
  c.mask(0, 1) = 0;
  c.mask(d - 1, d - 2) = 0;
  c.illumination = HostComplex3("probe", 2, d, d);
  for (std::size_t k = 0; k < c.illumination.size(); ++k)
    c.illumination.data()[k] = Complex<double>(u(gen), -u(gen));
  CxiTruth t;
  t.object = HostComplex2("object", d + 5, d + 7);
  for (std::size_t k = 0; k < t.object.size(); ++k) t.object.data()[k] = Complex<double>(u(gen), u(gen));
  t.probe = HostComplex3("true probe", 1, d, d);
  for (std::size_t k = 0; k < t.probe.size(); ++k) t.probe.data()[k] = Complex<double>(u(gen), u(gen));
  for (std::size_t k = 0; k < n; ++k) t.positions_px.push_back({10 * u(gen), 20 * u(gen)});
  c.truth = t;
  c.integer_frames = counts;
  return c;
}

template <class A, class B>
void expect_same(A const& a, B const& b) {
  ASSERT_EQ(a.size(), b.size());
  for (unsigned r = 0; r < A::rank; ++r) ASSERT_EQ(a.extent(r), b.extent(r));
  for (std::size_t k = 0; k < a.size(); ++k) ASSERT_EQ(a.data()[k], b.data()[k]) << k;
}

// A minimal valid file as another program might write it, through the
// h5:: API so single parts can be broken: (N, D, D) data at the detector
// with the data_1 soft link, (N, 3) translations, energy, distance, pixel.
struct Builder {
  std::size_t n = 6;
  std::size_t d = 8;
  std::vector<float> frames;
  std::vector<double> translations;

  Builder() {
    frames.resize(n * d * d);
    for (std::size_t k = 0; k < frames.size(); ++k) frames[k] = float(k % 17);
    translations.resize(n * 3);
    for (std::size_t k = 0; k < translations.size(); ++k) translations[k] = 1e-7 * double(k);
  }
  // Writes everything except the paths in `skip`, then what `extra` adds.
  void write(std::string const& path, std::vector<std::string> const& skip = {},
             std::function<void(h5::File const&)> const& extra = {}) const {
    auto has = [&](char const* p) { return std::find(skip.begin(), skip.end(), p) == skip.end(); };
    auto f = h5::File::create(path);
    if (has(k_detector_data)) h5::write(f, k_detector_data, frames.data(), {n, d, d}, {}, "uint16");
    if (has(k_data)) h5::soft_link(f, k_detector_data, k_data);
    if (has(k_translation)) h5::write(f, k_translation, translations.data(), {n, 3});
    if (has(k_energy)) h5::write_scalar(f, k_energy, 1.2817e-15);
    if (has(k_distance)) h5::write_scalar(f, k_distance, 3.0);
    if (has(k_pixel_x)) h5::write_scalar(f, k_pixel_x, 75e-6);
    if (extra) extra(f);
    f.close();
  }
};

inline std::vector<std::size_t> all_indices(std::size_t n) {
  std::vector<std::size_t> v(n);
  std::iota(v.begin(), v.end(), std::size_t(0));
  return v;
}
}  // namespace ptyko::test
