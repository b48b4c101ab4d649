#include "far_field_sweep.hpp"

#include <ptyko/core/background_refinement.hpp>
#include <ptyko/core/fftshift.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/kernels/background.hpp>
#include <ptyko/kernels/compat.hpp>

#include <algorithm>
#include <string>

namespace ptyko {

namespace impl {
/// background_ratio_sums over a FrameStack's View (a named function: nvcc
/// allows no device lambda inside FrameStack::visit's generic lambda).
template <class ExecSpace, class T, class Mem, class Frames>
void ratio_sums(ExecSpace const& space, int B, ComplexView4<T, Mem> const& waves, Frames const& frames,
                IndexView<Mem> const& idx, MaskView<Mem> const& mask, RealView2<T, Mem> const& background,
                Kokkos::View<double**, Kokkos::LayoutRight, Mem> const& sums) {
  background_ratio_sums(space, B, waves, frames, idx, mask, background, sums, T(1e-6));
}
}  // namespace impl

namespace {
/// Where the background starts, counts per pixel, the same everywhere:
/// half the mean pattern's 10th percentile over the measured pixels, at
/// least 1e-3. The EM step grows a background where the coherent model
/// leaves counts unexplained, but barely moves it where that model
/// explains the data: a start of a tenth of the mean pattern kept 45 times
/// the true background under the direct beam (docs/solvers.md). So it
/// starts below the background of the pattern's dark part and grows.
template <class T, class ExecSpace>
double start_level(ExecSpace const& space, LocalData<T, ExecSpace> const& data, Sync<T, ExecSpace>& sync) {
  auto const pattern = mean_pattern(space, data, sync).first;  // collective
  auto const mask = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data.mask);  // device -> host: mask
  std::vector<double> measured;
  for (std::size_t k = 0; k < pattern.size(); ++k)
    if (mask.extent(0) == 0 || mask.data()[k] != 0) measured.push_back(pattern[k]);
  if (measured.empty()) return 1e-3;
  auto const tenth = measured.begin() + std::ptrdiff_t(measured.size() / 10);
  std::nth_element(measured.begin(), tenth, measured.end());
  return std::max(1e-3, 0.5 * *tenth);
}
}  // namespace

template <class T, class ExecSpace>
BackgroundRefiner<T, ExecSpace>::BackgroundRefiner(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                                   int modes, SolverOptions const& options)
    : m_sweep(std::make_unique<impl::FarFieldSweep<T, ExecSpace>>(space, data, modes, options.fft_planner)),
      m_sums(Kokkos::view_alloc(space, std::string("ptyko::BackgroundRefiner::sums")), data.detector(),
             data.detector()) {}

template <class T, class ExecSpace>
BackgroundRefiner<T, ExecSpace>::~BackgroundRefiner() = default;

template <class T, class ExecSpace>
double BackgroundRefiner<T, ExecSpace>::refine(ExecSpace const& space,
                                               LocalData<T, ExecSpace> const& data, State<T, ExecSpace>& state,
                                               Sync<T, ExecSpace>& sync) {
  ScopedRegion region("ptyko::BackgroundRefiner::refine");
  int const D = data.detector();
  if (state.background.extent(0) == 0) {
    state.background = RealView2<T, Mem>(Kokkos::view_alloc(space, "ptyko::State::background"), D, D);
    Kokkos::deep_copy(space, state.background, T(start_level(space, data, sync)));
  }
  // sum_j b d_j / I_j over this rank's frames, then over all ranks'.
  Kokkos::deep_copy(space, m_sums, 0.0);
  m_sweep->for_each_chunk(space, data, state, [&](int B, ComplexView4<T, Mem> const& waves, IndexView<Mem> const& idx) {
    data.frames.visit([&](auto const& frames) {
      impl::ratio_sums(space, B, waves, frames, idx, data.mask, state.background, m_sums);
    });
  });
  auto sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_sums);  // device -> host: D x D sums
  sync.sum(sums.data(), int(sums.span()));
  auto next = Kokkos::create_mirror_view(state.background);
  double const frames = std::max<double>(1, double(data.global_frames));
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) next(i, j) = T(sums(i, j) / frames);  // masked pixels: 0, never compared
  Kokkos::deep_copy(space, state.background, next);  // host -> device: the new background
  return measured_background_counts(space, state.background, data.mask);  // blocking: `next` is read
}

template <class T, class ExecSpace>
HostReal2 background_on_host(ExecSpace const&, State<T, ExecSpace> const& state) {
  if (state.background.extent(0) == 0) return {};
  auto const corner = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.background);  // device -> host: D x D
  int const ny = int(corner.extent(0)), nx = int(corner.extent(1));
  HostReal2 centred("ptyko::background", ny, nx);
  fftshift2(corner.data(), centred.data(), ny, nx);
  return centred;
}

template <class T, class ExecSpace>
void set_background(ExecSpace const& space, State<T, ExecSpace>& state, HostReal2 const& centred) {
  if (centred.extent(0) == 0) {
    state.background = {};
    return;
  }
  int const ny = int(centred.extent(0)), nx = int(centred.extent(1));
  state.background = RealView2<T, typename ExecSpace::memory_space>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::State::background"), ny, nx);
  auto corner = Kokkos::create_mirror_view(state.background);
  ifftshift2(centred.data(), corner.data(), ny, nx);
  Kokkos::deep_copy(space, state.background, corner);  // host -> device: D x D, once
  fence(space, "ptyko::set_background");                 // `corner` is a host buffer the copy reads
}

#define PTYKO_INSTANTIATE(T)                                                                                   \
  template class BackgroundRefiner<T, Kokkos::DefaultExecutionSpace>;                                          \
  template HostReal2 background_on_host(Kokkos::DefaultExecutionSpace const&,                                  \
                                        State<T, Kokkos::DefaultExecutionSpace> const&);                        \
  template void set_background(Kokkos::DefaultExecutionSpace const&, State<T, Kokkos::DefaultExecutionSpace>&, \
                               HostReal2 const&);
PTYKO_INSTANTIATE(float)
PTYKO_INSTANTIATE(double)
#undef PTYKO_INSTANTIATE

}  // namespace ptyko
