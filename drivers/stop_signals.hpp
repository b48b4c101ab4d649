#pragma once
// Stopping a run cleanly: SIGINT (Ctrl-C), SIGTERM (kill, batch systems)
// and SIGUSR1 (what Open MPI's mpiexec forwards to every rank: it answers
// SIGINT/SIGTERM by killing the ranks after one second) set a flag that the
// ranks compare after each epoch; a second signal of the same kind ends the
// program at once.

#include <memory>

namespace ptyko::drivers {

/// Installs the handlers for its lifetime (and restores the previous ones).
/// Only rank 0 says that it heard a signal.
class StopSignals {
 public:
  explicit StopSignals(int rank);
  ~StopSignals();
  StopSignals(StopSignals const&) = delete;
  StopSignals& operator=(StopSignals const&) = delete;

 private:
  struct Saved;  // the previous handlers
  std::unique_ptr<Saved> m_saved;
};

/// The first stop signal received since the handlers were installed, 0 if none.
int requested_stop();

/// "SIGINT", "SIGTERM", "SIGUSR1" or "a signal".
char const* signal_name(int signal);

}  // namespace ptyko::drivers
