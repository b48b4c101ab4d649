#include "host_threads.hpp"

#include <ptyko/core/dataset.hpp>
#include <ptyko/core/frame_stats.hpp>
#include <ptyko/core/fftshift.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/huge_pages.hpp>
#include <ptyko/kernels/patch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>

namespace ptyko {

ScanLayout read_scan_layout(std::string const& path, LoadOptions const& options) {
  ScanLayout layout;
  layout.info = cxi_inspect(path, options.crop);  // square frames (or a square crop of them)
  if (!options.mask.spec.empty()) cxi_add_mask_file(layout.info, options.mask);
  if (!options.clip_negative) cxi_mask_marked_pixels(layout.info);
  if (!options.use_dark) layout.info.has_dark = false;
  if (!options.use_monitor) layout.info.monitor_scale.clear();
  cxi_override_geometry(layout.info, options.geometry);
  layout.geometry = layout.info.geometry();
  auto positions_m = probe_positions_from_translations(cxi_read_translations(layout.info), options.convention);
  PTYKO_REQUIRE(positions_m.size() == layout.info.frames, path, ": ", positions_m.size(),
                " translations for ", layout.info.frames, " frames: the counts must match");
  layout.unplaced = stand_in_missing_positions(positions_m, path + ": " + layout.info.translation_path);
  try {
    layout.grid = make_object_grid(positions_except(positions_m, layout.unplaced), layout.geometry, options.margin);
  } catch (UserError const& e) {
    // Name the file and the dataset the positions came from.
    PTYKO_FAIL(path, ": ", layout.info.translation_path, ": ", e.what());
  }
  layout.positions_px.reserve(positions_m.size());
  for (auto const& p : positions_m) layout.positions_px.push_back(layout.grid.to_pixels(p));
  return layout;
}

namespace impl {

/// True when every value of the n frames is an integer in [0, 65535]: they
/// are then held exactly as uint16 counts.
/// Branch-free, so that the loop vectorises: each value is clamped into
/// [0, 65535] (where the integer conversion is defined) and must equal its
/// clamp and the clamp's integer part. (A NaN or infinity never does: frames
/// with one are floats until load_local_data masks it.)
bool fit_counts(HostFrames const& frames, std::size_t n) {
  float const* v = frames.data();
  std::size_t const total = n * frames.extent(1) * frames.extent(2);
  int misfits = 0;
  for (std::size_t k = 0; k < total; ++k) {
    float const c = std::min(std::max(v[k], 0.f), 65535.f);
    misfits |= int(c != v[k]) | int(c != float(int(c)));
  }
  return misfits == 0;
}

/// Host memory of a stack's element type (a chunk of it staged for a device).
template <class Stack>
using HostStaging = Kokkos::View<typename Stack::non_const_value_type***, Kokkos::LayoutRight, Kokkos::HostSpace>;

/// An uninitialised (n, D, D) stack of frames. Its first touch is
/// load_frames' un-shift: in host memory, huge pages spare a page fault per
/// 4 KiB of frames (docs/performance.md, item 62).
template <class Stack, class ExecSpace>
Stack frame_stack(ExecSpace const& space, std::size_t n, int D) {
  Stack v(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::LocalData::frames"), n, D, D);
  advise_huge_pages(v);
  return v;
}

/// Reads frames `ids` and un-shifts them into a FrameStack in `space`'s
/// memory: uint16 counts while every chunk holds counts, float32 from the
/// first chunk that does not (the frames read so far are then widened once),
/// or float32 throughout with `as_float`. `data` gets the frames read as
/// zeros for holding no intensity in most pixels and the negative values
/// read as 0 (FrameReadBuffer).
/// Chunks of frames keep the peak at the rank's frames plus one chunk: on
/// host spaces they go straight into the stack, on devices through a
/// chunk-sized host buffer.
template <class T, class ExecSpace>
FrameStack<typename ExecSpace::memory_space> load_frames(ExecSpace const& space, CxiInfo const& info,
                                                         std::vector<std::size_t> const& ids, bool as_float,
                                                         LocalData<T, ExecSpace>& data) {
  using Mem = typename ExecSpace::memory_space;
  using Stack = FrameStack<Mem>;
  int const D = info.ny;
  std::size_t const n = ids.size();
  constexpr std::size_t chunk = 512;  // 32 MiB of 128 x 128 frames as float
  typename Stack::Counts counts;
  typename Stack::Floats floats;
  bool wide = as_float;  // float32 from here on
  if (wide)
    floats = frame_stack<typename Stack::Floats>(space, n, D);
  else
    counts = frame_stack<typename Stack::Counts>(space, n, D);
  constexpr bool host_frames = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
  FrameReadBuffer read;  // one chunk's frames as read, reused by every chunk
  // Devices: the host chunk copied to them, one per element type, reused.
  std::tuple<HostStaging<typename Stack::Counts>, HostStaging<typename Stack::Floats>> staging;
  for (std::size_t first = 0; first < n; first += chunk) {
    std::size_t const count = std::min(chunk, n - first);
    std::vector<std::size_t> const part(ids.begin() + first, ids.begin() + first + count);
    HostFrames centred = cxi_read_frames(info, part, read);
    data.invalid_frames.insert(data.invalid_frames.end(), read.invalid_frames.begin(), read.invalid_frames.end());
    data.negative_values += read.negative_values;
    data.most_negative = std::min(data.most_negative, read.most_negative);
    if (!wide && !fit_counts(centred, count)) {
      wide = true;
      // Not counts: widen the frames read so far (device -> device, once).
      floats = frame_stack<typename Stack::Floats>(space, n, D);
      auto done = Kokkos::subview(counts, std::make_pair(std::size_t(0), first), Kokkos::ALL, Kokkos::ALL);
      auto to = floats;
      Kokkos::parallel_for(
          "ptyko::load_frames::widen", Kokkos::RangePolicy<ExecSpace>(space, 0, done.span()),
          KOKKOS_LAMBDA(std::size_t k) { to.data()[k] = float(done.data()[k]); });
      fence(space, "ptyko::load_frames::widen");
      counts = typename Stack::Counts();
    }
    // Un-shift into the stack's rows (host spaces) or a host chunk that is
    // then copied to the device.
    auto put = [&](auto const& stack) {
      using HostChunk = HostStaging<std::decay_t<decltype(stack)>>;
      HostChunk target;
      if constexpr (host_frames) {
        target = HostChunk(stack.data() + first * std::size_t(D) * D, count, D, D);
      } else {
        auto& room = std::get<HostChunk>(staging);
        if (room.data() == nullptr)
          room = HostChunk(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::load_frames::staging"),
                           std::min(chunk, n), D, D);
        target = HostChunk(room.data(), count, D, D);
      }
      // On the process's CPUs: the stack's first touch (the kernel zeroes
      // each new huge page: about half a second for 10 000 frames of 128 x
      // 128 on one core) is spread with the shifts.
      constexpr std::size_t block = 16;
      impl::on_threads((count + block - 1) / block, impl::host_threads(), [&] {
        return [&](std::size_t b) {
          for (std::size_t f = b * block; f < std::min(count, (b + 1) * block); ++f)
            ifftshift2(&centred(f, 0, 0), &target(f, 0, 0), D, D);
        };
      });
      if constexpr (!host_frames) {
        // host -> device: one chunk of this rank's frames
        Kokkos::deep_copy(space, Kokkos::subview(stack, std::make_pair(first, first + count), Kokkos::ALL, Kokkos::ALL),
                          target);
        fence(space, "ptyko::load_frames::chunk");  // before the next chunk overwrites the host buffer
      }
    };
    if (wide)
      put(floats);
    else
      put(counts);
  }
  return wide ? Stack(floats) : Stack(counts);
}

}  // namespace impl

template <class T, class ExecSpace>
LocalData<T, ExecSpace> load_local_data(ExecSpace const& space, ScanLayout const& layout,
                                        std::vector<std::size_t> const& ids, int tile_y, int tile_x,
                                        int tile_height, int tile_width, LoadOptions const& options) {
  using Mem = typename ExecSpace::memory_space;
  int const D = layout.info.ny;
  std::size_t const n = ids.size();
  // Memory check before allocating: frames on the host, then on the device.
  std::size_t const bytes = n * std::size_t(D) * D * sizeof(float);
  long const pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) {
    PTYKO_REQUIRE(bytes < std::size_t(pages) * std::size_t(page) / 2, layout.info.path, ": ", n,
                  " frames of ", D, " x ", D, " need ", bytes >> 20,
                  " MiB, more than half of this machine's memory: use more MPI ranks (or nodes)");
  }

  LocalData<T, ExecSpace> data;
  data.global_frames = layout.info.frames;
  data.frame_ids = ids;
  data.tile_y = tile_y;
  data.tile_x = tile_x;
  data.frames = impl::load_frames(space, layout.info, ids, options.float_frames, data);
  HostMask mask = cxi_read_mask(layout.info);
  bool all_measured = true;
  for (std::size_t k = 0; k < mask.span(); ++k) all_measured = all_measured && mask.data()[k];
  if (!all_measured) {
    data.mask = MaskView<Mem>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::LocalData::mask"), D, D);
    auto h = Kokkos::create_mirror_view(data.mask);
    ifftshift2(mask.data(), h.data(), D, D);
    Kokkos::deep_copy(space, data.mask, h);  // host -> device: detector mask
  }
  // Measured pixels that hold NaN or infinity in some frame (cxi_frames.cpp
  // keeps them) are not measurements: masked in every frame.
  std::vector<std::uint8_t> nonfinite = nonfinite_pixels(space, data);
  if (std::find(nonfinite.begin(), nonfinite.end(), std::uint8_t(1)) != nonfinite.end()) {
    mask_pixels(space, data, nonfinite);
    data.nonfinite_pixels = std::move(nonfinite);
  }

  data.positions = PositionView<T, Mem>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::LocalData::positions"), n);
  auto h_pos = Kokkos::create_mirror_view(data.positions);
  for (std::size_t f = 0; f < n; ++f) {
    PTYKO_REQUIRE(ids[f] < layout.positions_px.size(), "frame ", ids[f], " is not in ", layout.info.path);
    h_pos(f, 0) = T(layout.positions_px[ids[f]][0] - tile_y);
    h_pos(f, 1) = T(layout.positions_px[ids[f]][1] - tile_x);
  }
  auto h_pos_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h_pos);
  PTYKO_ASSERT(patches_inside(h_pos_host, D, tile_height, tile_width), "a patch leaves the ",
               tile_height, " x ", tile_width, " object tile at (", tile_y, ", ", tile_x, ")");
  Kokkos::deep_copy(space, data.positions, h_pos);  // host -> device: probe positions
  fence(space, "ptyko::load_local_data");
  return data;
}

template LocalData<float, Kokkos::DefaultExecutionSpace> load_local_data<float, Kokkos::DefaultExecutionSpace>(
    Kokkos::DefaultExecutionSpace const&, ScanLayout const&, std::vector<std::size_t> const&, int, int, int, int,
    LoadOptions const&);
template LocalData<double, Kokkos::DefaultExecutionSpace> load_local_data<double, Kokkos::DefaultExecutionSpace>(
    Kokkos::DefaultExecutionSpace const&, ScanLayout const&, std::vector<std::size_t> const&, int, int, int, int,
    LoadOptions const&);

}  // namespace ptyko
