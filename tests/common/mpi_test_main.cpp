// GoogleTest main for tests run under mpiexec: MPI and Kokkos up (through
// ptyko's own Environment), tests, down in reverse. Only rank 0 prints the
// usual output; every rank prints its own failures, prefixed with its rank.

#include <ptyko/parallel/communicator.hpp>
#include <ptyko/parallel/environment.hpp>

#include <gtest/gtest.h>

#include <cstdio>

namespace {

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : m_rank(rank) {}
  void OnTestPartResult(::testing::TestPartResult const& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", m_rank, r.file_name() ? r.file_name() : "?", r.line_number(),
                   r.summary());
  }

 private:
  int m_rank;
};

}  // namespace

int main(int argc, char* argv[]) {
  ptyko::parallel::Environment env(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (env.rank() != 0) delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new RankFailurePrinter(env.rank()));
  int const local = RUN_ALL_TESTS();
  // Every rank must agree on the verdict: a failure on any rank fails all.
  int result = local;
  auto comm = ptyko::parallel::Communicator::world();
  comm.allreduce(&result, 1, ptyko::parallel::Datatype::int32, ptyko::parallel::ReduceOp::max);
  return result;
}
