#pragma once
// A rank's measured frames (n, D, D) in the memory space the solvers run
// in, kept in the most compact type that holds them exactly: detector
// counts (every value an integer in [0, 65535], what uint8/uint16 files and
// most uint32 ones hold) as uint16, anything else as float32. The frames are
// the largest array of a run (10 000 frames of 128 x 128: 655 MB as float,
// 328 MB as uint16), and the kernels that read them convert on the fly
// (they are generic over the View's value type).

#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace ptyko {

template <class Mem>
class FrameStack {
 public:
  using Counts = Kokkos::View<std::uint16_t***, Kokkos::LayoutRight, Mem>;
  using Floats = RealView3<float, Mem>;

  FrameStack() = default;
  explicit FrameStack(Counts counts) : m_counts(std::move(counts)), m_is_counts(true) {}
  explicit FrameStack(Floats floats) : m_floats(std::move(floats)) {}

  /// True when the frames are held as uint16 counts.
  bool is_counts() const { return m_is_counts; }
  std::size_t extent(int r) const { return m_is_counts ? m_counts.extent(r) : m_floats.extent(r); }
  /// Bytes of the frames' storage.
  std::size_t bytes() const {
    return m_is_counts ? m_counts.span() * sizeof(std::uint16_t) : m_floats.span() * sizeof(float);
  }
  char const* type_name() const { return m_is_counts ? "uint16" : "float32"; }

  /// The float frames (only when !is_counts()): for kernels that write them.
  Floats const& floats() const { return m_floats; }
  /// The uint16 counts (only when is_counts()).
  Counts const& counts() const { return m_counts; }

  /// f(view) with the View that holds the frames (Counts or Floats); returns
  /// what f returns, which must be the same type for both.
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (m_is_counts) return f(m_counts);
    return f(m_floats);
  }

 private:
  Counts m_counts;
  Floats m_floats;
  bool m_is_counts = false;
};

}  // namespace ptyko
