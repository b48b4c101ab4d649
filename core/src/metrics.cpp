// Reconstruction-quality metric: see metrics.hpp for the definition and the
// outline. Host-only, serial code: it runs once per reconstruction (or
// test), and plain loops keep the sums deterministic.
//
// Every Fourier operation treats the arrays as periodic over their whole
// extent: correlations are circular and the sub-pixel shift is a Fourier
// shift of the whole array. That makes the sub-pixel criterion (evaluated
// on DFT-upsampled correlations) and the shift finally applied one and the
// same operation, so the refined shift is the least-squares one; the price
// is wrap-around at the array edges, which lie outside R in practice.
#include <ptyko/core/fftshift.hpp>
#include <ptyko/core/metrics.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/fft.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace ptyko {
namespace {

using Cplx = Complex<double>;
using HostExec = Kokkos::DefaultHostExecutionSpace;
using HostMask = Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, Kokkos::HostSpace>;
using FrameStack = Kokkos::View<Cplx***, Kokkos::LayoutRight, Kokkos::HostSpace>;
using FrameRef =
    Kokkos::View<Cplx***, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

constexpr double two_pi = 6.283185307179586476925286766559;

inline Cplx expi(double phase) { return Cplx(std::cos(phase), std::sin(phase)); }
inline Cplx conj(Cplx const& z) { return Cplx(z.real(), -z.imag()); }
inline double norm2(Cplx const& z) { return math::norm2(z); }

/// Offset in [-0.5, 0.5] of the vertex of the parabola through (-1, fm),
/// (0, f0), (1, fp); 0 when it does not open downwards.
double parabola_vertex(double fm, double f0, double fp) {
  double const curvature = fm - 2 * f0 + fp;
  if (!(curvature < 0)) return 0;
  return std::clamp(0.5 * (fm - fp) / curvature, -0.5, 0.5);
}

/// Vertex of the quadratic fitted (least squares) to the 3 x 3 values
/// f[1 + dy][1 + dx] around a maximum, as an offset in [-1, 1]^2. The cross
/// term matters: correlation peaks of smooth objects are broad ridges at an
/// angle, where parabolas along each axis miss the top. Falls back to those
/// parabolas when the fit does not open downwards.
std::array<double, 2> quadratic_vertex(double const (&f)[3][3]) {
  double gy = 0, gx = 0, hyy = 0, hxx = 0;
  for (int j = 0; j < 3; ++j) {
    gy += (f[2][j] - f[0][j]) / 6;
    gx += (f[j][2] - f[j][0]) / 6;
    hyy += (f[2][j] - 2 * f[1][j] + f[0][j]) / 3;  // second derivative, averaged
    hxx += (f[j][2] - 2 * f[j][1] + f[j][0]) / 3;
  }
  double const hxy = (f[2][2] - f[2][0] - f[0][2] + f[0][0]) / 4;
  double const det = hyy * hxx - hxy * hxy;
  if (hyy < 0 && det > 0) {
    double const dy = -(hxx * gy - hxy * gx) / det, dx = -(hyy * gx - hxy * gy) / det;
    return {std::clamp(dy, -1.0, 1.0), std::clamp(dx, -1.0, 1.0)};
  }
  return {parabola_vertex(f[0][1], f[1][1], f[2][1]), parabola_vertex(f[1][0], f[1][1], f[1][2])};
}

struct Ramp {
  double a = 0, b = 0;  ///< radians per pixel along y and x
};

/// The ramp (2 pi k / n per axis) at the largest value(i) over the flat
/// indices i of an ny x nx spectrum, k refined between bins by parabolas
/// through the neighbours (periodic).
template <class Value>
Ramp spectral_peak(int ny, int nx, Value&& value) {
  std::size_t const n = std::size_t(ny) * nx;
  std::size_t best = 0;
  double best_value = value(0);
  for (std::size_t i = 1; i < n; ++i) {
    double const v = value(i);
    if (v > best_value) best = i, best_value = v;
  }
  int const by = int(best / nx), bx = int(best % nx);
  auto at = [&](int ky, int kx) { return value(std::size_t((ky + ny) % ny) * nx + (kx + nx) % nx); };
  double const fy = parabola_vertex(at(by - 1, bx), best_value, at(by + 1, bx));
  double const fx = parabola_vertex(at(by, bx - 1), best_value, at(by, bx + 1));
  return {two_pi * (signed_frequency(by, ny) + fy) / ny, two_pi * (signed_frequency(bx, nx) + fx) / nx};
}

/// Bounding box (half-open) and size of the region R.
struct RegionBox {
  int y0 = 0, y1 = 0, x0 = 0, x1 = 0;
  std::size_t pixels = 0;
};

RegionBox region_box(HostMask const& region) {
  int const ny = int(region.extent(0)), nx = int(region.extent(1));
  RegionBox b{ny, -1, nx, -1, 0};
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      if (region(y, x)) {
        b.y0 = std::min(b.y0, y), b.y1 = std::max(b.y1, y), b.x0 = std::min(b.x0, x), b.x1 = std::max(b.x1, x);
        ++b.pixels;
      }
  PTYKO_REQUIRE(b.pixels > 0,
                "ptyko::object_error: the compared region is empty: "
                "lower the illumination threshold");
  ++b.y1, ++b.x1;
  return b;
}

/// True for FFTW's fast sizes, 2^a 3^b 5^c 7^d 11^e 13^f with e + f <= 1.
bool fft_friendly(int n) {
  for (int p : {2, 3, 5, 7})
    while (n % p == 0) n /= p;
  return n == 1 || n == 11 || n == 13;
}

/// One axis of the window the comparison runs on: array indices
/// [start, start + size), which may reach beyond the array (zeros there).
struct WindowAxis {
  int start = 0, size = 0;
};

/// Axes up to this length are always compared whole: their FFTs are cheap.
constexpr int k_window_above = 1024;

/// Where a long axis of n pixels is not FFT-friendly (a reconstruction's
/// object of 2097 pixels has the factor 233: FFTW's transforms of 2097 x
/// 2095 take 0.2 s, of 2079 x 2079 0.09 s), the comparison runs on the
/// smallest FFT-friendly window that holds R's extent [lo, hi) with a
/// margin of max_shift + 16 pixels on each side: inside the array where it
/// fits, else the whole array padded with zeros. No integer shift searched
/// reads across its wrap-around into R, so integer shifts stay exact; the
/// sub-pixel shift then interpolates the window, not the whole array's
/// periodic extension, which costs about 1e-3 of NRMSE on data that is
/// exactly periodic over the array (tstMetrics) and changes nothing of note
/// on reconstructions, which never are (docs/performance.md, section 5,
/// item 44). Short and FFT-friendly axes keep the whole array.
WindowAxis window_axis(int n, int lo, int hi, int max_shift) {
  if (n <= k_window_above || fft_friendly(n)) return {0, n};
  int const margin = std::min(max_shift, (n - 1) / 2) + 16;
  int size = hi - lo + 2 * margin;
  while (!fft_friendly(size)) ++size;
  int const start = (lo + hi) / 2 - size / 2;
  return {size <= n ? std::clamp(start, 0, n - size) : std::clamp(start, n - size, 0), size};
}

/// The region R (bounding box, size) and four scratch frames of the arrays'
/// shape for in-place FFTs.
class Workspace {
 public:
  Workspace(HostMask const& region, int max_shift)
      : m_region(region), m_ny(int(region.extent(0))), m_nx(int(region.extent(1))) {
    RegionBox const box = region_box(region);
    m_pixels = box.pixels;
    m_y0 = box.y0, m_y1 = box.y1, m_x0 = box.x0, m_x1 = box.x1;
    // Circular shifts: d and d + n are the same shift, so |d| <= (n - 1) / 2.
    m_max_shift = {std::min(max_shift, (m_ny - 1) / 2), std::min(max_shift, (m_nx - 1) / 2)};
    m_frames = FrameStack(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::object_error::frames"), 4,
                          m_ny, m_nx);
    m_fft = std::make_unique<BatchedFFT2D<double, HostExec>>(m_space, 1, m_ny, m_nx);
  }

  int ny() const { return m_ny; }
  int nx() const { return m_nx; }
  std::size_t size() const { return std::size_t(m_ny) * m_nx; }
  std::size_t pixels() const { return m_pixels; }
  std::array<int, 2> max_shift() const { return m_max_shift; }
  /// Bounding box of R, half-open.
  int y0() const { return m_y0; }
  int y1() const { return m_y1; }
  int x0() const { return m_x0; }
  int x1() const { return m_x1; }
  bool in_region(int y, int x) const { return m_region(y, x) != 0; }

  /// Calls body(y, x, flat index) for every pixel of R, row by row.
  template <class Body>
  void for_region(Body&& body) const {
    for (int y = m_y0; y < m_y1; ++y)
      for (int x = m_x0; x < m_x1; ++x)
        if (m_region(y, x)) body(y, x, std::size_t(y) * m_nx + x);
  }

  Cplx* frame(int f) { return m_frames.data() + f * size(); }
  void forward(int f) {
    FrameRef v(frame(f), 1, m_ny, m_nx);
    m_fft->forward(m_space, v, v);
    fence(m_space, "ptyko::object_error::forward");
  }
  void inverse(int f) {
    FrameRef v(frame(f), 1, m_ny, m_nx);
    m_fft->inverse(m_space, v, v);
    fence(m_space, "ptyko::object_error::inverse");
  }

 private:
  HostMask m_region;
  HostExec m_space;
  int m_ny, m_nx;
  std::size_t m_pixels = 0;
  int m_y0 = 0, m_y1 = 0, m_x0 = 0, m_x1 = 0;
  std::array<int, 2> m_max_shift{0, 0};
  FrameStack m_frames;
  std::unique_ptr<BatchedFFT2D<double, HostExec>> m_fft;
};

/// out = image e^{i(a y + b x)} over the whole array.
void load_modulated(Workspace& ws, HostComplexImage const& image, Ramp r, Cplx* out) {
  int const ny = ws.ny(), nx = ws.nx();
  std::vector<Cplx> ex(nx);
  for (int x = 0; x < nx; ++x) ex[x] = expi(r.b * x);
  for (int y = 0; y < ny; ++y) {
    Cplx const ey = expi(r.a * y);
    Cplx const* src = &image(y, 0);
    Cplx* dst = out + std::size_t(y) * nx;
    for (int x = 0; x < nx; ++x) dst[x] = src[x] * ey * ex[x];
  }
}

/// out = image on R, zero elsewhere.
void load_region(Workspace& ws, HostComplexImage const& image, Cplx* out) {
  std::fill(out, out + ws.size(), Cplx(0));
  ws.for_region([&](int y, int x, std::size_t i) { out[i] = image(y, x); });
}

/// Two real arrays u and v travel through one complex FFT as u + i v; this
/// splits the result: U(k) = (F(k) + conj F(-k)) / 2, V(k) = (F(k) - conj F(-k)) / 2i.
template <class Combine>
void split_real_pair(Workspace const& ws, Cplx const* packed, Combine&& combine) {
  int const ny = ws.ny(), nx = ws.nx();
  for (int ky = 0; ky < ny; ++ky)
    for (int kx = 0; kx < nx; ++kx) {
      std::size_t const i = std::size_t(ky) * nx + kx;
      std::size_t const mirror = std::size_t(ky == 0 ? 0 : ny - ky) * nx + (kx == 0 ? 0 : nx - kx);
      Cplx const f = packed[i], g = conj(packed[mirror]);
      Cplx const u = 0.5 * (f + g), d = 0.5 * (f - g);
      combine(i, u, Cplx(d.imag(), -d.real()));
    }
}

/// Coarse phase ramp of recon relative to truth. A ramp e^{i k.p} shifts the
/// spectrum by k while a rigid shift leaves |spectrum| unchanged, so the
/// circular cross-correlation of |F(R truth)| and |F(R recon)| peaks at k
/// whatever the (still unknown) shift, as long as it is small next to R.
/// Reads F(R truth) in frame 0; uses frames 1-2.
Ramp coarse_ramp(Workspace& ws, HostComplexImage const& recon) {
  std::size_t const n = ws.size();
  int const ny = ws.ny(), nx = ws.nx();
  Cplx *f0 = ws.frame(0), *f1 = ws.frame(1), *f2 = ws.frame(2);
  load_region(ws, recon, f1);
  ws.forward(1);
  for (std::size_t i = 0; i < n; ++i) f2[i] = Cplx(std::sqrt(norm2(f0[i])), std::sqrt(norm2(f1[i])));
  ws.forward(2);
  split_real_pair(ws, f2, [&](std::size_t i, Cplx const& u, Cplx const& v) { f1[i] = conj(u) * v; });
  ws.inverse(1);
  return spectral_peak(ny, nx, [&](std::size_t i) { return f1[i].real(); });
}

/// The integer shift d maximising |C(d)|^2 / E(d), with
///   C(d) = sum_R conj(truth) recon~(. + d),  E(d) = sum_R |recon(. + d)|^2,
/// recon~ = recon e^{-i coarse}: the least-squares fit with the complex scale
/// eliminated (dividing by E removes the pull towards bright parts of recon).
/// Reads F(R truth) in frame 0; leaves the spectrum of E in frame 3 (it does
/// not depend on the ramp, so refine_shift reuses it); uses frames 1-2.
std::array<int, 2> integer_shift(Workspace& ws, HostComplexImage const& recon, Ramp coarse) {
  std::size_t const n = ws.size();
  int const ny = ws.ny(), nx = ws.nx();
  Cplx *f0 = ws.frame(0), *f1 = ws.frame(1), *f2 = ws.frame(2), *f3 = ws.frame(3);
  load_modulated(ws, recon, {-coarse.a, -coarse.b}, f1);
  for (std::size_t i = 0; i < n; ++i) f2[i] = Cplx(0, norm2(f1[i]));
  ws.for_region([&](int, int, std::size_t i) { f2[i] += Cplx(1); });
  ws.forward(1);
  ws.forward(2);
  split_real_pair(ws, f2,
                  [&](std::size_t i, Cplx const& mask, Cplx const& energy) { f3[i] = conj(mask) * energy; });
  for (std::size_t i = 0; i < n; ++i) {
    f2[i] = conj(f0[i]) * f1[i];
    f1[i] = f3[i];
  }
  ws.inverse(2);  // C
  ws.inverse(1);  // E
  auto index = [&](int dy, int dx) { return std::size_t((dy + ny) % ny) * nx + (dx + nx) % nx; };
  auto const s = ws.max_shift();
  double e_max = 0;
  for (int dy = -s[0]; dy <= s[0]; ++dy)
    for (int dx = -s[1]; dx <= s[1]; ++dx) e_max = std::max(e_max, f1[index(dy, dx)].real());
  std::array<int, 2> best{0, 0};
  double best_value = -1;
  for (int dy = -s[0]; dy <= s[0]; ++dy)
    for (int dx = -s[1]; dx <= s[1]; ++dx) {
      double const e = f1[index(dy, dx)].real();
      double const value = e > 1e-9 * e_max ? norm2(f2[index(dy, dx)]) / e : 0;
      if (value > best_value) best_value = value, best = {dy, dx};
    }
  return best;
}

/// Evaluates the band-limited interpolants of C and E (spectra in spec_c,
/// spec_e) on the (2n+1)^2 grid of spacing h around `centre` with a
/// matrix-multiply DFT (Guizar-Sicairos' upsampled cross-correlation), and
/// returns the point maximising |C|^2 / E there, refined by a quadratic
/// through its neighbours. Costs (2n+1) * ny * nx multiply-adds per spectrum.
std::array<double, 2> refine_peak(Workspace const& ws, Cplx const* spec_c, Cplx const* spec_e,
                                  std::array<double, 2> centre, double h, int n) {
  int const ny = ws.ny(), nx = ws.nx(), m = 2 * n + 1;
  // Twiddles e^{+2 pi i k v / N} (inverse-DFT sign) per grid line.
  std::vector<Cplx> ty(std::size_t(m) * ny), tx(std::size_t(m) * nx);
  for (int j = 0; j < m; ++j) {
    double const vy = centre[0] + (j - n) * h, vx = centre[1] + (j - n) * h;
    for (int k = 0; k < ny; ++k)
      ty[std::size_t(j) * ny + k] = expi(two_pi * signed_frequency(k, ny) * vy / ny);
    for (int k = 0; k < nx; ++k)
      tx[std::size_t(j) * nx + k] = expi(two_pi * signed_frequency(k, nx) * vx / nx);
  }
  // Contract over kx first (the costly pass), then over ky.
  std::vector<Cplx> wc(std::size_t(ny) * m), we(std::size_t(ny) * m);
  for (int ky = 0; ky < ny; ++ky) {
    Cplx const* rc = spec_c + std::size_t(ky) * nx;
    Cplx const* re = spec_e + std::size_t(ky) * nx;
    for (int j = 0; j < m; ++j) {
      Cplx const* t = tx.data() + std::size_t(j) * nx;
      double cr = 0, ci = 0, er = 0, ei = 0;
      for (int kx = 0; kx < nx; ++kx) {
        double const tr = t[kx].real(), ti = t[kx].imag();
        cr += rc[kx].real() * tr - rc[kx].imag() * ti;
        ci += rc[kx].real() * ti + rc[kx].imag() * tr;
        er += re[kx].real() * tr - re[kx].imag() * ti;
        ei += re[kx].real() * ti + re[kx].imag() * tr;
      }
      wc[std::size_t(ky) * m + j] = Cplx(cr, ci);
      we[std::size_t(ky) * m + j] = Cplx(er, ei);
    }
  }
  std::vector<double> corr2(std::size_t(m) * m), energy(std::size_t(m) * m),
      objective(std::size_t(m) * m, 0.0);
  double e_max = 0;
  for (int jy = 0; jy < m; ++jy)
    for (int jx = 0; jx < m; ++jx) {
      Cplx c(0), e(0);
      for (int ky = 0; ky < ny; ++ky) {
        Cplx const t = ty[std::size_t(jy) * ny + ky];
        c += t * wc[std::size_t(ky) * m + jx];
        e += t * we[std::size_t(ky) * m + jx];
      }
      corr2[std::size_t(jy) * m + jx] = norm2(c);
      energy[std::size_t(jy) * m + jx] = e.real();
      e_max = std::max(e_max, e.real());
    }
  for (std::size_t i = 0; i < objective.size(); ++i)
    if (energy[i] > 1e-9 * e_max) objective[i] = corr2[i] / energy[i];
  auto at = [&](int jy, int jx) { return objective[std::size_t(jy) * m + jx]; };
  int by = n, bx = n;
  for (int jy = 0; jy < m; ++jy)
    for (int jx = 0; jx < m; ++jx)
      if (at(jy, jx) > at(by, bx)) by = jy, bx = jx;
  // On the edge of the grid (a peak further away than expected) the best
  // grid point is kept; the next, finer stage is centred on it.
  std::array<double, 2> offset{0, 0};
  if (by > 0 && by < m - 1 && bx > 0 && bx < m - 1) {
    double f[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) f[i][j] = at(by - 1 + i, bx - 1 + j);
    offset = quadratic_vertex(f);
  }
  return {centre[0] + (by - n + offset[0]) * h, centre[1] + (bx - n + offset[1]) * h};
}

/// Sub-pixel shift d maximising |C(d)|^2 / E(d) as in integer_shift, recon
/// now demodulated by the fitted ramp (so C is not washed out), starting
/// from `whole`: 1/4 px steps over +-0.75 px, then 1/32 px steps over
/// +-0.09 px. Reads F(R truth) in frame 0 and the spectrum of E in frame 3;
/// leaves F(recon e^{i ramp}) in frame 1 for fourier_shift; uses frame 2.
std::array<double, 2> refine_shift(Workspace& ws, HostComplexImage const& recon, Ramp ramp,
                                   std::array<int, 2> whole) {
  std::size_t const n = ws.size();
  Cplx *f0 = ws.frame(0), *f1 = ws.frame(1), *f2 = ws.frame(2), *f3 = ws.frame(3);
  load_modulated(ws, recon, ramp, f1);
  ws.forward(1);
  for (std::size_t i = 0; i < n; ++i) f2[i] = conj(f0[i]) * f1[i];
  std::array<double, 2> d{double(whole[0]), double(whole[1])};
  d = refine_peak(ws, f2, f3, d, 0.25, 3);
  d = refine_peak(ws, f2, f3, d, 1.0 / 32, 3);
  auto const s = ws.max_shift();
  return {std::clamp(d[0], double(-s[0]), double(s[0])), std::clamp(d[1], double(-s[1]), double(s[1]))};
}

/// frame(f)(p) becomes u(p + d) where frame(f) holds the spectrum of u: a
/// Fourier shift, exact for band-limited periodic u.
void fourier_shift(Workspace& ws, int f, std::array<double, 2> d) {
  int const ny = ws.ny(), nx = ws.nx();
  // Nyquist bins get the real part of the phase factor, as for real signals.
  auto factor = [](int k, int n, double shift) {
    if (n % 2 == 0 && k == n / 2) return Cplx(std::cos(M_PI * shift));
    return expi(two_pi * signed_frequency(k, n) * shift / n);
  };
  std::vector<Cplx> fx(nx);
  for (int kx = 0; kx < nx; ++kx) fx[kx] = factor(kx, nx, d[1]);
  Cplx* data = ws.frame(f);
  for (int ky = 0; ky < ny; ++ky) {
    Cplx const fy = factor(ky, ny, d[0]);
    Cplx* row = data + std::size_t(ky) * nx;
    for (int kx = 0; kx < nx; ++kx) row[kx] *= fy * fx[kx];
  }
  ws.inverse(f);
}

/// Sums over R of z e^{-i(a y' + b x')} and its first and second moments in
/// (y', x'), coordinates relative to the bounding-box centre (which keeps the
/// Newton system well conditioned); z = truth conj(shifted recon).
struct RampSums {
  Cplx s, sy, sx, syy, syx, sxx;
};

RampSums ramp_sums(Workspace const& ws, HostComplexImage const& truth, Cplx const* shifted, Ramp r) {
  double const yc = 0.5 * (ws.y0() + ws.y1() - 1), xc = 0.5 * (ws.x0() + ws.x1() - 1);
  int const nx = ws.nx();
  std::vector<Cplx> ex(ws.x1() - ws.x0());
  for (int x = ws.x0(); x < ws.x1(); ++x) ex[x - ws.x0()] = expi(-r.b * (x - xc));
  RampSums out{};
  for (int y = ws.y0(); y < ws.y1(); ++y) {
    Cplx const* t = &truth(y, 0);
    Cplx const* u = shifted + std::size_t(y) * nx;
    Cplx s0(0), s1(0), s2(0);
    for (int x = ws.x0(); x < ws.x1(); ++x) {
      if (!ws.in_region(y, x)) continue;
      Cplx const v = t[x] * conj(u[x]) * ex[x - ws.x0()];
      double const xt = x - xc;
      s0 += v;
      s1 += xt * v;
      s2 += (xt * xt) * v;
    }
    double const yt = y - yc;
    Cplx const ey = expi(-r.a * yt);
    Cplx const e0 = ey * s0, e1 = ey * s1, e2 = ey * s2;
    out.s += e0;
    out.sy += yt * e0;
    out.sx += e1;
    out.syy += (yt * yt) * e0;
    out.syx += yt * e1;
    out.sxx += e2;
  }
  return out;
}

/// The least-squares phase ramp between truth and the shifted recon: the
/// (a, b) maximising G = |sum_R z e^{-i(a y + b x)}|^2, z = truth conj(recon')
/// (with the best scale the residual is ||truth||^2 - G / ||recon'||^2).
/// Starts at the FFT peak of z (plus a parabolic sub-bin step), computed in
/// frame `scratch_frame`, or at zero when that is negative; then Newton
/// steps with backtracking on G.
Ramp fit_ramp(Workspace& ws, HostComplexImage const& truth, Cplx const* shifted, int scratch_frame) {
  int const ny = ws.ny(), nx = ws.nx();
  Ramp r;
  if (scratch_frame >= 0) {
    Cplx* scratch = ws.frame(scratch_frame);
    std::fill(scratch, scratch + ws.size(), Cplx(0));
    ws.for_region([&](int y, int x, std::size_t i) { scratch[i] = truth(y, x) * conj(shifted[i]); });
    ws.forward(scratch_frame);
    // The forward DFT's e^{-2 pi i k y / N} is e^{-i a y} at a = 2 pi k / N.
    r = spectral_peak(ny, nx, [&](std::size_t i) { return norm2(scratch[i]); });
  }
  // Newton: done when the phase change across R is negligible.
  double const extent = std::max(ws.y1() - ws.y0(), ws.x1() - ws.x0());
  double const tolerance = 1e-10 / extent;
  RampSums sums = ramp_sums(ws, truth, shifted, r);
  double objective = norm2(sums.s);
  Cplx const minus_i(0, -1);
  for (int iteration = 0; iteration < 50; ++iteration) {
    Cplx const z = sums.s, za = minus_i * sums.sy, zb = minus_i * sums.sx;
    Cplx const zaa = -1.0 * sums.syy, zab = -1.0 * sums.syx, zbb = -1.0 * sums.sxx;
    double const ga = 2 * (conj(z) * za).real(), gb = 2 * (conj(z) * zb).real();
    double const haa = 2 * ((conj(z) * zaa).real() + norm2(za));
    double const hbb = 2 * ((conj(z) * zbb).real() + norm2(zb));
    double const hab = 2 * ((conj(z) * zab).real() + (conj(za) * zb).real());
    double const det = haa * hbb - hab * hab;
    double da, db;
    if (haa < 0 && det > 0) {
      da = -(hbb * ga - hab * gb) / det;
      db = -(haa * gb - hab * ga) / det;
    } else {
      // Not concave here: steepest ascent, a quarter of a bin at most.
      double const g = std::hypot(ga, gb);
      if (g == 0) break;
      double const step = 0.25 * two_pi / (extent * g);
      da = step * ga, db = step * gb;
    }
    // Never jump further than a bin (the main lobe of G is two bins wide).
    double const limit = two_pi / extent, length = std::hypot(da, db);
    if (length > limit) da *= limit / length, db *= limit / length;
    bool improved = false;
    for (int halving = 0; halving < 40 && !improved; ++halving) {
      Ramp const trial{r.a + da, r.b + db};
      RampSums const trial_sums = ramp_sums(ws, truth, shifted, trial);
      double const trial_objective = norm2(trial_sums.s);
      // G cannot tell apart ramps closer than ~1e-6 rad across R; there
      // Newton has converged and its steps are taken as they come.
      if (trial_objective >= objective || std::hypot(da, db) * extent < 1e-6) {
        r = trial, sums = trial_sums, objective = trial_objective, improved = true;
      } else {
        da *= 0.5, db *= 0.5;
      }
    }
    if (!improved || std::hypot(da, db) < tolerance) break;
  }
  return r;
}

struct Fit {
  Cplx scale{1, 0};
  double nrmse = std::numeric_limits<double>::infinity();
};

/// Least-squares scale c of w = e^{i(a y + b x)} recon' onto truth over R,
/// and the NRMSE, from the residual itself (not from the normal-equation
/// identity, which cancels badly for near-perfect fits).
Fit fit_scale(Workspace const& ws, HostComplexImage const& truth, Cplx const* shifted, Ramp r) {
  std::vector<Cplx> ex(ws.nx()), ey(ws.ny());
  for (int x = 0; x < ws.nx(); ++x) ex[x] = expi(r.b * x);
  for (int y = 0; y < ws.ny(); ++y) ey[y] = expi(r.a * y);
  Cplx cross(0);
  double recon_energy = 0, truth_energy = 0;
  ws.for_region([&](int y, int x, std::size_t i) {
    Cplx const w = shifted[i] * ey[y] * ex[x], t = truth(y, x);
    cross += conj(w) * t;
    recon_energy += norm2(w);
    truth_energy += norm2(t);
  });
  PTYKO_REQUIRE(truth_energy > 0, "ptyko::object_error: the truth is zero over the compared region");
  Fit out;
  out.scale = recon_energy > 0 ? cross / recon_energy : Cplx(0);
  double residual = 0;
  ws.for_region([&](int y, int x, std::size_t i) {
    residual += norm2(out.scale * (shifted[i] * ey[y] * ex[x]) - truth(y, x));
  });
  out.nrmse = std::sqrt(residual / truth_energy);
  return out;
}

std::complex<double> to_std(Cplx const& z) { return {z.real(), z.imag()}; }

/// The whole procedure of object_error for a region given as a mask, on
/// the arrays as given.
ObjectError compare_whole(HostComplexImage const& recon, HostComplexImage const& truth, HostMask const& region,
                          int max_shift, bool remove_ramp) {
  Workspace ws(region, max_shift);
  Cplx *f0 = ws.frame(0), *f1 = ws.frame(1);
  load_region(ws, truth, f0);
  ws.forward(0);  // F(R truth) stays in frame 0 throughout

  // 1. Integer shift, with a coarse ramp removed so that it cannot wash out
  //    the correlation.
  Ramp const coarse = remove_ramp ? coarse_ramp(ws, recon) : Ramp{};
  std::array<int, 2> const whole = integer_shift(ws, recon, coarse);

  // Candidate 1: the integer shift alone (periodic), which needs no
  // interpolation; then 2. the ramp and 3. the scale.
  int const ny = ws.ny(), nx = ws.nx();
  ws.for_region([&](int y, int x, std::size_t i) {
    f1[i] = recon((y + whole[0] + ny) % ny, (x + whole[1] + nx) % nx);
  });
  Ramp const ramp = remove_ramp ? fit_ramp(ws, truth, f1, 2) : Ramp{};
  Fit const fit = fit_scale(ws, truth, f1, ramp);
  ObjectError out;
  out.pixels = ws.pixels();
  out.nrmse = fit.nrmse;
  out.shift_y = -whole[0], out.shift_x = -whole[1];
  out.scale = to_std(fit.scale);
  out.ramp_y = ramp.a, out.ramp_x = ramp.b;

  // Candidate 2: the sub-pixel shift, refined and applied to
  // u = recon e^{i ramp}, which is then free of a phase jump where the array
  // wraps around; then the residual ramp (small: Newton from zero) and the
  // scale. The ramp fitted at the integer shift is slightly off (the
  // sub-pixel misalignment biases it), and what is left of it makes u jump
  // a little at the wrap-around, which rings into R; a second pass with the
  // updated ramp removes most of that (measured: shift errors 1e-3 -> 1e-5 px
  // on band-limited data).
  if (ws.max_shift() == std::array<int, 2>{0, 0}) return out;
  Ramp base = ramp;
  for (int pass = 0; pass < 2; ++pass) {
    std::array<double, 2> const fine = refine_shift(ws, recon, base, whole);
    if (fine[0] == whole[0] && fine[1] == whole[1]) break;
    fourier_shift(ws, 1, fine);
    Ramp const residual = remove_ramp ? fit_ramp(ws, truth, f1, -1) : Ramp{};
    Fit const fine_fit = fit_scale(ws, truth, f1, residual);
    if (fine_fit.nrmse < out.nrmse) {
      // u(p + d) = e^{i base.(p + d)} recon(p + d): the constant e^{i base.d}
      // goes into the scale, so that the ramp multiplies recon(p + d).
      out.nrmse = fine_fit.nrmse;
      out.shift_y = -fine[0], out.shift_x = -fine[1];
      out.scale = to_std(fine_fit.scale * expi(base.a * fine[0] + base.b * fine[1]));
      out.ramp_y = base.a + residual.a, out.ramp_x = base.b + residual.b;
    }
    if (!remove_ramp) break;  // a second pass would repeat the first
    base = {base.a + residual.a, base.b + residual.b};
  }
  return out;
}

/// The whole procedure of object_error for a region given as a mask: on the
/// FFT-friendly window around R where the arrays' axes are not
/// (window_axis), else on the whole arrays.
ObjectError compare(HostComplexImage const& recon, HostComplexImage const& truth, HostMask const& region,
                    int max_shift, bool remove_ramp) {
  ScopedRegion profile("ptyko::object_error");
  int const ny = int(region.extent(0)), nx = int(region.extent(1));
  RegionBox const box = region_box(region);
  WindowAxis const wy = window_axis(ny, box.y0, box.y1, max_shift);
  WindowAxis const wx = window_axis(nx, box.x0, box.x1, max_shift);
  if (wy.size == ny && wx.size == nx) return compare_whole(recon, truth, region, max_shift, remove_ramp);
  HostComplexImage recon_w(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::object_error::recon_window"),
                           wy.size, wx.size);
  HostComplexImage truth_w(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::object_error::truth_window"),
                           wy.size, wx.size);
  HostMask region_w(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::object_error::region_window"), wy.size,
                    wx.size);
  for (int y = 0; y < wy.size; ++y)
    for (int x = 0; x < wx.size; ++x) {
      int const ay = wy.start + y, ax = wx.start + x;
      bool const inside = ay >= 0 && ay < ny && ax >= 0 && ax < nx;
      recon_w(y, x) = inside ? recon(ay, ax) : Cplx(0);
      truth_w(y, x) = inside ? truth(ay, ax) : Cplx(0);
      region_w(y, x) = inside ? region(ay, ax) : 0;
    }
  ObjectError out = compare_whole(recon_w, truth_w, region_w, max_shift, remove_ramp);
  // The ramp e^{i(a y' + b x')} of window indices is e^{i(a y + b x)} of the
  // arrays' indices times e^{-i(a y0 + b x0)}: that constant joins the scale.
  out.scale *= std::polar(1.0, -(out.ramp_y * wy.start + out.ramp_x * wx.start));
  return out;
}

void require_same_shape(HostComplexImage const& recon, HostComplexImage const& truth, char const* what) {
  PTYKO_REQUIRE(recon.extent(0) == truth.extent(0) && recon.extent(1) == truth.extent(1), what,
                ": reconstruction is ", recon.extent(0), "x", recon.extent(1), " but the truth is ",
                truth.extent(0), "x", truth.extent(1));
  PTYKO_REQUIRE(truth.extent(0) > 0 && truth.extent(1) > 0, what, ": the arrays are empty");
}

}  // namespace

ObjectError object_error(HostComplexImage const& recon, HostComplexImage const& truth,
                         HostRealImage const& illumination, ObjectErrorOptions const& options) {
  require_same_shape(recon, truth, "ptyko::object_error");
  PTYKO_REQUIRE(illumination.extent(0) == truth.extent(0) && illumination.extent(1) == truth.extent(1),
                "ptyko::object_error: illumination is ", illumination.extent(0), "x", illumination.extent(1),
                " but the object is ", truth.extent(0), "x", truth.extent(1));
  PTYKO_REQUIRE(options.max_shift >= 0, "ptyko::object_error: max_shift is ", options.max_shift,
                ": it must be >= 0");
  PTYKO_REQUIRE(options.illumination_threshold >= 0 && options.illumination_threshold <= 1,
                "ptyko::object_error: illumination_threshold is ", options.illumination_threshold,
                ": it must lie in [0, 1]");
  int const h = int(truth.extent(0)), w = int(truth.extent(1));
  double peak = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (std::isfinite(illumination(y, x))) peak = std::max(peak, illumination(y, x));
  PTYKO_REQUIRE(peak > 0, "ptyko::object_error: the illumination is zero everywhere");
  HostMask region(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::object_error::region"), h, w);
  double const level = options.illumination_threshold * peak;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) region(y, x) = illumination(y, x) >= level ? 1 : 0;
  return compare(recon, truth, region, options.max_shift, options.remove_phase_ramp);
}

double probe_error(HostComplexImage const& recon_mode0, HostComplexImage const& truth_mode0) {
  require_same_shape(recon_mode0, truth_mode0, "ptyko::probe_error");
  int const h = int(truth_mode0.extent(0)), w = int(truth_mode0.extent(1));
  double peak = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) peak = std::max(peak, norm2(truth_mode0(y, x)));
  PTYKO_REQUIRE(peak > 0 && std::isfinite(peak), "ptyko::probe_error: the true probe is zero or not finite");
  HostMask region(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::probe_error::region"), h, w);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) region(y, x) = norm2(truth_mode0(y, x)) >= 0.01 * peak ? 1 : 0;
  ObjectErrorOptions const defaults;
  return compare(recon_mode0, truth_mode0, region, defaults.max_shift, defaults.remove_phase_ramp).nrmse;
}

}  // namespace ptyko
