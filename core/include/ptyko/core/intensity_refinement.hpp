#pragma once
// Intensity refinement ("floating intensities"): the incident flux changes
// from frame to frame (top-up, beam motion, a fly scan's uneven dwell, an
// XFEL's pulses) and a file without a monitor leaves that in the frames. The
// model, one probe for every frame, cannot explain it, and the object
// absorbs it as false amplitude (and, for DM, false phase): on an
// independent simulation with 5 % rms flux jitter the object error rose
// from 0.015 to 0.022 (LSQML), 0.014 to 0.027 (rPIE) and 0.021 to 0.082
// (DM; docs/solvers.md).
//
// Between epochs every frame's measured counts are compared with its
// model's, both over the measured pixels (one forward transform of every
// position and mode): frame j's data are scaled by g_j so that data and
// model agree frame by frame, g normalised so that the frames' total counts
// stay those of the file (the overall scale belongs to the probe). The
// relative flux of frame j is 1 / g_j (PtychoShelves' variable_intensity
// does the same to the model instead).
//
// A flux that varies only over distances larger than the probe is an
// object amplitude that varies as slowly: the data cannot tell them apart,
// and fitting it let the two drift (spurious fluxes of 3-5 % rms and a
// worse object on data without jitter). So log g loses its mean over the
// frames within the probe's diameter: that part stays the object's.
//
// The frames are held as floats while refined (uint16 counts are converted
// once, twice their memory). Every g stays within [1/5, 5]: a frame with
// almost no beam keeps a bounded weight. Collective: two all-reduces.

#include <ptyko/core/solver.hpp>
#include <ptyko/core/state.hpp>
#include <ptyko/core/sync.hpp>
#include <ptyko/kernels/types.hpp>

#include <array>
#include <memory>
#include <vector>

namespace ptyko {

struct IntensityRefinementReport {
  double rms_deviation = 0;  ///< root-mean-square of (relative flux - 1) over all ranks' frames
  double min_flux = 1, max_flux = 1;  ///< the extremes of the relative flux, all ranks
};

namespace impl {
template <class T, class ExecSpace>
class FarFieldSweep;
}

template <class T, class ExecSpace>
class IntensityRefiner {
 public:
  using Mem = typename ExecSpace::memory_space;

  /// Buffers for `data`'s positions in chunks, `modes` probe modes; makes
  /// data's frames floats (a copy of uint16 counts). Not collective.
  IntensityRefiner(ExecSpace const& space, LocalData<T, ExecSpace>& data, int modes, SolverOptions const& options);
  ~IntensityRefiner();

  /// Measures every local frame's model against its data for the current
  /// object and probe, and scales data.frames in place. Collective.
  IntensityRefinementReport refine(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                   State<T, ExecSpace> const& state, Sync<T, ExecSpace>& sync,
                                   std::vector<std::array<double, 2>> const& positions);

  /// Scales the frames for the relative fluxes `flux` of a checkpoint (all
  /// frames, indexed as data.frame_ids; the frames are the file's, as
  /// loaded). Not collective.
  void restore(ExecSpace const& space, LocalData<T, ExecSpace> const& data, std::vector<double> const& flux);

  /// The relative flux 1 / g of every frame of every rank (indexed by
  /// frame_ids; all 1 before the first refinement). Collective.
  std::vector<double> relative_flux(LocalData<T, ExecSpace> const& data, Sync<T, ExecSpace>& sync) const;

  /// Smallest and largest scale factor g of a frame's data.
  static constexpr double min_scale = 0.2, max_scale = 5.0;

 private:
  /// Frames within this distance (pixels) of each other share the slowly
  /// varying part of the flux that stays the object's: the probe's diameter.
  double smoothing_radius(State<T, ExecSpace> const& state) const;
  void apply(ExecSpace const& space, LocalData<T, ExecSpace> const& data, std::vector<double> const& new_scale);

  std::unique_ptr<impl::FarFieldSweep<T, ExecSpace>> m_sweep;
  Kokkos::View<double*, Kokkos::LayoutRight, Mem> m_model_power, m_factor;
  std::vector<double> m_scale;        ///< g of every local frame
  std::vector<double> m_file_counts;  ///< every local frame's counts on measured pixels, as loaded
};

}  // namespace ptyko
