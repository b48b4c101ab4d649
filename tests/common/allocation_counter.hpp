#pragma once
// Counts Kokkos View allocations by label while installed, through the
// Kokkos Tools allocate_data callback (in-process; one counter at a time).
// Tests use it to check that epochs allocate nothing (issue 6: buffers and
// plans kept across batches, no per-batch allocations).

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace ptyko::test {

class AllocationCounter {
 public:
  AllocationCounter() {
    counts().clear();
    Kokkos::Tools::Experimental::set_allocate_data_callback(&on_allocate);
  }
  ~AllocationCounter() { Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr); }
  AllocationCounter(AllocationCounter const&) = delete;
  AllocationCounter& operator=(AllocationCounter const&) = delete;

  /// Allocations since the counter was installed, by View label.
  static std::map<std::string, int>& counts() {
    static std::map<std::string, int> c;
    return c;
  }

  /// The counts as lines "  label x n", for a failure message.
  static std::string listed() {
    std::string out;
    for (auto const& [label, n] : counts()) out += "  " + label + " x " + std::to_string(n) + "\n";
    return out;
  }

 private:
  static void on_allocate(Kokkos::Profiling::SpaceHandle, char const* label, void const*, std::uint64_t) {
    ++counts()[label ? label : "(no label)"];
  }
};

}  // namespace ptyko::test
