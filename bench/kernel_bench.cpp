// Kernel microbenchmarks (Google Benchmark): every kernel a solver epoch is
// made of, at detector sizes D = 64, 128, 256 and batch sizes B = 16..256,
// single precision (the solvers' default), M = 2 probe modes.
//
//   kernel_bench                      default grid: D in {64, 128, 256}, B in {16, 64}
//   kernel_bench --full               B in {16, 32, 64, 128, 256}
//   kernel_bench --markdown           one markdown table (median rows when repeated)
//   kernel_bench --benchmark_filter=fft --benchmark_repetitions=5 ...   (any Google Benchmark flag)
//
// Timing: manual time, with the execution space fenced before and after the
// timed call (FencedTimer); plans, buffers and inputs are built outside the
// timed region. --timer=auto (default) times the process CPU time when the
// default execution space is Serial (one thread does all the work; on a
// shared machine this leaves out other processes' time slices), wall time
// otherwise; --timer=wall or --timer=cpu force one. Counters are per iteration and reported as rates
// (kIsIterationInvariantRate): bytes/s and flop/s from the models below,
// frames/s (positions per second) where a batch is involved.
//
// Byte and flop models (single precision: complex = 8 bytes, real = 4 bytes;
// n = D*D pixels per frame, E = (D+1)^2 pixels per bilinear footprint; the
// byte models count compulsory traffic: each array read or written once,
// nothing for caches; flops count real additions and multiplications, a
// sqrt, log or division as one):
//   extract_patches        bytes 8 B E (object footprint) + 8 B n (patches)
//                          flops 20 B n  (4 real*complex weights 8, 3 complex adds 6, weight products 6)
//   add_patches            bytes 8 B n (patches) + 2 * 8 B E (object read-modify-write)
//                          flops 22 B E  (4 weighted taps 8+6, weights 6, the add 2)
//   add_illumination       bytes 4 n (probe intensity) + 2 * 4 B E (real object weight RMW)
//                          flops 11 B E + 3 M n
//   exit_waves             bytes 8 B n (patches) + 8 M n (probe) + 8 B M n (waves)
//                          flops 6 B M n (one complex product)
//   extract_exit_waves     (fused extract_patches + exit_waves + 1/D scaling)
//                          bytes 8 B E + 8 B n (patches written) + 8 M n + 8 B M n
//                          flops 22 B n + 6 B M n
//   fft_forward/_inverse   bytes 2 * 8 B M n (read + write once; FFTW makes several passes)
//                          flops 5 B M n log2(n)  (the usual FFT flop convention, as FFTW's benchFFT)
//   fft_forward_ortho      the same plus the separate 1/sqrt(n) scaling pass (2 * 8 B M n bytes, 2 B M n flops)
//   modulus_projection     bytes 2 * 8 B M n (waves RMW) + 4 B n (data) + 4 B (indices)
//                          flops B n (3 M + 2 M + 10)  (|Psi|^2, scaling, 2 sqrt, add, divide, cost 3)
//   cost_descent_direction (Gaussian: Psi <- Psi (sqrt(d)/(sqrt(I)+eps) - 1), + cost)
//                          bytes as modulus_projection, flops B n (5 M + 11)
//   data_cost              bytes 8 B M n + 4 B n
//                          flops B n (3 M + 6)
//   probe_adjoint_product  bytes 8 M n + 8 B M n (g) + 8 B n (out)
//                          flops 8 B M n  (conj product 6 + add 2)
//   patch_adjoint_product  bytes 8 B n (patches) + 8 B M n (g) + 2 * 8 M n (out RMW)
//                          flops 8 B M n
//   add_patch_intensity    bytes 8 B n + 2 * 4 n
//                          flops 4 B n
//   add_probe_sums         (the two above in one pass over the patches)
//                          bytes 8 B n + 8 B M n + 2 * 8 M n + 2 * 4 n, flops 8 B M n + 4 B n
//   apply_preconditioned_update (object of H x W = (4D)^2 pixels, no batch)
//                          bytes HW (8 field read + 8 num + 4 weight + 8 field write)
//                          flops 8 HW
//   batch_tile_passes      (object of (16 D)^2 pixels; B scattered footprints) one rPIE batch's
//                          object passes over its tiles: max of the weights, the update
//                          (numerator zeroed behind it), the weights zeroed
//                          bytes 44 per tile pixel (4 + 8+8+4 read + 8+8 written + 4), flops 9
//   isolated_* (B isolated positions: footprints on a grid D + 3 apart in an
//   object of (ceil(sqrt B) (D + 3) + 2 D)^2 pixels, random sub-pixel parts;
//   what a sparse batch of a large scan is made of, docs/solvers.md)
//   max_isolated_weight    the largest S^T intensity of B footprints, rows skipped
//                          below the running maximum (random probe: few skips; a
//                          peaked probe skips most) bytes 4 n + 4 D, flops 11 B E (no skips)
//   apply_isolated_update  rPIE's direct update: bytes 8 B n (products) + 4 n + 2 * 8 B E
//                          (object RMW), flops 34 B E (complex and real adjoints 16 + 8,
//                          the preconditioned step 10)
//   isolated_directions    LSQML's footprint directions: bytes 8 B n + 4 n + 8 B E,
//                          flops 32 B E (adjoints 24, sqrt, division and scaling 8)
//   add_isolated_directions bytes 8 B E (directions) + 2 * 8 B E (object RMW), flops 4 B E
//   fft_forward_measure    as fft_forward, plan built with FFTW_MEASURE instead of FFTW_ESTIMATE
//   reference_copy         (not a ptyko kernel) Kokkos::deep_copy of the B x M waves into
//                          another View of the same space: bytes 2 * 8 B M n, no flops - the
//                          device copy bandwidth; the markdown table gives every kernel's
//                          bytes/s as a fraction of it ("of copy")
//   reference_triad        (not a ptyko kernel) w += 0.5 v over B x M frames, flat:
//                          bytes 3 * 8 B M n, flops 4 B M n - the achievable element-wise bandwidth
//   reference_exit_waves_rows (not a ptyko kernel) exit_waves with one work item per
//                          position and contiguous pixel loops (no index division); model as exit_waves
//   orthogonalize_modes    (probe M x n; no batch) two complex gemms of M x M x n
//                          bytes 5 * 8 M n (P read twice, Q written, Q copied back)
//                          flops 2 * 8 M^2 n (+ an M x M eigenproblem on the host)
//
// Data: object (4D)^2 pixels of random phase, B positions uniform in the
// object (sub-pixel), random probe modes and far fields, data = |random|^2.

#include "bench_support.hpp"

#include <ptyko/core/probe_modes.hpp>
#include <ptyko/kernels/exit_wave.hpp>
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/fourier.hpp>
#include <ptyko/kernels/kokkos_scope.hpp>
#include <ptyko/kernels/isolated_update.hpp>
#include <ptyko/kernels/patch.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/kernels/update.hpp>

#include <Kokkos_Random.hpp>

#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

namespace {

using namespace ptyko;
using bench::Exec;
using bench::FencedTimer;
using T = float;
using Mem = Exec::memory_space;
constexpr int M = 2;  // probe modes

/// Random values: complex of amplitude 0.5..1 and any phase; real 0..100.
template <class View>
void fill_random(Exec const& space, Kokkos::Random_XorShift64_Pool<Exec> const& pool, View const& v) {
  using V = typename View::non_const_value_type;
  auto* p = v.data();
  Kokkos::parallel_for(
      "bench::fill", Kokkos::RangePolicy<Exec>(space, 0, v.span()), KOKKOS_LAMBDA(std::size_t k) {
        auto g = pool.get_state();
        V& out = p[k];  // nvcc: no first capture (of p) inside if constexpr
        if constexpr (std::is_same_v<V, Complex<T>>) {
          T const a = T(g.frand(0.5f, 1.0f)), ph = T(g.frand(-3.f, 3.f));
          out = Complex<T>(a * math::cos(ph), a * math::sin(ph));
        } else {
          out = V(g.frand(0.f, 100.f));
        }
        pool.free_state(g);
      });
}

/// Inputs of one (D, B) configuration, built outside the timed region.
struct Fixture {
  int D, B, H, W;
  ComplexView2<T, Mem> object;
  PositionView<T, Mem> positions;
  IndexView<Mem> indices;
  ComplexView3<T, Mem> probe, patches, products, probe_out;
  ComplexView4<T, Mem> waves;
  RealView3<float, Mem> data;
  RealView2<T, Mem> obj_w, probe_int, probe_w;
  ComplexView2<T, Mem> obj_num;
  MaskView<Mem> mask;  // empty: every pixel measured

  Fixture(Exec const& space, int D_, int B_) : D(D_), B(B_), H(4 * D_), W(4 * D_) {
    object = ComplexView2<T, Mem>("bench::object", H, W);
    obj_num = ComplexView2<T, Mem>("bench::obj_num", H, W);
    obj_w = RealView2<T, Mem>("bench::obj_w", H, W);
    positions = PositionView<T, Mem>("bench::positions", B);
    indices = IndexView<Mem>("bench::indices", B);
    probe = ComplexView3<T, Mem>("bench::probe", M, D, D);
    probe_out = ComplexView3<T, Mem>("bench::probe_out", M, D, D);
    patches = ComplexView3<T, Mem>("bench::patches", B, D, D);
    products = ComplexView3<T, Mem>("bench::products", B, D, D);
    waves = ComplexView4<T, Mem>("bench::waves", B, M, D, D);
    data = RealView3<float, Mem>("bench::data", B, D, D);
    probe_int = RealView2<T, Mem>("bench::probe_intensity", D, D);
    probe_w = RealView2<T, Mem>("bench::probe_w", D, D);

    Kokkos::Random_XorShift64_Pool<Exec> pool(12345);
    fill_random(space, pool, object);
    fill_random(space, pool, probe);
    fill_random(space, pool, patches);
    fill_random(space, pool, waves);
    fill_random(space, pool, data);
    auto hp = Kokkos::create_mirror_view(positions);
    auto hi = Kokkos::create_mirror_view(indices);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> uy(D / 2 + 1, H - D / 2 - 2), ux(D / 2 + 1, W - D / 2 - 2);
    for (int b = 0; b < B; ++b) {
      hp(b, 0) = T(uy(rng));
      hp(b, 1) = T(ux(rng));
      hi(b) = b;
    }
    Kokkos::deep_copy(space, positions, hp);
    Kokkos::deep_copy(space, indices, hi);
    probe_intensity(space, probe, probe_int);
    fence(space, "bench::fixture");
  }

  double n() const { return double(D) * D; }
  double E() const { return double(D + 1) * (D + 1); }
};

/// One fixture per (D, B), built on first use and shared by every kernel
/// and repetition of that configuration (the kernels leave their inputs
/// usable); released before Kokkos is finalised.
std::map<std::pair<int, int>, std::unique_ptr<Fixture>>& fixtures() {
  static std::map<std::pair<int, int>, std::unique_ptr<Fixture>> f;
  return f;
}
Fixture& fixture(Exec const& space, int D, int B) {
  auto& slot = fixtures()[{D, B}];
  if (!slot) {
    fixtures().clear();  // one configuration at a time: benchmarks run grouped by (D, B)
    auto& again = fixtures()[{D, B}];
    again = std::make_unique<Fixture>(space, D, B);
    return *again;
  }
  return *slot;
}

void set_rates(benchmark::State& state, double bytes, double flops, double frames) {
  using C = benchmark::Counter;
  state.counters["bytes/s"] = C(bytes, C::kIsIterationInvariantRate, C::kIs1000);
  state.counters["flop/s"] = C(flops, C::kIsIterationInvariantRate, C::kIs1000);
  if (frames > 0) state.counters["frames/s"] = C(frames, C::kIsIterationInvariantRate, C::kIs1000);
}

/// Runs `work` once per iteration under a fenced manual timer.
template <class Work>
void timed_loop(benchmark::State& state, Exec const& space, Work&& work) {
  work();  // warm-up: page faults, FFTW plan lookup
  for (auto _ : state) {
    FencedTimer t(space);
    work();
    state.SetIterationTime(t.stop());
  }
}

void BM_extract_patches(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  timed_loop(state, space, [&] { extract_patches(space, f.object, f.positions, f.indices, f.patches); });
  set_rates(state, 8 * f.B * f.E() + 8 * f.B * f.n(), 20 * f.B * f.n(), f.B);
}

void BM_add_patches(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  timed_loop(state, space, [&] { add_patches(space, f.patches, f.positions, f.indices, f.obj_num); });
  set_rates(state, 8 * f.B * f.n() + 16 * f.B * f.E(), 22 * f.B * f.E(), f.B);
}

void BM_add_illumination(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  timed_loop(state, space, [&] {
    probe_intensity(space, f.probe, f.probe_int);
    auto pint = f.probe_int;
    scatter_add_patches(
        space, f.B, f.D, f.positions, f.indices, f.obj_w, KOKKOS_LAMBDA(int, int i) { return &pint(i, 0); },
        "ptyko::UpdateSums::illumination");
  });
  set_rates(state, 4 * f.n() + 8 * f.B * f.E(), 11 * f.B * f.E() + 3 * M * f.n(), f.B);
}

void BM_extract_exit_waves(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  T const scale = T(1) / T(f.D);
  timed_loop(state, space, [&] {
    extract_exit_waves(space, f.object, f.positions, f.indices, f.probe, f.patches, f.waves, scale);
  });
  set_rates(state, 8 * f.B * f.E() + 8 * f.B * f.n() + 8 * M * f.n() + 8.0 * f.B * M * f.n(),
            20 * f.B * f.n() + 2 * f.B * f.n() + 6.0 * f.B * M * f.n(), f.B);
}

void BM_exit_waves(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  timed_loop(state, space, [&] { exit_waves(space, f.B, f.probe, f.patches, f.waves); });
  set_rates(state, 8 * f.B * f.n() + 8 * M * f.n() + 8.0 * f.B * M * f.n(), 6.0 * f.B * M * f.n(), f.B);
}

template <FFTDirection Dir, FFTNorm Norm, FFTPlanEffort Effort = FFTPlanEffort::estimate>
void BM_fft(benchmark::State& state) {
  Exec space;
  int const D = int(state.range(0)), B = int(state.range(1));
  ComplexView4<T, Mem> waves("bench::waves", B, M, D, D);
  BatchedFFT2D<T, Exec> fft(space, B * M, D, D, Effort);  // the plan: outside the timed loop
  if (Effort == FFTPlanEffort::measure) fft.forward(space, waves, waves, Norm);  // FFTW_MEASURE plans on scratch
  Kokkos::deep_copy(waves, Complex<T>(0.5, -0.25));
  timed_loop(state, space, [&] {
    if (Dir == FFTDirection::forward)
      fft.forward(space, waves, waves, Norm);
    else
      fft.inverse(space, waves, waves, Norm);
  });
  double const frames = double(B) * M, n = double(D) * D;
  double bytes = 16 * frames * n, flops = 5 * frames * n * std::log2(n);
  if (Norm == FFTNorm::ortho) {
    bytes += 16 * frames * n;
    flops += 2 * frames * n;
  }
  set_rates(state, bytes, flops, B);
}

/// The solvers' plans use FFTPlanEffort::estimate; this shows what
/// FFTW_MEASURE planning (once per shape and batch) would give.
void BM_fft_measure(benchmark::State& state) {
  BM_fft<FFTDirection::forward, FFTNorm::none, FFTPlanEffort::measure>(state);
}

void BM_modulus_projection(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  double cost = 0;
  timed_loop(state, space, [&] { cost += modulus_projection(space, f.B, f.waves, f.data, f.indices, f.mask, RealView2<T, Mem>(), T(1e-6)); });
  benchmark::DoNotOptimize(cost);
  set_rates(state, 16.0 * f.B * M * f.n() + 4 * f.B * f.n() + 4 * f.B, f.B * f.n() * (5 * M + 10), f.B);
}

void BM_cost_descent_direction(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  double cost = 0;
  timed_loop(state, space, [&] {
    cost += cost_descent_direction(space, NoiseModel::gaussian, f.B, f.waves, f.data, f.indices, f.mask, RealView2<T, Mem>(),
                                   T(1e-6));
  });
  benchmark::DoNotOptimize(cost);
  set_rates(state, 16.0 * f.B * M * f.n() + 4 * f.B * f.n() + 4 * f.B, f.B * f.n() * (5 * M + 11), f.B);
}

void BM_data_cost(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  double cost = 0;
  timed_loop(state, space, [&] {
    cost += data_cost(space, NoiseModel::gaussian, f.B, f.waves, f.data, f.indices, f.mask, RealView2<T, Mem>(), T(1e-6));
  });
  benchmark::DoNotOptimize(cost);
  set_rates(state, 8.0 * f.B * M * f.n() + 4 * f.B * f.n(), f.B * f.n() * (3 * M + 6), f.B);
}

void BM_probe_adjoint_product(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  timed_loop(state, space, [&] { probe_adjoint_product(space, f.B, f.probe, f.waves, f.products); });
  set_rates(state, 8 * M * f.n() + 8.0 * f.B * M * f.n() + 8 * f.B * f.n(), 8.0 * f.B * M * f.n(), f.B);
}

void BM_patch_adjoint_product(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  timed_loop(state, space, [&] { patch_adjoint_product(space, f.B, f.patches, f.waves, f.probe_out); });
  set_rates(state, 8 * f.B * f.n() + 8.0 * f.B * M * f.n() + 16 * M * f.n(), 8.0 * f.B * M * f.n(), f.B);
}

void BM_add_patch_intensity(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  timed_loop(state, space, [&] { add_patch_intensity(space, f.B, f.patches, f.probe_w); });
  set_rates(state, 8 * f.B * f.n() + 8 * f.n(), 4 * f.B * f.n(), f.B);
}

void BM_add_probe_sums(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  timed_loop(state, space, [&] { add_probe_sums(space, f.B, f.patches, f.waves, f.probe_out, f.probe_w); });
  set_rates(state, 8 * f.B * f.n() + 8.0 * f.B * M * f.n() + 16 * M * f.n() + 8 * f.n(),
            8.0 * f.B * M * f.n() + 4 * f.B * f.n(), f.B);
}

void BM_apply_preconditioned_update(benchmark::State& state) {
  Exec space;
  int const D = int(state.range(0));
  Fixture& f = fixture(space, D, 1);
  Kokkos::deep_copy(f.obj_w, T(1));
  timed_loop(state, space, [&] { apply_preconditioned_update(space, f.object, f.obj_num, f.obj_w, 0.1, 2.0); });
  double const px = double(f.H) * f.W;
  set_rates(state, 28 * px, 8 * px, 0);
  state.counters["pixels"] = px;
}

/// The object passes of one rPIE batch on a large object, over the tiles of
/// the batch's B scattered footprints (what a 10 000-frame scan does per
/// batch): the maximum of the weights, the preconditioned update (zeroing
/// the numerator behind it) and the zeroing of the weights. Successive
/// iterations take the next of `lists` tile lists (different positions), so
/// the tiles come from memory, not from the previous iteration's cache.
void BM_batch_tile_passes(benchmark::State& state) {
  Exec space;
  int const D = int(state.range(0)), B = int(state.range(1)), H = 16 * D, W = 16 * D, lists = 32;
  ComplexView2<T, Mem> object(Kokkos::view_alloc(space, "bench::large_object"), H, W);
  ComplexView2<T, Mem> num(Kokkos::view_alloc(space, "bench::large_num"), H, W);
  RealView2<T, Mem> w(Kokkos::view_alloc(space, "bench::large_w"), H, W);
  Kokkos::deep_copy(space, object, Complex<T>(0.5, 0.25));
  Kokkos::deep_copy(space, w, T(1));
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uy(D, H - D), ux(D, W - D);
  std::vector<TileList<Mem>> tiles;
  double pixels = 0;
  for (int k = 0; k < lists; ++k) {
    std::vector<std::array<double, 2>> centres;
    for (int b = 0; b < B; ++b) centres.push_back({uy(rng), ux(rng)});
    auto const origins = footprint_tiles(centres, D, H, W);
    pixels += double(origins.size()) * tile_edge * tile_edge / lists;
    tiles.push_back(make_tile_list<Mem>(origins, "bench::tiles"));
  }
  int next = 0;
  timed_loop(state, space, [&] {
    auto const& t = tiles[next];
    next = (next + 1) % lists;
    double const w_max = max_over_tiles(space, t, w);
    apply_preconditioned_update(space, t, object, num, w, 0.1, w_max, 1.0, SumAfterUse::zeroed);
    zero_tiles(space, t, w);  // values do not matter: the passes have no data-dependent branches
  });
  // bytes per tile pixel: max 4 (w), update 8 + 8 + 4 read, 8 + 8 written, zeroing 4
  set_rates(state, 44 * pixels, 9 * pixels, B);
  state.counters["pixels"] = pixels;
}

/// B isolated positions (footprints on a grid D + 3 apart: no two meet) in
/// an object just large enough, with the probe, products and intensity of
/// the (D, B) fixture and a footprint-shaped direction buffer.
struct IsolatedFixture {
  Fixture& f;
  int grid;
  ComplexView2<T, Mem> object;
  PositionView<T, Mem> positions;
  RealView1<T, Mem> row_bounds;
  ComplexView3<T, Mem> directions;

  IsolatedFixture(Exec const& space, Fixture& f_)
      : f(f_), grid(int(std::ceil(std::sqrt(double(f_.B))))) {
    int const D = f.D, side = grid * (D + 3) + 2 * D;
    object = ComplexView2<T, Mem>(Kokkos::view_alloc(space, "bench::isolated_object"), side, side);
    positions = PositionView<T, Mem>("bench::isolated_positions", f.B);
    row_bounds = RealView1<T, Mem>("bench::row_bounds", D + 1);
    directions = ComplexView3<T, Mem>("bench::isolated_directions", f.B, D + 1, D + 1);
    Kokkos::deep_copy(space, object, Complex<T>(0.5, 0.25));
    auto hp = Kokkos::create_mirror_view(positions);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> frac(0.0, 0.999);
    for (int b = 0; b < f.B; ++b) {
      hp(b, 0) = T(D + (b / grid) * (D + 3) + frac(rng));
      hp(b, 1) = T(D + (b % grid) * (D + 3) + frac(rng));
    }
    Kokkos::deep_copy(space, positions, hp);
    fill_random(space, Kokkos::Random_XorShift64_Pool<Exec>(99), f.products);
    footprint_row_bounds(space, f.probe_int, row_bounds);
    fence(space, "bench::isolated_fixture");
  }

  /// LSQML's footprint directions of the B positions (w_max: the intensity's bound).
  void compute_directions(Exec const& space) const {
    isolated_directions(space, positions, f.indices, f.products, f.probe_int, directions,
                        PreconditionedDirection<T>(0.1, 2.0));
  }
};

void BM_max_isolated_weight(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  IsolatedFixture iso(space, f);
  timed_loop(state, space, [&] {
    footprint_row_bounds(space, f.probe_int, iso.row_bounds);
    benchmark::DoNotOptimize(max_isolated_weight(space, iso.positions, f.indices, f.probe_int, iso.row_bounds));
  });
  set_rates(state, 4 * f.n() + 4 * f.D, 11 * f.B * f.E(), f.B);
}

void BM_apply_isolated_update(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  IsolatedFixture iso(space, f);
  timed_loop(state, space, [&] {
    apply_isolated_update(space, iso.positions, f.indices, f.products, f.probe_int, iso.object,
                          PreconditionedStep<T>(0.1, 2.0, 1e-3));
  });
  set_rates(state, 8 * f.B * f.n() + 4 * f.n() + 16 * f.B * f.E(), 34 * f.B * f.E(), f.B);
}

void BM_isolated_directions(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  IsolatedFixture iso(space, f);
  timed_loop(state, space, [&] { iso.compute_directions(space); });
  set_rates(state, 8 * f.B * f.n() + 4 * f.n() + 8 * f.B * f.E(), 32 * f.B * f.E(), f.B);
}

void BM_add_isolated_directions(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  IsolatedFixture iso(space, f);
  iso.compute_directions(space);
  timed_loop(state, space, [&] { add_isolated_directions(space, iso.positions, f.indices, iso.directions, iso.object, 1e-3); });
  set_rates(state, 24 * f.B * f.E(), 4 * f.B * f.E(), f.B);
}

void BM_orthogonalize_modes(benchmark::State& state) {
  Exec space;
  int const D = int(state.range(0)), modes = int(state.range(1));
  ComplexView3<T, Mem> probe("bench::probe", modes, D, D);
  auto h = Kokkos::create_mirror_view(probe);
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0, 1);
  for (std::size_t k = 0; k < h.span(); ++k) h.data()[k] = Complex<T>(g(rng), g(rng));
  Kokkos::deep_copy(probe, h);
  timed_loop(state, space, [&] { orthogonalize_modes<T>(space, probe); });
  double const n = double(D) * D;
  set_rates(state, 5 * 8 * modes * n, 16.0 * modes * modes * n, 0);
}

// --- References (not ptyko kernels): what this machine does on the same data ---

/// A device-to-device copy of the batch of waves (Kokkos::deep_copy between
/// two Views of the execution space's memory): the copy bandwidth the
/// kernels' bytes/s are compared with. bytes 2 * 8 B M n.
void BM_reference_copy(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  ComplexView4<T, Mem> copy(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "bench::copy"), f.B, M, f.D,
                            f.D);
  timed_loop(state, space, [&] { Kokkos::deep_copy(space, copy, f.waves); });
  set_rates(state, 16.0 * f.B * M * f.n(), 0, f.B);
}

/// STREAM-like triad over a batch of waves: w = w + s v (flat, contiguous),
/// the bandwidth an element-wise pass over B x M frames can reach.
/// bytes 3 * 8 B M n, flops 4 B M n.
void BM_reference_triad(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  ComplexView4<T, Mem> v("bench::v", f.B, M, f.D, f.D);
  Kokkos::deep_copy(v, Complex<T>(0.25, 0.5));
  auto* w = f.waves.data();
  auto const* x = v.data();
  std::size_t const total = f.waves.span();
  timed_loop(state, space, [&] {
    Kokkos::parallel_for(
        "bench::reference_triad", Kokkos::RangePolicy<Exec>(space, 0, total),
        KOKKOS_LAMBDA(std::size_t k) { w[k] += T(0.5) * x[k]; });
  });
  set_rates(state, 24.0 * f.B * M * f.n(), 4.0 * f.B * M * f.n(), f.B);
}

/// exit_waves written frame by frame: one work item per position, a
/// contiguous pixel loop per mode (no index division, vectorisable) - the
/// shape of a TeamPolicy kernel with a TeamThreadRange over pixels. Same
/// result and byte/flop model as exit_waves.
void BM_reference_exit_waves_rows(benchmark::State& state) {
  Exec space;
  Fixture& f = fixture(space, int(state.range(0)), int(state.range(1)));
  int const n = f.D * f.D;
  auto const* P = f.probe.data();
  auto const* S = f.patches.data();
  auto* out = f.waves.data();
  timed_loop(state, space, [&] {
    Kokkos::parallel_for(
        "bench::reference_exit_waves_rows", Kokkos::RangePolicy<Exec>(space, 0, f.B), KOKKOS_LAMBDA(int b) {
          for (int m = 0; m < M; ++m) {
            Complex<T>* o = out + (std::size_t(b) * M + m) * n;
            Complex<T> const* p = P + std::size_t(m) * n;
            Complex<T> const* s = S + std::size_t(b) * n;
            for (int k = 0; k < n; ++k) o[k] = p[k] * s[k];
          }
        });
  });
  set_rates(state, 8 * f.B * f.n() + 8 * M * f.n() + 8.0 * f.B * M * f.n(), 6.0 * f.B * M * f.n(), f.B);
}

void register_all(bool full) {
  std::vector<int64_t> const detectors{64, 128, 256};
  std::vector<int64_t> const batches = full ? std::vector<int64_t>{16, 32, 64, 128, 256} : std::vector<int64_t>{16, 64};
  using Fn = void (*)(benchmark::State&);
  std::vector<std::pair<char const*, Fn>> const kernels{
      {"extract_patches", BM_extract_patches},
      {"exit_waves", BM_exit_waves},
      {"extract_exit_waves", BM_extract_exit_waves},
      {"fft_forward", BM_fft<FFTDirection::forward, FFTNorm::none>},
      {"fft_inverse", BM_fft<FFTDirection::inverse, FFTNorm::none>},
      {"fft_forward_ortho", BM_fft<FFTDirection::forward, FFTNorm::ortho>},
      {"fft_forward_measure", BM_fft_measure},
      {"modulus_projection", BM_modulus_projection},
      {"cost_descent_direction", BM_cost_descent_direction},
      {"data_cost", BM_data_cost},
      {"probe_adjoint_product", BM_probe_adjoint_product},
      {"add_patches", BM_add_patches},
      {"add_illumination", BM_add_illumination},
      {"patch_adjoint_product", BM_patch_adjoint_product},
      {"add_patch_intensity", BM_add_patch_intensity},
      {"add_probe_sums", BM_add_probe_sums},
      {"max_isolated_weight", BM_max_isolated_weight},
      {"apply_isolated_update", BM_apply_isolated_update},
      {"isolated_directions", BM_isolated_directions},
      {"add_isolated_directions", BM_add_isolated_directions},
      {"reference_copy", BM_reference_copy},
      {"reference_triad", BM_reference_triad},
      {"reference_exit_waves_rows", BM_reference_exit_waves_rows},
  };
  // Configuration-major order: the kernels of one (D, B) share one fixture.
  for (auto D : detectors)
    for (auto B : batches)
      for (auto const& [name, fn] : kernels)
        benchmark::RegisterBenchmark(name, fn)
            ->ArgNames({"D", "B"})
            ->Args({D, B})
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
  for (auto D : detectors) {
    benchmark::RegisterBenchmark("apply_preconditioned_update", BM_apply_preconditioned_update)
        ->ArgNames({"D"})
        ->Args({D})
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    for (int64_t B : full ? std::vector<int64_t>{16, 64} : std::vector<int64_t>{16})
      benchmark::RegisterBenchmark("batch_tile_passes", BM_batch_tile_passes)
          ->ArgNames({"D", "B"})
          ->Args({D, B})
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    for (int64_t modes : full ? std::vector<int64_t>{2, 4, 8} : std::vector<int64_t>{2})
      benchmark::RegisterBenchmark("orthogonalize_modes", BM_orthogonalize_modes)
          ->ArgNames({"D", "M"})
          ->Args({D, modes})
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ptyko::KokkosScope kokkos(argc, argv);  // a Threads build takes OMP_NUM_THREADS too
  bool const full = bench::take_flag(argc, argv, "full", "no") != "no";
  bench::set_timer(bench::take_flag(argc, argv, "timer", "auto"));
  bool const markdown = bench::take_flag(argc, argv, "markdown", "no") != "no";
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  bench::add_context();
  benchmark::AddCustomContext("precision", "float32");
  benchmark::AddCustomContext("probe_modes", std::to_string(M));
  register_all(full);
  int rc = 0;
  if (markdown) {
    bench::MarkdownReporter md("Kernels (float32, M = 2 modes; median of repetitions)", "reference_copy");
    benchmark::RunSpecifiedBenchmarks(&md);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  fixtures().clear();
  benchmark::Shutdown();
  return rc;
}
