#include <ptyko/core/frame_stats.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

template <class T, class ExecSpace>
FrameStats frame_stats(ExecSpace const& space, LocalData<T, ExecSpace> const& data) {
  using Mem = typename ExecSpace::memory_space;
  ScopedRegion region("ptyko::frame_stats");
  int const n = data.local_frames(), D = data.detector();
  std::size_t const pixels = std::size_t(D) * D;
  Kokkos::View<double* [2], Kokkos::LayoutRight, Mem> out(Kokkos::view_alloc(space, "ptyko::frame_stats::out"), n);
  auto frames = data.frames;
  Kokkos::parallel_for(
      "ptyko::frame_stats::sum_max", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(int f) {
        float const* p = &frames(f, 0, 0);
        double sum = 0;
        float max = 0;
        for (std::size_t k = 0; k < pixels; ++k) {
          sum += double(p[k]);
          max = p[k] > max ? p[k] : max;
        }
        out(f, 0) = sum;
        out(f, 1) = double(max);
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);  // device -> host: n x 2 totals
  FrameStats stats;
  stats.counts.resize(std::size_t(n));
  for (int f = 0; f < n; ++f) {
    stats.counts[std::size_t(f)] = h(f, 0);
    stats.max_value = std::max(stats.max_value, h(f, 1));
  }
  return stats;
}

template <class T, class ExecSpace>
std::size_t count_pixels_at_least(ExecSpace const& space, LocalData<T, ExecSpace> const& data, float threshold) {
  auto frames = data.frames;
  std::size_t count = 0;
  Kokkos::parallel_reduce(
      "ptyko::frame_stats::count_at_least", Kokkos::RangePolicy<ExecSpace>(space, 0, frames.span()),
      KOKKOS_LAMBDA(std::size_t k, std::size_t & c) { c += frames.data()[k] >= threshold ? 1 : 0; }, count);
  return count;
}

double data_type_ceiling(std::string const& t) {
  if (t == "uint8") return 255.0;
  if (t == "int8") return 127.0;
  if (t == "uint16") return 65535.0;
  if (t == "int16") return 32767.0;
  if (t == "uint32") return 4294967295.0;
  if (t == "int32") return 2147483647.0;
  return 0;
}

template <class T, class ExecSpace>
LocalData<T, ExecSpace> select_frames(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                      std::vector<int> const& keep, std::vector<std::size_t> const& new_ids,
                                      std::size_t global_frames) {
  using Mem = typename ExecSpace::memory_space;
  PTYKO_ASSERT(keep.size() == new_ids.size(), keep.size(), " frames kept but ", new_ids.size(), " ids");
  int const k = int(keep.size()), D = data.detector();
  LocalData<T, ExecSpace> out;
  out.mask = data.mask;
  out.frame_ids = new_ids;
  out.global_frames = global_frames;
  out.frames = RealView3<float, Mem>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::LocalData::frames"),
                                     k, D, D);
  out.positions =
      PositionView<T, Mem>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::LocalData::positions"), k);
  IndexView<Mem> idx(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::select_frames::keep"), k);
  auto h_idx = Kokkos::create_mirror_view(idx);
  for (int f = 0; f < k; ++f) {
    PTYKO_ASSERT(keep[f] >= 0 && keep[f] < data.local_frames(), "frame ", keep[f], " is not local");
    h_idx(f) = keep[f];
  }
  Kokkos::deep_copy(space, idx, h_idx);  // host -> device: kept frame indices, once
  auto src = data.frames;
  auto dst = out.frames;
  std::size_t const pixels = std::size_t(D) * D;
  Kokkos::parallel_for(
      "ptyko::select_frames::frames", Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(k) * pixels),
      KOKKOS_LAMBDA(std::size_t q) {
        FrameIndex const at = frame_index(q, D);
        dst(at.b, at.i, at.j) = src(idx(at.b), at.i, at.j);
      });
  auto psrc = data.positions;
  auto pdst = out.positions;
  Kokkos::parallel_for(
      "ptyko::select_frames::positions", Kokkos::RangePolicy<ExecSpace>(space, 0, k), KOKKOS_LAMBDA(int f) {
        pdst(f, 0) = psrc(idx(f), 0);
        pdst(f, 1) = psrc(idx(f), 1);
      });
  return out;
}

#define PTYKO_INSTANTIATE(T)                                                                                   \
  template FrameStats frame_stats<T, Kokkos::DefaultExecutionSpace>(Kokkos::DefaultExecutionSpace const&,      \
                                                                    LocalData<T, Kokkos::DefaultExecutionSpace> const&); \
  template std::size_t count_pixels_at_least<T, Kokkos::DefaultExecutionSpace>(                               \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&, float);        \
  template LocalData<T, Kokkos::DefaultExecutionSpace> select_frames<T, Kokkos::DefaultExecutionSpace>(        \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&,                \
      std::vector<int> const&, std::vector<std::size_t> const&, std::size_t);
PTYKO_INSTANTIATE(float)
PTYKO_INSTANTIATE(double)
#undef PTYKO_INSTANTIATE

}  // namespace ptyko
