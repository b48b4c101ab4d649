#pragma once
// One view (one CXI file) of `ptyko reconstruct`, start to finish, on the
// ranks of a communicator: read and check the input, look at the frames,
// make or resume the state, run the epochs with their progress lines and
// checkpoints, write the result and its pictures.

#include "run_config.hpp"

#include <ptyko/parallel/communicator.hpp>

#include <string>

namespace ptyko::drivers {

struct ViewJob {
  std::string input, output;
  std::string resume;  ///< checkpoint to continue from ("" to start afresh)
  std::string label;   ///< prefix of the messages when several views run
  bool single = true;  ///< the only view: say here how to resume
};

/// Reconstructs one view on the ranks of `comm` in precision T (float or
/// double). Throws Exit after an agreed error or a stop (128 + signal),
/// having said so.
template <class T>
void run_view(parallel::Communicator const& comm, RunConfig const& cfg, ViewJob const& job);

}  // namespace ptyko::drivers
