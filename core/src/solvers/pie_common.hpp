#pragma once
// Pieces shared by the batch-gradient solvers (rPIE/ePIE, LSQML): the
// per-batch exit-wave update direction, and the all-positions illumination
// weights of IlluminationNorm::all.

#include <ptyko/core/batching.hpp>
#include <ptyko/core/impl/cost_slots.hpp>
#include <ptyko/core/impl/pipeline_chunk.hpp>
#include <ptyko/core/impl/update_sums.hpp>
#include <ptyko/core/solver.hpp>
#include <ptyko/kernels/forward.hpp>
#include <ptyko/kernels/fourier.hpp>
#include <ptyko/kernels/position_gradient.hpp>

#include <algorithm>
#include <array>
#include <numeric>
#include <vector>

namespace ptyko::impl {

/// Computes, for the batch `idx`, the model far field and replaces it by the
/// real-space exit-wave update delta (Gaussian: F^{-1}Psi' - psi, the
/// modulus projection's step; Poisson: F^{-1} Psi (d / I - 1) / 2, half of
/// -dL/dPsi*, see below). The patches S O go to `patches`, the batch's cost
/// to `cost`. Non-blocking.
template <class T, class ExecSpace>
void exit_wave_update(ExecSpace const& space, ForwardModel<T, ExecSpace> const& model,
                      LocalData<T, ExecSpace> const& data, State<T, ExecSpace> const& state,
                      IndexView<typename ExecSpace::memory_space> const& idx, NoiseModel noise,
                      ComplexView4<T, typename ExecSpace::memory_space> const& waves,
                      ComplexView3<T, typename ExecSpace::memory_space> const& patches,
                      Kokkos::View<double, typename ExecSpace::memory_space> const& cost) {
  int const B = int(idx.extent(0));
  model.far_field(space, state.object, state.probe, data.positions, idx, waves, patches);
  auto batch = Kokkos::subview(waves, std::make_pair(0, B), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
  // The inverse FFT's 1/D is folded into the direction kernel, and so is
  // the Poisson direction's 1/2: near the solution d / I - 1 ~ 2 (sqrt(d / I)
  // - 1), twice the modulus projection's step, which is what the Gaussian
  // direction is. Halved here, every reader (rPIE's update, LSQML's step
  // fit, position refinement's shift) takes a step of the same length
  // under either model. LSQML fitted its step lengths to the whole gradient
  // until 2026-12-06 and overshot: object errors 10-30 % higher than with
  // the half (docs/solvers.md, "Noise models").
  T const scale = T(noise == NoiseModel::poisson ? 0.5 : 1.0) / T(data.detector());
  data.frames.visit([&](auto const& frames) {
    cost_descent_direction(space, noise, B, waves, frames, idx, data.mask, state.background, cost, T(1e-6), scale);
  });
  model.fft().inverse(space, batch, batch, FFTNorm::none);
}

/// The number of pipeline passes (exit_wave_update calls) gradient_sums
/// makes over `batches` in chunks of `chunk` positions: the cost slots an
/// epoch needs.
template <class Batch>
int pipeline_passes(std::vector<Batch const*> const& batches, int chunk) {
  int passes = 0;
  for (auto const* batch : batches) passes += (int(batch->local.extent(0)) + chunk - 1) / chunk;
  return passes;
}

/// The gradient sums of a batch: exit_wave_update and sums.accumulate over
/// `idx` in chunks of `chunk` positions (pipeline_chunk). With `keep` every
/// chunk's waves and patches stay in their batch slots (a solver that reads
/// them again, LSQML); otherwise every chunk reuses the first slots, which
/// are still in cache. With `position_sums` (not empty) each position's
/// sums of position refinement are taken from the same waves and patches,
/// while they are in cache (Solver::collect_position_sums). Each chunk's
/// cost goes to the next of `costs`' slots. Non-blocking.
template <class T, class ExecSpace>
void gradient_sums(ExecSpace const& space, ForwardModel<T, ExecSpace> const& model,
                     LocalData<T, ExecSpace> const& data, State<T, ExecSpace> const& state,
                     IndexView<typename ExecSpace::memory_space> const& idx, NoiseModel noise,
                     ComplexView4<T, typename ExecSpace::memory_space> const& waves,
                     ComplexView3<T, typename ExecSpace::memory_space> const& patches, UpdateSums<T, ExecSpace>& sums,
                     CostSlots<ExecSpace>& costs, bool update_probe, int chunk, bool keep,
                     PositionSumsView<typename ExecSpace::memory_space> const& position_sums = {}) {
  using Mem = typename ExecSpace::memory_space;
  int const B = int(idx.extent(0));
  if (B > 0) sums.set_batch_probe(space, state.probe);
  for (int first = 0; first < B; first += chunk) {
    int const n = std::min(chunk, B - first), slot = keep ? first : 0;
    IndexView<Mem> const part = Kokkos::subview(idx, std::make_pair(first, first + n));
    auto const slots = std::make_pair(slot, slot + n);
    ComplexView4<T, Mem> const w = Kokkos::subview(waves, slots, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
    ComplexView3<T, Mem> const p = Kokkos::subview(patches, slots, Kokkos::ALL, Kokkos::ALL);
    exit_wave_update(space, model, data, state, part, noise, w, p, costs.next());
    if (position_sums.extent(0) > 0) position_shift_sums(space, n, state.probe, p, w, position_sums, part);
    sums.accumulate(space, state.probe, p, data.positions, part, w, update_probe, first);
  }
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
  sums.set_probe(space, state.probe);
  for (auto const& idx : chunks) {
    sums.add_illumination(space, data.positions, idx, sums.obj_w);
    extract_patches(space, state.object, data.positions, idx, model.patches());
    add_patch_intensity(space, int(idx.extent(0)), model.patches(), sums.probe_w);
  }
  sync.sum_object(space, ComplexView2<T, typename ExecSpace::memory_space>(), sums.obj_w);
  sync.sum_probe(space, ComplexView3<T, typename ExecSpace::memory_space>(), sums.probe_w);
  std::array<double, 2> maxima{max_value(space, sums.obj_w), max_value(space, sums.probe_w)};
  sync.max(maxima.data(), 2);
  return maxima;
}

/// Whether a batch-gradient solver (rPIE/ePIE, LSQML) with `options` and
/// `sync` takes its isolated positions apart (Solver::
/// updates_isolated_positions): with the batch's own illumination and no
/// clip, their object sums are their own terms alone
/// (kernels/isolated_update.hpp), on pixels no other rank holds
/// (Sync::footprint_private) or whose other holders get their products
/// (Sync::held_boxes), when the strategy reads no batch sums.
template <class T, class ExecSpace>
bool isolated_positions_apply(SolverOptions const& options, Sync<T, ExecSpace> const& sync) {
  return options.isolated_updates && options.illumination == IlluminationNorm::batch && !options.object_clip &&
         !sync.reads_batch_illumination();
}

/// Index Views covering `order` (frame indices) in pieces of at most `chunk`.
template <class Mem>
std::vector<IndexView<Mem>> index_chunks(std::vector<int> const& order, int chunk) {
  int const n = int(order.size());
  std::vector<IndexView<Mem>> out;
  for (int first = 0; first < n; first += chunk) {
    int const B = std::min(chunk, n - first);
    IndexView<Mem> idx(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::index_chunk"), B);
    auto h = Kokkos::create_mirror_view(idx);
    for (int b = 0; b < B; ++b) h(b) = order[first + b];
    Kokkos::deep_copy(idx, h);  // host -> device: chunk indices, once per run
    out.push_back(idx);
  }
  return out;
}

/// Index Views covering 0..n-1 in pieces of at most `chunk`.
template <class Mem>
std::vector<IndexView<Mem>> index_chunks(int n, int chunk) {
  std::vector<int> order(std::size_t(std::max(0, n)));
  std::iota(order.begin(), order.end(), 0);
  return index_chunks<Mem>(order, chunk);
}

/// index_chunks over the frames in ptyko::walking_order of their positions,
/// in bands of half a D x D frame: consecutive footprints share most of
/// their object window (10 000 frames: DM 2.36-2.61 -> 2.18-2.25 s per
/// epoch, docs/performance.md item 58; bands of D / 4 and D alike).
/// Blocking (copies the positions to the host).
template <class Mem, class T>
std::vector<IndexView<Mem>> walking_chunks(PositionView<T, Mem> const& positions, int D, int chunk) {
  auto const p = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), positions);  // device -> host: positions, once
  std::vector<std::array<double, 2>> host(p.extent(0));
  for (std::size_t k = 0; k < host.size(); ++k) host[k] = {double(p(k, 0)), double(p(k, 1))};
  return index_chunks<Mem>(walking_order(host, 0.5 * D), chunk);
}

}  // namespace ptyko::impl
