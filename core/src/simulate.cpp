// `ptyko simulate`: phantom, probe, scan, forward model, Poisson noise.

#include <ptyko/core/fftshift.hpp>
#include <ptyko/core/geometry.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/forward.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <random>
#include <vector>

namespace ptyko {
namespace {

using cplx = std::complex<double>;
constexpr double pi = 3.14159265358979323846;

void validate(SimulationOptions const& o) {
  PTYKO_REQUIRE(o.frames >= 1, "--frames must be at least 1, got ", o.frames);
  PTYKO_REQUIRE(o.detector >= 8 && o.detector <= 4096, "--detector must be in [8, 4096], got ",
                o.detector);
  PTYKO_REQUIRE(o.modes >= 1 && o.modes <= max_probe_modes, "--modes must be in [1, ", max_probe_modes, "], got ", o.modes);
  PTYKO_REQUIRE(o.flux_jitter >= 0 && o.flux_jitter <= 1, "--flux-jitter must be in [0, 1], got ", o.flux_jitter);
  PTYKO_REQUIRE(o.background >= 0 && std::isfinite(o.background), "--background must be >= 0 counts per pixel, got ",
                o.background);
  PTYKO_REQUIRE(o.photons > 0 && std::isfinite(o.photons), "--photons must be positive, got ",
                o.photons);
  PTYKO_REQUIRE(o.step_px >= 0 && std::isfinite(o.step_px), "--step must be >= 0 pixels, got ",
                o.step_px);
  PTYKO_REQUIRE(o.probe_diameter_fraction > 0.05 && o.probe_diameter_fraction < 0.8,
                "probe diameter fraction must be in (0.05, 0.8), got ", o.probe_diameter_fraction);
  PTYKO_REQUIRE(o.dead_pixel_fraction >= 0 && o.dead_pixel_fraction < 0.5,
                "dead pixel fraction must be in [0, 0.5), got ", o.dead_pixel_fraction);
  std::size_t const bytes = std::size_t(o.frames) * o.detector * o.detector * sizeof(float);
  PTYKO_REQUIRE(bytes < (std::size_t(1) << 36), "--frames ", o.frames, " x --detector ", o.detector,
                " would need ", bytes >> 30, " GiB of frames: simulate fewer or smaller frames");
}

// In-place orthonormal 2-D DFT of one D x D frame, inverse direction
// (exp(+2 pi i k n / D)). Host-side and O(D^3): used once per probe mode.
void inverse_dft2(std::vector<cplx>& a, int D) {
  std::vector<cplx> tmp(a.size());
  std::vector<cplx> w(D);
  for (int k = 0; k < D; ++k) w[k] = std::polar(1.0, 2 * pi * k / D);
  for (int y = 0; y < D; ++y)  // rows
    for (int x = 0; x < D; ++x) {
      cplx s = 0;
      for (int k = 0; k < D; ++k) s += a[std::size_t(y) * D + k] * w[(std::size_t(k) * x) % D];
      tmp[std::size_t(y) * D + x] = s;
    }
  for (int x = 0; x < D; ++x)  // columns
    for (int y = 0; y < D; ++y) {
      cplx s = 0;
      for (int k = 0; k < D; ++k) s += tmp[std::size_t(k) * D + x] * w[(std::size_t(k) * y) % D];
      a[std::size_t(y) * D + x] = s / double(D);
    }
}

// Probe: a disc pupil with a defocus (quadratic) phase, brought to the sample
// plane by an inverse DFT: the defocused image of a circular aperture, with
// its Fresnel fringes. Extra modes modulate the pupil by low-order
// polynomials and are made orthogonal; their power falls by 4x per mode.
HostComplex3 make_probe(SimulationOptions const& o) {
  int const D = o.detector, M = o.modes;
  double const k_r = 0.15 * D;  // pupil radius in frequency bins
  // A ray at frequency k lands at -D c k pixels: diameter 2 D |c| k_r.
  // The pupil's defocus phase pi c |k|^2: c > 0 is the field upstream of the
  // focus (Fresnel propagation by z multiplies the angular spectrum by
  // exp(-i pi lambda z |f|^2) under this FFT's sign), c < 0 downstream.
  double const c = (o.diverging_probe ? -1 : 1) * o.probe_diameter_fraction / (2 * k_r);
  auto poly = [&](int m, double ky, double kx) -> double {
    double const u = kx / k_r, v = ky / k_r;
    switch (m % 6) {
      case 0: return 1.0;
      case 1: return u;
      case 2: return v;
      case 3: return u * u - v * v;
      case 4: return 2 * u * v;
      default: return u * u + v * v - 0.5;
    }
  };
  std::vector<std::vector<cplx>> modes(M, std::vector<cplx>(std::size_t(D) * D));
  for (int m = 0; m < M; ++m) {
    for (int y = 0; y < D; ++y)
      for (int x = 0; x < D; ++x) {
        double const ky = signed_frequency(y, D), kx = signed_frequency(x, D);
        double const k2 = ky * ky + kx * kx;
        // soft pupil edge (one bin wide) keeps the probe compact in real space
        double const edge = 0.5 * (1 - std::tanh((std::sqrt(k2) - k_r) / 1.0));
        modes[m][std::size_t(y) * D + x] =
            edge * poly(m, ky, kx) * std::polar(1.0, pi * c * k2) * std::polar(1.0, 0.3 * m);
      }
  }
  // Gram-Schmidt (the DFT is unitary, so orthogonal pupils give orthogonal probes).
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < m; ++n) {
      cplx proj = 0;
      for (std::size_t k = 0; k < modes[m].size(); ++k) proj += std::conj(modes[n][k]) * modes[m][k];
      for (std::size_t k = 0; k < modes[m].size(); ++k) modes[m][k] -= proj * modes[n][k];
    }
    double norm = 0;
    for (auto const& v : modes[m]) norm += std::norm(v);
    PTYKO_ASSERT(norm > 0, "degenerate probe mode ", m);
    for (auto& v : modes[m]) v /= std::sqrt(norm);
  }
  double total = 0;
  for (int m = 0; m < M; ++m) total += std::pow(0.25, m);
  HostComplex3 probe("ptyko::simulate::probe", M, D, D);
  std::vector<cplx> centred(std::size_t(D) * D);
  for (int m = 0; m < M; ++m) {
    inverse_dft2(modes[m], D);
    fftshift2(modes[m].data(), centred.data(), D, D);  // probe centre at (D/2, D/2)
    double const amp = std::sqrt(std::pow(0.25, m) / total);  // unit total power
    for (int y = 0; y < D; ++y)
      for (int x = 0; x < D; ++x) {
        cplx const v = amp * centred[std::size_t(y) * D + x];
        probe(m, y, x) = Complex<double>(v.real(), v.imag());
      }
  }
  return probe;
}

// Probe positions relative to the scan centre, object pixels (y, x).
std::vector<std::array<double, 2>> make_scan(SimulationOptions const& o, double step,
                                             std::mt19937_64& rng) {
  std::vector<std::array<double, 2>> pos(o.frames);
  if (o.scan == ScanPattern::fermat) {
    // Fermat spiral r = a sqrt(k), theta = k * golden angle: each point owns
    // an area pi a^2, so the mean spacing is a sqrt(pi).
    double const a = step / std::sqrt(pi);
    double const golden = pi * (3 - std::sqrt(5.0));
    for (int k = 0; k < o.frames; ++k) {
      double const r = a * std::sqrt(k + 0.5), t = k * golden;
      pos[k] = {r * std::sin(t), r * std::cos(t)};
    }
  } else {
    // Raster with 2 % positioning jitter, as encoders report.
    int const cols = int(std::ceil(std::sqrt(double(o.frames))));
    int const rows = (o.frames + cols - 1) / cols;
    std::normal_distribution<double> jitter(0, 0.02 * step);
    for (int k = 0; k < o.frames; ++k) {
      int const r = k / cols, cidx = k % cols;
      pos[k] = {(r - (rows - 1) / 2.0) * step + jitter(rng),
                (cidx - (cols - 1) / 2.0) * step + jitter(rng)};
    }
  }
  return pos;
}

// Phantom: a Siemens star (16 spokes, anti-aliased by 4x4 supersampling)
// in the amplitude, and smooth Gaussian blobs (up to ~1 rad) in the phase,
// unrelated to the star so that amplitude and phase are tested separately.
HostComplex2 make_object(int H, int W, double cy, double cx, double radius, std::mt19937_64& rng) {
  struct Blob {
    double y, x, s, a;
  };
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Blob> blobs(7);
  for (auto& b : blobs) {
    b.y = cy + 0.7 * radius * u(rng);
    b.x = cx + 0.7 * radius * u(rng);
    b.s = radius * (0.12 + 0.1 * (u(rng) + 1));
    b.a = 0.9 * u(rng);
  }
  int const spokes = 16;
  HostComplex2 obj("ptyko::simulate::object", H, W);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      double star = 0;
      for (int sy = 0; sy < 4; ++sy)
        for (int sx = 0; sx < 4; ++sx) {
          double const dy = y + (sy + 0.5) / 4 - 0.5 - cy, dx = x + (sx + 0.5) / 4 - 0.5 - cx;
          double const r = std::hypot(dy, dx);
          bool const inside = r < 0.85 * radius;
          bool const dark = inside && (r < 0.06 * radius || std::sin(spokes * std::atan2(dy, dx)) > 0);
          star += dark ? 1.0 / 16 : 0.0;
        }
      double phase = 0;
      for (auto const& b : blobs) {
        double const d2 = (y - b.y) * (y - b.y) + (x - b.x) * (x - b.x);
        phase += b.a * std::exp(-d2 / (2 * b.s * b.s));
      }
      cplx const v = std::polar(1.0 - 0.4 * star, phase);
      obj(y, x) = Complex<double>(v.real(), v.imag());
    }
  return obj;
}

// Noise-free model intensities (N, D, D), corner-centred, with ptyko's
// forward model in precision T on the default execution space.
template <class T>
std::vector<double> model_intensities(HostComplex2 const& object, HostComplex3 const& probe,
                                      std::vector<std::array<double, 2>> const& positions_px) {
  using Exec = Kokkos::DefaultExecutionSpace;
  using Mem = Exec::memory_space;
  Exec space;
  int const N = int(positions_px.size());
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  int const H = int(object.extent(0)), W = int(object.extent(1));

  ComplexView2<T, Mem> obj(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::simulate::obj"), H, W);
  ComplexView3<T, Mem> prb(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::simulate::prb"), M, D, D);
  PositionView<T, Mem> pos(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::simulate::pos"), N);
  {
    auto h_obj = Kokkos::create_mirror_view(obj);
    auto h_prb = Kokkos::create_mirror_view(prb);
    auto h_pos = Kokkos::create_mirror_view(pos);
    for (std::size_t k = 0; k < object.span(); ++k) h_obj.data()[k] = Complex<T>(object.data()[k]);
    for (std::size_t k = 0; k < probe.span(); ++k) h_prb.data()[k] = Complex<T>(probe.data()[k]);
    for (int n = 0; n < N; ++n) {
      h_pos(n, 0) = T(positions_px[n][0]);
      h_pos(n, 1) = T(positions_px[n][1]);
    }
    Kokkos::deep_copy(obj, h_obj);  // host -> device: truth object
    Kokkos::deep_copy(prb, h_prb);  // host -> device: truth probe
    Kokkos::deep_copy(pos, h_pos);  // host -> device: truth positions
  }
  int const batch = std::min(N, 64);
  ForwardModel<T, Exec> model(space, batch, M, D);
  ComplexView4<T, Mem> Psi("ptyko::simulate::Psi", batch, M, D, D);
  RealView3<T, Mem> I("ptyko::simulate::I", batch, D, D);
  IndexView<Mem> idx("ptyko::simulate::idx", batch);
  auto h_idx = Kokkos::create_mirror_view(idx);
  auto h_I = Kokkos::create_mirror_view(I);
  std::vector<double> out(std::size_t(N) * D * D);
  for (int first = 0; first < N; first += batch) {
    int const B = std::min(batch, N - first);
    for (int b = 0; b < B; ++b) h_idx(b) = first + b;
    Kokkos::deep_copy(idx, h_idx);  // host -> device: batch indices
    auto idx_b = Kokkos::subview(idx, std::make_pair(0, B));
    model.far_field(space, obj, prb, pos, idx_b, Psi);
    far_field_intensity(space, B, Psi, I);
    Kokkos::deep_copy(h_I, I);  // device -> host: model intensities
    for (int b = 0; b < B; ++b)
      for (int k = 0; k < D * D; ++k)
        out[(std::size_t(first + b) * D * D) + k] = double(h_I.data()[std::size_t(b) * D * D + k]);
  }
  return out;
}

}  // namespace

ScanPattern parse_scan_pattern(std::string const& name) {
  if (name == "fermat") return ScanPattern::fermat;
  if (name == "raster") return ScanPattern::raster;
  PTYKO_FAIL("--scan '", name, "' is not a scan pattern: use fermat or raster");
}

double probe_diameter_px(HostComplex3 const& probe) {
  int const M = int(probe.extent(0)), D = int(probe.extent(1)), Dx = int(probe.extent(2));
  std::vector<std::pair<double, double>> rp;  // (radius, power)
  rp.reserve(std::size_t(D) * Dx);
  double total = 0;
  for (int y = 0; y < D; ++y)
    for (int x = 0; x < Dx; ++x) {
      double p = 0;
      for (int m = 0; m < M; ++m) p += Kokkos::abs(probe(m, y, x)) * Kokkos::abs(probe(m, y, x));
      rp.emplace_back(std::hypot(y - D / 2, x - Dx / 2), p);
      total += p;
    }
  std::sort(rp.begin(), rp.end());
  double acc = 0;
  for (auto const& [r, p] : rp) {
    acc += p;
    if (acc >= 0.9 * total) return 2 * r;
  }
  return 2 * rp.back().first;
}

CxiContents simulate(SimulationOptions const& o) {
  validate(o);
  std::mt19937_64 rng(o.seed);
  int const D = o.detector;

  Geometry g;
  g.wavelength_m = wavelength_from_energy(o.energy_kev * 1e3 * electron_volt);
  g.distance_m = o.distance_m;
  g.pixel_size_x_m = g.pixel_size_y_m = o.pixel_size_m;
  g.detector_size = D;
  g.validate("ptyko simulate");

  HostComplex3 probe = make_probe(o);
  double const step = o.step_px > 0 ? o.step_px : 0.3 * probe_diameter_px(probe);
  auto scan_px = make_scan(o, step, rng);

  // Metres (what the file stores) -> the object grid reconstruct will use.
  std::vector<std::array<double, 2>> positions_m(o.frames);
  for (int n = 0; n < o.frames; ++n)
    positions_m[n] = {scan_px[n][0] * g.object_pixel_size_y(), scan_px[n][1] * g.object_pixel_size_x()};
  ObjectGrid const grid = make_object_grid(positions_m, g);
  std::vector<std::array<double, 2>> positions_px(o.frames);
  double cy = 0, cx = 0, radius = 0;
  for (int n = 0; n < o.frames; ++n) {
    positions_px[n] = grid.to_pixels(positions_m[n]);
    cy += positions_px[n][0] / o.frames;
    cx += positions_px[n][1] / o.frames;
  }
  for (auto const& p : positions_px) radius = std::max(radius, std::hypot(p[0] - cy, p[1] - cx));
  radius += 0.25 * D;
  HostComplex2 object = make_object(grid.height, grid.width, cy, cx, radius, rng);

  std::vector<double> model = o.double_precision
                                  ? model_intensities<double>(object, probe, positions_px)
                                  : model_intensities<float>(object, probe, positions_px);
  // Scale probe power so that the mean frame holds `photons` counts.
  double const mean_counts = std::accumulate(model.begin(), model.end(), 0.0) / o.frames;
  double const scale = o.photons / mean_counts;
  for (std::size_t k = 0; k < probe.span(); ++k) probe.data()[k] *= std::sqrt(scale);

  CxiContents out;
  out.geometry = g;
  out.frames = HostFrames("ptyko::simulate::frames", o.frames, D, D);
  std::vector<double> flux;  // log-normal, mean 1, relative rms flux_jitter
  if (o.flux_jitter > 0) {
    double const sigma = std::sqrt(std::log1p(o.flux_jitter * o.flux_jitter));
    std::normal_distribution<double> z(-0.5 * sigma * sigma, sigma);
    for (int n = 0; n < o.frames; ++n) flux.push_back(std::exp(z(rng)));
  }
  // The background, corner-centred like the model: air scatter's fall-off
  // from the direct beam, scaled to `background` counts per pixel on average.
  std::vector<double> background(std::size_t(D) * D, 0.0);
  if (o.background > 0) {
    double total = 0;
    for (int y = 0; y < D; ++y)
      for (int x = 0; x < D; ++x) {
        double const fy = signed_frequency(y, D), fx = signed_frequency(x, D);
        double const r = std::hypot(fy, fx) / (0.25 * D);
        total += background[std::size_t(y) * D + x] = 1 / (1 + r * r);
      }
    for (double& b : background) b *= o.background * D * D / total;
  }
  std::vector<double> noisy(std::size_t(D) * D);
  for (int n = 0; n < o.frames; ++n) {
    double const beam = flux.empty() ? scale : scale * flux[std::size_t(n)];
    for (int k = 0; k < D * D; ++k) {
      double const lambda = beam * model[std::size_t(n) * D * D + k] + background[std::size_t(k)];
      noisy[k] = lambda > 0 ? double(std::poisson_distribution<long long>(lambda)(rng)) : 0.0;
    }
    fftshift2(noisy.data(), &out.frames(n, 0, 0), D, D);  // files hold centred frames
  }
  if (o.dead_pixel_fraction > 0) {
    out.mask = HostMask("ptyko::simulate::mask", D, D);
    Kokkos::deep_copy(out.mask, std::uint8_t(1));
    std::bernoulli_distribution dead(o.dead_pixel_fraction);
    for (int y = 0; y < D; ++y)
      for (int x = 0; x < D; ++x)
        if (dead(rng)) {
          out.mask(y, x) = 0;
          for (int n = 0; n < o.frames; ++n) out.frames(n, y, x) = 0;  // dead pixels read 0
        }
  }
  out.translations = translations_from_probe_positions(positions_m);
  out.integer_frames = true;
  CxiTruth truth;
  truth.object = object;
  truth.probe = probe;
  truth.positions_px = positions_px;
  truth.relative_flux = flux;
  if (o.background > 0) {
    truth.background = HostReal2("ptyko::simulate::background", D, D);
    fftshift2(background.data(), truth.background.data(), D, D);
  }
  out.truth = truth;
  return out;
}

}  // namespace ptyko
