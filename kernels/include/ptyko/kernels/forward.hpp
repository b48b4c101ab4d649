#pragma once
// The ptychographic forward operator for one batch of positions, and its
// adjoints (docs/conventions.md):
//   Psi(b, m) = F[ P(m) * S_{n_b} O ]           n_b = indices(b)
//   I(b)      = sum_m |Psi(b, m)|^2
// For fixed P the map O -> Psi is linear (A_O), for fixed O so is P -> Psi
// (A_P); their adjoints are
//   A_O^H g = sum_b S_{n_b}^T sum_m conj(P(m)) F^H g(b, m)
//   A_P^H g = sum_b conj(S_{n_b} O) F^H g(b, .)
// ForwardModel owns the FFT plan and the batch work buffers, allocated once.

#include <ptyko/kernels/exit_wave.hpp>
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/fourier.hpp>
#include <ptyko/kernels/patch.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

template <class T, class ExecSpace>
class ForwardModel {
 public:
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using Object = ComplexView2<T, memory_space>;
  using Probe = ComplexView3<T, memory_space>;
  using Waves = ComplexView4<T, memory_space>;
  using Patches = ComplexView3<T, memory_space>;
  using Positions = PositionView<T, memory_space>;
  using Indices = IndexView<memory_space>;

  /// \param max_batch [in] largest number of positions per call
  /// \param modes, D  [in] probe modes and frame edge
  ForwardModel(ExecSpace const& space, int max_batch, int modes, int D,
               FFTPlanEffort effort = FFTPlanEffort::estimate)
      : m_fft(space, max_batch * modes, D, D, effort),
        m_patches(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::ForwardModel::patches"),
                  max_batch, D, D),
        m_products(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                      "ptyko::ForwardModel::products"),
                   max_batch, D, D),
        m_max_batch(max_batch),
        m_modes(modes),
        m_D(D) {}

  int max_batch() const { return m_max_batch; }
  int modes() const { return m_modes; }
  int frame_size() const { return m_D; }
  BatchedFFT2D<T, ExecSpace> const& fft() const { return m_fft; }
  /// Patches S O of the last far_field() call (valid until the next call).
  Patches const& patches() const { return m_patches; }

  /// Psi = A(O, P) for the batch; also keeps the patches. Non-blocking.
  void far_field(ExecSpace const& space, Object const& object, Probe const& probe,
                 Positions const& positions, Indices const& indices, Waves const& Psi) const {
    far_field(space, object, probe, positions, indices, Psi, m_patches);
  }

  /// The same, keeping the patches in `patches_out` (at least B slots)
  /// instead of patches(). Non-blocking.
  void far_field(ExecSpace const& space, Object const& object, Probe const& probe,
                 Positions const& positions, Indices const& indices, Waves const& Psi,
                 Patches const& patches_out) const {
    ScopedRegion region("ptyko::ForwardModel::far_field");
    int const B = check_batch(indices, Psi);
    PTYKO_ASSERT(int(patches_out.extent(0)) >= B, "patch buffer of ", patches_out.extent(0), " for ", B, " positions");
    // The orthonormal 1/D is applied while forming the exit waves.
    extract_exit_waves(space, object, positions, indices, probe, patches_out, Psi, T(1) / T(m_D));
    m_fft.forward(space, batch_of(Psi, B), batch_of(Psi, B), FFTNorm::none);
  }

  /// object_out += A_O^H g for fixed probe. g is overwritten (F^H g). Non-blocking.
  void adjoint_object(ExecSpace const& space, Probe const& probe, Positions const& positions,
                      Indices const& indices, Waves const& g, Object const& object_out) const {
    ScopedRegion region("ptyko::ForwardModel::adjoint_object");
    int const B = check_batch(indices, g);
    m_fft.inverse(space, batch_of(g, B), batch_of(g, B));
    probe_adjoint_product(space, B, probe, g, m_products);
    add_patches(space, Kokkos::subview(m_products, std::make_pair(0, B), Kokkos::ALL, Kokkos::ALL),
                positions, indices, object_out);
  }

  /// probe_out += A_P^H g for fixed object. g is overwritten (F^H g). Non-blocking.
  void adjoint_probe(ExecSpace const& space, Object const& object, Positions const& positions,
                     Indices const& indices, Waves const& g, Probe const& probe_out) const {
    ScopedRegion region("ptyko::ForwardModel::adjoint_probe");
    int const B = check_batch(indices, g);
    m_fft.inverse(space, batch_of(g, B), batch_of(g, B));
    extract_patches(space, object, positions, indices, m_patches);
    patch_adjoint_product(space, B, m_patches, g, probe_out);
  }

 private:
  int check_batch(Indices const& indices, Waves const& w) const {
    int const B = int(indices.extent(0));
    PTYKO_ASSERT(B <= m_max_batch && int(w.extent(0)) >= B && int(w.extent(1)) == m_modes &&
                     int(w.extent(2)) == m_D && int(w.extent(3)) == m_D,
                 "batch of ", B, " does not fit the model (max ", m_max_batch, ", ", m_modes,
                 " modes, D = ", m_D, ")");
    return B;
  }
  static Waves batch_of(Waves const& w, int B) {
    return Kokkos::subview(w, std::make_pair(0, B), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
  }

  BatchedFFT2D<T, ExecSpace> m_fft;
  Patches m_patches;
  Patches m_products;
  int m_max_batch, m_modes, m_D;
};

}  // namespace ptyko
