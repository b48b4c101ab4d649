#include "host_threads.hpp"

#include <sched.h>

#include <algorithm>

namespace ptyko::impl {

int host_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int const cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  return std::clamp(cpus, 1, 16);
}

}  // namespace ptyko::impl
