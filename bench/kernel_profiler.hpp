#pragma once
// In-process per-kernel time breakdown through the Kokkos Tools callbacks
// (Kokkos::Tools::Experimental::set_*_callback, available since Kokkos 3.3):
// every parallel_for/reduce/scan, deep_copy and profiling region
// (ptyko::ScopedRegion, e.g. "ptyko::FFT::forward") is timed *exclusively*:
// time is charged to the innermost active kernel or region, so that a
// region's own time is the host work inside it that is not a Kokkos kernel
// (for the FFT regions: the FFT library itself). Time outside every kernel
// and region while the profiler is active is charged to "(host, outside kernels)".
// Times are of the benchmarks' timer (bench_support.hpp: wall or process CPU).
// Fences are counted by name (fences()): every one is a point where the host
// waits for the device, e.g. a parallel_reduce into a host scalar; on a GPU
// each costs a round trip (some microseconds) that no kernel tuning removes.
//
// Exact on host backends (kernels are synchronous). On a device backend a
// launch returns at once, so every event first fences the device: each
// kernel, region (the FFT library's transforms) and deep copy is charged
// its own device time, and the epoch runs serialised, a little slower than
// unprofiled.

#include "bench_support.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ptyko::bench {

class KernelProfiler {
 public:
  struct Entry {
    std::string name;
    double seconds = 0;
    std::uint64_t calls = 0;
  };

  /// Installs the callbacks; only one profiler may be active at a time.
  void start() {
    instance() = this;
    m_stack.clear();
    m_last = now();
    namespace E = Kokkos::Tools::Experimental;
    E::set_begin_parallel_for_callback(&on_begin_kernel);
    E::set_end_parallel_for_callback(&on_end_kernel);
    E::set_begin_parallel_reduce_callback(&on_begin_kernel);
    E::set_end_parallel_reduce_callback(&on_end_kernel);
    E::set_begin_parallel_scan_callback(&on_begin_kernel);
    E::set_end_parallel_scan_callback(&on_end_kernel);
    E::set_push_region_callback(&on_push_region);
    E::set_pop_region_callback(&on_pop_region);
    E::set_begin_deep_copy_callback(&on_begin_deep_copy);
    E::set_end_deep_copy_callback(&on_end_deep_copy);
    E::set_begin_fence_callback(&on_begin_fence);
  }

  /// Removes the callbacks; charges the time since the last event.
  void stop() {
    charge();
    namespace E = Kokkos::Tools::Experimental;
    E::set_begin_parallel_for_callback(nullptr);
    E::set_end_parallel_for_callback(nullptr);
    E::set_begin_parallel_reduce_callback(nullptr);
    E::set_end_parallel_reduce_callback(nullptr);
    E::set_begin_parallel_scan_callback(nullptr);
    E::set_end_parallel_scan_callback(nullptr);
    E::set_push_region_callback(nullptr);
    E::set_pop_region_callback(nullptr);
    E::set_begin_deep_copy_callback(nullptr);
    E::set_end_deep_copy_callback(nullptr);
    E::set_begin_fence_callback(nullptr);
    instance() = nullptr;
  }

  /// Entries sorted by decreasing exclusive time.
  std::vector<Entry> entries() const {
    std::vector<Entry> out;
    for (auto const& [name, e] : m_entries) out.push_back(e);
    std::sort(out.begin(), out.end(), [](Entry const& a, Entry const& b) { return a.seconds > b.seconds; });
    return out;
  }
  double total_seconds() const {
    double s = 0;
    for (auto const& [name, e] : m_entries) s += e.seconds;
    return s;
  }
  /// Fences seen while active, by name, sorted by decreasing count (the
  /// profiler's own fences on a device are not counted).
  std::vector<std::pair<std::string, std::uint64_t>> fences() const {
    std::vector<std::pair<std::string, std::uint64_t>> out(m_fences.begin(), m_fences.end());
    std::sort(out.begin(), out.end(), [](auto const& a, auto const& b) { return a.second > b.second; });
    return out;
  }
  std::uint64_t fence_count() const {
    std::uint64_t n = 0;
    for (auto const& [name, count] : m_fences) n += count;
    return n;
  }
  void clear() {
    m_entries.clear();
    m_fences.clear();
  }

 private:
  static double now() { return clock_seconds(); }  // the benchmarks' timer (wall or process CPU)
  static KernelProfiler*& instance() {
    static KernelProfiler* p = nullptr;
    return p;
  }

  // Time since the last event goes to the innermost open kernel/region,
  // once the device has finished what was launched meanwhile.
  void charge() {
    if constexpr (device_launches_v) {
      m_own_fence = true;
      Kokkos::fence();  // every instance (a labelled fence needs Kokkos 3.5)
      m_own_fence = false;
    }
    double const t = now();
    std::string const& who = m_stack.empty() ? outside() : m_stack.back();
    m_entries[who].name = who;
    m_entries[who].seconds += t - m_last;
    m_last = t;
  }
  void open(std::string name) {
    charge();
    auto& e = m_entries[name];
    e.name = name;
    ++e.calls;
    m_stack.push_back(std::move(name));
  }
  void close() {
    charge();
    if (!m_stack.empty()) m_stack.pop_back();
  }
  static std::string const& outside() {
    static std::string const s = "(host, outside kernels)";
    return s;
  }

  static void on_begin_kernel(char const* name, std::uint32_t, std::uint64_t* id) {
    *id = 0;
    if (auto* p = instance()) {
      p->m_last_kernel = name;
      p->open(name);
    }
  }
  static void on_end_kernel(std::uint64_t) {
    if (auto* p = instance()) p->close();
  }
  static void on_push_region(char const* name) {
    if (auto* p = instance()) p->open(std::string("[region] ") + name);
  }
  static void on_pop_region() {
    if (auto* p = instance()) p->close();
  }
  static void on_begin_deep_copy(Kokkos::Tools::SpaceHandle, char const* dst, void const*, Kokkos::Tools::SpaceHandle,
                                 char const* src, void const*, std::uint64_t) {
    if (auto* p = instance()) p->open(std::string("deep_copy ") + src + " -> " + dst);
  }
  static void on_end_deep_copy() {
    if (auto* p = instance()) p->close();
  }
  static void on_begin_fence(char const* name, std::uint32_t, std::uint64_t* id) {
    *id = 0;
    auto* p = instance();
    if (p == nullptr || p->m_own_fence) return;
    std::string what = name != nullptr ? name : "(unnamed)";
    // Kokkos's own fences around tool callbacks exist only while profiling.
    if (what.rfind("Kokkos::Tools::", 0) == 0) return;
    // A reduction's fence is named after the kind only: name the kernel.
    if (!p->m_last_kernel.empty() && what.rfind("Kokkos::parallel_", 0) == 0) what += " (" + p->m_last_kernel + ")";
    ++p->m_fences[what];
  }

  std::map<std::string, Entry> m_entries;
  std::map<std::string, std::uint64_t> m_fences;
  bool m_own_fence = false;
  std::string m_last_kernel;  ///< the kernel begun last (names a reduction's fence)
  std::vector<std::string> m_stack;
  double m_last = 0;
};

}  // namespace ptyko::bench
