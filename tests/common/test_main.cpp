// GoogleTest main for single-process tests: Kokkos up (as ptyko starts it:
// a Threads build takes OMP_NUM_THREADS, which ctest sets per test), tests,
// Kokkos down.
#include <ptyko/kernels/kokkos_scope.hpp>

#include <gtest/gtest.h>

int main(int argc, char* argv[]) {
  ptyko::KokkosScope kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
