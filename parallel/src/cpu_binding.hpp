#pragma once
// Which CPUs a node's ranks run their threads on, and a warning when they
// share fewer CPUs than they have threads while the node has more: e.g.
// `OMP_PROC_BIND=spread` with `mpiexec --bind-to none` pins every rank's
// first thread to CPU 0, and two ranks of the 400-frame rPIE epoch then
// took 13 times longer than one (docs/usage.md, section 8).

#include <string>
#include <vector>

namespace ptyko::parallel::impl {

/// The CPUs the calling thread may run on (ascending; empty if unknown).
std::vector<int> thread_cpus();

/// The CPUs any thread of Kokkos' default host execution space may run on
/// (the union over its threads; ascending).
std::vector<int> host_thread_cpus();

/// "0-3,8" for {0, 1, 2, 3, 8} (ascending ids).
std::string cpu_list(std::vector<int> const& cpus);

/// One node's ranks: rank r's threads (threads[r]) may run on cpus[r].
/// Returns a one-line warning when they have more threads than the CPUs
/// they may use together while the node has more CPUs online (`online`),
/// so that threads take turns on some CPUs while others stay idle; empty
/// otherwise (also when every CPU is used anyway: a deliberate
/// oversubscription).
std::string shared_cpus_warning(std::string const& node, std::vector<std::vector<int>> const& cpus,
                                std::vector<int> const& threads, int online);

}  // namespace ptyko::parallel::impl
