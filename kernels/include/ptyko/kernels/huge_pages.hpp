#pragma once
// Transparent huge pages for object-shaped host arrays. The per-batch
// passes walk the object, its update sums and weights tile row by tile row;
// on a large object every row lies on its own 4 KiB page (a 2097-pixel row
// of complex floats is 16.8 KB), so each row of a walk costs a TLB miss and
// a page walk per array. Backed by 2 MiB pages, the rows of a whole batch's
// footprints share a few dozen TLB entries (docs/performance.md, section 5).

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ptyko {

inline constexpr std::size_t huge_page_bytes = std::size_t(2) << 20;

/// Host code. Asks Linux to back the whole 2 MiB pages inside `v`'s
/// allocation with transparent huge pages (madvise MADV_HUGEPAGE: honoured
/// when /sys/kernel/mm/transparent_hugepage/enabled is "always" or
/// "madvise"). Only pages not touched yet get them: call it on an
/// allocation made WithoutInitializing, before filling it. A no-op for
/// device memory, for arrays that hold no whole huge page, and off Linux;
/// the advice failing changes nothing but the speed.
template <class View>
void advise_huge_pages(View const& v) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if constexpr (std::is_same_v<typename View::memory_space, Kokkos::HostSpace>) {
    auto const begin = reinterpret_cast<std::uintptr_t>(v.data());
    auto const end = begin + v.span() * sizeof(typename View::value_type);
    auto const first = (begin + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
    auto const last = end / huge_page_bytes * huge_page_bytes;
    if (v.data() != nullptr && last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
#else
  (void)v;
#endif
}

/// An (n0, n1) object-shaped field: allocated uninitialised, advised huge
/// pages, then filled with `value` on `space` (non-blocking).
template <class View, class ExecSpace>
View make_object_field(ExecSpace const& space, std::string const& label, std::size_t n0, std::size_t n1,
                       typename View::non_const_value_type const& value) {
  View v(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), n0, n1);
  advise_huge_pages(v);
  Kokkos::deep_copy(space, v, value);  // fill: the first touch, now of huge pages
  return v;
}

}  // namespace ptyko
