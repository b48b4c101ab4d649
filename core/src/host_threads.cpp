#include "host_threads.hpp"

#include <ptyko/kernels/cpu_affinity.hpp>

#include <algorithm>

namespace ptyko::impl {

int host_threads() { return std::min(affinity_cpu_count(), 16); }

}  // namespace ptyko::impl
