#pragma once
// hipFFT backend of ptyko::BatchedFFT2D for Kokkos::HIP. Included by
// ptyko/kernels/fft.hpp only when Kokkos was built with HIP.
// Mirrors the cuFFT backend: one plan per batch size, bound to the stream of
// the execution space instance; transforms are asynchronous.

// fft.hpp declares FFTBackend and includes this file after those declarations;
// including it here too makes this header compile on its own (#pragma once
// ends the cycle).
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <hipfft/hipfft.h>

#include <map>
#include <mutex>

namespace ptyko {
namespace impl {

inline void check_hipfft(hipfftResult status, char const* what) {
  PTYKO_REQUIRE(status == HIPFFT_SUCCESS, "ptyko::FFT: hipFFT call ", what, " failed with code ",
                int(status));
}

template <class T>
struct HipfftTraits;
template <>
struct HipfftTraits<float> {
  using complex = hipfftComplex;
  static constexpr hipfftType type = HIPFFT_C2C;
  static hipfftResult exec(hipfftHandle p, complex* in, complex* out, int dir) {
    return hipfftExecC2C(p, in, out, dir);
  }
};
template <>
struct HipfftTraits<double> {
  using complex = hipfftDoubleComplex;
  static constexpr hipfftType type = HIPFFT_Z2Z;
  static hipfftResult exec(hipfftHandle p, complex* in, complex* out, int dir) {
    return hipfftExecZ2Z(p, in, out, dir);
  }
};

template <class T>
class FFTBackend<T, Kokkos::HIP, void> {
 public:
  FFTBackend(Kokkos::HIP const&, int /*max_frames*/, int ny, int nx, FFTPlanEffort)
      : m_ny(ny), m_nx(nx) {}
  ~FFTBackend() {
    for (auto& kv : m_plans) hipfftDestroy(kv.second);
  }
  FFTBackend(FFTBackend const&) = delete;
  FFTBackend& operator=(FFTBackend const&) = delete;

  void execute(Kokkos::HIP const& space, int frames, Complex<T> const* in, Complex<T>* out,
               FFTDirection dir) {
    using Tr = HipfftTraits<T>;
    hipfftHandle plan = get(frames);
    check_hipfft(hipfftSetStream(plan, space.hip_stream()), "hipfftSetStream");
    auto* hin = reinterpret_cast<typename Tr::complex*>(const_cast<Complex<T>*>(in));
    auto* hout = reinterpret_cast<typename Tr::complex*>(out);
    check_hipfft(
        Tr::exec(plan, hin, hout, dir == FFTDirection::forward ? HIPFFT_FORWARD : HIPFFT_BACKWARD),
        "hipfftExec");
  }

 private:
  hipfftHandle get(int frames) {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_plans.find(frames);
    if (it != m_plans.end()) return it->second;
    hipfftHandle plan;
    int n[2] = {m_ny, m_nx};
    check_hipfft(hipfftPlanMany(&plan, 2, n, nullptr, 1, m_ny * m_nx, nullptr, 1, m_ny * m_nx,
                                HipfftTraits<T>::type, frames),
                 "hipfftPlanMany");
    m_plans.emplace(frames, plan);
    return plan;
  }

  int m_ny, m_nx;
  std::mutex m_mutex;
  std::map<int, hipfftHandle> m_plans;
};

}  // namespace impl
}  // namespace ptyko
