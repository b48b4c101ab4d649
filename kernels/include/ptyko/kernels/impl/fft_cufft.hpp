#pragma once
// cuFFT backend of ptyko::BatchedFFT2D for Kokkos::Cuda. Included by
// ptyko/kernels/fft.hpp only when Kokkos was built with CUDA.
// The plan cache, its shared work area and the stream binding are
// VendorFFT's (fft_vendor.hpp); this file is the table of cuFFT's calls.

// fft.hpp declares FFTBackend and includes this file after those declarations;
// including it here too makes this header compile on its own (#pragma once
// ends the cycle).
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/impl/fft_vendor.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <cufft.h>

#include <cstddef>

namespace ptyko {
namespace impl {

/// cuFFT's calls for VendorFFT (fft_vendor.hpp), one precision each.
template <class T>
struct CufftApi;

/// What both precisions share.
struct CufftCommon {
  using handle = cufftHandle;
  static constexpr char const* name = "cuFFT";
  static int create(handle* plan) { return cufftCreate(plan); }
  static void destroy(handle plan) { cufftDestroy(plan); }
  static int set_work_area(handle plan, void* area) { return cufftSetWorkArea(plan, area); }
  static int set_stream(handle plan, cudaStream_t stream) { return cufftSetStream(plan, stream); }
  static cudaStream_t stream(Kokkos::Cuda const& space) { return space.cuda_stream(); }
  /// `frames` contiguous ny x nx frames, with the work area left to the caller.
  static int make_plan(handle plan, int ny, int nx, int frames, cufftType type, std::size_t* work_bytes) {
    int n[2] = {ny, nx};
    if (cufftResult const status = cufftSetAutoAllocation(plan, 0); status != CUFFT_SUCCESS) return status;
    return cufftMakePlanMany(plan, 2, n, nullptr, 1, ny * nx, nullptr, 1, ny * nx, type, frames, work_bytes);
  }
};

template <>
struct CufftApi<float> : CufftCommon {
  using complex = cufftComplex;
  static int make_plan(handle plan, int ny, int nx, int frames, std::size_t* work_bytes) {
    return CufftCommon::make_plan(plan, ny, nx, frames, CUFFT_C2C, work_bytes);
  }
  static int exec(handle plan, complex* in, complex* out, bool forward) {
    return cufftExecC2C(plan, in, out, forward ? CUFFT_FORWARD : CUFFT_INVERSE);
  }
};
template <>
struct CufftApi<double> : CufftCommon {
  using complex = cufftDoubleComplex;
  static int make_plan(handle plan, int ny, int nx, int frames, std::size_t* work_bytes) {
    return CufftCommon::make_plan(plan, ny, nx, frames, CUFFT_Z2Z, work_bytes);
  }
  static int exec(handle plan, complex* in, complex* out, bool forward) {
    return cufftExecZ2Z(plan, in, out, forward ? CUFFT_FORWARD : CUFFT_INVERSE);
  }
};

template <class T>
class FFTBackend<T, Kokkos::Cuda, void> : public VendorFFT<CufftApi<T>, T, Kokkos::Cuda> {
 public:
  FFTBackend(Kokkos::Cuda const& space, int max_frames, int ny, int nx, FFTPlanEffort)
      : VendorFFT<CufftApi<T>, T, Kokkos::Cuda>(space, max_frames, ny, nx) {}
  void execute(Kokkos::Cuda const& space, int frames, Complex<T> const* in, Complex<T>* out, FFTDirection dir) {
    VendorFFT<CufftApi<T>, T, Kokkos::Cuda>::execute(space, frames, in, out, dir == FFTDirection::forward);
  }
};

}  // namespace impl
}  // namespace ptyko
