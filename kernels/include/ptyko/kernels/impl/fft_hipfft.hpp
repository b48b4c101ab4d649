#pragma once
// hipFFT backend of ptyko::BatchedFFT2D for Kokkos::HIP. Included by
// ptyko/kernels/fft.hpp only when Kokkos was built with HIP.
// The plan cache, its shared work area and the stream binding are
// VendorFFT's (fft_vendor.hpp); this file is the table of hipFFT's calls.

// fft.hpp declares FFTBackend and includes this file after those declarations;
// including it here too makes this header compile on its own (#pragma once
// ends the cycle).
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/impl/fft_vendor.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <hipfft/hipfft.h>

#include <cstddef>

namespace ptyko {
namespace impl {

/// hipFFT's calls for VendorFFT (fft_vendor.hpp), one precision each.
template <class T>
struct HipfftApi;

/// What both precisions share.
struct HipfftCommon {
  using handle = hipfftHandle;
  static constexpr char const* name = "hipFFT";
  static int create(handle* plan) { return hipfftCreate(plan); }
  static void destroy(handle plan) { hipfftDestroy(plan); }
  static int set_work_area(handle plan, void* area) { return hipfftSetWorkArea(plan, area); }
  static int set_stream(handle plan, hipStream_t stream) { return hipfftSetStream(plan, stream); }
  static hipStream_t stream(Kokkos::HIP const& space) { return space.hip_stream(); }
  /// `frames` contiguous ny x nx frames, with the work area left to the caller.
  static int make_plan(handle plan, int ny, int nx, int frames, hipfftType type, std::size_t* work_bytes) {
    int n[2] = {ny, nx};
    if (hipfftResult const status = hipfftSetAutoAllocation(plan, 0); status != HIPFFT_SUCCESS) return status;
    return hipfftMakePlanMany(plan, 2, n, nullptr, 1, ny * nx, nullptr, 1, ny * nx, type, frames, work_bytes);
  }
};

template <>
struct HipfftApi<float> : HipfftCommon {
  using complex = hipfftComplex;
  static int make_plan(handle plan, int ny, int nx, int frames, std::size_t* work_bytes) {
    return HipfftCommon::make_plan(plan, ny, nx, frames, HIPFFT_C2C, work_bytes);
  }
  static int exec(handle plan, complex* in, complex* out, bool forward) {
    return hipfftExecC2C(plan, in, out, forward ? HIPFFT_FORWARD : HIPFFT_BACKWARD);
  }
};
template <>
struct HipfftApi<double> : HipfftCommon {
  using complex = hipfftDoubleComplex;
  static int make_plan(handle plan, int ny, int nx, int frames, std::size_t* work_bytes) {
    return HipfftCommon::make_plan(plan, ny, nx, frames, HIPFFT_Z2Z, work_bytes);
  }
  static int exec(handle plan, complex* in, complex* out, bool forward) {
    return hipfftExecZ2Z(plan, in, out, forward ? HIPFFT_FORWARD : HIPFFT_BACKWARD);
  }
};

template <class T>
class FFTBackend<T, Kokkos::HIP, void> : public VendorFFT<HipfftApi<T>, T, Kokkos::HIP> {
 public:
  FFTBackend(Kokkos::HIP const& space, int max_frames, int ny, int nx, FFTPlanEffort)
      : VendorFFT<HipfftApi<T>, T, Kokkos::HIP>(space, max_frames, ny, nx) {}
  void execute(Kokkos::HIP const& space, int frames, Complex<T> const* in, Complex<T>* out, FFTDirection dir) {
    VendorFFT<HipfftApi<T>, T, Kokkos::HIP>::execute(space, frames, in, out, dir == FFTDirection::forward);
  }
};

}  // namespace impl
}  // namespace ptyko
