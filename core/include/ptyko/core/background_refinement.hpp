#pragma once
// Background refinement: an incoherent background in every frame (air
// scatter, fluorescence, a detector's offset or dark current the file's
// dark frame missed) that no coherent model explains. The object takes it
// up as high-frequency noise: on an independent simulation with 3 counts
// per pixel (0.5 % of the counts) the object error rose from 0.015 to 0.026
// (LSQML; docs/solvers.md).
//
// The model becomes I_j = sum_m |F psi_jm|^2 + b, with b (D, D) the same for
// every frame (State::background): every solver's Fourier step and cost see
// it. Between epochs b takes the EM (Richardson-Lucy) step of an incoherent
// mode, b' = b mean_j d_j / I_j over all ranks' frames (kernels/
// background.hpp): it stays positive, it grows where the coherent model
// leaves counts unexplained in every frame, and it stays put where the
// coherent model explains the data. It starts, at the first refinement,
// below the level of the mean diffraction pattern's darkest tenth. Collective.

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/solver.hpp>
#include <ptyko/core/state.hpp>
#include <ptyko/core/sync.hpp>
#include <ptyko/kernels/types.hpp>

#include <memory>
#include <vector>

namespace ptyko {

namespace impl {
template <class T, class ExecSpace>
class FarFieldSweep;
}

template <class T, class ExecSpace>
class BackgroundRefiner {
 public:
  using Mem = typename ExecSpace::memory_space;

  /// Buffers for `data`'s positions in chunks and `modes` probe modes. Not
  /// collective.
  BackgroundRefiner(ExecSpace const& space, LocalData<T, ExecSpace> const& data, int modes,
                    SolverOptions const& options);
  ~BackgroundRefiner();

  /// One EM step of state.background against every frame's model for the
  /// current object and probe; without a background yet it starts one
  /// (below the mean pattern's darkest tenth). Returns the background's
  /// counts per frame on the measured pixels. Collective.
  double refine(ExecSpace const& space, LocalData<T, ExecSpace> const& data, State<T, ExecSpace>& state,
                Sync<T, ExecSpace>& sync);

 private:
  std::unique_ptr<impl::FarFieldSweep<T, ExecSpace>> m_sweep;
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> m_sums;
};

/// state.background centred (fftshift), on the host, as result files keep
/// it; extent 0 without one. Blocking.
template <class T, class ExecSpace>
HostReal2 background_on_host(ExecSpace const& space, State<T, ExecSpace> const& state);

/// Sets state.background from a centred host copy (background_on_host);
/// extent 0 leaves the state without one. Blocking.
template <class T, class ExecSpace>
void set_background(ExecSpace const& space, State<T, ExecSpace>& state, HostReal2 const& centred);

}  // namespace ptyko
