#pragma once
// Host buffers that a device's queued copies fill or read without making the
// host wait. A copy between device memory and pageable host memory returns
// only once it is done (cudaMemcpyAsync's documented behaviour, HIP's
// alike), so each such copy drains the device's queue behind it, however
// carefully the caller queued it behind one fence. Page-locked memory
// (HostPinnedSpace) lets the copy stay queued until the caller's one wait.

#include <ptyko/kernels/compat.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace ptyko {

/// Whether the host reads View's memory.
template <class View>
inline constexpr bool host_reads_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible;

/// The host buffer a View is staged through: the View itself where the host
/// reads its memory, else a page-locked View of its shape.
template <class View>
using PinnedMirror =
    std::conditional_t<host_reads_v<View>, View,
                       Kokkos::View<typename View::non_const_data_type, typename View::array_layout, HostPinnedSpace>>;

/// A PinnedMirror of `v` (uninitialised where it is new memory).
template <class View>
PinnedMirror<View> create_pinned_mirror(View const& v) {
  if constexpr (host_reads_v<View>)
    return v;
  else
    return PinnedMirror<View>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(v.label()) + "::host"),
                              v.layout());
}

}  // namespace ptyko
