// FFTW plans for ptyko::BatchedFFT2D on host execution spaces.
// The only translation unit that includes fftw3.h.

#include <ptyko/kernels/fft.hpp>

#include <fftw3.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace ptyko::impl {
namespace {

// FFTW's planner is not thread-safe; execution with new arrays is.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

// The float and double APIs of FFTW differ only in their prefix.
template <class T>
struct Fftw;

template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  using complex = fftwf_complex;
  static plan plan_many(int rank, int const* n, int howmany, complex* in, complex* out, int sign,
                        unsigned flags) {
    return fftwf_plan_many_dft(rank, n, howmany, in, nullptr, 1, n[0] * n[1], out, nullptr, 1,
                               n[0] * n[1], sign, flags);
  }
  static void execute(plan p, complex* in, complex* out) { fftwf_execute_dft(p, in, out); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
  static int alignment_of(void* p) { return fftwf_alignment_of(static_cast<float*>(p)); }
  static void* malloc(std::size_t bytes) { return fftwf_malloc(bytes); }
  static void free(void* p) { fftwf_free(p); }
};

template <>
struct Fftw<double> {
  using plan = fftw_plan;
  using complex = fftw_complex;
  static plan plan_many(int rank, int const* n, int howmany, complex* in, complex* out, int sign,
                        unsigned flags) {
    return fftw_plan_many_dft(rank, n, howmany, in, nullptr, 1, n[0] * n[1], out, nullptr, 1,
                              n[0] * n[1], sign, flags);
  }
  static void execute(plan p, complex* in, complex* out) { fftw_execute_dft(p, in, out); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
  static int alignment_of(void* p) { return fftw_alignment_of(static_cast<double*>(p)); }
  static void* malloc(std::size_t bytes) { return fftw_malloc(bytes); }
  static void free(void* p) { fftw_free(p); }
};

}  // namespace

template <class T>
struct FftwPlans<T>::Cache {
  using API = Fftw<T>;
  // (frames, direction, in-place, SIMD-aligned)
  using Key = std::tuple<int, int, bool, bool>;

  int ny, nx;
  FFTPlanEffort effort;
  std::mutex mutex;
  std::map<Key, typename API::plan> plans;

  ~Cache() {
    for (auto& kv : plans) API::destroy(kv.second);
  }

  typename API::plan get(int frames, FFTDirection dir, bool in_place, bool aligned) {
    Key const key{frames, int(dir), in_place, aligned};
    std::lock_guard<std::mutex> lock(mutex);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;

    // Plan on scratch arrays: FFTW_MEASURE overwrites them, and the plan is
    // later applied to other arrays through fftw_execute_dft.
    std::size_t const bytes = std::size_t(frames) * ny * nx * sizeof(typename API::complex);
    auto* in = static_cast<typename API::complex*>(API::malloc(bytes));
    auto* out = in_place ? in : static_cast<typename API::complex*>(API::malloc(bytes));
    PTYKO_REQUIRE(in && out, "ptyko::FFT: cannot allocate ", bytes, " bytes to plan an FFT");
    unsigned flags = effort == FFTPlanEffort::measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    if (!aligned) flags |= FFTW_UNALIGNED;
    int const n[2] = {ny, nx};
    int const sign = dir == FFTDirection::forward ? FFTW_FORWARD : FFTW_BACKWARD;
    typename API::plan p;
    {
      std::lock_guard<std::mutex> plan_lock(planner_mutex());
      p = API::plan_many(2, n, frames, in, out, sign, flags);
    }
    if (out != in) API::free(out);
    API::free(in);
    PTYKO_REQUIRE(p != nullptr, "ptyko::FFT: FFTW could not plan ", frames, " transforms of ", ny,
                  "x", nx);
    plans.emplace(key, p);
    return p;
  }
};

template <class T>
FftwPlans<T>::FftwPlans(int ny, int nx, FFTPlanEffort effort)
    : m_cache(new Cache{ny, nx, effort, {}, {}}) {}

template <class T>
FftwPlans<T>::~FftwPlans() = default;

template <class T>
void FftwPlans<T>::execute(int frames, Complex<T> const* in, Complex<T>* out, FFTDirection dir) {
  using API = Fftw<T>;
  // Kokkos::complex<T> is layout-compatible with T[2] (FFTW's complex type).
  auto* fin = reinterpret_cast<typename API::complex*>(const_cast<Complex<T>*>(in));
  auto* fout = reinterpret_cast<typename API::complex*>(out);
  bool const in_place = static_cast<void const*>(in) == static_cast<void const*>(out);
  // A plan made on aligned scratch may use SIMD loads; every frame of the
  // batch shares the first frame's alignment when a frame's byte size is a
  // multiple of 16, so check both.
  std::size_t const frame_bytes = std::size_t(m_cache->ny) * m_cache->nx * sizeof(Complex<T>);
  bool const aligned = API::alignment_of(fin) == 0 && API::alignment_of(fout) == 0 &&
                       frame_bytes % 16 == 0;
  API::execute(m_cache->get(frames, dir, in_place, aligned), fin, fout);
}

template class FftwPlans<float>;
template class FftwPlans<double>;

}  // namespace ptyko::impl
