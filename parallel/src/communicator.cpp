#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/communicator.hpp>

#include <mpi.h>

#include <atomic>
#include <string>

namespace ptyko::parallel {

#define PTYKO_CHECK_MPI(call)                                                              \
  do {                                                                                     \
    int const ptyko_mpi_status = (call);                                                   \
    if (ptyko_mpi_status != MPI_SUCCESS) {                                                 \
      char text[MPI_MAX_ERROR_STRING];                                                     \
      int len = 0;                                                                         \
      MPI_Error_string(ptyko_mpi_status, text, &len);                                      \
      throw ::ptyko::InternalError(std::string("MPI call " #call " failed: ") + text);     \
    }                                                                                      \
  } while (false)

struct Communicator::Shared {
  MPI_Comm comm = MPI_COMM_NULL;
  std::atomic<std::size_t> bytes{0};
  ~Shared() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

struct Request::Impl {
  MPI_Request request = MPI_REQUEST_NULL;
};

Request::Request() : impl(std::make_unique<Impl>()) {}
Request::~Request() = default;
Request::Request(Request&&) noexcept = default;
Request& Request::operator=(Request&&) noexcept = default;

namespace {

MPI_Datatype mpi_type(Datatype t) {
  switch (t) {
    case Datatype::float32: return MPI_FLOAT;
    case Datatype::float64: return MPI_DOUBLE;
    case Datatype::int32: return MPI_INT;
    case Datatype::int64: return MPI_INT64_T;
    case Datatype::uint64: return MPI_UINT64_T;
    default: return MPI_BYTE;
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::max: return MPI_MAX;
    default: return MPI_MIN;
  }
}

// MPI counts are int: large buffers go in pieces.
constexpr std::size_t max_count = std::size_t(1) << 30;

}  // namespace

std::size_t size_of(Datatype t) {
  switch (t) {
    case Datatype::float32: case Datatype::int32: return 4;
    case Datatype::float64: case Datatype::int64: case Datatype::uint64: return 8;
    default: return 1;
  }
}

Communicator Communicator::world() {
  Communicator c;
  c.m_shared = std::make_shared<Shared>();
  PTYKO_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c.m_shared->comm));
  MPI_Comm_rank(c.m_shared->comm, &c.m_rank);
  MPI_Comm_size(c.m_shared->comm, &c.m_size);
  return c;
}

Communicator Communicator::split(int color, int key) const {
  Communicator c;
  c.m_shared = std::make_shared<Shared>();
  PTYKO_CHECK_MPI(MPI_Comm_split(m_shared->comm, color, key, &c.m_shared->comm));
  MPI_Comm_rank(c.m_shared->comm, &c.m_rank);
  MPI_Comm_size(c.m_shared->comm, &c.m_size);
  return c;
}

// The collectives and waits below are profiling regions ("ptyko::MPI::..."):
// a per-kernel breakdown (bench/kernel_profiler.hpp) then shows the time a
// rank spends in MPI, waiting for its neighbours included, apart from the
// host code around it.

void Communicator::allreduce(void* buf, std::size_t count, Datatype type, ReduceOp op) const {
  if (m_size == 1 || count == 0) return;
  ScopedRegion region("ptyko::MPI::allreduce");
  auto* p = static_cast<char*>(buf);
  for (std::size_t first = 0; first < count; first += max_count) {
    int const n = int(std::min(max_count, count - first));
    PTYKO_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, p + first * size_of(type), n, mpi_type(type), mpi_op(op),
                                  m_shared->comm));
  }
  // ring all-reduce: 2 (P-1)/P of the buffer sent, and as much received
  m_shared->bytes += std::size_t(4.0 * (m_size - 1) / m_size * double(count * size_of(type)));
}

void Communicator::broadcast(void* buf, std::size_t count, Datatype type, int root) const {
  if (m_size == 1 || count == 0) return;
  ScopedRegion region("ptyko::MPI::broadcast");
  auto* p = static_cast<char*>(buf);
  for (std::size_t first = 0; first < count; first += max_count) {
    int const n = int(std::min(max_count, count - first));
    PTYKO_CHECK_MPI(MPI_Bcast(p + first * size_of(type), n, mpi_type(type), root, m_shared->comm));
  }
  m_shared->bytes += count * size_of(type);
}

void Communicator::gather(void const* send, std::size_t count, Datatype type, void* recv, int root) const {
  PTYKO_ASSERT(count < max_count, "gather of ", count, " values");
  PTYKO_CHECK_MPI(MPI_Gather(send, int(count), mpi_type(type), recv, int(count), mpi_type(type), root,
                             m_shared->comm));
  m_shared->bytes += count * size_of(type) * (m_rank == root ? std::size_t(m_size) : 1);
}

std::vector<char> Communicator::gather_bytes(std::vector<char> const& send, std::vector<std::size_t>& offsets,
                                             int root) const {
  long long const mine = (long long)send.size();
  std::vector<long long> sizes(m_rank == root ? m_size : 0);
  gather(&mine, 1, Datatype::int64, sizes.data(), root);
  std::vector<char> out;
  offsets.clear();
  if (m_rank == root) {
    std::size_t total = 0;
    for (auto s : sizes) {
      offsets.push_back(total);
      total += std::size_t(s);
    }
    out.resize(total);
    if (total) std::copy(send.begin(), send.end(), out.begin() + offsets[root]);
    for (int r = 0; r < m_size; ++r) {
      if (r == root) continue;
      for (std::size_t first = 0; first < std::size_t(sizes[r]); first += max_count) {
        int const n = int(std::min(max_count, std::size_t(sizes[r]) - first));
        PTYKO_CHECK_MPI(MPI_Recv(out.data() + offsets[r] + first, n, MPI_BYTE, r, 7001, m_shared->comm,
                                 MPI_STATUS_IGNORE));
      }
      m_shared->bytes += std::size_t(sizes[r]);
    }
  } else {
    for (std::size_t first = 0; first < send.size(); first += max_count) {
      int const n = int(std::min(max_count, send.size() - first));
      PTYKO_CHECK_MPI(MPI_Send(send.data() + first, n, MPI_BYTE, root, 7001, m_shared->comm));
    }
    m_shared->bytes += send.size();
  }
  return out;
}

void Communicator::barrier() const { PTYKO_CHECK_MPI(MPI_Barrier(m_shared->comm)); }

Request Communicator::isend(void const* buf, std::size_t count, Datatype type, int dest, int tag) const {
  PTYKO_ASSERT(count < max_count, "message of ", count, " values");
  Request r;
  PTYKO_CHECK_MPI(MPI_Isend(buf, int(count), mpi_type(type), dest, tag, m_shared->comm, &r.impl->request));
  m_shared->bytes += count * size_of(type);
  return r;
}

Request Communicator::irecv(void* buf, std::size_t count, Datatype type, int source, int tag) const {
  PTYKO_ASSERT(count < max_count, "message of ", count, " values");
  Request r;
  PTYKO_CHECK_MPI(MPI_Irecv(buf, int(count), mpi_type(type), source, tag, m_shared->comm, &r.impl->request));
  m_shared->bytes += count * size_of(type);
  return r;
}

void Communicator::wait_all(std::vector<Request>& requests) const {
  ScopedRegion region("ptyko::MPI::wait_all");
  std::vector<MPI_Request> raw;
  raw.reserve(requests.size());
  for (auto& r : requests) raw.push_back(r.impl->request);
  if (!raw.empty()) PTYKO_CHECK_MPI(MPI_Waitall(int(raw.size()), raw.data(), MPI_STATUSES_IGNORE));
  requests.clear();
}

std::size_t Communicator::take_bytes_moved() const { return m_shared ? m_shared->bytes.exchange(0) : 0; }

void const* Communicator::native() const { return &m_shared->comm; }

}  // namespace ptyko::parallel
