#include <ptyko/kernels/kokkos_scope.hpp>

#include <ptyko/kernels/cpu_affinity.hpp>

#include <cstdlib>
#include <type_traits>

namespace ptyko {
namespace {

// The Kokkos argument that gives a Threads build an OpenMP build's default
// thread count ("--kokkos-num-threads=N"), or "" where the default host
// space is not Kokkos::Threads or the user chose.
std::string default_host_threads_argument(int argc, char const* const* argv) {
#if defined(KOKKOS_ENABLE_THREADS)
  if (!std::is_same_v<Kokkos::DefaultHostExecutionSpace, Kokkos::Threads>) return {};
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a.rfind("--kokkos-num-threads", 0) == 0 || a.rfind("--kokkos-threads", 0) == 0) return {};
  }
  if (std::getenv("KOKKOS_NUM_THREADS") != nullptr) return {};
  int threads = 0;
  if (char const* omp = std::getenv("OMP_NUM_THREADS")) threads = std::atoi(omp);  // "8", or a list's first: "8,4"
  if (threads < 1) threads = affinity_cpu_count();
#if KOKKOS_VERSION >= 30700
  return "--kokkos-num-threads=" + std::to_string(threads);
#else
  return "--kokkos-threads=" + std::to_string(threads);
#endif
#else
  (void)argc;
  (void)argv;
  return {};
#endif
}

}  // namespace

KokkosScope::KokkosScope(int& argc, char** argv, std::vector<std::string> added) {
  if (std::string threads = default_host_threads_argument(argc, argv); !threads.empty())
    added.push_back(std::move(threads));
  std::vector<char*> args(argv, argv + argc);
  for (auto& a : added) args.push_back(a.data());
  int kargc = int(args.size());
  args.push_back(nullptr);
  m_guard = std::make_unique<Kokkos::ScopeGuard>(kargc, args.data());
  // Kokkos took out what it consumed; hand the rest back, without ours.
  int out = 0;
  for (int i = 0; i < kargc; ++i) {
    bool ours = false;
    for (auto const& a : added) ours = ours || args[std::size_t(i)] == a.data();
    if (!ours) argv[out++] = args[std::size_t(i)];
  }
  argc = out;
  argv[argc] = nullptr;
}

}  // namespace ptyko
