#pragma once
// The one place where ptyko hides differences between Kokkos 3.4 (Debian's
// Trilinos build) and Kokkos 4.x (users' CUDA/HIP/OpenMP builds):
//  * real math: Kokkos::Experimental::sqrt... in 3.4, Kokkos::sqrt... in >= 3.7
//  * labelled fences: space.fence("label") since 3.5
//  * profiling regions: ScopedRegion is newer than 3.4; we wrap push/popRegion
//  * min/max/clamp: Kokkos::min etc. since 3.6; ours work everywhere.
//  * page-locked host memory: Kokkos::SharedHostPinnedSpace since 4.0,
//    Kokkos::CudaHostPinnedSpace before (HostPinnedSpace)

#include <Kokkos_Core.hpp>

#include <string>

namespace ptyko {
namespace math {

#if KOKKOS_VERSION >= 30700
#define PTYKO_KOKKOS_MATH ::Kokkos
#else
#define PTYKO_KOKKOS_MATH ::Kokkos::Experimental
#endif

template <class T>
KOKKOS_INLINE_FUNCTION T sqrt(T x) { return PTYKO_KOKKOS_MATH::sqrt(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T exp(T x) { return PTYKO_KOKKOS_MATH::exp(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T log(T x) { return PTYKO_KOKKOS_MATH::log(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T fabs(T x) { return PTYKO_KOKKOS_MATH::fabs(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T floor(T x) { return PTYKO_KOKKOS_MATH::floor(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T sin(T x) { return PTYKO_KOKKOS_MATH::sin(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T cos(T x) { return PTYKO_KOKKOS_MATH::cos(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T atan2(T y, T x) { return PTYKO_KOKKOS_MATH::atan2(y, x); }
template <class T>
KOKKOS_INLINE_FUNCTION bool isfinite(T x) { return PTYKO_KOKKOS_MATH::isfinite(x); }

#undef PTYKO_KOKKOS_MATH

template <class T>
KOKKOS_INLINE_FUNCTION T min(T a, T b) { return b < a ? b : a; }
template <class T>
KOKKOS_INLINE_FUNCTION T max(T a, T b) { return a < b ? b : a; }
template <class T>
KOKKOS_INLINE_FUNCTION T clamp(T x, T lo, T hi) { return x < lo ? lo : (hi < x ? hi : x); }

/// |z|^2 without the square root of Kokkos::abs.
template <class T>
KOKKOS_INLINE_FUNCTION T norm2(Kokkos::complex<T> const& z) {
  return z.real() * z.real() + z.imag() * z.imag();
}

/// conj(a) * b, spelled out so that it compiles to four multiplies.
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::complex<T> conj_mul(Kokkos::complex<T> const& a,
                                                   Kokkos::complex<T> const& b) {
  return Kokkos::complex<T>(a.real() * b.real() + a.imag() * b.imag(),
                            a.real() * b.imag() - a.imag() * b.real());
}

}  // namespace math

/// Host memory that a device's queued copies read and write without the
/// host waiting for them (page-locked: CUDA's and HIP's host-pinned spaces,
/// SYCL's host USM); HostSpace in builds without a device, and for HIP and
/// SYCL on Kokkos 3 (whose names for it 4.x removed).
#if defined(KOKKOS_HAS_SHARED_HOST_PINNED_SPACE)
using HostPinnedSpace = Kokkos::SharedHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_CUDA)
using HostPinnedSpace = Kokkos::CudaHostPinnedSpace;
#else
using HostPinnedSpace = Kokkos::HostSpace;
#endif

/// Fences `space`, with the label on Kokkos versions that take one.
template <class ExecutionSpace>
void fence(ExecutionSpace const& space, [[maybe_unused]] char const* label) {
#if KOKKOS_VERSION >= 30500
  space.fence(label);
#else
  space.fence();
#endif
}

/// Fences every execution space, with the label where Kokkos takes one.
inline void fence_all([[maybe_unused]] char const* label) {
#if KOKKOS_VERSION >= 30500
  Kokkos::fence(label);
#else
  Kokkos::fence();
#endif
}

/// RAII profiling region ("ptyko::<Concept>::<step>") visible to Kokkos Tools.
class ScopedRegion {
 public:
  explicit ScopedRegion(std::string const& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(ScopedRegion const&) = delete;
  ScopedRegion& operator=(ScopedRegion const&) = delete;
};

}  // namespace ptyko
