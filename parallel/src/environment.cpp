#include <ptyko/parallel/environment.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

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
  MPI_Comm_free(&node);

  // One GPU per rank: the node-local rank picks it, unless the user did.
  std::vector<std::string> extra;
  extra.reserve(1);  // pointers into it go into args
  // Kokkos answers --help with its own long text: keep it for ptyko's parser.
  std::vector<char*> args;
  std::vector<char*> held;
  for (int i = 0; i < argc; ++i) {
    std::string const a = argv[i];
    (i > 0 && (a == "--help" || a == "-h") ? held : args).push_back(argv[i]);
  }
  int const devices = visible_devices();
  if (devices > 0 && !user_chose_device(argc, argv)) {
    m_device = m_local % devices;
    extra.push_back("--kokkos-device-id=" + std::to_string(m_device));
    args.push_back(extra.back().data());
  }
  int kargc = int(args.size());
  args.push_back(nullptr);
  m_kokkos = std::make_unique<Kokkos::ScopeGuard>(kargc, args.data());
  // Kokkos removed the arguments it consumed; hand the rest back.
  int out = 0;
  for (int i = 0; i < kargc; ++i) {
    bool ours = false;
    for (auto const& e : extra) ours = ours || args[i] == e.data();
    if (!ours) argv[out++] = args[i];
  }
  for (char* h : held) argv[out++] = h;
  argc = out;
  argv[argc] = nullptr;
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
