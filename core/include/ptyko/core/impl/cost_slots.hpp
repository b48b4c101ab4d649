#pragma once
// The costs of an epoch's Fourier steps, kept where they are computed.
//
// Each Fourier step reduces its cost into a slot of its own in the space's
// memory (cost_descent_direction's non-blocking form), and the epoch reads
// all of them in one copy at its end. A device then never waits for the
// host in the middle of an epoch to hand back a cost nobody reads before
// the epoch ends (one wait per batch less; docs/performance.md, section 5).
// The slots are summed on the host in the order they were filled, as the
// per-batch costs were before.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/pinned_mirror.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <utility>

namespace ptyko::impl {

template <class ExecSpace>
class CostSlots {
 public:
  using Mem = typename ExecSpace::memory_space;
  using Slot = Kokkos::View<double, Mem>;

  /// Starts an epoch of at most `count` Fourier steps: clears that many
  /// slots (a step of no positions leaves its slot as it is). Allocates
  /// only when an epoch needs more slots than any before it.
  void begin(ExecSpace const& space, int count) {
    if (std::size_t(count) > m_slots.extent(0)) {
      m_slots = Slots(Kokkos::view_alloc(space, "ptyko::CostSlots"), std::size_t(count));
      m_host = create_pinned_mirror(m_slots);
    } else {
      Kokkos::deep_copy(space, Kokkos::subview(m_slots, std::make_pair(std::size_t(0), std::size_t(count))), 0.0);
    }
    m_used = 0;
  }

  /// The next step's slot (an unmanaged rank-0 View into the slots).
  Slot next() {
    KOKKOS_ASSERT(m_used < m_slots.extent(0));
    return Slot(m_slots.data() + m_used++);
  }

  /// The sum of the slots filled since begin (blocking: one device -> host
  /// copy of those slots).
  double total(ExecSpace const& space) {
    if (m_used == 0) return 0;
    auto const used = std::make_pair(std::size_t(0), m_used);
    Kokkos::deep_copy(space, Kokkos::subview(m_host, used), Kokkos::subview(m_slots, used));  // device -> host: the epoch's costs
    fence(space, "ptyko::CostSlots::total");
    double sum = 0;
    for (std::size_t k = 0; k < m_used; ++k) sum += m_host(k);
    return sum;
  }

 private:
  using Slots = Kokkos::View<double*, Kokkos::LayoutRight, Mem>;
  Slots m_slots;
  PinnedMirror<Slots> m_host;
  std::size_t m_used = 0;
};

}  // namespace ptyko::impl
