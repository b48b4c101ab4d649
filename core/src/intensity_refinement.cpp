#include "far_field_sweep.hpp"

#include <ptyko/core/intensity_refinement.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/background.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_power.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>

namespace ptyko {

namespace impl {
/// measured_frame_sums over a FrameStack's View (a named function: nvcc
/// allows no device lambda inside FrameStack::visit's generic lambda).
template <class ExecSpace, class Frames, class Mem>
void frame_sums(ExecSpace const& space, Frames const& frames, MaskView<Mem> const& mask,
                Kokkos::View<double*, Kokkos::LayoutRight, Mem> const& out) {
  measured_frame_sums(space, frames, mask, out);
}
}  // namespace impl

namespace {

/// The mean of `values` (one per frame, by global id) over the frames whose
/// positions lie within `radius` of each of `ids`' positions (itself
/// included), through a grid of radius-sized cells.
std::vector<double> neighbourhood_means(std::vector<std::array<double, 2>> const& positions,
                                        std::vector<double> const& values, std::vector<std::size_t> const& ids,
                                        double radius) {
  std::map<std::pair<long, long>, std::vector<std::size_t>> cells;
  auto const cell = [&](std::array<double, 2> const& p) {
    return std::make_pair(long(std::floor(p[0] / radius)), long(std::floor(p[1] / radius)));
  };
  for (std::size_t k = 0; k < positions.size(); ++k) cells[cell(positions[k])].push_back(k);
  std::vector<double> means(ids.size(), 0.0);
  for (std::size_t f = 0; f < ids.size(); ++f) {
    auto const& p = positions[ids[f]];
    auto const [cy, cx] = cell(p);
    double sum = 0, count = 0;
    for (long y = cy - 1; y <= cy + 1; ++y)
      for (long x = cx - 1; x <= cx + 1; ++x) {
        auto const it = cells.find({y, x});
        if (it == cells.end()) continue;
        for (std::size_t k : it->second)
          if (std::hypot(positions[k][0] - p[0], positions[k][1] - p[1]) <= radius) {
            sum += values[k];
            count += 1;
          }
      }
    means[f] = sum / count;  // count >= 1: the frame itself
  }
  return means;
}

}  // namespace

template <class T, class ExecSpace>
IntensityRefiner<T, ExecSpace>::IntensityRefiner(ExecSpace const& space, LocalData<T, ExecSpace>& data, int modes,
                                                 SolverOptions const& options) {
  int const n = data.local_frames();
  if (data.frames.is_counts())
    data.frames = FrameStack<Mem>(frames_as_float(space, data.frames.counts()));  // the counts are released
  m_sweep = std::make_unique<impl::FarFieldSweep<T, ExecSpace>>(space, data, modes, options.fft_planner);
  auto const view = [&](char const* label) {
    return Kokkos::View<double*, Kokkos::LayoutRight, Mem>(Kokkos::view_alloc(space, std::string(label)), std::max(1, n));
  };
  m_model_power = view("ptyko::IntensityRefiner::model_power");
  m_factor = view("ptyko::IntensityRefiner::factor");
  m_scale.assign(std::size_t(n), 1.0);
  // The file's counts of every frame on measured pixels, once: frame f's
  // data then sum to m_scale[f] times them.
  auto const sums = view("ptyko::IntensityRefiner::file_counts");
  data.frames.visit([&](auto const& frames) { impl::frame_sums(space, frames, data.mask, sums); });
  auto const counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);  // device -> host: one double per frame
  m_file_counts.assign(counts.data(), counts.data() + n);
}

template <class T, class ExecSpace>
IntensityRefiner<T, ExecSpace>::~IntensityRefiner() = default;

template <class T, class ExecSpace>
IntensityRefinementReport IntensityRefiner<T, ExecSpace>::refine(ExecSpace const& space,
                                                                 LocalData<T, ExecSpace> const& data,
                                                                 State<T, ExecSpace> const& state,
                                                                 Sync<T, ExecSpace>& sync,
                                                                 std::vector<std::array<double, 2>> const& positions) {
  ScopedRegion region("ptyko::IntensityRefiner::refine");
  int const n = data.local_frames();
  // 1. Every local frame's model counts on measured pixels, the
  //    background's (the same in every frame) included.
  m_sweep->for_each_chunk(space, data, state, [&](int B, ComplexView4<T, Mem> const& waves, IndexView<Mem> const& idx) {
    measured_model_power(space, B, waves, data.mask, idx, m_model_power);
  });
  auto model = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_model_power);  // device -> host: one double per frame
  if (state.background.extent(0) > 0) {
    double const background = measured_background_counts(space, state.background, data.mask);
    for (int f = 0; f < n; ++f) model(f) += background;
  }

  // 2. g_j = c model_j / file_j: frame j's data, the file's times g_j, then
  //    sum to c times its model, with c = (file's counts) / (model's
  //    counts) over all ranks' frames (the frames keep the file's total).
  double totals[2] = {0, 0};  // the file's counts, the model's
  for (int f = 0; f < n; ++f) {
    if (!(m_file_counts[std::size_t(f)] > 0 && model(f) > 0)) continue;  // nothing to compare: the frame keeps its scale
    totals[0] += m_file_counts[std::size_t(f)];
    totals[1] += model(f);
  }
  sync.sum(totals, 2);
  std::vector<double> scale = m_scale;
  if (totals[0] > 0 && totals[1] > 0) {
    double const c = totals[0] / totals[1];
    for (int f = 0; f < n; ++f)
      if (m_file_counts[std::size_t(f)] > 0 && model(f) > 0)
        scale[std::size_t(f)] = model(f) / m_file_counts[std::size_t(f)] * c;
  }
  // 3. Without the part that varies slowly over the scan: a flux that
  //    changes only over distances larger than the probe is an object
  //    amplitude that changes as slowly, which the data cannot tell apart
  //    (measured: the scales' error was that smooth part), so it stays the
  //    object's. log g minus its mean over the frames within `radius`.
  double const radius = smoothing_radius(state);
  std::vector<double> log_scale(data.global_frames, 0.0);
  for (int f = 0; f < n; ++f) log_scale[data.frame_ids[std::size_t(f)]] = std::log(scale[std::size_t(f)]);
  sync.sum(log_scale.data(), int(log_scale.size()));  // each frame lives on one rank: the sum is the gather
  auto const smooth = neighbourhood_means(positions, log_scale, data.frame_ids, radius);
  double kept[2] = {0, 0};  // the file's counts, and with the new scales
  for (int f = 0; f < n; ++f) {
    double& g = scale[std::size_t(f)];
    g = std::exp(std::log(g) - smooth[std::size_t(f)]);
    kept[0] += m_file_counts[std::size_t(f)];
    kept[1] += m_file_counts[std::size_t(f)] * g;
  }
  sync.sum(kept, 2);
  double const norm = kept[1] > 0 ? kept[0] / kept[1] : 1.0;
  for (double& g : scale) g = std::clamp(g * norm, min_scale, max_scale);
  apply(space, data, scale);

  // 4. How far the fluxes are from uniform, over all ranks.
  double moments[2] = {0, double(n)};  // sum (flux - 1)^2, frames
  double extremes[2] = {0, 0};         // largest flux, -smallest
  if (n > 0) extremes[0] = extremes[1] = -1e300;
  for (double g : m_scale) {
    moments[0] += (1 / g - 1) * (1 / g - 1);
    extremes[0] = std::max(extremes[0], 1 / g);
    extremes[1] = std::max(extremes[1], -1 / g);
  }
  sync.sum(moments, 2);
  sync.max(extremes, 2);
  IntensityRefinementReport report;
  report.rms_deviation = moments[1] > 0 ? std::sqrt(moments[0] / moments[1]) : 0;
  report.max_flux = extremes[0];
  report.min_flux = -extremes[1];
  return report;
}

template <class T, class ExecSpace>
double IntensityRefiner<T, ExecSpace>::smoothing_radius(State<T, ExecSpace> const& state) const {
  auto const device = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.probe);  // device -> host: the probe
  HostComplex3 probe("ptyko::IntensityRefiner::probe", device.extent(0), device.extent(1), device.extent(2));
  for (std::size_t k = 0; k < probe.span(); ++k) probe.data()[k] = Complex<double>(device.data()[k]);
  return std::max(1.0, probe_diameter_px(probe));
}

template <class T, class ExecSpace>
void IntensityRefiner<T, ExecSpace>::apply(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                           std::vector<double> const& new_scale) {
  PTYKO_ASSERT(!data.frames.is_counts(), "intensity refinement scales float frames");
  auto factor = Kokkos::create_mirror_view(m_factor);
  for (std::size_t f = 0; f < m_scale.size(); ++f) factor(f) = new_scale[f] / m_scale[f];
  Kokkos::deep_copy(space, m_factor, factor);  // host -> device: one factor per frame
  scale_frames(space, data.frames.floats(), m_factor);
  m_scale = new_scale;
  fence(space, "ptyko::IntensityRefiner::apply");  // `factor` is a host buffer the copy reads
}

template <class T, class ExecSpace>
void IntensityRefiner<T, ExecSpace>::restore(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                             std::vector<double> const& flux) {
  std::vector<double> scale(m_scale.size());
  for (std::size_t f = 0; f < scale.size(); ++f) {
    double const v = flux.at(data.frame_ids[f]);
    scale[f] = v > 0 && std::isfinite(v) ? std::clamp(1 / v, min_scale, max_scale) : 1.0;
  }
  apply(space, data, scale);
}

template <class T, class ExecSpace>
std::vector<double> IntensityRefiner<T, ExecSpace>::relative_flux(LocalData<T, ExecSpace> const& data,
                                                                  Sync<T, ExecSpace>& sync) const {
  std::vector<double> flux(data.global_frames, 0.0);
  for (std::size_t f = 0; f < m_scale.size(); ++f) flux[data.frame_ids[f]] = 1 / m_scale[f];
  sync.sum(flux.data(), int(flux.size()));  // each frame lives on one rank: the sum is the gather
  return flux;
}

template class IntensityRefiner<float, Kokkos::DefaultExecutionSpace>;
template class IntensityRefiner<double, Kokkos::DefaultExecutionSpace>;

}  // namespace ptyko
