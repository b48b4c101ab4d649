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
  void clear() { m_entries.clear(); }

 private:
  static double now() { return clock_seconds(); }  // the benchmarks' timer (wall or process CPU)
  static KernelProfiler*& instance() {
    static KernelProfiler* p = nullptr;
    return p;
  }

  // Time since the last event goes to the innermost open kernel/region,
  // once the device has finished what was launched meanwhile.
  void charge() {
    if constexpr (device_launches_v) Kokkos::fence();  // every instance (a labelled fence needs Kokkos 3.5)
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
    if (auto* p = instance()) p->open(name);
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

  std::map<std::string, Entry> m_entries;
  std::vector<std::string> m_stack;
  double m_last = 0;
};

}  // namespace ptyko::bench
