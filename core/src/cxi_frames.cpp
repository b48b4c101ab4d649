// A CXI file's frames as ptyko uses them: the window read, bad pixels
// zeroed (the file's mask and a --mask file's), checked, the dark frame
// subtracted, scaled by the monitor, binned and turned into the default
// orientation.
#include "cxi_datasets.hpp"

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/detector_orientation.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/huge_pages.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ptyko {

using namespace impl;  // the datasets' names and shared checks (cxi_datasets.hpp)

namespace {

// Sums bin x bin blocks of each of the n (ny bin) x (nx bin) images in
// `fine` into (ny, nx) images in `coarse`.
template <class T, class Out>
void bin_images(T const* fine, std::size_t n, int ny, int nx, int bin, Out* coarse) {
  std::size_t const fine_nx = std::size_t(nx) * bin;
  for (std::size_t k = 0; k < n; ++k) {
    T const* f = fine + k * std::size_t(ny) * bin * fine_nx;
    Out* c = coarse + k * std::size_t(ny) * nx;
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        Out sum = 0;
        for (int i = 0; i < bin; ++i)
          for (int j = 0; j < bin; ++j) sum += Out(f[(std::size_t(y) * bin + i) * fine_nx + std::size_t(x) * bin + j]);
        c[std::size_t(y) * nx + x] = sum;
      }
  }
}

// Index in a stored (stored_ny x stored_nx) detector array of the window's
// pixel (y, x).
std::size_t stored_pixel(CxiInfo const& info, int y, int x) {
  return std::size_t(info.window_y + y) * std::size_t(info.stored_nx) + std::size_t(info.window_x + x);
}

// Clears the measured flag of the window's pixels that the mask `path` of
// `f` marks bad (nonzero; zero when `invert`).
void apply_mask_dataset(h5::File const& f, std::string const& path, CxiInfo const& info, bool invert,
                        HostMask const& mask) {
  // Read as double: exact for every integer a mask holds, keeps negative
  // values of signed masks nonzero, and NaN in a float mask counts as bad.
  // A small (detector-sized) array: read whole, then the crop window kept.
  auto const v = h5::read<double>(f, path);
  for (int y = 0; y < int(mask.extent(0)); ++y)
    for (int x = 0; x < int(mask.extent(1)); ++x) {
      double const m = v[stored_pixel(info, y, x)];
      if ((m != 0) != invert) mask(y, x) = 0;
    }
}

}  // namespace

HostMask impl::read_window_mask(h5::File const& f, CxiInfo const& info) {
  int const wy = info.ny * info.bin, wx = info.nx * info.bin;
  HostMask mask(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ptyko::cxi::mask")), wy, wx);
  Kokkos::deep_copy(mask, std::uint8_t(1));
  if (h5::exists(f, k_mask)) {
    check_mask_dataset(f, k_mask, info, "mask");
    apply_mask_dataset(f, k_mask, info, false, mask);
  }
  if (!info.mask_file.empty()) {
    auto const m = h5::File::open_read(info.mask_file);
    apply_mask_dataset(m, info.mask_dataset, info, info.mask_invert, mask);
  }
  for (std::size_t p : info.marked_pixels) {
    long const y = long(p / std::size_t(info.stored_nx)) - info.window_y;
    long const x = long(p % std::size_t(info.stored_nx)) - info.window_x;
    if (y >= 0 && y < long(mask.extent(0)) && x >= 0 && x < long(mask.extent(1))) mask(y, x) = 0;
  }
  return mask;
}

namespace {

// frames -= the window of the dark frame, at least 0, on measured pixels
// (the others are 0 already). Where the dark frame is NaN or infinite the
// frames become NaN (std::max keeps a NaN first argument), and loading masks
// the pixel as it masks NaN in the frames.
void subtract_dark(h5::File const& f, CxiInfo const& info, HostMask const& window_mask, HostFrames const& frames) {
  auto const v = h5::read<double>(f, info.dark_path);
  int const wy = int(frames.extent(1)), wx = int(frames.extent(2));
  std::vector<float> dark(std::size_t(wy) * wx);
  float const nan = std::numeric_limits<float>::quiet_NaN();
  for (int y = 0; y < wy; ++y)
    for (int x = 0; x < wx; ++x) {
      double const d = v[stored_pixel(info, y, x)];
      dark[std::size_t(y) * wx + x] = !window_mask(y, x) ? 0.f : std::isfinite(d) ? float(d) : nan;
    }
  std::size_t const pixels = dark.size();
  for (std::size_t k = 0; k < frames.extent(0); ++k) {
    float* frame = frames.data() + k * pixels;
    for (std::size_t p = 0; p < pixels; ++p) frame[p] = std::max(frame[p] - dark[p], 0.f);
  }
}

// The binned mask of a window mask: a binned pixel is measured when all of
// its stored pixels are (a sum with a bad pixel in it is no measurement).
HostMask bin_mask(HostMask const& fine, CxiInfo const& info) {
  if (info.bin == 1) return fine;
  HostMask mask(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ptyko::cxi::mask")), info.ny, info.nx);
  std::vector<int> bad(std::size_t(info.ny) * info.nx);
  std::vector<int> fine_bad(fine.span());
  for (std::size_t k = 0; k < fine.span(); ++k) fine_bad[k] = fine.data()[k] == 0;
  bin_images(fine_bad.data(), 1, info.ny, info.nx, info.bin, bad.data());
  for (std::size_t k = 0; k < bad.size(); ++k) mask.data()[k] = bad[k] == 0 ? 1 : 0;
  return mask;
}

// The mask of the frames as read (cropped, binned, in the default orientation).
HostMask read_mask(h5::File const& f, CxiInfo const& info) {
  HostMask mask = bin_mask(read_window_mask(f, info), info);
  orient_images(mask.data(), 1, info.ny, info.orientation);
  return mask;
}

/// An (n, ny, nx) View over `buffer`'s memory, which grows (uninitialised,
/// on huge pages where it holds whole ones) when it has less room.
HostFrames frames_in(HostFrames& buffer, std::size_t n, int ny, int nx) {
  std::size_t const need = n * std::size_t(ny) * std::size_t(nx);
  if (buffer.data() == nullptr || buffer.span() < need) {
    buffer = HostFrames();  // the old room goes before the new one comes
    buffer = HostFrames(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ptyko::cxi::frames")), n, ny, nx);
    advise_huge_pages(buffer);
  }
  return HostFrames(buffer.data(), n, ny, nx);
}

}  // namespace

HostFrames cxi_read_frames(CxiInfo const& info, std::vector<std::size_t> const& indices) {
  FrameReadBuffer own;  // made to measure: its View is the frames, and keeps their memory
  cxi_read_frames(info, indices, own);
  return info.bin == 1 ? own.stored : own.binned;
}

HostFrames cxi_read_frames(CxiInfo const& info, std::vector<std::size_t> const& indices, FrameReadBuffer& buffer) {
  PTYKO_ASSERT(!info.data_path.empty(), "cxi_read_frames needs a CxiInfo from cxi_inspect");
  for (std::size_t k = 0; k < indices.size(); ++k) {
    PTYKO_REQUIRE(indices[k] < info.frames, info.path, ": frame index ", indices[k],
                  " is out of range: the file has ", info.frames, " frames (0 to ", info.frames - 1, ")");
  }
  auto f = h5::File::open_read(info.path);
  auto const dims = stack_shape(h5::shape(f, info.data_path));
  PTYKO_REQUIRE(dims.size() == 3 && dims[0] == info.frames && dims[1] == std::size_t(info.stored_ny) &&
                    dims[2] == std::size_t(info.stored_nx),
                info.path, ": ", info.data_path, " is now ", shape_string(dims),
                ": the file changed since it was inspected");
  // The window's stored pixels, read as they are, checked, then binned.
  int const wy = info.ny * info.bin, wx = info.nx * info.bin;
  std::size_t const pixels = std::size_t(wy) * std::size_t(wx);
  h5::check_fits_in_memory(f, info.data_path, double(indices.size()) * double(pixels) * sizeof(float),
                           "read fewer frames per process (run on more MPI ranks or nodes)");
  HostFrames frames = frames_in(buffer.stored, indices.size(), wy, wx);
  h5::RowWindow window;  // the whole frames unless cropped (then only the window is read)
  if (info.windowed())
    window = {std::size_t(info.window_y), std::size_t(info.window_x), std::size_t(wy), std::size_t(wx)};
  h5::read_rows(f, info.data_path, indices, frames.data(), window);

  // Bad pixels often hold NaN, -1 or the type's maximum: they are zeroed
  // (so that no NaN reaches the solvers, where NaN * 0 is still NaN) and
  // not checked; so are a detector's marks (cxi_mask_marked_pixels). NaN or
  // infinite values at measured pixels are kept: the dark, monitor, binning
  // and orientation carry them to the pixel they land on, which
  // load_local_data then masks (module gaps that a program filled with NaN
  // without writing a mask). Negative values elsewhere are the noise of a
  // subtracted background: read as 0, and counted.
  HostMask const mask = read_window_mask(f, info);
  auto const* measured = mask.data();
  float const largest = std::numeric_limits<float>::max();
  std::size_t const measured_pixels =
      std::size_t(std::count_if(measured, measured + pixels, [](auto m) { return m != 0; }));
  buffer.invalid_frames.clear();
  buffer.negative_values = 0;
  buffer.most_negative = 0;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    float* frame = frames.data() + k * pixels;
    // The common frame, every measured value an ordinary intensity, in two
    // branch-free passes that vectorise (a branch per value kept the check
    // scalar); any other frame takes the loop below.
    int unusual = 0;
    for (std::size_t p = 0; p < pixels; ++p) {
      float const v = frame[p];
      unusual |= int(measured[p] != 0) & (int(!(v >= 0.f)) | int(!(v <= largest)));
    }
    if (unusual == 0) {
      for (std::size_t p = 0; p < pixels; ++p) frame[p] = measured[p] != 0 ? frame[p] : 0.f;
      continue;
    }
    std::size_t nonfinite = 0, negative = 0, positive = 0;
    for (std::size_t p = 0; p < pixels; ++p) {
      float& v = frame[p];
      if (measured[p] == 0) {
        v = 0;
      } else if (v >= 0 && v <= largest) {  // an ordinary value beside the unusual ones
        positive += v > 0;
      } else if (v < 0 && v >= -largest) {
        ++negative;
        buffer.most_negative = std::min(buffer.most_negative, v);
        v = 0;
      } else {  // NaN or infinity: masked later
        ++nonfinite;
      }
    }
    buffer.negative_values += negative;
    // A frame without an intensity in most pixels (a failed readout: NaN,
    // or negative values and no counts) is no measurement: zeroed, it is
    // skipped as frames without counts are, instead of its pixels being
    // masked in every frame.
    if (2 * nonfinite > measured_pixels || (positive == 0 && 2 * (negative + nonfinite) > measured_pixels)) {
      std::fill(frame, frame + pixels, 0.f);
      buffer.invalid_frames.push_back(indices[k]);
    }
  }
  if (info.has_dark) subtract_dark(f, info, mask, frames);
  if (!info.monitor_scale.empty())
    for (std::size_t k = 0; k < indices.size(); ++k) {
      float const s = float(info.monitor_scale[indices[k]]);
      float* frame = frames.data() + k * pixels;
      for (std::size_t p = 0; p < pixels; ++p) frame[p] *= s;
    }
  if (info.bin == 1) {
    orient_images(frames.data(), indices.size(), info.ny, info.orientation);
    return frames;
  }
  HostFrames binned = frames_in(buffer.binned, indices.size(), info.ny, info.nx);
  bin_images(frames.data(), indices.size(), info.ny, info.nx, info.bin, binned.data());
  // A binned pixel with a bad stored pixel is bad (read_mask): zero, like every bad pixel.
  HostMask const coarse = bin_mask(mask, info);
  for (std::size_t k = 0; k < indices.size(); ++k)
    for (std::size_t p = 0; p < coarse.span(); ++p)
      if (coarse.data()[p] == 0) binned.data()[k * coarse.span() + p] = 0;
  orient_images(binned.data(), indices.size(), info.ny, info.orientation);
  return binned;
}

HostMask cxi_read_mask(CxiInfo const& info) {
  auto f = h5::File::open_read(info.path);
  return read_mask(f, info);
}
}  // namespace ptyko
