#include "cpu_binding.hpp"

#include <ptyko/kernels/compat.hpp>

#include <Kokkos_Core.hpp>

#include <sched.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace ptyko::parallel::impl {

std::vector<int> thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::vector<int> host_thread_cpus() {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  // Several items per thread, so that every thread of the pool takes some
  // whatever the policy's partition; each records its own CPUs.
  int const items = 16 * std::max(1, int(Exec().concurrency()));
  std::vector<std::vector<int>> seen(static_cast<std::size_t>(items));
  Kokkos::parallel_for(
      "ptyko::host_thread_cpus", Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Static>>(0, items),
      [&](int i) { seen[std::size_t(i)] = thread_cpus(); });
  fence(Exec(), "ptyko::host_thread_cpus");
  std::set<int> all;
  for (auto const& s : seen) all.insert(s.begin(), s.end());
  return {all.begin(), all.end()};
}

std::string cpu_list(std::vector<int> const& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]);
    if (j > i) out += (j == i + 1 ? "," : "-") + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string shared_cpus_warning(std::string const& node, std::vector<std::vector<int>> const& cpus,
                                std::vector<int> const& threads, int online) {
  std::set<int> used;
  for (auto const& c : cpus) used.insert(c.begin(), c.end());
  int const ranks = int(threads.size());
  int const total = std::accumulate(threads.begin(), threads.end(), 0);
  int const n = int(used.size());
  if (n == 0 || total <= n || n >= online) return {};
  bool const one = ranks == 1;
  return std::to_string(ranks) + (one ? " rank on node " : " ranks on node ") + node + (one ? " runs " : " run ") +
         std::to_string(total) + " threads on " + std::to_string(n) + " of its " + std::to_string(online) +
         " CPUs (" + cpu_list({used.begin(), used.end()}) +
         "), which take turns: give each rank cores of its own (mpiexec --bind-to core, or --map-by "
         "ppr:N:socket:PE=T with OMP_NUM_THREADS=T) or launch unbound (mpiexec --bind-to none, OMP_PROC_BIND "
         "and OMP_PLACES unset)";
}

}  // namespace ptyko::parallel::impl
