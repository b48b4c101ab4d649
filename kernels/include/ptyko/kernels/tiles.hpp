#pragma once
// Object tiles: the object (H, W) cut into square tiles of `tile_edge`
// pixels. A mini-batch writes only inside its positions' footprints, so the
// per-batch passes over object-shaped sums (zeroing, maximum, preconditioned
// update) run over the list of tiles those footprints touch instead of the
// whole object: their cost follows the batch, not the scan.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace ptyko {

/// Tile edge in pixels. Tiles only need to cover the footprints: a
/// footprint of D + 3 pixels (128 x 128 frames) lies in 9 x 9 tiles of 16
/// (144 pixels, 21 % more than it) where tiles of 32 took 5 x 5 (160
/// pixels, 49 % more), so every per-batch object pass does that much less
/// work (10 000 frames: rPIE's tile passes -25 %, docs/performance.md).
/// Host passes walk runs of adjacent tiles row by row (spans of up to a
/// footprint's width), so short tile rows cost nothing there; devices give
/// each tile a 16 x 16 block (256 threads). Tiles of 8 were no faster and
/// take four times the tile lists.
inline constexpr int tile_edge = 16;

/// (n, 3) tiles: origin (y0, x0), multiples of tile_edge, in object pixels,
/// and in column 2 the run: for the first tile of a run of tiles that
/// follow each other in the list along one object row (same y0, x0 growing
/// by tile_edge), the run's length in tiles; 0 for the run's other tiles.
/// Host passes walk a run row by row (one contiguous span of up to a whole
/// footprint's width per object row instead of one per tile: fewer and
/// longer memory streams, a page touched once per row); devices use the
/// tiles one by one. make_tile_list fills the runs.
template <class Mem>
using TileList = Kokkos::View<int* [3], Kokkos::LayoutRight, Mem>;

/// The pixels a patch of edge D centred at `centre` ((y, x) object pixels)
/// may write under S^T, as an inclusive box {y0, x0, y1, x1}: the (D+1) x
/// (D+1) footprint of bilinear interpolation plus one pixel of margin on
/// every side for rounding (the kernels truncate positions of type T).
inline std::array<double, 4> footprint_box(std::array<double, 2> const& centre, int D) {
  double const y0 = std::floor(centre[0] - D / 2) - 1, x0 = std::floor(centre[1] - D / 2) - 1;
  return {y0, x0, y0 + D + 2, x0 + D + 2};
}

/// For each centre, whether its footprint_box meets no other centre's: a
/// position of a batch whose object sums only it writes, so that its update
/// needs no object-shaped sums (isolated_update.hpp). Non-finite centres
/// are never isolated. Sorted by row, each box is compared with the boxes
/// that start before it ends, so a batch of boxes that do not meet costs
/// O(n log n) plus the boxes that share its rows. Host function.
inline std::vector<char> isolated_footprints(std::vector<std::array<double, 2>> const& centres, int D) {
  std::size_t const n = centres.size();
  std::vector<char> isolated(n, 1);
  std::vector<std::array<double, 4>> box(n);
  std::vector<std::size_t> order;
  order.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    box[k] = footprint_box(centres[k], D);
    if (std::isfinite(box[k][0]) && std::isfinite(box[k][1]))
      order.push_back(k);
    else
      isolated[k] = 0;
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return box[a][0] < box[b][0]; });
  for (std::size_t i = 0; i < order.size(); ++i) {
    auto const& a = box[order[i]];
    for (std::size_t j = i + 1; j < order.size() && box[order[j]][0] <= a[2]; ++j) {
      auto const& b = box[order[j]];
      if (b[1] <= a[3] && a[1] <= b[3]) isolated[order[i]] = isolated[order[j]] = 0;
    }
  }
  return isolated;
}

/// The tiles (a0..a1 rows, b0..b1 columns of tiles, inclusive) of an object
/// padded to ty x tx whole tiles that the footprint of a patch centred at
/// `centre` touches (footprint_box, clipped to the padded object); false
/// when it touches none (far outside, or not finite).
inline bool footprint_tile_range(std::array<double, 2> const& centre, int D, int ty, int tx,
                                 std::array<int, 4>& range) {
  int const H = ty * tile_edge, W = tx * tile_edge;
  auto const [y0, x0, y1, x1] = footprint_box(centre, D);
  if (!(y1 >= 0 && x1 >= 0 && y0 < H && x0 < W)) return false;
  range = {int(std::max(0.0, y0)) / tile_edge, int(std::min(double(H - 1), y1)) / tile_edge,
           int(std::max(0.0, x0)) / tile_edge, int(std::min(double(W - 1), x1)) / tile_edge};
  return true;
}

/// Origins of the tiles of an (H, W) object touched by the footprints of
/// patches of edge D centred at `centres` ((y, x) object pixels, as
/// positions; the footprint includes the extra row/column of bilinear
/// interpolation, plus one pixel of margin for rounding). Footprints are
/// clipped to the object padded to whole tiles, so a tile is marked for a
/// footprint pixel anywhere in it: two objects on one tile grid (neighbour
/// ranks' tiles) mark the same tiles where they overlap. Centres far
/// outside touch nothing. Host function; tiles in row-major order.
inline std::vector<std::array<int, 2>> footprint_tiles(std::vector<std::array<double, 2>> const& centres, int D,
                                                        int object_height, int object_width) {
  int const ty = (object_height + tile_edge - 1) / tile_edge, tx = (object_width + tile_edge - 1) / tile_edge;
  std::vector<char> touched(std::size_t(ty) * std::size_t(tx), 0);
  std::array<int, 4> r{};
  for (auto const& c : centres) {
    if (!footprint_tile_range(c, D, ty, tx, r)) continue;
    for (int a = r[0]; a <= r[1]; ++a)
      for (int b = r[2]; b <= r[3]; ++b) touched[std::size_t(a) * tx + b] = 1;
  }
  std::vector<std::array<int, 2>> out;
  for (int a = 0; a < ty; ++a)
    for (int b = 0; b < tx; ++b)
      if (touched[std::size_t(a) * tx + b]) out.push_back({a * tile_edge, b * tile_edge});
  return out;
}

/// Which ranks' positions touched each tile of a tile list: tile k's are
/// ranks[begin[k]] .. ranks[begin[k + 1] - 1], ascending. A rank's own
/// contributions to a batch's sums lie in the tiles its positions touched,
/// so a strategy that exchanges them (neighbour-consensus) sends those
/// tiles only and receives those its neighbour's positions touched. Host
/// data.
struct TileSources {
  std::vector<int> begin;  ///< tiles + 1 offsets into ranks
  std::vector<int> ranks;
  bool touched_by(std::size_t tile, int rank) const {
    auto const first = ranks.begin() + begin[tile], last = ranks.begin() + begin[tile + 1];
    return std::binary_search(first, last, rank);
  }
};

/// The TileSources of the tiles at `origins` (footprint_tiles of
/// `centres`, or a list holding them): for each, the ranks `rank_of[c]` of
/// the centres c whose footprints touch it. Host function.
inline TileSources footprint_tile_sources(std::vector<std::array<int, 2>> const& origins,
                                          std::vector<std::array<double, 2>> const& centres,
                                          std::vector<int> const& rank_of, int D, int object_height,
                                          int object_width) {
  int const ty = (object_height + tile_edge - 1) / tile_edge, tx = (object_width + tile_edge - 1) / tile_edge;
  std::vector<int> index(std::size_t(ty) * std::size_t(tx), -1);  // grid tile -> its place in origins
  for (std::size_t k = 0; k < origins.size(); ++k)
    index[std::size_t(origins[k][0] / tile_edge) * tx + origins[k][1] / tile_edge] = int(k);
  std::vector<std::vector<int>> of(origins.size());  // a tile's ranks: a few at most
  std::array<int, 4> r{};
  for (std::size_t c = 0; c < centres.size(); ++c) {
    if (!footprint_tile_range(centres[c], D, ty, tx, r)) continue;
    for (int a = r[0]; a <= r[1]; ++a)
      for (int b = r[2]; b <= r[3]; ++b) {
        int const k = index[std::size_t(a) * tx + b];
        if (k < 0) continue;
        auto& ranks = of[std::size_t(k)];
        if (std::find(ranks.begin(), ranks.end(), rank_of[c]) == ranks.end()) ranks.push_back(rank_of[c]);
      }
  }
  TileSources out;
  out.begin.reserve(origins.size() + 1);
  out.begin.push_back(0);
  for (auto& ranks : of) {
    std::sort(ranks.begin(), ranks.end());
    out.ranks.insert(out.ranks.end(), ranks.begin(), ranks.end());
    out.begin.push_back(int(out.ranks.size()));
  }
  return out;
}

/// A TileList and its origins on the host, both filled once: host code that
/// plans from a list the kernels read (which parts of it a message carries,
/// parallel/) reads `host` instead of copying the list back every time. On
/// host memory spaces the two name one allocation.
template <class Mem>
struct MirroredTileList {
  TileList<Mem> list;
  typename TileList<Mem>::HostMirror host;
  /// Optional: which ranks' positions touched each tile (null: not known,
  /// any rank may hold contributions in any tile). Shared, not copied:
  /// solvers pass the list by value every batch.
  std::shared_ptr<TileSources const> sources;
};

/// A MirroredTileList holding `origins`, with their runs. Host -> device
/// copy, once per list.
template <class Mem>
MirroredTileList<Mem> make_mirrored_tile_list(std::vector<std::array<int, 2>> const& origins, char const* label) {
  TileList<Mem> tiles(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), origins.size());
  auto h = Kokkos::create_mirror_view(tiles);
  std::size_t run_start = 0;
  for (std::size_t k = 0; k < origins.size(); ++k) {
    h(k, 0) = origins[k][0];
    h(k, 1) = origins[k][1];
    bool const continues = k > 0 && origins[k][0] == origins[k - 1][0] && origins[k][1] == origins[k - 1][1] + tile_edge;
    if (continues) {
      h(k, 2) = 0;
      ++h(run_start, 2);
    } else {
      run_start = k;
      h(k, 2) = 1;
    }
  }
  Kokkos::deep_copy(tiles, h);  // host -> device: tile origins and runs
  return {tiles, h, nullptr};
}

/// A device TileList holding `origins`, with its runs.
template <class Mem>
TileList<Mem> make_tile_list(std::vector<std::array<int, 2>> const& origins, char const* label) {
  return make_mirrored_tile_list<Mem>(origins, label).list;
}

/// Every tile of an (H, W) object.
template <class Mem>
TileList<Mem> all_tiles(int H, int W) {
  std::vector<std::array<int, 2>> origins;
  for (int y = 0; y < H; y += tile_edge)
    for (int x = 0; x < W; x += tile_edge) origins.push_back({y, x});
  return make_tile_list<Mem>(origins, "ptyko::all_tiles");
}

/// (tile, i, j) with j fastest: each tile row is contiguous in the object.
template <class ExecSpace>
auto tile_policy(ExecSpace const& space, int tiles) {
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                       Kokkos::IndexType<int>>;
  return Policy(space, {0, 0, 0}, {tiles, tile_edge, tile_edge}, {1, tile_edge, tile_edge});
}

/// Up to three (H, W) arrays whose rows a host tile pass asks the cache for
/// ahead of use (software prefetch). A tile row is 32 values: too short a
/// run for the hardware prefetchers, and on a large object each row is on
/// its own page, so without this every row of every array waits on memory
/// (a batch's tile passes on a 2100^2 object: 25-30 % faster with it).
/// Devices ignore it.
struct TileRowPrefetch {
  static constexpr int max_arrays = 3;
  static constexpr int rows_ahead = 2;
  char const* base[max_arrays] = {nullptr, nullptr, nullptr};
  std::size_t row_bytes[max_arrays] = {0, 0, 0};
  std::size_t value_bytes[max_arrays] = {0, 0, 0};
  int arrays = 0;

  template <class View>
  TileRowPrefetch& add(View const& v) {
    static_assert(View::rank == 2, "ptyko::TileRowPrefetch: (H, W) arrays only");
    if (arrays < max_arrays && v.extent(0) > 0) {
      base[arrays] = reinterpret_cast<char const*>(v.data());
      value_bytes[arrays] = sizeof(typename View::value_type);
      row_bytes[arrays] = v.stride(0) * value_bytes[arrays];
      ++arrays;
    }
    return *this;
  }

  /// Prefetches row y of every array, columns [x0, x1) (prefetch_host).
  KOKKOS_INLINE_FUNCTION void rows(int y, int x0, int x1) const {
    for (int a = 0; a < arrays; ++a)
      prefetch_host(base[a] + std::size_t(y) * row_bytes[a] + std::size_t(x0) * value_bytes[a],
                    std::size_t(x1 - x0) * value_bytes[a]);
  }
};

/// The rows of `views` to prefetch in a tile pass.
template <class... Views>
TileRowPrefetch prefetch_rows_of(Views const&... views) {
  TileRowPrefetch ahead;
  (ahead.add(views), ...);
  return ahead;
}

namespace impl {

/// Host: the columns [x0, x1) of row i of the run starting at tile k, inside
/// the object; false for the run's other tiles (nothing to do).
template <class Mem>
KOKKOS_INLINE_FUNCTION bool run_row(TileList<Mem> const& t, int k, int i, int H, int W, int& y, int& x0, int& x1) {
  int const run = t(k, 2);
  y = t(k, 0) + i;
  x0 = t(k, 1);
  x1 = x0 + run * tile_edge < W ? x0 + run * tile_edge : W;
  return run > 0 && y < H;
}

/// Host: one row of a run of tiles per work item, fn(y, x0, x1) over its
/// columns inside the object (a contiguous loop over row pointers, as
/// frame_loop.hpp), after asking for the run's row rows_ahead further down.
template <class Mem, class Fn>
struct TileRowSpans {
  TileList<Mem> t;
  int H, W;
  Fn fn;
  TileRowPrefetch ahead;
  KOKKOS_INLINE_FUNCTION void operator()(int r) const {
    int const k = r / tile_edge, i = r - k * tile_edge;
    int y, x0, x1;
    if (!run_row(t, k, i, H, W, y, x0, x1)) return;
    int const next = y + TileRowPrefetch::rows_ahead;
    if (ahead.arrays > 0 && i + TileRowPrefetch::rows_ahead < tile_edge && next < H) ahead.rows(next, x0, x1);
    fn(y, x0, x1);
  }
};

/// Devices: one pixel per work item, fn(y, x, x + 1).
template <class Mem, class Fn>
struct TilePixelSpans {
  TileList<Mem> t;
  int H, W;
  Fn fn;
  KOKKOS_INLINE_FUNCTION void operator()(int k, int i, int j) const {
    int const y = t(k, 0) + i, x = t(k, 1) + j;
    if (y < H && x < W) fn(y, x, x + 1);
  }
};

}  // namespace impl

/// Calls fn(y, x0, x1) for the object pixels (y, x0..x1-1) inside H x W of
/// the tiles: on the host one row of a run of adjacent tiles per call (write
/// the column loop innermost over row pointers, so that it vectorises),
/// single pixels on devices.
/// `fn` is a device functor; pixels of distinct tiles are distinct, so fn
/// may write its pixels without atomics. `ahead`: the arrays fn reads
/// (prefetch_rows_of), fetched a few rows ahead on the host. Non-blocking.
template <class ExecSpace, class Fn>
void for_each_tile_span(ExecSpace const& space, char const* label, TileList<typename ExecSpace::memory_space> const& tiles,
                        int H, int W, Fn const& fn, TileRowPrefetch const& ahead = {}) {
  using Mem = typename ExecSpace::memory_space;
  int const n = int(tiles.extent(0));
  if (n == 0) return;
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible)
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, n * tile_edge),
                         impl::TileRowSpans<Mem, Fn>{tiles, H, W, fn, ahead});
  else
    Kokkos::parallel_for(label, tile_policy(space, n), impl::TilePixelSpans<Mem, Fn>{tiles, H, W, fn});
}

namespace impl {
/// The largest value of a real (H, W) View over the tiles through a
/// Kokkos::Max reducer (the reducer's identity when there are no tiles).
template <class ExecSpace, class View, class Reducer>
void max_over_tiles_into(ExecSpace const& space, TileList<typename ExecSpace::memory_space> const& tiles,
                         View const& v, Reducer const& reducer) {
  using V = typename View::non_const_value_type;
  auto const a = v;
  int const H = int(v.extent(0)), W = int(v.extent(1));
  auto t = tiles;
  TileRowPrefetch const ahead = prefetch_rows_of(v);  // a no-op on devices
  bool const runs = is_host_space_v<ExecSpace>;        // host: rows of runs; devices: tile rows
  Kokkos::parallel_reduce(
      "ptyko::max_over_tiles", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, int(tiles.extent(0)) * tile_edge),
      KOKKOS_LAMBDA(int r, V& m) {
        int const k = r / tile_edge, i = r - k * tile_edge;
        int y = t(k, 0) + i, x0 = t(k, 1), x1 = x0 + tile_edge < W ? x0 + tile_edge : W;
        if (runs ? !impl::run_row(t, k, i, H, W, y, x0, x1) : y >= H) return;
        int const next = y + TileRowPrefetch::rows_ahead;
        if (i + TileRowPrefetch::rows_ahead < tile_edge && next < H) ahead.rows(next, x0, x1);
        m = max_nonnegative(&a(y, 0), std::size_t(x0), std::size_t(x1), m);
      },
      reducer);
}
}  // namespace impl

/// Largest value of a real (H, W) View over the tiles (0 when there are
/// none; the Views hold non-negative weights). Blocking.
template <class ExecSpace, class View>
double max_over_tiles(ExecSpace const& space, TileList<typename ExecSpace::memory_space> const& tiles,
                      View const& v) {
  using V = typename View::non_const_value_type;
  if (tiles.extent(0) == 0) return 0.0;
  V result = 0;
  impl::max_over_tiles_into(space, tiles, v, Kokkos::Max<V>(result));
  return std::max(0.0, double(result));
}

/// The same into `result`, a rank-0 View in the space's memory, where a
/// value below 0 means 0 (a device may reduce several maxima before one
/// copy to the host). Non-blocking.
template <class ExecSpace, class View>
void max_over_tiles(ExecSpace const& space, TileList<typename ExecSpace::memory_space> const& tiles, View const& v,
                    Kokkos::View<typename View::non_const_value_type, typename ExecSpace::memory_space> const& result) {
  using V = typename View::non_const_value_type;
  impl::max_over_tiles_into(space, tiles, v, Kokkos::Max<V, typename ExecSpace::memory_space>(result));
}

/// Copies num and w of every pixel of the tiles into `packed`, planar: the
/// complex sums of the n = tiles x tile_edge^2 pixels first (2n values; tile
/// after tile, row-major inside a tile), then their n weights; pixels
/// outside the object give zeros. The tiles travel as one contiguous buffer
/// that ranks holding the same tile list sum element by element. Host: one
/// tile row per work item, contiguous copies that vectorise; devices: one
/// pixel per work item. Non-blocking.
template <class ExecSpace, class T, class Mem>
void pack_tiles(ExecSpace const& space, TileList<Mem> const& tiles, ComplexView2<T, Mem> const& num,
                RealView2<T, Mem> const& w, RealView1<T, Mem> const& packed) {
  int const H = int(num.extent(0)), W = int(num.extent(1)), n_tiles = int(tiles.extent(0));
  std::size_t const n = std::size_t(n_tiles) * tile_edge * tile_edge;
  auto t = tiles;
  auto u = num;
  auto a = w;
  auto out = packed;
  if (n_tiles == 0) return;
  if constexpr (is_host_space_v<ExecSpace>) {
    Kokkos::parallel_for(
        "ptyko::pack_tiles", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, n_tiles * tile_edge),
        KOKKOS_LAMBDA(int r) {
          int const k = r / tile_edge, i = r - k * tile_edge;
          int const y = t(k, 0) + i, x0 = t(k, 1);
          int const m = y < H ? (W - x0 < tile_edge ? W - x0 : tile_edge) : 0;  // pixels inside the object
          std::size_t const p = std::size_t(r) * tile_edge;
          T* bn = &out(2 * p);
          T* bw = &out(2 * n + p);
          if (m > 0) {
            Complex<T> const* v = &u(y, x0);
            T const* c = &a(y, x0);
            for (int j = 0; j < m; ++j) {
              bn[2 * j] = v[j].real();
              bn[2 * j + 1] = v[j].imag();
              bw[j] = c[j];
            }
          }
          for (int j = m > 0 ? m : 0; j < tile_edge; ++j) bn[2 * j] = bn[2 * j + 1] = bw[j] = T(0);
        });
  } else {
    Kokkos::parallel_for(
        "ptyko::pack_tiles", tile_policy(space, n_tiles), KOKKOS_LAMBDA(int k, int i, int j) {
          int const y = t(k, 0) + i, x = t(k, 1) + j;
          std::size_t const p = (std::size_t(k) * tile_edge + i) * tile_edge + j;
          bool const in = y < H && x < W;
          Complex<T> const v = in ? u(y, x) : Complex<T>(0);
          out(2 * p) = v.real();
          out(2 * p + 1) = v.imag();
          out(2 * n + p) = in ? a(y, x) : T(0);
        });
  }
}

/// The inverse of pack_tiles: writes the packed values back into the tiles'
/// pixels, and returns the largest weight it wrote (0 for no tiles; the
/// weights are non-negative): the maximum over the tiles without a pass of
/// its own. Blocking; with `find_largest` false, devices only queue the
/// copy and -1 is returned (the caller knows the maximum otherwise).
template <class ExecSpace, class T, class Mem>
double unpack_tiles(ExecSpace const& space, TileList<Mem> const& tiles, RealView1<T, Mem> const& packed,
                    ComplexView2<T, Mem> const& num, RealView2<T, Mem> const& w, bool find_largest = true) {
  auto in = packed;
  auto u = num;
  auto a = w;
  auto t = tiles;
  int const H = int(num.extent(0)), W = int(num.extent(1)), n_tiles = int(tiles.extent(0));
  std::size_t const n = std::size_t(n_tiles) * tile_edge * tile_edge;
  T result = 0;
  if (n_tiles == 0) return 0.0;
  if constexpr (is_host_space_v<ExecSpace>) {
    Kokkos::parallel_reduce(
        "ptyko::unpack_tiles", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, n_tiles * tile_edge),
        KOKKOS_LAMBDA(int r, T& largest) {
          int const k = r / tile_edge, i = r - k * tile_edge;
          int const y = t(k, 0) + i, x0 = t(k, 1);
          int const m = y < H ? (W - x0 < tile_edge ? W - x0 : tile_edge) : 0;
          if (m <= 0) return;
          std::size_t const p = std::size_t(r) * tile_edge;
          T const* bn = &in(2 * p);
          T const* bw = &in(2 * n + p);
          Complex<T>* v = &u(y, x0);
          T* c = &a(y, x0);
          for (int j = 0; j < m; ++j) {
            v[j] = Complex<T>(bn[2 * j], bn[2 * j + 1]);
            c[j] = bw[j];
          }
          largest = max_nonnegative(c, 0, std::size_t(m), largest);
        },
        Kokkos::Max<T>(result));
  } else {
    // One pixel back into place; its weight (0 past the object's edge).
    auto const put = KOKKOS_LAMBDA(int k, int i, int j)->T {
      int const y = t(k, 0) + i, x = t(k, 1) + j;
      if (y >= H || x >= W) return T(0);
      std::size_t const p = (std::size_t(k) * tile_edge + i) * tile_edge + j;
      u(y, x) = Complex<T>(in(2 * p), in(2 * p + 1));
      a(y, x) = in(2 * n + p);
      return in(2 * n + p);
    };
    if (!find_largest) {
      Kokkos::parallel_for(
          "ptyko::unpack_tiles", tile_policy(space, n_tiles), KOKKOS_LAMBDA(int k, int i, int j) { put(k, i, j); });
      return -1.0;
    }
    Kokkos::parallel_reduce(
        "ptyko::unpack_tiles", tile_policy(space, n_tiles),
        KOKKOS_LAMBDA(int k, int i, int j, T& m) {
          T const c = put(k, i, j);
          m = c > m ? c : m;
        },
        Kokkos::Max<T>(result));
  }
  return result > T(0) ? double(result) : 0.0;
}

}  // namespace ptyko
