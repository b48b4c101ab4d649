#include <ptyko/core/frame_stats.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_loop.hpp>

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <type_traits>

namespace ptyko {

// Kernels over a FrameStack's View (uint16 or float), as named functions:
// nvcc allows no device lambda inside FrameStack::visit's generic lambda.
namespace impl {

/// out(f, 0) = sum of frame f, out(f, 1) = its largest pixel (at least 0;
/// the frames are finite, cxi_frames.cpp). Non-blocking. One frame per work item;
/// on host spaces its sum runs in span_chunk_v lanes and its maximum
/// through max_nonnegative for float frames: a single running sum or a
/// float `?:` keeps the loop scalar, one add per 4 cycles (0.37 s for
/// 10 000 frames of 128 x 128, docs/performance.md). Sums of uint16 counts
/// are exact in double in any order.
template <class ExecSpace, class Frames, class Out>
void frame_sum_max(ExecSpace const& space, Frames const& frames, Out const& out) {
  using V = typename Frames::non_const_value_type;
  std::size_t const pixels = frames.extent(1) * frames.extent(2);
  Kokkos::parallel_for(
      "ptyko::frame_stats::sum_max", Kokkos::RangePolicy<ExecSpace>(space, 0, int(frames.extent(0))),
      KOKKOS_LAMBDA(int f) {
        V const* p = &frames(f, 0, 0);
        std::size_t const n = pixels;  // nvcc: no first capture inside if constexpr
        constexpr int L = span_chunk_v<ExecSpace>;
        double lane[L];
        for (int l = 0; l < L; ++l) lane[l] = 0;
        std::size_t k = 0;
        for (; k + L <= n; k += L)
          for (int l = 0; l < L; ++l) lane[l] += double(p[k + l]);
        double sum = 0;
        for (int l = 0; l < L; ++l) sum += lane[l];
        for (; k < n; ++k) sum += double(p[k]);
        V max = 0;
        if constexpr (std::is_floating_point_v<V>) {
          max = max_nonnegative(p, 0, n, V(0));
        } else {
          for (std::size_t q = 0; q < n; ++q) max = p[q] > max ? p[q] : max;
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

/// Number of values that are not whole numbers (0 for integer frames,
/// without a pass). Blocking.
template <class ExecSpace, class Frames>
std::size_t count_fractional(ExecSpace const& space, Frames const& frames) {
  using V = typename Frames::non_const_value_type;
  std::size_t count = 0;
  if constexpr (std::is_floating_point_v<V>) {
    auto const* v = frames.data();
    Kokkos::parallel_reduce(
        "ptyko::frame_stats::count_fractional", Kokkos::RangePolicy<ExecSpace>(space, 0, frames.span()),
        KOKKOS_LAMBDA(std::size_t k, std::size_t & c) { c += math::floor(v[k]) != v[k] ? 1 : 0; }, count);
  }
  return count;
}

/// The smallest nonzero value of v mod `modulus` (of v itself for modulus
/// 0) over the values, whole numbers; 0 when there is none. Blocking.
template <class ExecSpace, class Frames>
double min_nonzero_remainder(ExecSpace const& space, Frames const& frames, double modulus) {
  using V = typename Frames::non_const_value_type;
  auto const* v = frames.data();
  Kokkos::RangePolicy<ExecSpace> const all(space, 0, frames.span());
  if (modulus <= 0) {  // the smallest nonzero value: a minimum in the values' type, without a division
    V const none = Kokkos::reduction_identity<V>::min();
    V smallest = none;
    Kokkos::parallel_reduce(
        "ptyko::frame_stats::min_nonzero", all,
        KOKKOS_LAMBDA(std::size_t k, V & m) {
          V const x = v[k] > V(0) ? v[k] : none;
          m = x < m ? x : m;
        },
        Kokkos::Min<V>(smallest));
    return smallest == none ? 0.0 : double(smallest);
  }
  double const none = Kokkos::reduction_identity<double>::min();
  double smallest = none;
  Kokkos::parallel_reduce(
      "ptyko::frame_stats::min_nonzero_remainder", all,
      KOKKOS_LAMBDA(std::size_t k, double& m) {
        double const x = double(v[k]);
        double const r = x - modulus * math::floor(x / modulus);  // exact for whole numbers
        m = r > 0 && r < m ? r : m;
      },
      Kokkos::Min<double>(smallest));
  return smallest == none ? 0.0 : smallest;
}

/// out(i, j) = Fold's fold of frames(f, i, j) over f, from Fold::init().
/// Non-blocking. Host spaces: one detector row per work item, frames in
/// order, so that each frame's row is read contiguously (a pixel per work
/// item read the frames 64 KiB apart); devices: one pixel per work item,
/// adjacent work items reading adjacent pixels.
template <class Fold, class ExecSpace, class Frames, class Out>
void pixel_fold(ExecSpace const& space, Frames const& frames, Out const& out, char const* label) {
  using Acc = typename Out::non_const_value_type;
  int const n = int(frames.extent(0)), D = int(frames.extent(1));
  if constexpr (is_host_space_v<ExecSpace>) {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, D), KOKKOS_LAMBDA(int i) {
      Acc* acc = &out(i, 0);
      for (int j = 0; j < D; ++j) acc[j] = Fold::init();
      for (int f = 0; f < n; ++f) {
        auto const* row = &frames(f, i, 0);
        for (int j = 0; j < D; ++j) acc[j] = Fold::apply(acc[j], row[j]);
      }
    });
  } else {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, D * D), KOKKOS_LAMBDA(int q) {
      int const i = q / D, j = q % D;
      Acc acc = Fold::init();
      for (int f = 0; f < n; ++f) acc = Fold::apply(acc, frames(f, i, j));
      out(i, j) = acc;
    });
  }
}

/// The largest value (at least 0).
struct LargestValue {
  KOKKOS_INLINE_FUNCTION static float init() { return 0.f; }
  template <class V>
  KOKKOS_INLINE_FUNCTION static float apply(float m, V v) {
    float const x = float(v);
    return x > m ? x : m;
  }
};

/// 1 once a value is NaN or infinite (x - x is 0 exactly for finite x).
struct AnyNonfinite {
  KOKKOS_INLINE_FUNCTION static std::uint8_t init() { return 0; }
  template <class V>
  KOKKOS_INLINE_FUNCTION static std::uint8_t apply(std::uint8_t bad, V v) {
    return std::uint8_t(bad | (v - v == 0 ? 0 : 1));
  }
};

/// frames(f, i, j) = 0 where measured(i, j) is 0. Non-blocking.
template <class ExecSpace, class Frames, class Mask>
void zero_masked(ExecSpace const& space, Frames const& frames, Mask const& measured) {
  using V = typename Frames::non_const_value_type;
  int const D = int(frames.extent(1));
  Kokkos::parallel_for(
      "ptyko::mask_pixels::frames", Kokkos::RangePolicy<ExecSpace>(space, 0, frames.span()),
      KOKKOS_LAMBDA(std::size_t q) {
        FrameIndex const at = frame_index(q, D);
        if (!measured(at.i, at.j)) frames(at.b, at.i, at.j) = V(0);
      });
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

template <class T, class ExecSpace>
std::size_t count_fractional_pixels(ExecSpace const& space, LocalData<T, ExecSpace> const& data) {
  return data.frames.visit([&](auto const& frames) { return impl::count_fractional(space, frames); });
}

template <class T, class ExecSpace>
double smallest_nonzero_remainder(ExecSpace const& space, LocalData<T, ExecSpace> const& data, double modulus) {
  return data.frames.visit([&](auto const& frames) { return impl::min_nonzero_remainder(space, frames, modulus); });
}

template <class T, class ExecSpace>
std::size_t count_measured_values(ExecSpace const& space, LocalData<T, ExecSpace> const& data) {
  std::size_t const frames = std::size_t(data.local_frames());
  auto const measured = data.mask;
  if (measured.extent(0) == 0) return frames * std::size_t(data.detector()) * std::size_t(data.detector());
  std::size_t pixels = 0;
  Kokkos::parallel_reduce(
      "ptyko::frame_stats::measured_pixels", Kokkos::RangePolicy<ExecSpace>(space, 0, measured.span()),
      KOKKOS_LAMBDA(std::size_t k, std::size_t & c) { c += measured.data()[k] != 0 ? 1 : 0; }, pixels);
  return frames * pixels;
}

double adu_per_photon_implied(ValueSurvey const& s, std::string* why) {
  auto say = [&](std::string const& text) {
    if (why) *why = text;
  };
  say("");
  if (!s.whole_numbers) return 0;
  if (s.nonzero_values < k_unit_evidence) return 1;  // too few values to tell: counts, as always
  if (s.unit_step > 1) {
    say(fmt::format("every value is a multiple of {:g}: taken as {:g} detector units per photon", s.unit_step,
                    s.unit_step));
    return s.unit_step;
  }
  double const measured = s.nonzero_values + s.zero_values;
  if (s.smallest_nonzero >= 5 && s.zero_values >= 0.01 * measured) {
    say(fmt::format("no value lies between 1 and {:g} while {:.3g} % are 0: detector units above a threshold, not "
                    "photon counts",
                    s.smallest_nonzero - 1, 100 * s.zero_values / measured));
    return 0;
  }
  return 1;
}

template <class T, class ExecSpace>
std::vector<float> pixel_maxima(ExecSpace const& space, LocalData<T, ExecSpace> const& data) {
  using Mem = typename ExecSpace::memory_space;
  int const D = data.detector();
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> out(Kokkos::view_alloc(space, "ptyko::pixel_maxima"), D, D);
  data.frames.visit(
      [&](auto const& frames) { impl::pixel_fold<impl::LargestValue>(space, frames, out, "ptyko::pixel_maxima"); });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);  // device -> host: D x D maxima
  return std::vector<float>(h.data(), h.data() + h.span());
}

template <class T, class ExecSpace>
std::vector<std::uint8_t> nonfinite_pixels(ExecSpace const& space, LocalData<T, ExecSpace> const& data) {
  using Mem = typename ExecSpace::memory_space;
  int const D = data.detector();
  if (data.frames.is_counts()) return std::vector<std::uint8_t>(std::size_t(D) * D, 0);
  Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, Mem> out(Kokkos::view_alloc(space, "ptyko::nonfinite_pixels"),
                                                              D, D);
  data.frames.visit(
      [&](auto const& frames) { impl::pixel_fold<impl::AnyNonfinite>(space, frames, out, "ptyko::nonfinite_pixels"); });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);  // device -> host: D x D flags
  return std::vector<std::uint8_t>(h.data(), h.data() + h.span());
}

template <class T, class ExecSpace>
void mask_pixels(ExecSpace const& space, LocalData<T, ExecSpace>& data, std::vector<std::uint8_t> const& bad) {
  using Mem = typename ExecSpace::memory_space;
  int const D = data.detector();
  PTYKO_ASSERT(bad.size() == std::size_t(D) * D, bad.size(), " flags for ", D, " x ", D, " pixels");
  if (data.mask.extent(0) == 0) {
    data.mask = MaskView<Mem>(Kokkos::view_alloc(space, "ptyko::LocalData::mask"), D, D);
    Kokkos::deep_copy(space, data.mask, std::uint8_t(1));
  }
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data.mask);  // device -> host: mask
  for (std::size_t k = 0; k < bad.size(); ++k)
    if (bad[k]) h.data()[k] = 0;
  Kokkos::deep_copy(space, data.mask, h);  // host -> device: the mask with `bad`
  auto const measured = data.mask;
  data.frames.visit([&](auto const& frames) { impl::zero_masked(space, frames, measured); });
  fence(space, "ptyko::mask_pixels");
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

bool is_integer_type(std::string const& t) { return t.rfind("int", 0) == 0 || t.rfind("uint", 0) == 0; }

template <class T, class ExecSpace>
LocalData<T, ExecSpace> select_frames(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                      std::vector<int> const& keep, std::vector<std::size_t> const& new_ids,
                                      std::size_t global_frames) {
  using Mem = typename ExecSpace::memory_space;
  PTYKO_ASSERT(keep.size() == new_ids.size(), keep.size(), " frames kept but ", new_ids.size(), " ids");
  int const k = int(keep.size());
  LocalData<T, ExecSpace> out = data;  // the tile origin and the mask as they are
  out.frame_ids = new_ids;
  out.global_frames = global_frames;
  out.adu_per_photon = data.adu_per_photon;
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
  template std::size_t count_fractional_pixels<T, Kokkos::DefaultExecutionSpace>(                             \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&);               \
  template double smallest_nonzero_remainder<T, Kokkos::DefaultExecutionSpace>(                              \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&, double);       \
  template std::size_t count_measured_values<T, Kokkos::DefaultExecutionSpace>(                               \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&);               \
  template std::vector<float> pixel_maxima<T, Kokkos::DefaultExecutionSpace>(                                 \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&);               \
  template std::vector<std::uint8_t> nonfinite_pixels<T, Kokkos::DefaultExecutionSpace>(                     \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&);               \
  template void mask_pixels<T, Kokkos::DefaultExecutionSpace>(Kokkos::DefaultExecutionSpace const&,            \
                                                              LocalData<T, Kokkos::DefaultExecutionSpace>&,    \
                                                              std::vector<std::uint8_t> const&);               \
  template LocalData<T, Kokkos::DefaultExecutionSpace> select_frames<T, Kokkos::DefaultExecutionSpace>(        \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&,                \
      std::vector<int> const&, std::vector<std::size_t> const&, std::size_t);
PTYKO_INSTANTIATE(float)
PTYKO_INSTANTIATE(double)
#undef PTYKO_INSTANTIATE

}  // namespace ptyko
