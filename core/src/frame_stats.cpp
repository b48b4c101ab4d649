#include <ptyko/core/frame_stats.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

// Kernels over a FrameStack's View (uint16 or float), as named functions:
// nvcc allows no device lambda inside FrameStack::visit's generic lambda.
namespace impl {

/// out(f, 0) = sum of frame f, out(f, 1) = its largest pixel. Non-blocking.
template <class ExecSpace, class Frames, class Out>
void frame_sum_max(ExecSpace const& space, Frames const& frames, Out const& out) {
  std::size_t const pixels = frames.extent(1) * frames.extent(2);
  Kokkos::parallel_for(
      "ptyko::frame_stats::sum_max", Kokkos::RangePolicy<ExecSpace>(space, 0, int(frames.extent(0))),
      KOKKOS_LAMBDA(int f) {
        auto const* p = &frames(f, 0, 0);
        double sum = 0;
        float max = 0;
        for (std::size_t k = 0; k < pixels; ++k) {
          float const v = float(p[k]);
          sum += double(v);
          max = v > max ? v : max;
        }
        out(f, 0) = sum;
        out(f, 1) = double(max);
      });
}

/// Number of values >= threshold. Blocking.
template <class ExecSpace, class Frames>
std::size_t count_at_least(ExecSpace const& space, Frames const& frames, float threshold) {
  std::size_t count = 0;
  auto const* v = frames.data();
  Kokkos::parallel_reduce(
      "ptyko::frame_stats::count_at_least", Kokkos::RangePolicy<ExecSpace>(space, 0, frames.span()),
      KOKKOS_LAMBDA(std::size_t k, std::size_t & c) { c += float(v[k]) >= threshold ? 1 : 0; }, count);
  return count;
}

/// A new stack of the frames src(idx(f)). Non-blocking.
template <class ExecSpace, class Frames, class Index>
Frames gather_frames(ExecSpace const& space, Frames const& src, Index const& idx) {
  int const k = int(idx.extent(0)), D = int(src.extent(1));
  Frames dst(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::LocalData::frames"), k, D, D);
  Kokkos::parallel_for(
      "ptyko::select_frames::frames", Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(k) * D * D),
      KOKKOS_LAMBDA(std::size_t q) {
        FrameIndex const at = frame_index(q, D);
        dst(at.b, at.i, at.j) = src(idx(at.b), at.i, at.j);
      });
  return dst;
}

}  // namespace impl

template <class T, class ExecSpace>
FrameStats frame_stats(ExecSpace const& space, LocalData<T, ExecSpace> const& data) {
  using Mem = typename ExecSpace::memory_space;
  ScopedRegion region("ptyko::frame_stats");
  int const n = data.local_frames();
  Kokkos::View<double* [2], Kokkos::LayoutRight, Mem> out(Kokkos::view_alloc(space, "ptyko::frame_stats::out"), n);
  data.frames.visit([&](auto const& frames) { impl::frame_sum_max(space, frames, out); });
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
  return data.frames.visit([&](auto const& frames) { return impl::count_at_least(space, frames, threshold); });
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
  int const k = int(keep.size());
  LocalData<T, ExecSpace> out;
  out.mask = data.mask;
  out.frame_ids = new_ids;
  out.global_frames = global_frames;
  out.positions =
      PositionView<T, Mem>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::LocalData::positions"), k);
  IndexView<Mem> idx(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::select_frames::keep"), k);
  auto h_idx = Kokkos::create_mirror_view(idx);
  for (int f = 0; f < k; ++f) {
    PTYKO_ASSERT(keep[f] >= 0 && keep[f] < data.local_frames(), "frame ", keep[f], " is not local");
    h_idx(f) = keep[f];
  }
  Kokkos::deep_copy(space, idx, h_idx);  // host -> device: kept frame indices, once
  data.frames.visit([&](auto const& src) { out.frames = FrameStack<Mem>(impl::gather_frames(space, src, idx)); });
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
