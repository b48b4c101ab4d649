// The data-movement floor of the solvers' passes (host, FFTW).
//
// An epoch of rPIE, LSQML or DM is, besides its FFTs, a fixed set of passes
// over per-position buffers (exit waves, patches, the probe and its sums)
// and object windows. This program replays those passes over buffers of the
// same shapes, with the same bytes read and written per pass, the same
// 2-position pipeline chunks and the same FFTW transforms in between, but
// with the arithmetic reduced to one real multiply or add per float (loops
// that vectorise without the permutes of complex arithmetic). Its time over
// the FFT-only time is what the epoch / FFT floor ratio cannot go below by
// tuning kernels while these passes remain (docs/performance.md, 4.3).
//
//   pass_floor [--detector 128] [--modes 2] [--frames 400] [--object 533]
//              [--chunk 2] [--repeats 5] [--seed 1] [--dm-overlap-passes 1]
//
// Prints a markdown table and one line per solver:
//   pass-floor-ratio <solver> <(FFTs + passes) / FFTs>
// Passes per 2-position chunk (rPIE, LSQML): extract + exit waves, FFT,
// Fourier step, inverse FFT, per-patch object product, its scatter, probe
// product, illumination scatter, the probe's numerator and weight (one pass
// over the patches, as add_probe_sums). Per batch: rPIE one
// preconditioned update over the batch's 16 x 16 tiles (batch 16); LSQML
// the direction over the tiles, the step sums of every position, the scaled
// add over the tiles (batch 8, waves and patches kept per batch). DM
// (probe updated, cost_every 0, its stored exit waves in memory): per
// overlap round a whole-object update and a probe pass over every stored
// wave, and from the second round on an object pass before it (one round
// by default, as SolverOptions::overlap_passes),
// then the Fourier step chunk by chunk (reflect, FFT, projection, inverse
// FFT, the wave update and the next epoch's object sums while in cache).
// Positions are uniform random; times are the minimum over repeats (wall).

#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  int detector = 128, modes = 2, frames = 400, object = 533, chunk = 2, repeats = 5;
  int dm_overlap_passes = 1;  ///< DM's object-then-probe rounds per epoch (SolverOptions::overlap_passes)
  unsigned seed = 1;
};

struct FftwFree {
  void operator()(float* p) const { fftwf_free(p); }
};
using Floats = std::unique_ptr<float[], FftwFree>;

Floats floats(std::size_t n, float value) {
  Floats p(static_cast<float*>(fftwf_malloc(sizeof(float) * n)));
  if (!p) {
    std::fprintf(stderr, "pass_floor: cannot allocate %zu floats\n", n);
    std::exit(1);
  }
  std::fill(p.get(), p.get() + n, value);
  return p;
}

/// What an epoch's passes read and write; complex arrays as interleaved
/// float pairs.
struct Buffers {
  int D, M, H, W, batch_slots;
  std::size_t F;  // pixels per frame
  Floats object, obj_num, obj_w, probe, probe_num, probe_w, probe_int, dir_probe, patches, waves, products;
  Floats stored;  // DM's exit waves of every position (frames, M, D, D), or empty
  std::vector<unsigned short> data;
  std::vector<int> py, px;

  Buffers(Options const& o, int slots, bool with_stored)
      : D(o.detector), M(o.modes), H(o.object), W(o.object), batch_slots(slots), F(std::size_t(D) * D) {
    if (with_stored) stored = floats(2 * std::size_t(o.frames) * M * F, 0.25f);
    std::size_t const obj = std::size_t(H) * W;
    object = floats(2 * obj, 0.5f);
    obj_num = floats(2 * obj, 0.f);
    obj_w = floats(obj, 0.f);
    probe = floats(2 * M * F, 0.5f);
    probe_num = floats(2 * M * F, 0.f);
    probe_w = floats(F, 0.f);
    probe_int = floats(F, 0.25f);
    dir_probe = floats(2 * M * F, 0.1f);
    patches = floats(2 * slots * F, 0.f);
    waves = floats(2 * std::size_t(slots) * M * F, 0.f);
    products = floats(2 * slots * F, 0.f);
    data.assign(std::size_t(o.frames) * F, 7);
    std::mt19937 rng(o.seed);
    std::uniform_int_distribution<int> corner(0, H - D - 2);
    for (int n = 0; n < o.frames; ++n) {
      py.push_back(corner(rng));
      px.push_back(corner(rng));
    }
  }
  float* wave(int slot, int m, int i) const { return waves.get() + 2 * ((std::size_t(slot) * M + m) * F + i * D); }
  float* patch(int slot, int i) const { return patches.get() + 2 * (std::size_t(slot) * F + i * D); }
  float* product(int slot, int i) const { return products.get() + 2 * (std::size_t(slot) * F + i * D); }
  float* stored_row(int n, int m, int i) const { return stored.get() + 2 * ((std::size_t(n) * M + m) * F + i * D); }
  float* probe_row(float* p, int m, int i) const { return p + 2 * (std::size_t(m) * F + i * D); }
  std::size_t obj_at(int n, int i) const { return std::size_t(py[n] + i) * W + px[n]; }
};

/// The 16 x 16 object tiles the footprints of positions [first, last) touch.
struct Tiles {
  static constexpr int T = 16;
  int TH, TW;
  std::vector<char> mark;
  Tiles(int H, int W) : TH((H + T - 1) / T), TW((W + T - 1) / T) {}
  void of(Buffers const& b, int first, int last) {
    mark.assign(std::size_t(TH) * TW, 0);
    for (int n = first; n < last; ++n)
      for (int ty = b.py[n] / T; ty <= (b.py[n] + b.D) / T; ++ty)
        for (int tx = b.px[n] / T; tx <= (b.px[n] + b.D) / T; ++tx) mark[std::size_t(ty) * TW + tx] = 1;
  }
  /// f(first pixel of a tile row, its length) over every marked tile row.
  template <class F>
  void rows(int H, int W, F&& f) const {
    for (int ty = 0; ty < TH; ++ty)
      for (int tx = 0; tx < TW; ++tx)
        if (mark[std::size_t(ty) * TW + tx])
          for (int i = ty * T; i < std::min(H, ty * T + T); ++i) f(std::size_t(i) * W + tx * T, std::min(T, W - tx * T));
  }
};

// ---- the passes of one chunk (positions n0.., slots s0..) ----

void extract_exit_waves(Buffers& b, int n0, int s0, int count) {
  int const R = 2 * b.D;
  for (int c = 0; c < count; ++c)
    for (int i = 0; i < b.D; ++i) {
      float const* o = b.object.get() + 2 * b.obj_at(n0 + c, i);
      float* s = b.patch(s0 + c, i);
      for (int j = 0; j < R; ++j) s[j] = o[j];
      for (int m = 0; m < b.M; ++m) {
        float const* p = b.probe_row(b.probe.get(), m, i);
        float* x = b.wave(s0 + c, m, i);
        for (int j = 0; j < R; ++j) x[j] = p[j] * s[j];
      }
    }
}

void fourier_step(Buffers& b, int n0, int s0, int count) {
  int const R = 2 * b.D;
  std::vector<float> g(R);
  float const scale = 1.f / (7.f * float(b.F));  // keeps the values bounded over repeats
  for (int c = 0; c < count; ++c)
    for (int i = 0; i < b.D; ++i) {
      unsigned short const* d = &b.data[std::size_t(n0 + c) * b.F + i * b.D];
      for (int j = 0; j < b.D; ++j) g[2 * j] = g[2 * j + 1] = float(d[j]) * scale;
      for (int m = 0; m < b.M; ++m) {
        float* x = b.wave(s0 + c, m, i);
        for (int j = 0; j < R; ++j) x[j] *= g[j];
      }
    }
}

/// The probe's sums of `count` patches from slot s0 in one pass over them
/// (ptyko's add_probe_sums): per probe row, the weight |S_b|^2 and every
/// mode's numerator sum_b S_b x_bm, with x's rows from wave_row(c, m, i).
template <class WaveRow>
void probe_sums(Buffers& b, int count, WaveRow const& wave_row, int s0) {
  int const R = 2 * b.D, D = b.D;
  for (int i = 0; i < D; ++i) {
    float* pw = b.probe_w.get() + i * D;
    for (int c = 0; c < count; ++c) {
      float const* s = b.patch(s0 + c, i);
      for (int j = 0; j < D; ++j) pw[j] += s[2 * j] * s[2 * j];
      for (int m = 0; m < b.M; ++m) {
        float* pn = b.probe_row(b.probe_num.get(), m, i);
        float const* x = wave_row(c, m, i);
        for (int j = 0; j < R; ++j) pn[j] += s[j] * x[j];
      }
    }
  }
}

void adjoints(Buffers& b, int n0, int s0, int count) {
  int const R = 2 * b.D, D = b.D;
  for (int c = 0; c < count; ++c)  // per-patch object product sum_m P_m x_m
    for (int i = 0; i < D; ++i) {
      float* q = b.product(s0 + c, i);
      for (int j = 0; j < R; ++j) q[j] = 0;
      for (int m = 0; m < b.M; ++m) {
        float const* p = b.probe_row(b.probe.get(), m, i);
        float const* x = b.wave(s0 + c, m, i);
        for (int j = 0; j < R; ++j) q[j] += p[j] * x[j];
      }
    }
  for (int c = 0; c < count; ++c)  // its scatter into the object numerator
    for (int i = 0; i < D; ++i) {
      float* o = b.obj_num.get() + 2 * b.obj_at(n0 + c, i);
      float const* q = b.product(s0 + c, i);
      for (int j = 0; j < R; ++j) o[j] += q[j];
    }
  for (int c = 0; c < count; ++c)  // illumination scatter sum_m |P_m|^2
    for (int i = 0; i < D; ++i) {
      float* w = b.obj_w.get() + b.obj_at(n0 + c, i);
      float const* pi = b.probe_int.get() + i * D;
      for (int j = 0; j < D; ++j) w[j] += pi[j];
    }
  probe_sums(b, count, [&](int c, int m, int i) { return b.wave(s0 + c, m, i); }, s0);
}

// ---- the passes of one batch ----

/// object = update from its numerator and weight on the n pixels from
/// flat index r; both sums cleared.
void update_object_pixels(Buffers& b, std::size_t r, std::size_t n) {
  float* o = b.object.get() + 2 * r;
  float* num = b.obj_num.get() + 2 * r;
  float* w = b.obj_w.get() + r;
  for (std::size_t j = 0; j < n; ++j) {
    o[2 * j] = 0.5f * o[2 * j] + 1e-3f * num[2 * j] * w[j];
    o[2 * j + 1] = 0.5f * o[2 * j + 1] + 1e-3f * num[2 * j + 1] * w[j];
    num[2 * j] = num[2 * j + 1] = w[j] = 0;
  }
}

/// rPIE: the preconditioned update over the batch's tiles.
void preconditioned_update(Buffers& b, Tiles const& tiles) {
  tiles.rows(b.H, b.W, [&](std::size_t r, int n) { update_object_pixels(b, r, std::size_t(n)); });
}

/// LSQML: the direction in place of the numerator (weight cleared), the six
/// step sums of every position, then object += beta * direction (cleared).
double lsqml_batch_passes(Buffers& b, Tiles const& tiles, int first, int count) {
  tiles.rows(b.H, b.W, [&](std::size_t r, int n) {
    float* num = b.obj_num.get() + 2 * r;
    float* w = b.obj_w.get() + r;
    for (int j = 0; j < n; ++j) {
      num[2 * j] *= 1e-3f * w[j];
      num[2 * j + 1] *= 1e-3f * w[j];
      w[j] = 0;
    }
  });
  int const R = 2 * b.D;
  constexpr int lanes = 16;
  double total = 0;
  for (int c = 0; c < count; ++c) {
    float acc[6][lanes] = {};
    for (int i = 0; i < b.D; ++i) {
      float const* d = b.obj_num.get() + 2 * b.obj_at(first + c, i);
      float const* s = b.patch(c, i);
      for (int m = 0; m < b.M; ++m) {
        float const* p = b.probe_row(b.probe.get(), m, i);
        float const* dp = b.probe_row(b.dir_probe.get(), m, i);
        float const* x = b.wave(c, m, i);
        for (int j0 = 0; j0 < R; j0 += lanes)
          for (int k = 0; k < lanes; ++k) {
            int const j = j0 + k;
            float const a = p[j] * d[j], e = dp[j] * s[j];
            acc[0][k] += a * a;
            acc[1][k] += e * e;
            acc[2][k] += a * e;
            acc[3][k] += a * x[j];
            acc[4][k] += e * x[j];
            acc[5][k] += x[j];
          }
      }
    }
    for (auto const& q : acc)
      for (float v : q) total += v;
  }
  tiles.rows(b.H, b.W, [&](std::size_t r, int n) {
    float* o = b.object.get() + 2 * r;
    float* num = b.obj_num.get() + 2 * r;
    for (int j = 0; j < 2 * n; ++j) {
      o[j] = 0.5f * o[j] + 1e-3f * num[j];
      num[j] = 0;
    }
  });
  return total;
}

// ---- DM: the passes over its stored exit waves ----

void extract_patches(Buffers& b, int n0, int count) {
  for (int c = 0; c < count; ++c)
    for (int i = 0; i < b.D; ++i) {
      float const* o = b.object.get() + 2 * b.obj_at(n0 + c, i);
      float* s = b.patch(c, i);
      for (int j = 0; j < 2 * b.D; ++j) s[j] = o[j];
    }
}

/// Probe sums from the stored waves: numerator sum_j S_j psi_jm, weight |S_j|^2.
void dm_probe_pass(Buffers& b, int frames, int chunk) {
  for (int n0 = 0; n0 < frames; n0 += chunk) {
    int const count = std::min(chunk, frames - n0);
    extract_patches(b, n0, count);
    probe_sums(b, count, [&](int c, int m, int i) { return b.stored_row(n0 + c, m, i); }, 0);
  }
  std::size_t const n = 2 * std::size_t(b.M) * b.F;  // the probe update (probe-sized)
  for (std::size_t k = 0; k < n; ++k) {
    b.probe[k] = 0.5f * b.probe[k] + 1e-3f * b.probe_num[k] * b.probe_w[(k / 2) % b.F];
    b.probe_num[k] = 0;
  }
  std::fill(b.probe_w.get(), b.probe_w.get() + b.F, 0.f);
}

/// Object sums of the positions [n0, n0 + count) from waves at `wave(c, m, i)`.
template <class Wave>
void dm_object_sums(Buffers& b, int n0, int count, Wave&& wave) {
  int const R = 2 * b.D, D = b.D;
  for (int c = 0; c < count; ++c)
    for (int i = 0; i < D; ++i) {
      float* o = b.obj_num.get() + 2 * b.obj_at(n0 + c, i);
      for (int m = 0; m < b.M; ++m) {
        float const* p = b.probe_row(b.probe.get(), m, i);
        float const* x = wave(c, m, i);
        for (int j = 0; j < R; ++j) o[j] += p[j] * x[j];
      }
      float* w = b.obj_w.get() + b.obj_at(n0 + c, i);
      float const* pi = b.probe_int.get() + i * D;
      for (int j = 0; j < D; ++j) w[j] += pi[j];
    }
}

/// DM: the object from its sums over the whole object.
void dm_object_update(Buffers& b) { update_object_pixels(b, 0, std::size_t(b.H) * b.W); }

/// f(probe row, patch row, stored wave row, chunk wave row, row length) for
/// every mode and row of the chunk's positions [n0, n0 + count).
template <class F>
void for_chunk_wave_rows(Buffers& b, int n0, int count, F&& f) {
  for (int c = 0; c < count; ++c)
    for (int m = 0; m < b.M; ++m)
      for (int i = 0; i < b.D; ++i)
        f(b.probe_row(b.probe.get(), m, i), b.patch(c, i), b.stored_row(n0 + c, m, i), b.wave(c, m, i), 2 * b.D);
}

/// waves = 2 P S - psi (the reflection fed to the FFT).
void dm_reflect(Buffers& b, int n0, int count) {
  for_chunk_wave_rows(b, n0, count, [](float const* p, float const* s, float const* psi, float* x, int R) {
    for (int j = 0; j < R; ++j) x[j] = 2.f * p[j] * s[j] - psi[j];
  });
}

/// psi = psi + waves - P S (the wave update; halved to stay bounded).
void dm_update_waves(Buffers& b, int n0, int count) {
  for_chunk_wave_rows(b, n0, count, [](float const* p, float const* s, float* psi, float const* x, int R) {
    for (int j = 0; j < R; ++j) psi[j] = 0.5f * psi[j] + 0.5f * x[j] - p[j] * s[j];
  });
}

struct Plans {
  fftwf_plan forward, inverse;
  Plans(Buffers& b, int frames) {
    int const n[2] = {b.D, b.D};
    int const dist = int(b.F);
    auto* x = reinterpret_cast<fftwf_complex*>(b.waves.get());
    forward = fftwf_plan_many_dft(2, n, frames, x, nullptr, 1, dist, x, nullptr, 1, dist, FFTW_FORWARD, FFTW_MEASURE);
    inverse = fftwf_plan_many_dft(2, n, frames, x, nullptr, 1, dist, x, nullptr, 1, dist, FFTW_BACKWARD, FFTW_MEASURE);
    std::fill(b.waves.get(), b.waves.get() + 2 * std::size_t(b.batch_slots) * b.M * b.F, 0.f);  // planning wrote them
  }
  ~Plans() {
    fftwf_destroy_plan(forward);
    fftwf_destroy_plan(inverse);
  }
  void run(fftwf_plan p, Buffers& b, int slot) const {
    auto* x = reinterpret_cast<fftwf_complex*>(b.wave(slot, 0, 0));
    fftwf_execute_dft(p, x, x);
  }
};

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

enum class Solver { rpie, lsqml, dm };

/// DM's epoch: overlap_passes rounds of an object update and a probe pass
/// (the first round's object sums come from the last Fourier step, later
/// rounds' from an object pass over the stored waves), then the Fourier step.
void dm_epoch(Options const& o, Buffers& b, Plans const& plans, bool with_passes) {
  for (int round = 0; with_passes && round < o.dm_overlap_passes; ++round) {
    if (round > 0)
      for (int n0 = 0; n0 < o.frames; n0 += o.chunk)
        dm_object_sums(b, n0, std::min(o.chunk, o.frames - n0),
                       [&](int c, int m, int i) { return b.stored_row(n0 + c, m, i); });
    dm_object_update(b);
    dm_probe_pass(b, o.frames, o.chunk);
  }
  for (int n0 = 0; n0 < o.frames; n0 += o.chunk) {
    int const count = std::min(o.chunk, o.frames - n0);
    if (with_passes) {
      extract_patches(b, n0, count);
      dm_reflect(b, n0, count);
    }
    plans.run(plans.forward, b, 0);
    if (with_passes) fourier_step(b, n0, 0, count);
    plans.run(plans.inverse, b, 0);
    if (with_passes) {
      dm_update_waves(b, n0, count);
      dm_object_sums(b, n0, count, [&](int c, int m, int i) { return b.stored_row(n0 + c, m, i); });
    }
  }
}

/// One epoch of `solver` (batch 16 rPIE, 8 LSQML, DM over every position);
/// with_passes = false runs its FFTs alone. Returns the minimum wall time
/// over the repeats.
double epoch_time(Options const& o, Solver solver, bool with_passes, double& checksum) {
  bool const lsqml = solver == Solver::lsqml;
  int const batch = lsqml ? 8 : 16;
  int const slots = lsqml ? batch : o.chunk;  // LSQML's step sums read the batch's waves again
  Buffers b(o, slots, solver == Solver::dm);
  Tiles tiles(b.H, b.W);
  Plans plans(b, o.chunk * o.modes);
  double best = 1e300;
  for (int rep = 0; rep < o.repeats + 1; ++rep) {  // the first is a warm-up
    double const t0 = seconds();
    if (solver == Solver::dm) dm_epoch(o, b, plans, with_passes);
    for (int first = 0; solver != Solver::dm && first + batch <= o.frames; first += batch) {
      for (int c0 = 0; c0 < batch; c0 += o.chunk) {
        int const n0 = first + c0, s0 = lsqml ? c0 : 0, count = std::min(o.chunk, batch - c0);
        if (with_passes) extract_exit_waves(b, n0, s0, count);
        plans.run(plans.forward, b, s0);
        if (with_passes) fourier_step(b, n0, s0, count);
        plans.run(plans.inverse, b, s0);
        if (with_passes) adjoints(b, n0, s0, count);
      }
      if (!with_passes) continue;
      tiles.of(b, first, first + batch);
      if (lsqml)
        checksum += lsqml_batch_passes(b, tiles, first, batch);
      else
        preconditioned_update(b, tiles);
    }
    double const t = seconds() - t0;
    if (rep > 0) best = std::min(best, t);
  }
  checksum += b.object[2 * b.obj_at(0, b.D / 2)];
  return best;
}

int parse_int(char const* flag, char const* value) {
  char* end = nullptr;
  long const v = value ? std::strtol(value, &end, 10) : 0;
  if (!value || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "pass_floor: %s needs a positive integer (got '%s')\n", flag, value ? value : "");
    std::exit(2);
  }
  return int(v);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    std::string const a = argv[k];
    char const* v = k + 1 < argc ? argv[k + 1] : nullptr;
    if (a == "--detector") o.detector = parse_int(argv[k], v), ++k;
    else if (a == "--modes") o.modes = parse_int(argv[k], v), ++k;
    else if (a == "--frames") o.frames = parse_int(argv[k], v), ++k;
    else if (a == "--object") o.object = parse_int(argv[k], v), ++k;
    else if (a == "--chunk") o.chunk = parse_int(argv[k], v), ++k;
    else if (a == "--repeats") o.repeats = parse_int(argv[k], v), ++k;
    else if (a == "--dm-overlap-passes") o.dm_overlap_passes = parse_int(argv[k], v), ++k;
    else if (a == "--seed") o.seed = unsigned(parse_int(argv[k], v)), ++k;
    else {
      std::fprintf(stderr, "pass_floor: unknown option %s (see the comment at the top of bench/pass_floor.cpp)\n",
                   argv[k]);
      return 2;
    }
  }
  if (o.object < o.detector + 3 || o.frames < 16 || o.chunk > 8 || o.dm_overlap_passes < 1) {
    std::fprintf(stderr,
                 "pass_floor: needs --object >= detector + 3, --frames >= 16, --chunk <= 8 and "
                 "--dm-overlap-passes >= 1\n");
    return 2;
  }
  std::printf("### Pass floor: %d positions of %d x %d, %d modes, object %d x %d, chunks of %d (wall, min of %d)\n\n",
              o.frames, o.detector, o.detector, o.modes, o.object, o.object, o.chunk, o.repeats);
  std::printf("| solver | FFTs alone | FFTs + passes | passes | pass-floor ratio |\n|---|---:|---:|---:|---:|\n");
  double checksum = 0;
  std::string lines;
  for (Solver solver : {Solver::rpie, Solver::lsqml, Solver::dm}) {
    char const* name = solver == Solver::rpie ? "rpie" : solver == Solver::lsqml ? "lsqml" : "dm";
    double const fft = epoch_time(o, solver, false, checksum);
    double const all = epoch_time(o, solver, true, checksum);
    std::printf("| %s | %.2f ms | %.2f ms | %.2f ms | %.3f |\n", name, fft * 1e3, all * 1e3, (all - fft) * 1e3,
                all / fft);
    char line[96];
    std::snprintf(line, sizeof line, "pass-floor-ratio %s %.4f\n", name, all / fft);
    lines += line;
  }
  std::printf("\n(checksum %g)\n%s", checksum, lines.c_str());
  return 0;
}
