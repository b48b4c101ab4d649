#pragma once
// How many CPUs this process may run on: its affinity mask (one core under
// a binding mpiexec, the cgroup's CPUs in a container), for the host
// threads ptyko starts itself (Kokkos's Threads backend, the HDF5 filter
// threads).

#include <sched.h>

#include <algorithm>

namespace ptyko {

/// CPUs in this process's affinity mask, at least 1 (1 when unknown).
inline int affinity_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace ptyko
