// The check that a node's ranks do not run more threads than the CPUs they
// are bound to (parallel/src/cpu_binding.hpp): the warning's cases, the CPU
// lists it prints, and the CPUs of the host execution space's threads.

#include "cpu_binding.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace ptyko::parallel::impl;

namespace {

bool has(std::string const& text, std::string const& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(CpuBinding, ListsRunsOfCpus) {
  EXPECT_EQ(cpu_list({}), "");
  EXPECT_EQ(cpu_list({3}), "3");
  EXPECT_EQ(cpu_list({0, 1}), "0,1");
  EXPECT_EQ(cpu_list({0, 1, 2, 3, 8}), "0-3,8");
  EXPECT_EQ(cpu_list({0, 2, 3, 4, 7, 8}), "0,2-4,7,8");
}

TEST(CpuBinding, RanksPinnedToOneCpuAreWarned) {
  // OMP_PROC_BIND=spread with mpiexec --bind-to none: every rank on CPU 0.
  std::string const w = shared_cpus_warning("n1", {{0}, {0}}, {1, 1}, 2);
  EXPECT_TRUE(has(w, "2 ranks on node n1 run 2 threads on 1 of its 2 CPUs (0), which take turns")) << w;
  EXPECT_TRUE(has(w, "--bind-to core")) << w;
  // The same with more CPUs online, and four threads per rank on two cores.
  EXPECT_TRUE(has(shared_cpus_warning("n1", {{0, 1}, {0, 1}, {0, 1}}, {1, 1, 1}, 8),
                  "3 ranks on node n1 run 3 threads on 2 of its 8 CPUs (0,1)"));
  EXPECT_TRUE(has(shared_cpus_warning("n2", {{4, 5}}, {4}, 16), "1 rank on node n2 runs 4 threads on 2 of its 16"));
}

TEST(CpuBinding, CpusOfTheirOwnOrAllOfThemAreNotWarned) {
  EXPECT_EQ(shared_cpus_warning("n", {{0}, {1}}, {1, 1}, 2), "");                // one core each
  EXPECT_EQ(shared_cpus_warning("n", {{0, 1}}, {2}, 4), "");                     // two threads, two cores
  EXPECT_EQ(shared_cpus_warning("n", {{0, 1}, {0, 1}, {0, 1}}, {1, 1, 1}, 2), "");  // every CPU: deliberate
  std::vector<std::vector<int>> groups(4);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) groups[std::size_t(r)].push_back(16 * r + c);
  EXPECT_EQ(shared_cpus_warning("n", groups, {8, 8, 8, 8}, 64), "");  // ppr:..:PE=8, 8 threads each
  EXPECT_EQ(shared_cpus_warning("n", {{}, {}}, {1, 1}, 2), "");        // nothing known
}

TEST(CpuBinding, HostThreadsRunOnTheProcesssCpus) {
  std::vector<int> const main_thread = thread_cpus(), host = host_thread_cpus();
  ASSERT_FALSE(main_thread.empty());
  ASSERT_FALSE(host.empty());
  // The pool's first thread is this one; every thread's CPUs are listed once, ascending.
  EXPECT_TRUE(std::includes(host.begin(), host.end(), main_thread.begin(), main_thread.end()));
  EXPECT_TRUE(std::is_sorted(host.begin(), host.end()));
  EXPECT_EQ(std::adjacent_find(host.begin(), host.end()), host.end());
}
