// `simulate` and the file conventions end to end: the stored intensities are
// the forward model of the stored truth plus Poisson noise (so the centring,
// FFT normalisation, translation sign and units all agree), and the data as
// another program reads the file follow the CXI specification.
#include <ptyko/core/cxi.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/fftshift.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/kernels/forward.hpp>

#include <test_files.hpp>
#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;

// Noise-free model intensities (N, D, D), centred like the file, from the
// truth, evaluated with the forward model in double precision.
std::vector<double> model_of_truth(CxiTruth const& truth) {
  ExecSpace space;
  int const N = int(truth.positions_px.size()), M = int(truth.probe.extent(0)), D = int(truth.probe.extent(1));
  ComplexView2<double, MemSpace> obj("obj", truth.object.extent(0), truth.object.extent(1));
  ComplexView3<double, MemSpace> prb("prb", M, D, D);
  PositionView<double, MemSpace> pos("pos", N);
  IndexView<MemSpace> idx("idx", N);
  auto h_obj = Kokkos::create_mirror_view(obj);
  auto h_prb = Kokkos::create_mirror_view(prb);
  auto h_pos = Kokkos::create_mirror_view(pos);
  auto h_idx = Kokkos::create_mirror_view(idx);
  for (std::size_t k = 0; k < truth.object.span(); ++k) h_obj.data()[k] = truth.object.data()[k];
  for (std::size_t k = 0; k < truth.probe.span(); ++k) h_prb.data()[k] = truth.probe.data()[k];
  for (int n = 0; n < N; ++n) {
    h_pos(n, 0) = truth.positions_px[n][0];
    h_pos(n, 1) = truth.positions_px[n][1];
    h_idx(n) = n;
  }
  Kokkos::deep_copy(obj, h_obj);
  Kokkos::deep_copy(prb, h_prb);
  Kokkos::deep_copy(pos, h_pos);
  Kokkos::deep_copy(idx, h_idx);
  ForwardModel<double, ExecSpace> model(space, N, M, D);
  ComplexView4<double, MemSpace> Psi("Psi", N, M, D, D);
  RealView3<double, MemSpace> I("I", N, D, D);
  model.far_field(space, obj, prb, pos, idx, Psi);
  far_field_intensity(space, N, Psi, I);
  auto h_I = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), I);
  std::vector<double> out(std::size_t(N) * D * D);
  for (int n = 0; n < N; ++n) fftshift2(&h_I(n, 0, 0), &out[std::size_t(n) * D * D], D, D);
  return out;
}

TEST(Simulate, FramesAreTheModelOfTheTruthPlusPoissonNoise) {
  SimulationOptions o;
  o.frames = 60;
  o.detector = 32;
  o.modes = 2;
  o.photons = 1e6;
  o.seed = 4;
  std::string const path = test::temp_path("simulate.cxi").string();
  cxi_write(path, simulate(o));
  CxiInfo const info = cxi_inspect(path);
  auto truth = cxi_read_truth(info);
  ASSERT_TRUE(truth.has_value());
  std::vector<std::size_t> all(o.frames);
  for (int n = 0; n < o.frames; ++n) all[n] = std::size_t(n);
  HostFrames frames = cxi_read_frames(info, all);
  auto model = model_of_truth(*truth);

  // Pearson chi-square per pixel: 1 for Poisson noise around the right
  // model; any convention slip (shift, flip, scale) makes it huge.
  double chi2 = 0, mean_counts = 0;
  std::size_t n = 0;
  for (std::size_t k = 0; k < model.size(); ++k) {
    mean_counts += frames.data()[k];
    if (model[k] < 20) continue;
    double const r = frames.data()[k] - model[k];
    chi2 += r * r / model[k];
    ++n;
  }
  ASSERT_GT(n, 1000u);
  EXPECT_NEAR(chi2 / double(n), 1.0, 0.05);
  // Mean counts per frame as asked.
  EXPECT_NEAR(mean_counts / o.frames, o.photons, 0.01 * o.photons);

  // CXI conventions: centred frames (the centroid of the mean pattern, i.e.
  // of the probe's far field, is the zero frequency at (D/2, D/2)), and
  // translations in metres of the sample: positions_px = -translation /
  // pixel size + origin.
  double cy = 0, cx = 0, total = 0;
  for (int f = 0; f < o.frames; ++f)
    for (int y = 0; y < o.detector; ++y)
      for (int x = 0; x < o.detector; ++x) {
        double const v = frames(f, y, x);
        cy += v * y;
        cx += v * x;
        total += v;
      }
  EXPECT_NEAR(cy / total, o.detector / 2, 0.5);
  EXPECT_NEAR(cx / total, o.detector / 2, 0.5);

  auto t = cxi_read_translations(info);
  Geometry const g = info.geometry();
  for (int k = 1; k < o.frames; ++k) {
    double const dy = truth->positions_px[k][0] - truth->positions_px[0][0];
    double const dx = truth->positions_px[k][1] - truth->positions_px[0][1];
    EXPECT_NEAR(dy, -(t[k][1] - t[0][1]) / g.object_pixel_size_y(), 1e-6);
    EXPECT_NEAR(dx, -(t[k][0] - t[0][0]) / g.object_pixel_size_x(), 1e-6);
  }
  // The grid ptyko reconstructs on is the truth's grid.
  ScanLayout const layout = read_scan_layout(path, {});
  EXPECT_EQ(layout.grid.height, int(truth->object.extent(0)));
  EXPECT_EQ(layout.grid.width, int(truth->object.extent(1)));
  for (int k = 0; k < o.frames; ++k) {
    EXPECT_NEAR(layout.positions_px[k][0], truth->positions_px[k][0], 1e-6);
    EXPECT_NEAR(layout.positions_px[k][1], truth->positions_px[k][1], 1e-6);
  }
  std::filesystem::remove(path);
}

TEST(Simulate, InvalidOptionsAreRefused) {
  SimulationOptions o;
  o.frames = 0;
  EXPECT_THROW(simulate(o), UserError);
  o = SimulationOptions();
  o.detector = 4;
  EXPECT_THROW(simulate(o), UserError);
  o = SimulationOptions();
  o.photons = -1;
  EXPECT_THROW(simulate(o), UserError);
  EXPECT_THROW(parse_scan_pattern("spiral"), UserError);
}

// A diverging beam (the sample downstream of the focus) is the converging
// one's twin: mode 0 is its complex conjugate mirrored through the centre
// (D/2, D/2), up to the power scale that each dataset's counts set.
TEST(Simulate, DivergingProbeIsTheConvergingOnesTwin) {
  SimulationOptions o;
  o.frames = 16;
  o.detector = 32;
  o.modes = 1;
  CxiContents const converging = simulate(o);
  o.diverging_probe = true;
  CxiContents const diverging = simulate(o);
  auto const& a = converging.truth->probe;
  auto const& b = diverging.truth->probe;
  int const D = o.detector;
  double na = 0, nb = 0;
  for (std::size_t k = 0; k < a.span(); ++k) {
    na += Kokkos::abs(a.data()[k]) * Kokkos::abs(a.data()[k]);
    nb += Kokkos::abs(b.data()[k]) * Kokkos::abs(b.data()[k]);
  }
  double twin = 0, same = 0;
  for (int y = 0; y < D; ++y)
    for (int x = 0; x < D; ++x) {
      Complex<double> const u = a(0, (D - y) % D, (D - x) % D) / std::sqrt(na);
      Complex<double> const v = b(0, y, x) / std::sqrt(nb);
      Complex<double> const w = a(0, y, x) / std::sqrt(na);
      twin += Kokkos::abs(v - Kokkos::conj(u)) * Kokkos::abs(v - Kokkos::conj(u));
      same += Kokkos::abs(v - w) * Kokkos::abs(v - w);
    }
  EXPECT_LT(std::sqrt(twin), 1e-9);
  EXPECT_GT(std::sqrt(same), 0.5);  // the defocus is there: the twins differ
}

// A beam whose flux varies between frames: each frame's counts follow its
// flux, which the truth keeps (written and read back), log-normal about a
// mean of 1 with the rms asked for; the model (and so the truth object and
// probe) is that of the mean flux.
TEST(Simulate, FluxJitterScalesEachFrameAndTheTruthKeepsIt) {
  SimulationOptions o;
  o.frames = 200;
  o.detector = 16;
  o.modes = 1;
  o.photons = 1e6;
  CxiContents const plain = simulate(o);
  EXPECT_TRUE(plain.truth->relative_flux.empty());
  o.flux_jitter = 0.2;
  CxiContents const jitter = simulate(o);
  std::string const path = test::temp_path("jitter.cxi").string();
  cxi_write(path, jitter);
  auto const truth = cxi_read_truth(cxi_inspect(path));
  std::filesystem::remove(path);
  ASSERT_TRUE(truth.has_value());
  auto const& flux = truth->relative_flux;
  ASSERT_EQ(flux.size(), std::size_t(o.frames));
  EXPECT_EQ(flux, jitter.truth->relative_flux);
  double mean = 0, square = 0, worst = 0;
  for (int f = 0; f < o.frames; ++f) {
    mean += flux[f] / o.frames;
    square += flux[f] * flux[f] / o.frames;
    double a = 0, b = 0;
    for (int k = 0; k < o.detector * o.detector; ++k) {
      a += jitter.frames.data()[std::size_t(f) * o.detector * o.detector + k];
      b += plain.frames.data()[std::size_t(f) * o.detector * o.detector + k];
    }
    // Poisson noise of ~1e6 counts: 0.1 % per frame.
    worst = std::max(worst, std::abs(a / b / flux[f] - 1));
  }
  EXPECT_NEAR(mean, 1.0, 0.05);
  EXPECT_NEAR(std::sqrt(square - mean * mean), 0.2, 0.04);
  EXPECT_LT(worst, 0.01);
  o.flux_jitter = 1.5;
  EXPECT_THROW(simulate(o), UserError);
}

TEST(Simulate, RasterAndMaskOptions) {
  SimulationOptions o;
  o.frames = 25;
  o.detector = 16;
  o.scan = ScanPattern::raster;
  o.dead_pixel_fraction = 0.1;
  CxiContents c = simulate(o);
  ASSERT_EQ(c.mask.extent(0), 16u);
  int dead = 0;
  for (std::size_t k = 0; k < c.mask.span(); ++k) dead += c.mask.data()[k] == 0;
  EXPECT_GT(dead, 5);
  EXPECT_LT(dead, 60);
  // Dead pixels read zero in every frame.
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x)
      if (!c.mask(y, x))
        for (int f = 0; f < o.frames; ++f) EXPECT_EQ(c.frames(f, y, x), 0.0f);
}

}  // namespace
