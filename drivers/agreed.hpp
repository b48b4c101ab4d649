#pragma once
// Errors that one rank sees and every rank acts on: a problem in the input
// files or options found by one rank only (a frame with NaN that only it
// reads) stops every rank with one message and exit code 2, with no hang
// and no MPI_Abort.

#include "commands.hpp"

#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/communicator.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>

namespace ptyko::drivers {

/// Runs `f` on every rank of `comm`; when it throws on any rank, every rank
/// learns it (two small all-reduces), the lowest failing rank prints its
/// message, and every rank throws Exit (2: bad input, 1: internal error).
/// `f` must not call collectives: a rank that failed early would miss them.
template <class F>
void agreed(parallel::Communicator const& comm, F&& f) {
  using parallel::Datatype;
  using parallel::ReduceOp;
  int code = 0;
  std::string what;
  try {
    f();
  } catch (UserError const& e) {
    code = 2;
    what = e.what();
  } catch (Exit const&) {
    throw;
  } catch (std::exception const& e) {
    code = 1;
    what = std::string("internal: ") + e.what();
  }
  int worst = code;
  if (comm.size() > 1) comm.allreduce(&worst, 1, Datatype::int32, ReduceOp::max);
  if (worst == 0) return;
  int first = code ? comm.rank() : comm.size();
  if (comm.size() > 1) comm.allreduce(&first, 1, Datatype::int32, ReduceOp::min);
  if (comm.rank() == first) {
    fmt::print(stderr, "ptyko: error: {}\n", what);
    std::fflush(stderr);
  }
  throw Exit{worst};
}

}  // namespace ptyko::drivers
