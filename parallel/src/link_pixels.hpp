#pragma once
// The pixels a neighbour-consensus link exchanges (its shared region, or
// the parts of the batch's tiles inside it), the row-span walks over them,
// and the kernels that pack, unpack and average them. Internal to
// neighbor.cpp.

#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/kernels/types.hpp>
#include <ptyko/parallel/partition.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace ptyko::parallel::impl {

// A link's pixels are walked in row spans, fn(packed0, y, x0, x1) for the
// pixels (y, x0), ..., (y, x1 - 1) packed at packed0, packed0 + 1, ...:
// whole rows on host spaces (the column loop innermost, so that it
// vectorises), single pixels on devices (as kernels/frame_loop.hpp does for
// frames). Packed buffers are planar: the n complex sums first (2n values),
// then the n weights; a weight-only exchange packs the n weights alone.

/// The pixels of a tile-local region, row by row; packed index k = row-major.
struct RegionPixels {
  int y0, x0, width, height;
  std::size_t size;
  explicit RegionPixels(Box const& r) : y0(r.y), x0(r.x), width(r.width), height(r.height), size(r.area()) {}
  int rows() const { return height; }
  KOKKOS_INLINE_FUNCTION bool row(int r, std::size_t& packed, int& y, int& x, int& w) const {
    packed = std::size_t(r) * width;
    y = y0 + r;
    x = x0;
    w = width;
    return true;
  }
  KOKKOS_INLINE_FUNCTION bool pixel(std::size_t k, std::size_t& packed, int& y, int& x) const {
    packed = k;
    y = y0 + int(k / width);
    x = x0 + int(k % width);
    return true;
  }
};

/// Parts of a region to exchange: (y, x, height, width, first packed
/// pixel) each, at most tile_edge x tile_edge pixels (a batch tile inside
/// the region).
template <class Mem>
using RegionParts = Kokkos::View<int* [5], Kokkos::LayoutRight, Mem>;

/// The pixels of the first `n` parts: rows over whole tile_edge-row parts,
/// pixels over whole tile_edge x tile_edge parts (the ones beyond a part's
/// extent skipped); the packed index runs over the parts' pixels.
template <class Mem>
struct PartPixels {
  static constexpr int per_part = tile_edge * tile_edge;
  RegionParts<Mem> parts;
  int n;
  std::size_t size;
  PartPixels(RegionParts<Mem> const& p, int n_parts) : parts(p), n(n_parts), size(std::size_t(n_parts) * per_part) {}
  int rows() const { return n * tile_edge; }
  KOKKOS_INLINE_FUNCTION bool row(int r, std::size_t& packed, int& y, int& x, int& w) const {
    int const b = r / tile_edge, i = r % tile_edge;
    if (i >= parts(b, 2)) return false;
    w = parts(b, 3);
    packed = std::size_t(parts(b, 4) + i * w);
    y = parts(b, 0) + i;
    x = parts(b, 1);
    return true;
  }
  KOKKOS_INLINE_FUNCTION bool pixel(std::size_t k, std::size_t& packed, int& y, int& x) const {
    int const b = int(k / per_part), q = int(k % per_part);
    int const h = parts(b, 2), w = parts(b, 3);
    if (q >= h * w) return false;
    packed = std::size_t(parts(b, 4) + q);
    y = parts(b, 0) + q / w;
    x = parts(b, 1) + q % w;
    return true;
  }
};

/// fn(packed0, y, x0, x1) over the row spans of `pixels` (RegionPixels,
/// PartPixels). Non-blocking.
template <class ExecSpace, class Pixels, class Fn>
void for_each_span(ExecSpace const& space, char const* label, Pixels const& pixels, Fn const& fn) {
  if constexpr (ptyko::is_host_space_v<ExecSpace>) {
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, pixels.rows()), KOKKOS_LAMBDA(int r) {
          std::size_t packed;
          int y, x, w;
          if (pixels.row(r, packed, y, x, w)) fn(packed, y, x, x + w);
        });
  } else {
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecSpace>(space, 0, pixels.size), KOKKOS_LAMBDA(std::size_t k) {
          std::size_t packed;
          int y, x;
          if (pixels.pixel(k, packed, y, x)) fn(packed, y, x, x + 1);
        });
  }
}

/// The same, for an fn that returns the largest value of its span: returns
/// the largest over all spans (0 for no pixel). Blocking.
template <class ExecSpace, class Pixels, class Fn>
double max_over_spans(ExecSpace const& space, char const* label, Pixels const& pixels, Fn const& fn) {
  double largest = 0;
  if constexpr (ptyko::is_host_space_v<ExecSpace>) {
    Kokkos::parallel_reduce(
        label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, pixels.rows()),
        KOKKOS_LAMBDA(int r, double& m) {
          std::size_t packed;
          int y, x, w;
          if (!pixels.row(r, packed, y, x, w)) return;
          double const v = double(fn(packed, y, x, x + w));
          if (v > m) m = v;
        },
        Kokkos::Max<double>(largest));
  } else {
    Kokkos::parallel_reduce(
        label, Kokkos::RangePolicy<ExecSpace>(space, 0, pixels.size),
        KOKKOS_LAMBDA(std::size_t k, double& m) {
          std::size_t packed;
          int y, x;
          if (!pixels.pixel(k, packed, y, x)) return;
          double const v = double(fn(packed, y, x, x + 1));
          if (v > m) m = v;
        },
        Kokkos::Max<double>(largest));
  }
  return largest;
}

/// A link's sums (num, w) and its planar buffer B of n pixels: num at
/// B[2 k], B[2 k + 1] and w at B[2 n + k]; with an empty `num` (a
/// weight-only exchange) w alone at B[k]. The one statement of the layout
/// that PackSums writes and UnpackAddSums reads.
template <class T, class Mem>
struct PackedSums {
  ComplexView2<T, Mem> N;
  RealView2<T, Mem> W;
  RealView1<T, Mem> B;
  std::size_t n;
  KOKKOS_INLINE_FUNCTION bool has_num() const { return N.extent(0) > 0; }
  /// The packed num of the span that starts at packed index p0.
  KOKKOS_INLINE_FUNCTION T* packed_num(std::size_t p0) const { return &B(2 * p0); }
  /// The packed w of that span.
  KOKKOS_INLINE_FUNCTION T* packed_w(std::size_t p0) const { return &B(has_num() ? 2 * n + p0 : p0); }
};

/// Packs (num, w) of a span into the buffer.
template <class T, class Mem>
struct PackSums : PackedSums<T, Mem> {
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t p0, int y, int x0, int x1) const {
    T const* w = &this->W(y, x0);
    T* bw = this->packed_w(p0);
    int const len = x1 - x0;
    if (this->has_num()) {
      Complex<T> const* v = &this->N(y, x0);
      T* b = this->packed_num(p0);
      for (int j = 0; j < len; ++j) {
        b[2 * j] = v[j].real();
        b[2 * j + 1] = v[j].imag();
        bw[j] = w[j];
      }
    } else {
      for (int j = 0; j < len; ++j) bw[j] = w[j];
    }
  }
};

/// num, w += a span of the buffer; returns the largest new weight of the
/// span (weights are >= 0).
template <class T, class Mem>
struct UnpackAddSums : PackedSums<T, Mem> {
  KOKKOS_INLINE_FUNCTION T operator()(std::size_t p0, int y, int x0, int x1) const {
    T* w = &this->W(y, x0);
    T const* bw = this->packed_w(p0);
    int const len = x1 - x0;
    T const largest = 0;
    if (this->has_num()) {
      Complex<T>* v = &this->N(y, x0);
      T const* b = this->packed_num(p0);
      for (int j = 0; j < len; ++j) {
        v[j] += Complex<T>(b[2 * j], b[2 * j + 1]);
        w[j] += bw[j];
      }
    } else {
      for (int j = 0; j < len; ++j) w[j] += bw[j];
    }
    // Not `w[j] > largest ? w[j] : largest`, which GCC keeps scalar over
    // floats (a vmaxss chain): max_nonnegative vectorises, exactly.
    return max_nonnegative(w, 0, std::size_t(len), largest);
  }
};

/// Approximate consensus, before the exchange: own = w and acc = w O.
template <class T, class Mem>
struct WeightedCopy {
  ComplexView2<T, Mem> O;
  RealView2<T, Mem> W;
  RealView2<T, Mem> S;
  ComplexView2<T, Mem> A;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t, int y, int x0, int x1) const {
    for (int x = x0; x < x1; ++x) {
      S(y, x) = W(y, x);
      A(y, x) = W(y, x) * O(y, x);
    }
  }
};

/// After the exchange: O = acc / own where own > 0 (the same value again
/// where two links' pixels meet).
template <class T, class Mem>
struct ApplyAverage {
  ComplexView2<T, Mem> O;
  ComplexView2<T, Mem> A;
  RealView2<T, Mem> S;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t, int y, int x0, int x1) const {
    for (int x = x0; x < x1; ++x)
      if (S(y, x) > T(0)) O(y, x) = A(y, x) / S(y, x);
  }
};

/// The pixels one link exchanges next: its whole region or, when `tiled`,
/// the first n_parts parts of it.
template <class Mem>
struct LinkPixels {
  Box region;  ///< the shared pixels, in this rank's tile coordinates
  bool tiled = false;
  RegionParts<Mem> parts;
  int n_parts = 0;
  std::size_t part_pixels = 0;  ///< pixels in those parts
  std::size_t first_part = 0;   ///< where its parts start in the plan of all links
  std::size_t count() const { return tiled ? part_pixels : region.area(); }
};

/// fn(packed0, y, x0, x1) over a link's pixels in row spans. Non-blocking.
template <class ExecSpace, class Fn>
void for_each_in_link(ExecSpace const& space, char const* label, LinkPixels<typename ExecSpace::memory_space> const& l,
                      Fn const& fn) {
  if (l.tiled)
    for_each_span(space, label, PartPixels<typename ExecSpace::memory_space>(l.parts, l.n_parts), fn);
  else
    for_each_span(space, label, RegionPixels(l.region), fn);
}

/// The same for an fn that returns its span's largest value; returns the
/// largest. Blocking.
template <class ExecSpace, class Fn>
double max_over_link(ExecSpace const& space, char const* label, LinkPixels<typename ExecSpace::memory_space> const& l,
                     Fn const& fn) {
  if (l.tiled) return max_over_spans(space, label, PartPixels<typename ExecSpace::memory_space>(l.parts, l.n_parts), fn);
  return max_over_spans(space, label, RegionPixels(l.region), fn);
}

/// Appends to `parts` the parts of the tiles at `origins` (sorted,
/// row-major: two ranks listing the same tiles of their overlap pack them in
/// the same order) inside `l`'s region, and makes `l` exchange them (its
/// view of them is set by the caller, after the upload).
template <class Mem>
void plan_tile_parts(LinkPixels<Mem>& l, std::vector<std::array<int, 2>> const& origins,
                     std::vector<std::array<int, 5>>& parts) {
  std::size_t const first_part = parts.size();
  int first = 0;
  for (auto const& o : origins) {
    Box const part = intersect(Box{o[0], o[1], tile_edge, tile_edge}, l.region);
    if (part.empty()) continue;
    parts.push_back({part.y, part.x, part.height, part.width, first});
    first += int(part.area());
  }
  l.tiled = true;
  l.n_parts = int(parts.size() - first_part);
  l.part_pixels = std::size_t(first);
}

/// The origins of a host tile list.
template <class HostTiles>
void append_origins(HostTiles const& h, std::vector<std::array<int, 2>>& out) {
  for (std::size_t k = 0; k < h.extent(0); ++k) out.push_back({h(k, 0), h(k, 1)});
}

}  // namespace ptyko::parallel::impl
