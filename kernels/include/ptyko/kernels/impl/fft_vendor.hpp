#pragma once
// The plan cache the GPU FFT backends share (cuFFT: fft_cufft.hpp, hipFFT:
// fft_hipfft.hpp), written once over a small table of the vendor's calls
// (`Api`, see CufftApi).
//
// One plan per batch size actually used (a batch's local size varies with
// the rank and the batch), each bound to the stream of the execution space
// instance it runs on; transforms are asynchronous. The plans share one work
// area instead of each allocating its own: they all run in order on that
// stream, never at the same time, and a work area can be as large as the
// frames themselves (multi-kernel 2-D transforms), so one per batch size
// would cost up to (batch sizes) x (largest batch) of device memory. The
// largest batch's plan is made at construction, which sizes the area
// before any epoch; a later plan that needs more grows it once, after a
// fence (the transforms already queued may still be using the old one).

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <map>
#include <mutex>

namespace ptyko::impl {

/// \tparam Api  the vendor's calls for one precision: `handle`, `complex`,
///              create / destroy / make_plan (with automatic work-area
///              allocation off) / set_work_area / set_stream / exec, and
///              `stream(space)`; every call returns the vendor's status
///              code, 0 for success (see CufftApi in fft_cufft.hpp).
/// \tparam ExecSpace  Kokkos::Cuda or Kokkos::HIP
template <class Api, class T, class ExecSpace>
class VendorFFT {
 public:
  using Mem = typename ExecSpace::memory_space;

  VendorFFT(ExecSpace const& space, int max_frames, int ny, int nx) : m_ny(ny), m_nx(nx) {
    std::lock_guard<std::mutex> lock(m_mutex);
    plan_for(space, max_frames);
  }
  ~VendorFFT() {
    for (auto& kv : m_plans) Api::destroy(kv.second);
  }
  VendorFFT(VendorFFT const&) = delete;
  VendorFFT& operator=(VendorFFT const&) = delete;

  /// out = F in (`forward`) or the unnormalised inverse, over `frames` frames.
  void execute(ExecSpace const& space, int frames, Complex<T> const* in, Complex<T>* out, bool forward) {
    typename Api::handle plan;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      plan = plan_for(space, frames);
    }
    require(Api::set_stream(plan, Api::stream(space)), "set_stream");
    auto* vin = reinterpret_cast<typename Api::complex*>(const_cast<Complex<T>*>(in));
    auto* vout = reinterpret_cast<typename Api::complex*>(out);
    require(Api::exec(plan, vin, vout, forward), "exec");
  }

  /// The shared work area and its bytes (for tests and memory reports).
  void const* work_area() const { return m_work.data(); }
  std::size_t work_area_bytes() const { return m_work.extent(0); }
  /// Plans made so far.
  std::size_t plans() const { return m_plans.size(); }

 private:
  static void require(int status, char const* call) {
    PTYKO_REQUIRE(status == 0, "ptyko::FFT: ", Api::name, " call ", call, " failed with code ", status);
  }

  /// The plan for `frames` frames, made on first use. Call under m_mutex.
  typename Api::handle plan_for(ExecSpace const& space, int frames) {
    auto it = m_plans.find(frames);
    if (it != m_plans.end()) return it->second;
    typename Api::handle plan;
    require(Api::create(&plan), "create");
    std::size_t bytes = 0;
    int const status = Api::make_plan(plan, m_ny, m_nx, frames, &bytes);
    try {  // the plan joins m_plans only once it is complete: a failure releases it
      require(status, "make_plan");
      if (bytes > m_work.extent(0)) {
        // The transforms queued so far may use the old area until they finish.
        fence(space, "ptyko::FFT::grow_work_area");
        m_work = Kokkos::View<unsigned char*, Mem>(
            Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::FFT::work_area"), bytes);
        for (auto& kv : m_plans) require(Api::set_work_area(kv.second, m_work.data()), "set_work_area");
      }
      if (bytes > 0) require(Api::set_work_area(plan, m_work.data()), "set_work_area");  // none when it needs none
    } catch (...) {
      Api::destroy(plan);
      throw;
    }
    m_plans.emplace(frames, plan);
    return plan;
  }

  int m_ny, m_nx;
  std::mutex m_mutex;
  std::map<int, typename Api::handle> m_plans;
  Kokkos::View<unsigned char*, Mem> m_work;  ///< shared by every plan
};

}  // namespace ptyko::impl
