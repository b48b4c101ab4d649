#pragma once
// Host loops outside the epochs spread over the CPUs this process may run
// on: the filters of large HDF5 datasets (chunk_filters.hpp). Plain
// threads, not a Kokkos host space: the Serial backend (Debian's Kokkos)
// has none, and these loops hold no device data. Internal to core/src.

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ptyko::impl {

/// Threads such a loop may use: the CPUs this process may run on (its
/// affinity mask, e.g. one core under a binding mpiexec), at most 16.
int host_threads();

/// Runs items 0 .. n-1, each once, on at most `threads` threads, the
/// calling one among them: each thread calls make_worker() once (its
/// scratch buffers live in the returned callable) and then worker(j) for
/// the items it takes. The first exception of any thread is rethrown here,
/// after every thread has stopped (the others take no new item).
template <class MakeWorker>
void on_threads(std::size_t n, int threads, MakeWorker&& make_worker) {
  std::mutex lock;
  std::size_t next = 0;
  std::exception_ptr failure;
  auto const take = [&](std::size_t& j) {
    std::lock_guard<std::mutex> guard(lock);
    if (failure || next >= n) return false;
    j = next++;
    return true;
  };
  auto const work = [&] {
    try {
      auto worker = make_worker();
      for (std::size_t j = 0; take(j);) worker(j);
    } catch (...) {
      std::lock_guard<std::mutex> guard(lock);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min(std::size_t(threads > 1 ? threads : 1), n); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ptyko::impl
