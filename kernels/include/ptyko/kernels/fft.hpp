#pragma once
// Batched 2-D complex FFT over the last two extents of a LayoutRight View,
// behind one interface keyed on the execution space:
//   host spaces (Serial, OpenMP, Threads) -> FFTW  (impl/fft_fftw.hpp)
//   Kokkos::Cuda                          -> cuFFT (impl/fft_cufft.hpp)
//   Kokkos::HIP                           -> hipFFT (impl/fft_hipfft.hpp)
//
// Conventions (docs/conventions.md):
//  * forward uses exp(-2 pi i k n / N), as numpy.fft.fft2 and FFTW_FORWARD;
//  * FFTNorm::ortho scales both directions by 1/sqrt(ny*nx), so forward and
//    inverse are adjoint to each other and Parseval holds;
//  * no fftshift: frames are kept corner-centred inside ptyko.
//
// A BatchedFFT2D is a plan: build it once per frame shape and keep it across
// batches (plans and scratch are cached inside, never rebuilt per call).

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <memory>
#include <type_traits>

namespace ptyko {

enum class FFTDirection { forward, inverse };
enum class FFTNorm {
  ortho,  ///< 1/sqrt(ny*nx) on both directions (the physics convention)
  none    ///< unscaled; the caller folds the factor into a later kernel
};
/// How hard FFTW searches for a fast plan (ignored by cuFFT/hipFFT).
enum class FFTPlanEffort { estimate, measure };

namespace impl {
/// Backend selected by execution space; specialised in the impl headers.
template <class T, class ExecSpace, class Enable = void>
class FFTBackend;

/// data[i] *= factor for i < n. A free function: CUDA forbids extended
/// lambdas inside private member functions.
template <class ExecSpace, class T>
void scale_values(ExecSpace const& space, Complex<T>* data, std::size_t n, T factor) {
  Kokkos::parallel_for(
      "ptyko::FFT::scale", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(std::size_t i) { data[i] *= factor; });
}

/// The spaces whose transforms FFTW computes: those of host memory. (Not
/// ptyko::is_host_space_v, which picks kernel forms and which a
/// verification build may turn off for every space.)
template <class ExecSpace>
inline constexpr bool fftw_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible &&
    std::is_same_v<typename ExecSpace::memory_space, Kokkos::HostSpace>;
}  // namespace impl

}  // namespace ptyko

#include <ptyko/kernels/impl/fft_fftw.hpp>
#if defined(KOKKOS_ENABLE_CUDA)
#include <ptyko/kernels/impl/fft_cufft.hpp>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <ptyko/kernels/impl/fft_hipfft.hpp>
#endif

namespace ptyko {

/// Batched 2-D FFT plan for frames of ny x nx complex<T> values.
/// \tparam T          float or double
/// \tparam ExecSpace  Kokkos execution space the transforms run on
template <class T, class ExecSpace>
class BatchedFFT2D {
  static_assert(is_supported_real_v<T>, "ptyko::BatchedFFT2D: T must be float or double");
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "ptyko::BatchedFFT2D: ExecSpace must be a Kokkos execution space");

 public:
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using value_type = Complex<T>;

  /// \param space      [in] instance whose stream/threads run the transforms
  /// \param max_frames [in] largest number of frames passed in one call
  /// \param ny, nx     [in] frame shape
  BatchedFFT2D(ExecSpace const& space, int max_frames, int ny, int nx,
               FFTPlanEffort effort = FFTPlanEffort::estimate)
      : m_max_frames(max_frames), m_ny(ny), m_nx(nx) {
    PTYKO_REQUIRE(max_frames > 0 && ny > 0 && nx > 0,
                  "ptyko::BatchedFFT2D: frame count and shape must be positive, got ", max_frames,
                  " frames of ", ny, "x", nx);
    m_backend = std::make_shared<impl::FFTBackend<T, ExecSpace>>(space, max_frames, ny, nx, effort);
  }

  int max_frames() const { return m_max_frames; }
  int ny() const { return m_ny; }
  int nx() const { return m_nx; }

  /// out = F in over every frame of `in` (rank >= 3, last two extents ny, nx).
  /// In-place (same View) is allowed. Non-blocking: ordered on `space`.
  template <class InView, class OutView>
  void forward(ExecSpace const& space, InView const& in, OutView const& out,
               FFTNorm norm = FFTNorm::ortho) const {
    transform(space, in, out, FFTDirection::forward, norm);
  }

  /// out = F^{-1} in (F^H for FFTNorm::ortho). In-place allowed. Non-blocking.
  template <class InView, class OutView>
  void inverse(ExecSpace const& space, InView const& in, OutView const& out,
               FFTNorm norm = FFTNorm::ortho) const {
    transform(space, in, out, FFTDirection::inverse, norm);
  }

  /// Number of frames in a View whose last two extents are (ny, nx).
  template <class View>
  int frames_of(View const& v) const {
    static_assert(View::rank >= 2, "ptyko::BatchedFFT2D: need a View of rank >= 2");
    PTYKO_ASSERT(int(v.extent(View::rank - 2)) == m_ny && int(v.extent(View::rank - 1)) == m_nx,
                 "frame shape ", v.extent(View::rank - 2), "x", v.extent(View::rank - 1),
                 " does not match the plan ", m_ny, "x", m_nx);
    return int(v.size() / (std::size_t(m_ny) * m_nx));
  }

 private:
  template <class InView, class OutView>
  void transform(ExecSpace const& space, InView const& in, OutView const& out, FFTDirection dir,
                 FFTNorm norm) const {
    check_view<InView>();
    check_view<OutView>();
    int const frames = frames_of(in);
    PTYKO_ASSERT(frames == frames_of(out), "in has ", frames, " frames, out ", frames_of(out));
    PTYKO_ASSERT(frames <= m_max_frames, frames, " frames exceed the plan's ", m_max_frames);
    if (frames == 0) return;
    ScopedRegion region(dir == FFTDirection::forward ? "ptyko::FFT::forward" : "ptyko::FFT::inverse");
    m_backend->execute(space, frames, in.data(), out.data(), dir);
    if (norm == FFTNorm::ortho) {
      impl::scale_values(space, out.data(), std::size_t(frames) * m_ny * m_nx,
                         T(1) / std::sqrt(T(m_ny) * T(m_nx)));
    }
  }

  template <class View>
  static void check_view() {
    static_assert(Kokkos::is_view<View>::value, "ptyko::BatchedFFT2D: arguments must be Views");
    static_assert(std::is_same_v<typename View::non_const_value_type, Complex<T>>,
                  "ptyko::BatchedFFT2D: Views must hold Kokkos::complex<T>");
    static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                  "ptyko::BatchedFFT2D: Views must be LayoutRight (contiguous frames)");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                  "ptyko::BatchedFFT2D: View memory not accessible from the execution space");
  }

  int m_max_frames, m_ny, m_nx;
  // shared: copies of a plan object share the (non-copyable) library plans.
  std::shared_ptr<impl::FFTBackend<T, ExecSpace>> m_backend;
};

}  // namespace ptyko
