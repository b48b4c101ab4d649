#pragma once
// Counters of Kokkos events by label while installed, through Kokkos Tools
// callbacks (in-process; one counter of a kind at a time):
//  * AllocationCounter: View allocations. Tests use it to check that epochs
//    allocate nothing (issue 6: buffers and plans kept across batches, no
//    per-batch allocations).
//  * FenceCounter: the host's waits for the device (fences; reported from
//    Kokkos 3.5 on), but for those the tools add around their own
//    callbacks. Tests use it to check that an epoch on one device waits per
//    epoch, not per batch.
//  * PageableCopyCounter: copies from device memory into pageable host
//    memory, each of which makes the host wait for the device's queue
//    (cudaMemcpyAsync's documented behaviour), fenced or not.

#include <ptyko/kernels/frame_loop.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace ptyko::test {

/// Counts by label, shared by the counters below; Kind keeps each kind's
/// counts apart.
template <class Kind>
class LabelCounts {
 public:
  /// Events since the counter was installed, by label.
  static std::map<std::string, int>& counts() {
    static std::map<std::string, int> c;
    return c;
  }

  /// All events counted.
  static int total() {
    int n = 0;
    for (auto const& entry : counts()) n += entry.second;
    return n;
  }

  /// The counts as lines "  label x n", for a failure message.
  static std::string listed() {
    std::string out;
    for (auto const& [label, n] : counts()) out += "  " + label + " x " + std::to_string(n) + "\n";
    return out;
  }

 protected:
  LabelCounts() { counts().clear(); }
  static void count(char const* label) { ++counts()[label ? label : "(no label)"]; }
};

/// A LabelCounts whose callback is installed through `Set` (a Kokkos
/// Tools setter) while it lives.
template <class Kind, auto Set>
class InstalledCounter : public LabelCounts<Kind> {
 public:
  ~InstalledCounter() { Set(nullptr); }
  InstalledCounter(InstalledCounter const&) = delete;
  InstalledCounter& operator=(InstalledCounter const&) = delete;

 protected:
  template <class Callback>
  explicit InstalledCounter(Callback callback) {
    Set(callback);
  }
};

class AllocationCounter
    : public InstalledCounter<AllocationCounter, &Kokkos::Tools::Experimental::set_allocate_data_callback> {
 public:
  AllocationCounter() : InstalledCounter(&on_allocate) {}

 private:
  static void on_allocate(Kokkos::Profiling::SpaceHandle, char const* label, void const*, std::uint64_t) {
    count(label);
  }
};

class FenceCounter : public InstalledCounter<FenceCounter, &Kokkos::Tools::Experimental::set_begin_fence_callback> {
 public:
  FenceCounter() : InstalledCounter(&on_fence) {}

  /// The waits a GPU would make: all counted but the host FFT's own (the
  /// device forms on the host run FFTW, which waits for its inputs; a
  /// GPU's FFT is queued like any kernel).
  static int device_waits() {
    int n = 0;
    for (auto const& [label, k] : counts()) n += host_fft(label) ? 0 : k;
    return n;
  }
  /// Those waits as lines "  label x n", for a failure message.
  static std::string device_listed() {
    std::string out;
    for (auto const& [label, k] : counts())
      if (!host_fft(label)) out += "  " + label + " x " + std::to_string(k) + "\n";
    return out;
  }

 private:
  static bool host_fft(std::string const& label) { return label.find("FFT::fftw") != std::string::npos; }
  static void on_fence(char const* name, std::uint32_t, std::uint64_t* id) {
    *id = 0;
    if (name == nullptr || std::string(name).rfind("Kokkos::Tools::", 0) != 0) count(name);
  }
};

class PageableCopyCounter
    : public InstalledCounter<PageableCopyCounter, &Kokkos::Tools::Experimental::set_begin_deep_copy_callback> {
 public:
  PageableCopyCounter() : InstalledCounter(&on_copy) {}

 private:
  /// Memory only a device reads, by the names Kokkos gives its spaces.
  static bool device_only(std::string const& space) {
    return space == "Cuda" || space == "HIP" || space == "SYCLDeviceUSM" || space == "OpenACC" ||
           space == "OpenMPTargetSpace";
  }
  static void on_copy(Kokkos::Profiling::SpaceHandle dst, char const* dst_label, void const*,
                      Kokkos::Profiling::SpaceHandle src, char const* src_label, void const*, std::uint64_t) {
    if (std::string(dst.name) == "Host" && device_only(src.name))
      count((std::string(src_label ? src_label : "?") + " -> " + (dst_label ? dst_label : "?")).c_str());
  }
};

/// Why FenceCounter cannot count ExecSpace's waits in this build, or ""
/// when it can: a host space's kernels have finished when they return, and
/// Kokkos reports fences to tools from 3.5 on.
template <class ExecSpace>
std::string fences_uncountable() {
  if (is_host_space_v<ExecSpace>) return "a host space's kernels have finished when they return: nothing to wait for";
  if (KOKKOS_VERSION < 30500) return "Kokkos reports fences to tools from 3.5 on";
  return "";
}

}  // namespace ptyko::test
