#pragma once
// RAII wrapper over an MPI communicator that keeps mpi.h out of every header
// outside parallel/src: the handle is opaque, calls take raw buffers plus a
// Datatype tag. The constructor duplicates the user's communicator (library
// traffic never collides with theirs) and the last copy frees it.
// Every call counts the bytes this rank sends and receives; collectives are
// counted as a ring all-reduce would move them (2 (P-1)/P of the buffer each way).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ptyko::parallel {

enum class Datatype { float32, float64, int32, int64, uint64, byte };
enum class ReduceOp { sum, max, min };

std::size_t size_of(Datatype t);

template <class T>
constexpr Datatype datatype_of() {
  if constexpr (std::is_same_v<T, float>) return Datatype::float32;
  else if constexpr (std::is_same_v<T, double>) return Datatype::float64;
  else if constexpr (std::is_same_v<T, int>) return Datatype::int32;
  else if constexpr (std::is_same_v<T, long long> || std::is_same_v<T, long>) return Datatype::int64;
  else if constexpr (std::is_same_v<T, unsigned long long> || std::is_same_v<T, unsigned long>) return Datatype::uint64;
  else return Datatype::byte;
}

/// A pending non-blocking operation.
class Request {
 public:
  Request();
  ~Request();
  Request(Request&&) noexcept;
  Request& operator=(Request&&) noexcept;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

class Communicator {
 public:
  /// A duplicate of MPI_COMM_WORLD.
  static Communicator world();

  int rank() const { return m_rank; }
  int size() const { return m_size; }

  /// MPI_Comm_split: ranks with the same colour form a new communicator,
  /// ordered by key. Collective.
  Communicator split(int color, int key) const;

  /// In-place all-reduce of `count` values at `buf` (host memory, or device
  /// memory when MPI is GPU-aware). Collective.
  void allreduce(void* buf, std::size_t count, Datatype type, ReduceOp op) const;
  /// Broadcast of `count` values from `root`. Collective.
  void broadcast(void* buf, std::size_t count, Datatype type, int root) const;
  /// Gathers `count` values from every rank into `recv` (size * count) on root.
  void gather(void const* send, std::size_t count, Datatype type, void* recv, int root) const;
  /// Variable-size gather of bytes onto root; returns rank r's bytes at
  /// offsets[r] in the result (root only; empty elsewhere).
  std::vector<char> gather_bytes(std::vector<char> const& send, std::vector<std::size_t>& offsets,
                                 int root) const;
  void barrier() const;

  Request isend(void const* buf, std::size_t count, Datatype type, int dest, int tag) const;
  Request irecv(void* buf, std::size_t count, Datatype type, int source, int tag) const;
  /// Waits for all requests; throws on an MPI error.
  void wait_all(std::vector<Request>& requests) const;

  /// Bytes sent and received by this rank through this communicator (and
  /// its copies) since the last call; resets the counters.
  std::size_t take_bytes_moved() const;

  /// The MPI_Comm, as an opaque pointer-sized handle (for parallel/src only).
  void const* native() const;

 private:
  struct Shared;
  std::shared_ptr<Shared> m_shared;
  int m_rank = 0, m_size = 1;
};

}  // namespace ptyko::parallel
