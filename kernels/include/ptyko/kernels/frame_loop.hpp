#pragma once
// Loops over every pixel (b, i, j) of a stack of D x D frames, written once
// for all backends and shaped for each:
//  * device spaces (CUDA, HIP): an MDRange over (b, i, j), j fastest, one
//    work item per pixel (coalesced, no index division);
//  * host spaces (Serial, OpenMP, Threads): one work item per frame row
//    (b, i) whose body loops over the contiguous columns. That loop, over
//    raw row pointers, is what the compiler vectorises; per-element View
//    indexing or an MDRange's tile bookkeeping keeps it scalar (2-4x slower,
//    docs/performance.md).
// The body is a device functor fn(b, i, j0, j1) over the columns [j0, j1)
// of row (b, i) (reductions: fn(b, i, j0, j1, acc)); it walks row pointers
// (&view(b, ..., i, 0)) with the column loop innermost.
// Functors, not lambdas, carry the loops: nvcc does not allow an extended
// lambda to capture inside an `if constexpr` branch.

#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

/// 1 in a device compile pass (CUDA, HIP, SYCL), where a kernel body runs
/// one pixel per thread; 0 in host code.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
#define PTYKO_DEVICE_PASS 1
#else
#define PTYKO_DEVICE_PASS 0
#endif

namespace ptyko {

/// True for execution spaces that run on the host: they get the host forms
/// of the kernels (row spans, one position per work item, no atomics).
/// Built with PTYKO_DEVICE_FORMS_ON_HOST (CMake Ptyko_DEVICE_FORMS_ON_HOST,
/// for verification only) every space gets the device forms instead, so
/// that a host build, with OpenMP threads, runs and tests the kernels a GPU
/// runs (team policies, MDRanges, atomics) where no GPU is at hand.
template <class ExecSpace>
#ifdef PTYKO_DEVICE_FORMS_ON_HOST
inline constexpr bool is_host_space_v = std::is_void_v<ExecSpace>;  // false, but dependent: if constexpr discards
#else
inline constexpr bool is_host_space_v = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
#endif

/// Host code: asks the cache for the bytes [p, p + bytes), one software
/// prefetch per 64-byte line, ahead of their use by a later row of the same
/// loop. Rows of an object-sized array are far apart in memory (on a large
/// object each on its own page), so the hardware prefetchers do not follow
/// a walk down a patch or tile, and every row would wait on memory. A no-op
/// in device code and with compilers without __builtin_prefetch.
KOKKOS_INLINE_FUNCTION void prefetch_host(void const* p, std::size_t bytes) {
#if (defined(__GNUC__) || defined(__clang__)) && !PTYKO_DEVICE_PASS
  char const* c = static_cast<char const*>(p);
  for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(c + b);
  if (bytes > 0) __builtin_prefetch(c + bytes - 1);  // the last line, when p is not line-aligned
#else
  (void)p, (void)bytes;
#endif
}

/// Put before a host loop whose iterations touch disjoint memory (rows that
/// never overlap): Clang then vectorises it without run-time overlap
/// checks, which it does not attempt there. Clang 14 vectorises such loops
/// over complex rows only in this form and over their (re, im) pairs
/// (as_pairs): DM's wave update 31 -> 7 ms per epoch (docs/performance.md,
/// item 78). Empty for other compilers (GCC checks the overlap at run time
/// and vectorises either form) and in device compiles. Index the pairs from
/// the loop's own counter, pointers advanced to the first column: with
/// indices 2 (c0 + k), c0 an outer loop's, Clang gathered and scattered the
/// pairs instead of loading whole vectors (fourier_pixels, 5 x slower).
#if defined(__clang__) && !defined(__CUDACC__) && !defined(__CUDA__) && !defined(__HIP__) && \
    !defined(__SYCL_DEVICE_ONLY__)
#define PTYKO_INDEPENDENT_ITERATIONS _Pragma("clang loop vectorize(assume_safety)")
#else
#define PTYKO_INDEPENDENT_ITERATIONS
#endif

/// A row of complex values as its (re, im) pairs: element 2 j is the real
/// part of value j, 2 j + 1 its imaginary part.
template <class T>
KOKKOS_INLINE_FUNCTION T* as_pairs(Kokkos::complex<T>* z) {
  static_assert(sizeof(Kokkos::complex<T>) == 2 * sizeof(T), "Kokkos::complex<T> is two T");
  return reinterpret_cast<T*>(z);
}
template <class T>
KOKKOS_INLINE_FUNCTION T const* as_pairs(Kokkos::complex<T> const* z) {
  static_assert(sizeof(Kokkos::complex<T>) == 2 * sizeof(T), "Kokkos::complex<T> is two T");
  return reinterpret_cast<T const*>(z);
}

/// Value j of a complex row given as (re, im) pairs (as_pairs). Host code
/// reads the two halves, the form Clang vectorises; device code reads the
/// value whole, one 8-byte load for float: from the halves nvcc made two
/// 4-byte loads per value (PTX ld.global.f32 twice, not one
/// ld.global.v2.f32), doubling the load instructions of the pair loops.
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::complex<T> pair_at(T const* pairs, int j) {
#if PTYKO_DEVICE_PASS
  return reinterpret_cast<Kokkos::complex<T> const*>(pairs)[j];
#else
  return Kokkos::complex<T>(pairs[2 * j], pairs[2 * j + 1]);
#endif
}

/// Stores z as value j of a row of (re, im) pairs: the halves on the host,
/// one whole store on devices (pair_at).
template <class T>
KOKKOS_INLINE_FUNCTION void set_pair(T* pairs, int j, Kokkos::complex<T> const& z) {
#if PTYKO_DEVICE_PASS
  reinterpret_cast<Kokkos::complex<T>*>(pairs)[j] = z;
#else
  pairs[2 * j] = z.real();
  pairs[2 * j + 1] = z.imag();
#endif
}

/// a_j b_j, the product at column j of two complex rows given as (re, im)
/// pairs (as_pairs).
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::complex<T> pair_product(T const* a, T const* b, int j) {
  Kokkos::complex<T> const x = pair_at(a, j), y = pair_at(b, j);
  return Kokkos::complex<T>(x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real());
}

namespace impl {

template <class ExecSpace>
auto row_policy(ExecSpace const& space, int rows) {
  return Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, rows);
}

/// Row spans: fn(b, i, j0, j1) covers columns [j0, j1) of row (b, i).
template <class Fn>
struct FrameRowSpans {
  Fn fn;
  int D;
  KOKKOS_INLINE_FUNCTION void operator()(int r) const {
    int const b = r / D, i = r - b * D;
    fn(b, i, 0, D);
  }
};
/// The same for reductions into an Acc (a plain, not templated, operator:
/// Kokkos deduces the reduction's value type from it).
template <class Fn, class Acc>
struct FrameRowSpansReduce {
  Fn fn;
  int D;
  KOKKOS_INLINE_FUNCTION void operator()(int r, Acc& acc) const {
    int const b = r / D, i = r - b * D;
    fn(b, i, 0, D, acc);
  }
};

/// One pixel per work item: fn(b, i, j, j + 1).
template <class Fn>
struct PixelSpans {
  Fn fn;
  KOKKOS_INLINE_FUNCTION void operator()(int b, int i, int j) const { fn(b, i, j, j + 1); }
};
template <class Fn, class Acc>
struct PixelSpansReduce {
  Fn fn;
  KOKKOS_INLINE_FUNCTION void operator()(int b, int i, int j, Acc& acc) const { fn(b, i, j, j + 1, acc); }
};

}  // namespace impl

/// fn(b, i, j0, j1) over the columns [j0, j1) of every row (b, i) of `frames` frames of
/// D x D: whole rows on the host (write the column loop innermost, so that
/// it vectorises), single pixels on devices. Non-blocking.
template <class ExecSpace, class Fn>
void for_each_frame_span(ExecSpace const& space, char const* label, int frames, int D, Fn const& fn) {
  if (frames <= 0 || D <= 0) return;
  if constexpr (is_host_space_v<ExecSpace>)
    Kokkos::parallel_for(label, impl::row_policy(space, frames * D), impl::FrameRowSpans<Fn>{fn, D});
  else
    Kokkos::parallel_for(label, frame_policy(space, frames, D), impl::PixelSpans<Fn>{fn});
}

namespace impl {

/// The accumulator of a parallel_reduce result: the value type of a Kokkos
/// reducer (Kokkos::Max<T>, ...), else the scalar itself (a sum).
template <class R, class = void>
struct reduction_value {
  using type = R;
};
template <class R>
struct reduction_value<R, std::void_t<typename R::reducer>> {
  using type = typename R::value_type;
};

}  // namespace impl

/// The reduction of fn(b, i, j0, j1, acc) over the row spans of
/// for_each_frame_span: into a scalar (a sum, e.g. a double, set to 0 when
/// there is nothing to reduce) or through a Kokkos reducer
/// (Kokkos::Max<T>(x); x is left alone when there is nothing to reduce).
/// Blocking when the result is a host scalar.
template <class ExecSpace, class Fn, class Result>
void reduce_frame_spans(ExecSpace const& space, char const* label, int frames, int D, Fn const& fn,
                        Result&& result) {
  using R = std::remove_cv_t<std::remove_reference_t<Result>>;
  using Acc = typename impl::reduction_value<R>::type;
  if (frames <= 0 || D <= 0) {
    if constexpr (std::is_same_v<Acc, R>) result = R(0);
    return;
  }
  if constexpr (is_host_space_v<ExecSpace>)
    Kokkos::parallel_reduce(label, impl::row_policy(space, frames * D),
                            impl::FrameRowSpansReduce<Fn, Acc>{fn, D}, result);
  else
    Kokkos::parallel_reduce(label, frame_policy(space, frames, D), impl::PixelSpansReduce<Fn, Acc>{fn},
                            result);
}

namespace impl {

/// Elements per work item of the flat loops below: long contiguous runs on
/// the host (vectorised), one element on devices.
template <class ExecSpace>
inline constexpr std::size_t flat_chunk_v = is_host_space_v<ExecSpace> ? 4096 : 1;

/// fn(p, k0, k1) over the chunks of `planes` planes of n elements each.
template <class Fn>
struct PlaneChunks {
  Fn fn;
  std::size_t n, chunk, per_plane;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t c) const {
    std::size_t const p = c / per_plane, k0 = (c - p * per_plane) * chunk;
    fn(int(p), k0, k0 + chunk < n ? k0 + chunk : n);
  }
};
template <class Fn, class Acc>
struct PlaneChunksReduce {
  Fn fn;
  std::size_t n, chunk, per_plane;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t c, Acc& acc) const {
    std::size_t const p = c / per_plane, k0 = (c - p * per_plane) * chunk;
    fn(int(p), k0, k0 + chunk < n ? k0 + chunk : n, acc);
  }
};

}  // namespace impl

/// fn(p, k0, k1) over the elements [k0, k1) of plane p, for `planes` planes
/// of n contiguous elements (a probe's modes over one weight plane, a whole
/// object as one plane): contiguous chunks on the host (loop over k
/// innermost), single elements on devices. No per-element modulo, which
/// keeps the host loop vectorised. Non-blocking.
template <class ExecSpace, class Fn>
void for_each_plane_span(ExecSpace const& space, char const* label, int planes, std::size_t n, Fn const& fn) {
  if (planes <= 0 || n == 0) return;
  std::size_t const chunk = impl::flat_chunk_v<ExecSpace>, per_plane = (n + chunk - 1) / chunk;
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(planes) * per_plane),
                       impl::PlaneChunks<Fn>{fn, n, chunk, per_plane});
}

/// The reduction of fn(p, k0, k1, acc) over the chunks of for_each_plane_span
/// (Kokkos reducer semantics). Blocking when `result` is a host scalar.
template <class ExecSpace, class Fn, class Reducer>
void reduce_plane_spans(ExecSpace const& space, char const* label, int planes, std::size_t n, Fn const& fn,
                        Reducer const& reducer) {
  using Acc = typename Reducer::value_type;
  std::size_t const chunk = impl::flat_chunk_v<ExecSpace>, per_plane = (n + chunk - 1) / chunk;
  Kokkos::parallel_reduce(label, Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(planes > 0 ? planes : 0) * per_plane),
                          impl::PlaneChunksReduce<Fn, Acc>{fn, n, chunk, per_plane}, reducer);
}

/// The largest of v[k0..k1) and `init`, for non-negative values (weights;
/// negative values count as 0 when init >= 0, NaN wins). Exact: for
/// non-negative IEEE values the order of the bit patterns read as signed
/// integers is the order of the values, and an integer maximum vectorises,
/// where GCC keeps `a > b ? a : b` over floats scalar (a 10x slower loop)
/// unless -ffinite-math-only.
template <class V>
KOKKOS_INLINE_FUNCTION V max_nonnegative(V const* v, std::size_t k0, std::size_t k1, V init) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "max_nonnegative: float or double");
  using Bits = std::conditional_t<sizeof(V) == 4, std::int32_t, std::int64_t>;
  Bits m;
  memcpy(&m, &init, sizeof(V));
  for (std::size_t k = k0; k < k1; ++k) {
    Bits b;
    memcpy(&b, v + k, sizeof(V));
    m = b > m ? b : m;
  }
  V out;
  memcpy(&out, &m, sizeof(V));
  return out;
}

/// Columns per chunk of a span loop that keeps per-column partial results in
/// small local arrays (sums over modes, per-lane partial costs): fixed-size
/// inner loops the compiler vectorises without reassociating a reduction.
/// Devices walk one pixel per work item: arrays of one, kept in registers.
template <class ExecSpace>
inline constexpr int span_chunk_v = is_host_space_v<ExecSpace> ? 16 : 1;

/// Mode counts that kernels needing every mode of a pixel at once compile
/// as constants (1 to max_compiled_modes): their loops over modes unroll and
/// a pixel's modes stay in registers, so the column loop vectorises with the
/// whole pixel in it (2-7x faster than chunks with a run-time mode loop,
/// docs/performance.md). Other counts take the run-time path.
inline constexpr int max_compiled_modes = 4;

/// f(std::integral_constant<int, MC>()) with MC = M when 1 <= M <=
/// max_compiled_modes, else MC = 0 (the run-time mode count). `f` should
/// only forward to a function template holding the kernel: nvcc does not
/// allow a device lambda inside a generic lambda.
template <class F>
decltype(auto) with_compiled_modes(int M, F const& f) {
  static_assert(max_compiled_modes == 4, "with_compiled_modes: one case per compiled count");
  switch (M) {
    case 1: return f(std::integral_constant<int, 1>());
    case 2: return f(std::integral_constant<int, 2>());
    case 3: return f(std::integral_constant<int, 3>());
    case 4: return f(std::integral_constant<int, 4>());
    default: return f(std::integral_constant<int, 0>());
  }
}

}  // namespace ptyko
