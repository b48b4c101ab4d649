// Object tiles: the footprint tile lists cover every pixel a batch's scatter
// writes, and the tiled object passes equal the whole-object ones there.
#include <ptyko/kernels/patch.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/kernels/update.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <type_traits>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;

template <class T>
class Tiles : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Tiles, Reals);

// A batch of N random positions whose patches fit an (H, W) object, plus
// the same centres in double for footprint_tiles.
template <class T>
struct Batch {
  PositionView<T, MemSpace> pos;
  IndexView<MemSpace> idx;
  std::vector<std::array<double, 2>> centres;
};

template <class T>
Batch<T> random_batch(int N, int D, int H, int W, unsigned seed) {
  Batch<T> b{PositionView<T, MemSpace>("pos", N), IndexView<MemSpace>("idx", N), {}};
  auto hp = Kokkos::create_mirror_view(b.pos);
  auto hi = Kokkos::create_mirror_view(b.idx);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> uy(D / 2, H - D / 2 - 1.001), ux(D / 2, W - D / 2 - 1.001);
  for (int n = 0; n < N; ++n) {
    hp(n, 0) = T(uy(gen));
    hp(n, 1) = T(ux(gen));
    hi(n) = n;
    b.centres.push_back({double(hp(n, 0)), double(hp(n, 1))});
  }
  Kokkos::deep_copy(b.pos, hp);
  Kokkos::deep_copy(b.idx, hi);
  return b;
}

// w += S^T of the patch values 1 + k (i + j), k = 0 or 1. A free function:
// nvcc allows no device lambda in a test body.
template <class T>
void scatter_weights(ExecSpace const& space, Batch<T> const& b, int D, RealView2<T, MemSpace> const& w, int k) {
  RealView2<T, MemSpace> values("values", D, D);
  Kokkos::parallel_for(
      "values", Kokkos::RangePolicy<ExecSpace>(space, 0, D * D),
      KOKKOS_LAMBDA(int p) { values(p / D, p % D) = T(1 + k * (p / D + p % D)); });
  scatter_add_patches(space, int(b.idx.extent(0)), D, b.pos, b.idx, w,
                      KOKKOS_LAMBDA(int, int i) { return &values(i, 0); });
}

// A batch's object sums as its positions leave them: the numerators of
// random patch values and the weights of scatter_weights (k = 1), non-zero
// only inside the footprints, and the tiles of those footprints.
template <class T>
struct BatchSums {
  Batch<T> b;
  TileList<MemSpace> tiles;
  ComplexView2<T, MemSpace> num;
  RealView2<T, MemSpace> w;
};
template <class T>
BatchSums<T> batch_sums(ExecSpace const& space, int N, int D, int H, int W, unsigned seed) {
  BatchSums<T> s{random_batch<T>(N, D, H, W, seed), {}, ComplexView2<T, MemSpace>("num", H, W),
                 RealView2<T, MemSpace>("w", H, W)};
  s.tiles = make_tile_list<MemSpace>(footprint_tiles(s.b.centres, D, H, W), "tiles");
  ComplexView3<T, MemSpace> values("values", N, D, D);
  test::fill_random(values, seed + 1);
  add_patches(space, values, s.b.pos, s.b.idx, s.num);
  scatter_weights(space, s.b, D, s.w, 1);
  return s;
}

// Largest |a - b| over two Views of the same shape (host copies).
template <class A, class B>
double max_abs_diff(A const& a, B const& b) {
  auto ha = test::host_copy(a);
  auto hb = test::host_copy(b);
  double m = 0;
  using V = typename decltype(ha)::non_const_value_type;
  for (std::size_t k = 0; k < ha.span(); ++k) {
    V const d = ha.data()[k] - hb.data()[k];
    if constexpr (std::is_floating_point_v<V>)
      m = std::max(m, std::fabs(double(d)));
    else
      m = std::max(m, double(Kokkos::abs(d)));
  }
  return m;
}

// Set of (tile row, tile column) of a host tile list.
std::set<std::pair<int, int>> tile_set(std::vector<std::array<int, 2>> const& origins) {
  std::set<std::pair<int, int>> s;
  for (auto const& o : origins) s.insert({o[0] / tile_edge, o[1] / tile_edge});
  return s;
}

TYPED_TEST(Tiles, FootprintTilesCoverEveryScatteredPixel) {
  using T = TypeParam;
  ExecSpace space;
  int const N = 5, D = 24, H = 150, W = 173;  // object not a multiple of the tile edge
  auto b = random_batch<T>(N, D, H, W, 3);
  RealView2<T, MemSpace> w("w", H, W);
  scatter_weights(space, b, D, w, 0);
  auto origins = footprint_tiles(b.centres, D, H, W);
  auto tiles = tile_set(origins);
  auto hw = test::host_copy(w);
  int written = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      if (hw(y, x) != T(0)) {
        ++written;
        EXPECT_TRUE(tiles.count({y / tile_edge, x / tile_edge})) << "pixel " << y << ", " << x;
      }
  EXPECT_GT(written, N * D * D / 2);
  // Five footprints of 25 pixels cover at most 5 x 3 x 3 of the 5 x 6 tiles... but not all.
  EXPECT_LE(origins.size(), std::size_t(N * 9));
  EXPECT_LT(origins.size(), std::size_t(5 * 6));
  // Every origin lies inside the object, on the tile grid.
  for (auto const& o : origins) {
    EXPECT_EQ(o[0] % tile_edge, 0);
    EXPECT_EQ(o[1] % tile_edge, 0);
    EXPECT_LT(o[0], H);
    EXPECT_LT(o[1], W);
  }
}

// w += S^T values, by the plain scatter or (host spaces) by the one that
// also reduces the maximum it leaves (returned; -1 otherwise). A free
// function: nvcc allows no device lambda in a test body.
template <class T>
double scatter_values(ExecSpace const& space, Batch<T> const& b, int D, RealView2<T, MemSpace> const& w,
                      RealView2<T, MemSpace> const& values, bool with_max) {
  auto const row = KOKKOS_LAMBDA(int, int i) { return &values(i, 0); };
  if constexpr (is_host_space_v<ExecSpace>)
    if (with_max) return scatter_add_patches_max(space, int(b.idx.extent(0)), D, b.pos, b.idx, w, row, "test");
  scatter_add_patches(space, int(b.idx.extent(0)), D, b.pos, b.idx, w, row);
  return -1;
}

// The weight scatter's own maximum (host spaces) is the largest weight over
// the batch's tiles, where footprints overlap too, and the weights are the
// plain scatter's, bit for bit.
TYPED_TEST(Tiles, ScatterMaximumIsTheLargestWeightOverTheTiles) {
  using T = TypeParam;
  if constexpr (!is_host_space_v<ExecSpace>) GTEST_SKIP() << "the fused maximum is a host-space path";
  ExecSpace space;
  int const N = 9, D = 24, H = 90, W = 83;  // nine footprints on a small object: they overlap
  auto b = random_batch<T>(N, D, H, W, 17);
  auto tiles = make_tile_list<MemSpace>(footprint_tiles(b.centres, D, H, W), "tiles");
  RealView2<T, MemSpace> values("values", D, D);
  test::fill_random(values, 19);
  auto hv = Kokkos::create_mirror_view(values);
  Kokkos::deep_copy(hv, values);
  for (std::size_t k = 0; k < hv.span(); ++k) hv.data()[k] = std::fabs(hv.data()[k]);  // weights >= 0
  Kokkos::deep_copy(values, hv);
  RealView2<T, MemSpace> plain("plain", H, W), fused("fused", H, W);
  scatter_values(space, b, D, plain, values, false);
  double const m = scatter_values(space, b, D, fused, values, true);
  EXPECT_EQ(max_abs_diff(fused, plain), 0.0);
  double const expected = max_over_tiles(space, tiles, plain);
  EXPECT_GT(expected, double(*std::max_element(hv.data(), hv.data() + hv.span())));  // an overlap is the largest
  EXPECT_EQ(m, expected);
  EXPECT_EQ(scatter_values(space, Batch<T>{b.pos, IndexView<MemSpace>("none", 0), {}}, D, fused, values, true), 0.0);
}

TEST(TilesHost, CentresOutsideTouchNothingAndClipping) {
  int const D = 16, H = 64, W = 64;
  EXPECT_TRUE(footprint_tiles({{-100.0, -100.0}, {500.0, 10.0}}, D, H, W).empty());
  // A footprint across the lower-right corner touches only the last tile.
  auto o = footprint_tiles({{H + 2.0, W + 2.0}}, D, H, W);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0][0], H - tile_edge);
  EXPECT_EQ(o[0][1], W - tile_edge);
  EXPECT_EQ(footprint_tiles({}, D, H, W).size(), 0u);
}

// make_tile_list marks runs of tiles that follow each other along an object
// row: the first tile carries the run's length, the others 0.
TEST(TilesHost, RunsOfAdjacentTiles) {
  int const e = tile_edge;
  std::vector<std::array<int, 2>> const origins{{0, 0},     {0, e},     {0, 2 * e}, {0, 4 * e},
                                                {e, 0},     {e, e},     {2 * e, 3 * e}};
  auto tiles = make_tile_list<Kokkos::HostSpace>(origins, "tiles");
  std::vector<int> runs;
  for (std::size_t k = 0; k < tiles.extent(0); ++k) runs.push_back(tiles(k, 2));
  EXPECT_EQ(runs, (std::vector<int>{3, 0, 0, 1, 2, 0, 1}));
}

TYPED_TEST(Tiles, TiledPassesMatchWholeObjectPasses) {
  using T = TypeParam;
  using C = Complex<T>;
  ExecSpace space;
  int const N = 4, D = 20, H = 120, W = 97;
  // Sums that are non-zero only inside the footprints, as a batch leaves them.
  auto const sums = batch_sums<T>(space, N, D, H, W, 9);
  auto const& b = sums.b;
  auto const& tiles = sums.tiles;
  auto const& num = sums.num;
  auto const& w = sums.w;
  ComplexView2<T, MemSpace> obj_flat("obj_flat", H, W), obj_tiled("obj_tiled", H, W);
  test::fill_random(obj_flat, 6);
  Kokkos::deep_copy(obj_tiled, obj_flat);

  double const w_max = max_value(space, w);
  EXPECT_GT(w_max, 0.0);
  auto hw0 = test::host_copy(w);
  EXPECT_EQ(w_max, double(*std::max_element(hw0.data(), hw0.data() + hw0.span())));
  EXPECT_EQ(max_over_tiles(space, tiles, w), w_max);

  ComplexView2<T, MemSpace> obj_zeroing("obj_zeroing", H, W), num_copy("num_copy", H, W);
  ComplexView2<T, MemSpace> obj_weight_zeroing("obj_weight_zeroing", H, W);
  Kokkos::deep_copy(obj_zeroing, obj_tiled);
  Kokkos::deep_copy(obj_weight_zeroing, obj_tiled);
  Kokkos::deep_copy(num_copy, num);
  apply_preconditioned_update(space, obj_flat, num, w, 0.3, w_max, 0.7);
  apply_preconditioned_update(space, tiles, obj_tiled, num, w, 0.3, w_max, 0.7);
  EXPECT_EQ(max_abs_diff(obj_flat, obj_tiled), 0.0);
  // The same update zeroing the numerator behind it: the same object, and
  // the numerator zero everywhere (it was zero outside the tiles already).
  apply_preconditioned_update(space, tiles, obj_zeroing, num_copy, w, 0.3, w_max, 0.7, SumAfterUse::zeroed);
  EXPECT_EQ(max_abs_diff(obj_zeroing, obj_tiled), 0.0);
  EXPECT_EQ(max_abs_diff(num_copy, ComplexView2<T, MemSpace>("zero", H, W)), 0.0);
  // The same update clearing the weight behind it instead: the same object
  // (each pixel reads its weight before the zero goes in), the numerator
  // kept, the weight zero everywhere.
  RealView2<T, MemSpace> w_copy("w_copy", H, W);
  Kokkos::deep_copy(num_copy, num);
  Kokkos::deep_copy(w_copy, w);
  apply_preconditioned_update(space, tiles, obj_weight_zeroing, num_copy, w_copy, 0.3, w_max, 0.7,
                              SumAfterUse::kept, SumAfterUse::zeroed);
  EXPECT_EQ(max_abs_diff(obj_weight_zeroing, obj_tiled), 0.0);
  EXPECT_EQ(max_abs_diff(num_copy, num), 0.0);
  EXPECT_EQ(max_abs_diff(w_copy, RealView2<T, MemSpace>("zero_w", H, W)), 0.0);

  ComplexView2<T, MemSpace> dir_flat("dir_flat", H, W), dir_zeroing("dir_zeroing", H, W);
  Kokkos::deep_copy(dir_flat, num);
  Kokkos::deep_copy(dir_zeroing, num);
  Kokkos::deep_copy(w_copy, w);
  precondition_direction(space, dir_flat, w, 0.2, w_max);
  precondition_direction(space, tiles, num, w, 0.2, w_max);
  EXPECT_EQ(max_abs_diff(dir_flat, num), 0.0);
  // The direction clearing the weight behind it: the same direction.
  precondition_direction(space, tiles, dir_zeroing, w_copy, 0.2, w_max, SumAfterUse::zeroed);
  EXPECT_EQ(max_abs_diff(dir_zeroing, num), 0.0);
  EXPECT_EQ(max_abs_diff(w_copy, RealView2<T, MemSpace>("zero_w", H, W)), 0.0);

  add_scaled(space, obj_flat, dir_flat, 1.5);
  add_scaled(space, tiles, obj_tiled, num, 1.5);
  EXPECT_EQ(max_abs_diff(obj_flat, obj_tiled), 0.0);

  // clip over all tiles = the whole object
  auto every = all_tiles<MemSpace>(H, W);
  clip_amplitude(space, every, obj_tiled, T(0.5));
  auto h = test::host_copy(obj_tiled);
  for (std::size_t k = 0; k < h.span(); ++k) EXPECT_LE(Kokkos::abs(h.data()[k]), T(0.5) * T(1.0001));

  // zero_tiles zeroes the listed tiles and nothing else
  test::fill_random(num, 7);
  Kokkos::deep_copy(w, T(2));
  auto before = test::host_copy(num);
  zero_tiles(space, tiles, num, w);
  auto hn = test::host_copy(num);
  auto hw = test::host_copy(w);
  auto set = tile_set(footprint_tiles(b.centres, D, H, W));
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      bool const in = set.count({y / tile_edge, x / tile_edge}) > 0;
      EXPECT_EQ(hn(y, x), in ? C(0) : before(y, x));
      EXPECT_EQ(hw(y, x), in ? T(0) : T(2));
    }

  // zero_tiles on the weights alone
  Kokkos::deep_copy(w, T(2));
  zero_tiles(space, tiles, w);
  auto hw2 = test::host_copy(w);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) EXPECT_EQ(hw2(y, x), set.count({y / tile_edge, x / tile_edge}) > 0 ? T(0) : T(2));
  // ... and on the numerator alone
  Kokkos::deep_copy(num, C(1, 2));
  zero_tiles(space, tiles, num);
  auto hn2 = test::host_copy(num);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) EXPECT_EQ(hn2(y, x), set.count({y / tile_edge, x / tile_edge}) > 0 ? C(0) : C(1, 2));

  // No tiles: nothing to do, maximum 0.
  TileList<MemSpace> none("none", 0);
  EXPECT_EQ(max_over_tiles(space, none, w), 0.0);
  add_scaled(space, none, obj_tiled, num, 1.0);
  EXPECT_EQ(max_abs_diff(obj_tiled, h), 0.0);
}

// The maxima reduced into the space's memory (no copy to the host) and the
// updates that read them there: the same values and the same updates, bit
// for bit, as through host values; a reduction over no tiles reads as 0.
TYPED_TEST(Tiles, MaximaLeftInTheSpaceGiveTheHostValuesUpdates) {
  using T = TypeParam;
  ExecSpace space;
  auto const sums = batch_sums<T>(space, 4, 20, 90, 77, 21);
  auto const& tiles = sums.tiles;
  auto const& num = sums.num;
  auto const& w = sums.w;
  int const H = 90, W = 77;

  RealView1<T, MemSpace> slots("slots", 3);
  Kokkos::View<T, MemSpace> const tiled(slots.data()), whole(slots.data() + 1), empty(slots.data() + 2);
  max_over_tiles(space, tiles, w, tiled);
  max_value(space, w, whole);
  max_over_tiles(space, TileList<MemSpace>("none", 0), w, empty);
  auto h = test::host_copy(slots);
  double const w_max = max_value(space, w);
  EXPECT_GT(w_max, 0.0);
  EXPECT_EQ(double(h(0)), w_max);
  EXPECT_EQ(double(h(1)), w_max);
  EXPECT_LT(double(h(2)), 0.0);  // the reduction's identity: ScalarArg reads it as 0

  using WM = ScalarArg<T, MemSpace>;
  ComplexView2<T, MemSpace> by_value("by_value", H, W), by_slot("by_slot", H, W);
  test::fill_random(by_value, 23);
  Kokkos::deep_copy(by_slot, by_value);
  apply_preconditioned_update(space, tiles, by_value, num, w, 0.3, w_max, 0.7);
  apply_preconditioned_update(space, tiles, by_slot, num, w, 0.3, WM(tiled), 0.7);
  EXPECT_EQ(max_abs_diff(by_value, by_slot), 0.0);
  apply_preconditioned_update(space, by_value, num, w, 0.4, 0.0, 1.0);  // flat form, w_max 0
  apply_preconditioned_update(space, by_slot, num, w, 0.4, WM(empty), 1.0);
  EXPECT_EQ(max_abs_diff(by_value, by_slot), 0.0);

  ComplexView2<T, MemSpace> dir_value("dir_value", H, W), dir_slot("dir_slot", H, W);
  Kokkos::deep_copy(dir_value, num);
  Kokkos::deep_copy(dir_slot, num);
  precondition_direction(space, tiles, dir_value, w, 0.2, w_max);
  precondition_direction(space, tiles, dir_slot, w, 0.2, WM(whole));
  EXPECT_EQ(max_abs_diff(dir_value, dir_slot), 0.0);
  precondition_direction(space, dir_value, w, 0.5, w_max);  // flat form
  precondition_direction(space, dir_slot, w, 0.5, WM(tiled));
  EXPECT_EQ(max_abs_diff(dir_value, dir_slot), 0.0);
}

// The probe updates (flat Views: M modes' planes over one weight) clearing
// their numerator behind them: the same probe as without, a numerator of
// zeros, the shared weight untouched (every mode's plane reads it).
TYPED_TEST(Tiles, ProbeUpdatesClearTheirNumeratorBehindThem) {
  using T = TypeParam;
  ExecSpace space;
  int const M = 3, D = 37;
  ComplexView3<T, MemSpace> probe("probe", M, D, D), kept("kept", M, D, D), num("num", M, D, D),
      num_copy("num_copy", M, D, D), zero("zero", M, D, D);
  RealView2<T, MemSpace> w("w", D, D), w_copy("w_copy", D, D);
  test::fill_random(probe, 11);
  test::fill_random(num, 12);
  test::fill_random(w, 13);
  Kokkos::deep_copy(w_copy, w);
  double const w_max = max_value(space, w);

  Kokkos::deep_copy(kept, probe);
  Kokkos::deep_copy(num_copy, num);
  apply_preconditioned_update(space, kept, num, w, 0.3, w_max, 0.7);
  apply_preconditioned_update(space, probe, num_copy, w, 0.3, w_max, 0.7, SumAfterUse::zeroed);
  EXPECT_EQ(max_abs_diff(probe, kept), 0.0);
  EXPECT_EQ(max_abs_diff(num_copy, zero), 0.0);
  EXPECT_EQ(max_abs_diff(w, w_copy), 0.0);
  EXPECT_GT(max_abs_diff(num, zero), 0.0);  // kept: still the numerator

  Kokkos::deep_copy(num_copy, num);
  add_scaled(space, kept, num, 1.5);
  add_scaled(space, probe, num_copy, 1.5, SumAfterUse::zeroed);
  EXPECT_EQ(max_abs_diff(probe, kept), 0.0);
  EXPECT_EQ(max_abs_diff(num_copy, zero), 0.0);
  EXPECT_GT(max_abs_diff(num, zero), 0.0);
}

// max_value over flat Views of non-negative values: the largest element
// wherever it sits (first, inside, last of a length that is no multiple of
// the vector width), tiny and huge values, all zeros.
// pack_tiles / unpack_tiles (full-sync's all-reduce buffer): planar (the
// complex sums of every tile pixel, then their weights), tile after tile,
// zeros for tile pixels outside the object; unpacking restores the tiles'
// pixels, leaves the others alone and returns the largest weight.
TYPED_TEST(Tiles, PackAndUnpackTilesRoundTrip) {
  using T = TypeParam;
  ExecSpace space;
  int const H = 37, W = 45, e = tile_edge;  // the last tile row and column stick out
  std::vector<std::array<int, 2>> const origins{{0, 0}, {0, e}, {0, 2 * e}, {2 * e, e}, {2 * e, 2 * e}};
  auto tiles = make_tile_list<MemSpace>(origins, "tiles");
  ComplexView2<T, MemSpace> num("num", H, W);
  RealView2<T, MemSpace> w("w", H, W);
  test::fill_random(num, 21);
  auto hw = Kokkos::create_mirror_view(w);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) hw(y, x) = T(1 + y * W + x);  // distinct, the largest at (H-1, W-1)
  Kokkos::deep_copy(w, hw);
  std::size_t const n = origins.size() * e * e;
  RealView1<T, MemSpace> packed("packed", 3 * n);
  pack_tiles(space, tiles, num, w, packed);
  auto hp = test::host_copy(packed);
  auto hn = test::host_copy(num);
  for (std::size_t k = 0; k < origins.size(); ++k)
    for (int i = 0; i < e; ++i)
      for (int j = 0; j < e; ++j) {
        int const y = origins[k][0] + i, x = origins[k][1] + j;
        std::size_t const p = (k * e + std::size_t(i)) * e + std::size_t(j);
        bool const in = y < H && x < W;
        ASSERT_EQ(hp(2 * p), in ? hn(y, x).real() : T(0)) << k << " " << i << " " << j;
        ASSERT_EQ(hp(2 * p + 1), in ? hn(y, x).imag() : T(0));
        ASSERT_EQ(hp(2 * n + p), in ? hw(y, x) : T(0));
      }
  // Unpack into sums that hold -1 everywhere: the tiles' pixels come back.
  ComplexView2<T, MemSpace> num2("num2", H, W);
  RealView2<T, MemSpace> w2("w2", H, W);
  Kokkos::deep_copy(num2, Complex<T>(-1));
  Kokkos::deep_copy(w2, T(-1));
  double const largest = unpack_tiles(space, tiles, packed, num2, w2);
  EXPECT_EQ(largest, double(hw(H - 1, W - 1)));
  auto hn2 = test::host_copy(num2);
  auto hw2 = test::host_copy(w2);
  std::size_t restored = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      bool in_tiles = false;
      for (auto const& o : origins) in_tiles = in_tiles || (y >= o[0] && y < o[0] + e && x >= o[1] && x < o[1] + e);
      if (in_tiles) {
        ++restored;
        ASSERT_EQ(hn2(y, x), hn(y, x)) << y << " " << x;
        ASSERT_EQ(hw2(y, x), hw(y, x));
      } else {
        ASSERT_EQ(hw2(y, x), T(-1)) << y << " " << x;
      }
    }
  EXPECT_EQ(restored, std::size_t(2 * e * e + e * 13 + 5 * e + 5 * 13));  // 16 x 16 twice, 16 x 13, 5 x 16, 5 x 13
}

TYPED_TEST(Tiles, MaxValueFindsTheLargestElement) {
  using T = TypeParam;
  ExecSpace space;
  std::size_t const n = 10007;
  RealView1<T, MemSpace> v("v", n);
  for (std::size_t where : {std::size_t(0), std::size_t(4321), n - 1}) {
    auto h = Kokkos::create_mirror_view(v);
    for (std::size_t k = 0; k < n; ++k) h(k) = T(1e-30) * T(k % 97);  // small, some exact zeros
    h(where) = T(3.5e20);
    h((where + 1) % n) = T(3.4e20);
    Kokkos::deep_copy(v, h);
    EXPECT_EQ(max_value(space, v), double(T(3.5e20))) << "maximum at " << where;
  }
  Kokkos::deep_copy(v, T(0));
  EXPECT_EQ(max_value(space, v), 0.0);
}

}  // namespace
