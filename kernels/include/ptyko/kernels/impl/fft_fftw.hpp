#pragma once
// FFTW backend of ptyko::BatchedFFT2D for host execution spaces.
// The batch is cut into one chunk per host thread of the execution space;
// each chunk runs one fftw_plan_many_dft plan through the new-array execute
// interface (thread-safe). Plans are cached per (frames, in-place, alignment)
// and built under a global lock, since FFTW's planner is not thread-safe.

// fft.hpp declares FFTBackend and includes this file after those declarations;
// including it here too makes this header compile on its own (#pragma once
// ends the cycle).
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <memory>

// Included by ptyko/kernels/fft.hpp only.

namespace ptyko {
namespace impl {

/// Non-template-on-space part, compiled once for float and double in
/// kernels/src/fft_fftw.cpp (the only file that includes fftw3.h).
template <class T>
class FftwPlans {
 public:
  FftwPlans(int ny, int nx, FFTPlanEffort effort);
  ~FftwPlans();
  FftwPlans(FftwPlans const&) = delete;
  FftwPlans& operator=(FftwPlans const&) = delete;
  /// Transforms `frames` contiguous frames from `in` to `out` (may alias).
  void execute(int frames, Complex<T> const* in, Complex<T>* out, FFTDirection dir);

 private:
  struct Cache;
  std::unique_ptr<Cache> m_cache;
};

extern template class FftwPlans<float>;
extern template class FftwPlans<double>;

template <class T, class ExecSpace>
class FFTBackend<T, ExecSpace, std::enable_if_t<fftw_space_v<ExecSpace>>> {
 public:
  FFTBackend(ExecSpace const& space, int max_frames, int ny, int nx, FFTPlanEffort effort)
      : m_plans(ny, nx, effort),
        m_frame_size(std::size_t(ny) * nx),
        m_chunks(std::max(1, std::min(max_frames, int(space.concurrency())))) {}

  void execute(ExecSpace const& space, int frames, Complex<T> const* in, Complex<T>* out,
               FFTDirection dir) {
    int const chunks = std::min(m_chunks, frames);
    if (chunks == 1) {
      fence(space, "ptyko::FFT::fftw::wait_for_inputs");
      m_plans.execute(frames, in, out, dir);
      return;
    }
    // Host-only code in a host parallel_for: this backend never runs on a device.
    auto* plans = &m_plans;
    std::size_t const frame_size = m_frame_size;
    Kokkos::parallel_for(
        "ptyko::FFT::fftw::chunks", Kokkos::RangePolicy<ExecSpace>(space, 0, chunks),
        [=](int c) {
          int const first = int((long(frames) * c) / chunks);
          int const last = int((long(frames) * (c + 1)) / chunks);
          plans->execute(last - first, in + first * frame_size, out + first * frame_size, dir);
        });
  }

 private:
  FftwPlans<T> m_plans;
  std::size_t m_frame_size;
  int m_chunks;
};

}  // namespace impl
}  // namespace ptyko
