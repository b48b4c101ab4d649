#pragma once
// cuFFT backend of ptyko::BatchedFFT2D for Kokkos::Cuda. Included by
// ptyko/kernels/fft.hpp only when Kokkos was built with CUDA.
// One cufftPlanMany per batch size actually used, bound to the stream of the
// execution space instance passed to execute(); transforms are asynchronous.

// fft.hpp declares FFTBackend and includes this file after those declarations;
// including it here too makes this header compile on its own (#pragma once
// ends the cycle).
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <cufft.h>

#include <map>
#include <memory>
#include <mutex>

namespace ptyko {
namespace impl {

inline void check_cufft(cufftResult status, char const* what) {
  PTYKO_REQUIRE(status == CUFFT_SUCCESS, "ptyko::FFT: cuFFT call ", what, " failed with code ",
                int(status));
}

template <class T>
struct CufftTraits;
template <>
struct CufftTraits<float> {
  using complex = cufftComplex;
  static constexpr cufftType type = CUFFT_C2C;
  static cufftResult exec(cufftHandle p, complex* in, complex* out, int dir) {
    return cufftExecC2C(p, in, out, dir);
  }
};
template <>
struct CufftTraits<double> {
  using complex = cufftDoubleComplex;
  static constexpr cufftType type = CUFFT_Z2Z;
  static cufftResult exec(cufftHandle p, complex* in, complex* out, int dir) {
    return cufftExecZ2Z(p, in, out, dir);
  }
};

template <class T>
class FFTBackend<T, Kokkos::Cuda, void> {
 public:
  FFTBackend(Kokkos::Cuda const&, int /*max_frames*/, int ny, int nx, FFTPlanEffort)
      : m_ny(ny), m_nx(nx) {}
  ~FFTBackend() {
    for (auto& kv : m_plans) cufftDestroy(kv.second);
  }
  FFTBackend(FFTBackend const&) = delete;
  FFTBackend& operator=(FFTBackend const&) = delete;

  void execute(Kokkos::Cuda const& space, int frames, Complex<T> const* in, Complex<T>* out,
               FFTDirection dir) {
    using Tr = CufftTraits<T>;
    cufftHandle plan = get(frames);
    check_cufft(cufftSetStream(plan, space.cuda_stream()), "cufftSetStream");
    auto* cin = reinterpret_cast<typename Tr::complex*>(const_cast<Complex<T>*>(in));
    auto* cout = reinterpret_cast<typename Tr::complex*>(out);
    check_cufft(Tr::exec(plan, cin, cout, dir == FFTDirection::forward ? CUFFT_FORWARD : CUFFT_INVERSE),
                "cufftExec");
  }

 private:
  cufftHandle get(int frames) {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_plans.find(frames);
    if (it != m_plans.end()) return it->second;
    cufftHandle plan;
    int n[2] = {m_ny, m_nx};
    check_cufft(cufftPlanMany(&plan, 2, n, nullptr, 1, m_ny * m_nx, nullptr, 1, m_ny * m_nx,
                              CufftTraits<T>::type, frames),
                "cufftPlanMany");
    m_plans.emplace(frames, plan);
    return plan;
  }

  int m_ny, m_nx;
  std::mutex m_mutex;
  std::map<int, cufftHandle> m_plans;
};

}  // namespace impl
}  // namespace ptyko
