#pragma once
// Process start-up for ptyko programs: MPI first (MPI_Init_thread with
// MPI_THREAD_FUNNELED: only the main thread calls MPI), then Kokkos, with one
// GPU per rank chosen by the node-local rank (MPI_Comm_split_type shared)
// and a Threads build's default threads (kernels/kokkos_scope.hpp), and
// tear-down in reverse order. Programs that are not MPI-launched still work:
// MPI runs them as a singleton. It also checks that a node's ranks do not
// share CPUs their threads would take turns on (cpu_warning).

#include <memory>
#include <string>

namespace ptyko {
class KokkosScope;
}

namespace ptyko::parallel {

class Environment {
 public:
  /// Initialises MPI and Kokkos. Kokkos' own --kokkos-* arguments are removed
  /// from argc/argv, so a command-line parser sees only ptyko's.
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(Environment const&) = delete;
  Environment& operator=(Environment const&) = delete;

  int rank() const { return m_rank; }          ///< rank in MPI_COMM_WORLD
  int size() const { return m_size; }          ///< ranks in MPI_COMM_WORLD
  int local_rank() const { return m_local; }   ///< rank among this node's ranks
  int local_size() const { return m_local_size; }
  /// Device this rank uses (-1 on host-only builds).
  int device_id() const { return m_device; }
  /// On rank 0: one line when the ranks of a node run more threads than
  /// the CPUs they are bound to, while the node has more (they would take
  /// turns, e.g. every rank pinned to CPU 0); the first such node's.
  /// Empty otherwise and on other ranks.
  std::string const& cpu_warning() const { return m_cpu_warning; }

  /// Ends every rank with `code` (MPI_Abort): a failing rank must not leave
  /// the others waiting in a collective.
  [[noreturn]] static void abort_all(int code);

 private:
  int m_rank = 0, m_size = 1, m_local = 0, m_local_size = 1, m_device = -1;
  bool m_finalize_mpi = false;
  std::string m_cpu_warning;
  std::unique_ptr<KokkosScope> m_kokkos;
};

}  // namespace ptyko::parallel
