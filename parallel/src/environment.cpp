#include <ptyko/parallel/environment.hpp>

#include "cpu_binding.hpp"

#include <ptyko/kernels/kokkos_scope.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

#include <sched.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace ptyko::parallel {
namespace {

// Devices visible to this process, before Kokkos starts (0 on host builds).
int visible_devices() {
  int n = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
#elif defined(KOKKOS_ENABLE_HIP)
  if (hipGetDeviceCount(&n) != hipSuccess) n = 0;
#endif
  return n;
}

bool user_chose_device(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a.rfind("--kokkos-device-id", 0) == 0 || a.rfind("--kokkos-map-device-id-by", 0) == 0 ||
        a.rfind("--kokkos-num-devices", 0) == 0)
      return true;
  }
  return std::getenv("KOKKOS_DEVICE_ID") != nullptr;
}

/// The warning of impl::shared_cpus_warning for this rank's node, the same
/// on each of its ranks (collective over `node`).
std::string node_cpu_warning(MPI_Comm node) {
  constexpr int words = CPU_SETSIZE / 64;
  std::vector<std::uint64_t> mine(words + 1, 0);  // thread count, then the CPUs' bits
  mine[0] = std::uint64_t(Kokkos::DefaultHostExecutionSpace().concurrency());
  for (int c : impl::host_thread_cpus()) mine[1 + c / 64] |= std::uint64_t(1) << (c % 64);
  int ranks = 1;
  MPI_Comm_size(node, &ranks);
  std::vector<std::uint64_t> all(std::size_t(ranks) * (words + 1));
  MPI_Allgather(mine.data(), words + 1, MPI_UINT64_T, all.data(), words + 1, MPI_UINT64_T, node);
  std::vector<std::vector<int>> cpus(static_cast<std::size_t>(ranks));
  std::vector<int> threads(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    std::uint64_t const* row = &all[std::size_t(r) * (words + 1)];
    threads[std::size_t(r)] = int(row[0]);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (row[1 + c / 64] >> (c % 64) & 1) cpus[std::size_t(r)].push_back(c);
  }
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return impl::shared_cpus_warning(std::string(name, std::size_t(length)), cpus, threads,
                                   int(sysconf(_SC_NPROCESSORS_ONLN)));
}

/// The first node's warning (lowest world rank) on world rank 0: one sum
/// and at most one message.
std::string first_cpu_warning(std::string const& mine, int rank) {
  int const flagged = mine.empty() ? INT_MAX : rank;
  int first = INT_MAX;
  MPI_Allreduce(&flagged, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == INT_MAX || first == 0) return rank == 0 ? mine : std::string();
  if (rank == first) {
    int const n = int(mine.size());
    MPI_Send(&n, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Send(mine.data(), n, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
  }
  if (rank != 0) return {};
  int n = 0;
  MPI_Recv(&n, 1, MPI_INT, first, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::string text(std::size_t(n), ' ');
  MPI_Recv(text.data(), n, MPI_CHAR, first, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

}  // namespace

Environment::Environment(int& argc, char**& argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    m_finalize_mpi = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m_size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &m_local);
  MPI_Comm_size(node, &m_local_size);

  // Kokkos answers --help with its own long text: keep it for ptyko's parser.
  std::vector<char*> args;
  std::vector<char*> held;
  for (int i = 0; i < argc; ++i) {
    std::string const a = argv[i];
    (i > 0 && (a == "--help" || a == "-h") ? held : args).push_back(argv[i]);
  }
  // One GPU per rank: the node-local rank picks it, unless the user did.
  std::vector<std::string> added;
  int const devices = visible_devices();
  if (devices > 0 && !user_chose_device(argc, argv)) {
    m_device = m_local % devices;
    added.push_back("--kokkos-device-id=" + std::to_string(m_device));
  }
  int kargc = int(args.size());
  args.push_back(nullptr);
  // With a Threads build's default threads (kernels/kokkos_scope.hpp).
  m_kokkos = std::make_unique<KokkosScope>(kargc, args.data(), std::move(added));
  // What Kokkos left, then the held --help.
  int out = 0;
  for (int i = 0; i < kargc; ++i) argv[out++] = args[std::size_t(i)];
  for (char* h : held) argv[out++] = h;
  argc = out;
  argv[argc] = nullptr;
  // Where Kokkos' host threads were bound (OMP_PROC_BIND), checked once.
  m_cpu_warning = first_cpu_warning(node_cpu_warning(node), m_rank);
  MPI_Comm_free(&node);
}

Environment::~Environment() {
  m_kokkos.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (m_finalize_mpi && !finalized) MPI_Finalize();
}

void Environment::abort_all(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace ptyko::parallel
