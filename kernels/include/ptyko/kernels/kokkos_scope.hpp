#pragma once
// Kokkos up for the life of a scope, as every ptyko program starts it: the
// program's own command line plus the arguments ptyko adds to it.
//
// The one addition made here: Kokkos's Threads backend starts one host
// thread unless told otherwise, where an OpenMP build takes
// OMP_NUM_THREADS, else every CPU the process may run on. A Threads build
// gets that default too (OMP_NUM_THREADS, else the CPUs of the process's
// affinity mask) unless --kokkos-num-threads, --kokkos-threads or
// KOKKOS_NUM_THREADS chose. Callers add their own (a device id).

#include <Kokkos_Core.hpp>

#include <memory>
#include <string>
#include <vector>

namespace ptyko {

class KokkosScope {
 public:
  /// Starts Kokkos with `argv` (argc entries), `added` and the Threads
  /// default above; Kokkos takes its arguments out, and
  /// argc / argv are left with the others (none of those added), in order.
  KokkosScope(int& argc, char** argv, std::vector<std::string> added = {});
  KokkosScope(KokkosScope const&) = delete;
  KokkosScope& operator=(KokkosScope const&) = delete;

 private:
  std::unique_ptr<Kokkos::ScopeGuard> m_guard;
};

}  // namespace ptyko
