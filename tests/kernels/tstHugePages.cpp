// Object-shaped fields: make_object_field fills every element, and on Linux
// with transparent huge pages in "madvise" mode (the mode where only the
// advice gives them) the field's memory is backed by 2 MiB pages.
#include <ptyko/kernels/huge_pages.hpp>
#include <ptyko/kernels/types.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;

// The bracketed mode of /sys/kernel/mm/transparent_hugepage/enabled ("" off Linux).
std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto const a = all.find('['), b = all.find(']');
  return a == std::string::npos || b == std::string::npos ? "" : all.substr(a + 1, b - a - 1);
}

// kB of AnonHugePages of the mapping that holds `p` (/proc/self/smaps; -1 if not found).
long huge_kb_of(void const* p) {
  auto const addr = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream f("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(f, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= addr && addr < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  }
  return -1;
}

TEST(HugePages, ObjectFieldIsFilled) {
  ExecSpace space;
  int const H = 700, W = 1100;
  auto f = make_object_field<ComplexView2<float, MemSpace>>(space, "f", H, W, Complex<float>(1, -2));
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  int wrong = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) wrong += h(y, x) != Complex<float>(1, -2);
  EXPECT_EQ(wrong, 0);
  // Too small for a whole huge page: advice is skipped, the fill is the same.
  auto small = make_object_field<RealView2<double, MemSpace>>(space, "small", 3, 5, 7.0);
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), small);
  for (int k = 0; k < 15; ++k) EXPECT_EQ(hs.data()[k], 7.0);
}

TEST(HugePages, AdvisedFieldGetsHugePagesInMadviseMode) {
  if (!std::is_same_v<MemSpace, Kokkos::HostSpace>) GTEST_SKIP() << "device memory: no advice";
  if (thp_mode() != "madvise") GTEST_SKIP() << "transparent huge pages are '" << thp_mode() << "', not 'madvise'";
  ExecSpace space;
  // 64 MiB: whole huge pages inside whatever alignment the allocator gives.
  auto f = make_object_field<RealView2<float, MemSpace>>(space, "f", 4096, 4096, 0.f);
  space.fence();
  // madvise splits the allocation's mapping at the advised range: look at
  // the part that starts at the first 2 MiB boundary inside the field.
  auto const first = (reinterpret_cast<std::uintptr_t>(f.data()) + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
  long const kb = huge_kb_of(reinterpret_cast<void const*>(first));
  if (kb < 0) GTEST_SKIP() << "/proc/self/smaps reports no AnonHugePages for the field's mapping";
  EXPECT_GE(kb, 2048) << "no 2 MiB page backs the advised field";
}

}  // namespace
