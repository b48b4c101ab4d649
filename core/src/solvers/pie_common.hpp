#pragma once
// Pieces shared by the batch-gradient solvers (rPIE/ePIE, LSQML): the
// per-batch exit-wave update direction, and the all-positions illumination
// weights of IlluminationNorm::all.

#include <ptyko/core/impl/update_sums.hpp>
#include <ptyko/core/solver.hpp>
#include <ptyko/kernels/forward.hpp>
#include <ptyko/kernels/fourier.hpp>

#include <algorithm>

namespace ptyko::impl {

/// Computes, for the batch `idx`, the model far field and replaces it by the
/// real-space exit-wave update direction delta = F^{-1}(-dL/dPsi*) (Gaussian:
/// F^{-1}Psi' - psi; Poisson: F^{-1} Psi (d / I - 1)). The model keeps the
/// patches S O. Returns the batch's cost (blocking).
template <class T, class ExecSpace>
double exit_wave_update(ExecSpace const& space, ForwardModel<T, ExecSpace> const& model,
                        LocalData<T, ExecSpace> const& data, State<T, ExecSpace> const& state,
                        IndexView<typename ExecSpace::memory_space> const& idx, NoiseModel noise,
                        ComplexView4<T, typename ExecSpace::memory_space> const& waves) {
  int const B = int(idx.extent(0));
  model.far_field(space, state.object, state.probe, data.positions, idx, waves);
  auto batch = Kokkos::subview(waves, std::make_pair(0, B), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
  // The inverse FFT's 1/D is folded into the direction kernel.
  T const inv_d = T(1) / T(data.detector());
  double const cost = data.frames.visit([&](auto const& frames) {
    return cost_descent_direction(space, noise, B, waves, frames, idx, data.mask, T(1e-6), inv_d);
  });
  model.fft().inverse(space, batch, batch, FFTNorm::none);
  return cost;
}

/// Illumination weights over all of this rank's positions, summed over ranks
/// (IlluminationNorm::all): obj_w = sum_j S_j^T sum_m |P_m|^2, probe_w =
/// sum_j |S_j O|^2. `chunks` split the local frames into model-sized pieces.
template <class T, class ExecSpace>
std::array<double, 2> all_positions_weights(ExecSpace const& space, ForwardModel<T, ExecSpace> const& model,
                                            LocalData<T, ExecSpace> const& data,
                                            State<T, ExecSpace> const& state,
                                            std::vector<IndexView<typename ExecSpace::memory_space>> const& chunks,
                                            UpdateSums<T, ExecSpace>& sums, Sync<T, ExecSpace>& sync) {
  sums.zero(space, true);
  for (auto const& idx : chunks) {
    sums.add_illumination(space, state.probe, data.positions, idx, sums.obj_w);
    extract_patches(space, state.object, data.positions, idx, model.patches());
    add_patch_intensity(space, int(idx.extent(0)), model.patches(), sums.probe_w);
  }
  sync.sum_object(space, ComplexView2<T, typename ExecSpace::memory_space>(), sums.obj_w);
  sync.sum_probe(space, ComplexView3<T, typename ExecSpace::memory_space>(), sums.probe_w);
  std::array<double, 2> maxima{max_value(space, sums.obj_w), max_value(space, sums.probe_w)};
  sync.max(maxima.data(), 2);
  return maxima;
}

/// Index Views covering 0..n-1 in pieces of at most `chunk`.
template <class Mem>
std::vector<IndexView<Mem>> index_chunks(int n, int chunk) {
  std::vector<IndexView<Mem>> out;
  for (int first = 0; first < n; first += chunk) {
    int const B = std::min(chunk, n - first);
    IndexView<Mem> idx(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::index_chunk"), B);
    auto h = Kokkos::create_mirror_view(idx);
    for (int b = 0; b < B; ++b) h(b) = first + b;
    Kokkos::deep_copy(idx, h);  // host -> device: chunk indices, once per run
    out.push_back(idx);
  }
  return out;
}

}  // namespace ptyko::impl
