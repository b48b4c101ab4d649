#include <ptyko/core/background_refinement.hpp>
#include <ptyko/core/batching.hpp>
#include <ptyko/core/intensity_refinement.hpp>
#include <ptyko/core/masked_power.hpp>
#include <ptyko/core/momentum.hpp>
#include <ptyko/core/noise_floor.hpp>
#include <ptyko/core/position_refinement.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/kernels/background.hpp>
#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/huge_pages.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/kernels/update.hpp>

#include "shared_isolated_plan.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <unordered_map>

namespace ptyko {

namespace impl {
/// sum(i, j) = sum over the first n frames of frames(f, i, j). Non-blocking.
/// One detector row per host work item, walking each frame's row with the
/// columns innermost (each frame row read once, in whole cache lines; a
/// loop per pixel over the frames touched a new line for every value and
/// took 2.7 s of a 10 000-frame run's start, docs/performance.md), one
/// pixel per device work item (coalesced over the columns); every pixel
/// sums its frames in order either way. (A named function: nvcc allows no
/// device lambda inside FrameStack::visit's generic lambda.)
template <class ExecSpace, class Frames, class Sum>
void sum_frames(ExecSpace const& space, Frames const& frames, int n, Sum const& sum) {
  int const D = int(sum.extent(0));
  for_each_frame_span(space, "ptyko::mean_pattern", 1, D, KOKKOS_LAMBDA(int, int i, int j0, int j1) {
    double* s = &sum(i, 0);
    for (int j = j0; j < j1; ++j) s[j] = 0;
    for (int f = 0; f < n; ++f) {
      auto const* row = &frames(f, i, 0);
      for (int j = j0; j < j1; ++j) s[j] += double(row[j]);
    }
  });
}
}  // namespace impl

template <class T, class ExecSpace>
std::pair<std::vector<double>, double> mean_pattern(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                                    Sync<T, ExecSpace>& sync) {
  using Mem = typename ExecSpace::memory_space;
  int const n = data.local_frames(), D = data.detector();
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> sum(Kokkos::view_alloc(space, "ptyko::mean_pattern"), D, D);
  data.frames.visit([&](auto const& frames) { impl::sum_frames(space, frames, n, sum); });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sum);  // device -> host: D x D pattern sum
  std::vector<double> pattern(h.data(), h.data() + h.span());
  sync.sum(pattern.data(), int(pattern.size()));
  double const frames_total = double(data.global_frames);
  auto h_mask = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data.mask);  // device -> host: mask
  double counts = 0;
  for (std::size_t k = 0; k < pattern.size(); ++k) {
    pattern[k] /= frames_total;
    if (h_mask.extent(0) == 0 || h_mask.data()[k]) counts += pattern[k];
  }
  return {pattern, counts};
}

template <class T, class ExecSpace>
State<T, ExecSpace> initial_state(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                  Sync<T, ExecSpace>& sync, int tile_height, int tile_width,
                                  HostComplex3 const& guess, int modes, std::uint64_t seed,
                                  double probe_diameter, ProbeFocus focus) {
  int const D = data.detector();
  auto [pattern, counts] = mean_pattern(space, data, sync);
  PTYKO_REQUIRE(counts > 0, "the frames hold no counts at all: nothing to reconstruct");
  if (modes <= 0) modes = guess.extent(0) > 0 ? int(guess.extent(0)) : 1;
  if (guess.extent(0) == 0 && data.mask.extent(0) > 0) {
    // The beam behind a beam stop or a masked centre, interpolated: a probe
    // from the pattern as measured would lack it (masked_power.hpp).
    auto const h_mask = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data.mask);  // device -> host: mask
    fill_unmeasured(pattern, std::vector<std::uint8_t>(h_mask.data(), h_mask.data() + h_mask.span()), D);
  }
  HostComplex3 probe = guess.extent(0) > 0
                           ? initial_probe_from_guess(guess, modes, seed, counts)
                           : initial_probe_from_pattern(pattern, D, modes, seed, counts, probe_diameter, focus);
  State<T, ExecSpace> state;
  using Mem = typename ExecSpace::memory_space;
  state.object = make_object_field<ComplexView2<T, Mem>>(space, "ptyko::State::object", tile_height, tile_width,
                                                        Complex<T>(1));
  state.probe = ComplexView3<T, Mem>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::State::probe"),
                                     modes, D, D);
  auto h_probe = Kokkos::create_mirror_view(state.probe);
  for (std::size_t k = 0; k < probe.span(); ++k) h_probe.data()[k] = Complex<T>(probe.data()[k]);
  Kokkos::deep_copy(space, state.probe, h_probe);  // host -> device: initial probe
  if (data.mask.extent(0) > 0) {
    // Scaled to the counts on the measured pixels, not to all (masked_power.hpp).
    MaskedPower<T, ExecSpace> masked(space, modes, D);
    double const f = masked.fraction(space, state.probe, data.mask);
    scale(space, state.probe, T(std::sqrt(probe_power_for_counts(counts, f) / counts)));
  }
  fence(space, "ptyko::initial_state");
  return state;
}

template <class T, class ExecSpace>
Reconstruction<T, ExecSpace>::Reconstruction(ExecSpace const& space, LocalData<T, ExecSpace> data,
                                             State<T, ExecSpace> state, SolverOptions options,
                                             Sync<T, ExecSpace>& sync,
                                             std::vector<std::array<double, 2>> const& all_positions,
                                             std::vector<std::array<double, 2>> const& file_positions)
    : m_space(space), m_data(std::move(data)), m_state(std::move(state)), m_options(std::move(options)), m_sync(sync) {
  resolve_solver_defaults(m_options, all_positions.size());
  PTYKO_ASSERT(all_positions.size() == m_data.global_frames, "positions of ", all_positions.size(),
               " frames for a dataset of ", m_data.global_frames);
  // Global batches, each filtered to this rank's frames (in file order).
  PTYKO_ASSERT(file_positions.empty() || file_positions.size() == all_positions.size(), file_positions.size(),
               " file positions for ", all_positions.size(), " frames");
  m_positions = all_positions;
  m_reference = file_positions.empty() ? all_positions : file_positions;
  // From the file's positions: a resumed run batches as the first did.
  m_global = make_batches(m_reference, m_options.batch_size, m_options.batching, m_options.seed);
  m_solver = make_solver<T, ExecSpace>(m_options.solver);
  if (m_sync.ranks() > 1 && (m_sync.reads_tile_sources() || !m_sync.held_boxes().empty())) {
    // Which rank holds each frame, for the batch tiles' sources and the
    // owners of isolated positions: every rank adds its number + 1 at its
    // frames (one sum of a double per frame, once).
    std::vector<double> holder(m_positions.size(), 0.0);
    for (std::size_t id : m_data.frame_ids) holder[id] = double(m_sync.rank() + 1);
    m_sync.sum(holder.data(), int(holder.size()));
    m_frame_rank.resize(holder.size());
    for (std::size_t id = 0; id < holder.size(); ++id) m_frame_rank[id] = int(holder[id]) - 1;
  }
  plan_batches();
  int max_local = 1;
  for (auto const& b : m_batches) max_local = std::max(max_local, int(b.local.extent(0)));
  auto const [pattern, power] = mean_pattern(m_space, m_data, m_sync);
  m_power = power;
  m_noise_floor = counting_noise_floor_of(pattern, m_options.noise, m_data.adu_per_photon);
  if (m_data.mask.extent(0) > 0)
    m_masked_power = std::make_unique<MaskedPower<T, ExecSpace>>(m_space, m_state.modes(), m_data.detector());
  // Refined intensities scale the frames, which are then floats (before the
  // solver's set-up, which may keep a View of them).
  if (m_options.refine_intensities)
    m_intensities = std::make_unique<IntensityRefiner<T, ExecSpace>>(m_space, m_data, m_state.modes(), m_options);
  if (m_options.refine_background)
    m_background = std::make_unique<BackgroundRefiner<T, ExecSpace>>(m_space, m_data, m_state.modes(), m_options);
  m_solver->setup(m_space, m_data, m_state, m_options, max_local);
  m_solver->counting_noise_floor(m_noise_floor);
  if (m_options.momentum > 0)
    m_momentum = std::make_unique<EpochMomentum<T, ExecSpace>>(m_space, m_state, m_options.momentum,
                                                               m_options.object_clip);
  else  // a checkpoint's velocities, resumed without momentum, are not carried on
    m_state.object_velocity = {}, m_state.probe_velocity = {};
  int const M = m_state.modes();
  if (M > 1)
    m_mode_mix = ComplexView2<T, typename ExecSpace::memory_space>(
        Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing, "ptyko::Reconstruction::mode_mix"), M, M);
}

template <class T, class ExecSpace>
Reconstruction<T, ExecSpace>::~Reconstruction() = default;

template <class T, class ExecSpace>
void Reconstruction<T, ExecSpace>::plan_batches() {
  bool const isolate = m_solver->updates_isolated_positions(m_options, m_sync);
  // Strategies that move isolated positions' products between the ranks
  // holding their pixels let every isolated position be updated directly.
  auto const boxes = isolate && m_sync.ranks() > 1 ? m_sync.held_boxes() : std::vector<std::array<int, 4>>();
  bool const share = !boxes.empty();
  PTYKO_ASSERT(!share || (!m_frame_rank.empty() && boxes[std::size_t(m_sync.rank())][0] == m_data.tile_y &&
                          boxes[std::size_t(m_sync.rank())][1] == m_data.tile_x),
               "held boxes need the frames' ranks and this rank's tile");
  std::unordered_map<std::size_t, int> local_of;
  for (std::size_t i = 0; i < m_data.frame_ids.size(); ++i) local_of[m_data.frame_ids[i]] = int(i);
  int const H = int(m_state.object.extent(0)), W = int(m_state.object.extent(1)), D = m_data.detector();
  std::vector<std::array<double, 2>> centres;
  bool const again = !m_batches.empty();  // after a position refinement: update the batches in place
  // Strategies that send each rank's own contributions read which ranks'
  // positions touched each tile.
  bool const sourced = m_sync.ranks() > 1 && m_sync.reads_tile_sources();
  std::vector<int> summed_ranks;
  m_batches.resize(m_global.size());
  for (std::size_t batch = 0; batch < m_global.size(); ++batch) {
    auto const& g = m_global[batch];
    // Tiles reached by any rank's positions of the batch, in this rank's
    // object coordinates: the sums of the batch are zero elsewhere. When
    // the solver updates isolated positions itself, they go last and out
    // of the tiles: positions whose footprints meet no other of the batch,
    // on pixels only their rank holds unless the strategy moves their
    // products to the other holders (decided alike on every rank, so that
    // the ranks' tile lists agree).
    centres.clear();
    for (int id : g) centres.push_back({m_positions[id][0] - m_data.tile_y, m_positions[id][1] - m_data.tile_x});
    std::vector<char> isolated = isolate ? isolated_footprints(centres, D) : std::vector<char>(g.size(), 0);
    if (!share)
      for (std::size_t k = 0; k < g.size(); ++k)
        isolated[k] = isolated[k] && m_sync.footprint_private(footprint_box(m_positions[g[k]], D));
    std::vector<int> mine, mine_isolated, rows, rows_isolated;
    std::vector<std::array<double, 2>> summed_centres;
    summed_ranks.clear();
    for (std::size_t k = 0; k < g.size(); ++k) {
      if (!isolated[k]) summed_centres.push_back(centres[k]);
      if (!isolated[k] && sourced) summed_ranks.push_back(m_frame_rank[std::size_t(g[k])]);
      auto it = local_of.find(std::size_t(g[k]));
      if (it == local_of.end()) continue;
      (isolated[k] ? mine_isolated : mine).push_back(it->second);
      (isolated[k] ? rows_isolated : rows).push_back(int(k));
    }
    // Again (positions refined): the same frames, so the index View is
    // rewritten in place, and the tile list is made anew only where the
    // tiles changed (moves of a fraction of a pixel rarely cross a tile's
    // edge): no allocation per batch and refinement.
    LocalBatch<ExecSpace>& b = m_batches[batch];
    b.global_size = int(g.size());
    b.isolated = int(mine_isolated.size());
    if (share) {  // batch slots: the summed positions first, then the isolated ones
      std::vector<int> slots(g.size(), -1);
      int summed = 0, alone = int(mine.size());
      for (std::size_t k = 0; k < g.size(); ++k)
        if (local_of.count(std::size_t(g[k]))) slots[k] = isolated[k] ? alone++ : summed++;
      b.shared = impl::plan_shared_isolated<T, typename ExecSpace::memory_space>(
          g, isolated, slots, m_positions, m_frame_rank, boxes, m_sync.rank(), D);
    }
    mine.insert(mine.end(), mine_isolated.begin(), mine_isolated.end());
    rows.insert(rows.end(), rows_isolated.begin(), rows_isolated.end());
    b.global_rows = std::move(rows);
    if (!again)
      b.local = IndexView<typename ExecSpace::memory_space>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::Reconstruction::batch"), mine.size());
    PTYKO_ASSERT(b.local.extent(0) == mine.size(), "batch of ", mine.size(), " local frames, was ",
                 b.local.extent(0));
    auto h = Kokkos::create_mirror_view(b.local);
    for (std::size_t k = 0; k < mine.size(); ++k) h(k) = mine[k];
    Kokkos::deep_copy(b.local, h);  // host -> device: batch indices, once per run (and per position refinement)
    auto const origins = footprint_tiles(summed_centres, D, H, W);
    bool same = again && b.tiles.host.extent(0) == origins.size();
    for (std::size_t k = 0; same && k < origins.size(); ++k)
      same = b.tiles.host(k, 0) == origins[k][0] && b.tiles.host(k, 1) == origins[k][1];
    if (!same)
      b.tiles = make_mirrored_tile_list<typename ExecSpace::memory_space>(origins, "ptyko::Reconstruction::batch_tiles");
    if (sourced)  // anew also when the tiles stayed: a position may have moved onto another of them
      b.tiles.sources =
          std::make_shared<TileSources const>(footprint_tile_sources(origins, summed_centres, summed_ranks, D, H, W));
  }
}

template <class T, class ExecSpace>
EpochReport Reconstruction<T, ExecSpace>::step() {
  auto const t0 = std::chrono::steady_clock::now();
  ScopedRegion region("ptyko::Reconstruction::epoch");
  int const epoch = m_state.epoch;
  auto const order = batch_order(int(m_batches.size()), m_options.seed, epoch);
  std::vector<LocalBatch<ExecSpace> const*> batches;
  batches.reserve(order.size());
  for (int b : order) batches.push_back(&m_batches[b]);
  bool const update_probe = m_options.update_probe && epoch >= m_options.probe_update_start;

  // Position refinement after this epoch: a solver that forms every
  // position's exit-wave update anyway collects its sums as it goes.
  bool const refine = m_options.refine_positions && epoch >= m_options.positions_start &&
                      (epoch - m_options.positions_start) % m_options.positions_every == 0;
  bool const collected = refine && m_solver->collects_position_sums();
  if (refine && !m_refiner)
    m_refiner = std::make_unique<PositionRefiner<T, ExecSpace>>(m_space, m_data, m_state.modes(), m_options);
  if (collected) m_solver->collect_position_sums(m_refiner->sums());

  if (m_momentum) m_momentum->begin(m_space, m_state, m_noise_floor);
  double cost = m_solver->epoch(m_space, m_data, m_state, batches, m_sync, update_probe);
  if (collected) m_solver->collect_position_sums({});
  cost = m_sync.sum(cost) / double(m_data.global_frames);

  // Strategies that reconcile only now (approximate consensus) must do it
  // before the probe is measured, recombined and rescaled, so that every rank
  // does exactly the same to identical probes.
  m_sync.end_epoch(m_space, m_state.object, m_state.probe, RealView2<T, typename ExecSpace::memory_space>());

  EpochReport report;
  // Positions move after the epoch (against the newest object, or, with
  // sums the solver collected, each batch's object as it was updated); the
  // batches' tiles follow them.
  if (refine) {
    auto const moved = m_refiner->refine(m_space, m_data, m_state, m_sync, m_positions, m_reference, collected);
    report.position_rms_move_px = moved.rms_move_px;
    report.position_max_move_px = moved.max_move_px;
    plan_batches();
    std::vector<std::array<double, 2>> own;
    own.reserve(m_data.frame_ids.size());
    for (std::size_t id : m_data.frame_ids) own.push_back(m_positions[id]);
    m_sync.positions_moved(own);
  }
  // Intensities after the positions: each frame's model where it now lies.
  if (m_intensities && epoch >= m_options.intensities_start &&
      (epoch - m_options.intensities_start) % m_options.intensities_every == 0) {
    auto const flux = m_intensities->refine(m_space, m_data, m_state, m_sync, m_positions);
    report.flux_rms_deviation = flux.rms_deviation;
    report.flux_min = flux.min_flux;
    report.flux_max = flux.max_flux;
  }
  // The background after the intensities: it is the same in every frame,
  // measured against the frames as now scaled.
  if (m_background && epoch >= m_options.background_start &&
      (epoch - m_options.background_start) % m_options.background_every == 0) {
    double const counts = m_background->refine(m_space, m_data, m_state, m_sync);
    report.background_fraction = m_power > 0 ? counts / m_power : 0;
  }
  // Momentum after the refinements: frames rescaled by intensity
  // refinement were measured against the solver's own state, not against
  // one carried on (on clean data refined from epoch 6 of 60 the object
  // error came out 0.0179 with momentum before the refinements, 0.0132 after
  // them, 0.0096 without refinement).
  if (m_momentum) m_momentum->end(m_space, m_state, cost, m_noise_floor, update_probe);
  // The probe's constraints last, so that every epoch ends with them
  // holding. (They leave the model's intensities unchanged but for the
  // support, so the refinements above saw the same model.)
  if (update_probe) report.mode_power_fractions = constrain_probe(epoch);
  fence(m_space, "ptyko::Reconstruction::epoch_done");

  report.epoch = epoch + 1;
  report.cost = cost;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report.bytes = double(m_sync.take_bytes_moved());
  m_state.epoch = epoch + 1;
  m_state.cost.push_back(cost);
  m_state.epoch_seconds.push_back(report.seconds);
  m_state.bytes_moved.push_back(report.bytes);
  return report;
}

template <class T, class ExecSpace>
std::vector<double> Reconstruction<T, ExecSpace>::constrain_probe(int epoch) {
  if (m_options.probe_support > 0) apply_probe_support<T>(m_space, m_state.probe, m_options.probe_support);
  std::vector<double> powers;
  if (m_state.modes() > 1) {
    std::vector<std::complex<double>> mix;
    powers = orthogonalize_modes<T>(m_space, m_state.probe, &mix, m_mode_mix);
    m_solver->modes_recombined(m_space, mix);
    if (m_momentum) m_momentum->modes_recombined(m_space, m_state, m_mode_mix);
  } else {
    powers = mode_powers<T>(m_space, m_state.probe);
  }
  // Scale ambiguity O c, P / c: hold the probe power at the measured counts
  // (so |O| ~ 1 where the sample is transparent), rescaling O to match.
  double const total = std::accumulate(powers.begin(), powers.end(), 0.0);
  if (m_options.rescale_every > 0 && (epoch + 1) % m_options.rescale_every == 0 && total > 0) {
    double const f = m_masked_power ? m_masked_power->fraction(m_space, m_state.probe, m_data.mask) : 0;
    // The probe carries the counts the background does not.
    double const background = m_state.background.extent(0) > 0
                                  ? measured_background_counts(m_space, m_state.background, m_data.mask)
                                  : 0.0;
    double const c = std::sqrt(probe_power_for_counts(std::max(0.0, m_power - background), f) / total);
    scale(m_space, m_state.probe, T(c));
    scale(m_space, m_state.object, T(1 / c));
    if (m_momentum) m_momentum->rescaled(m_space, m_state, c);
    for (auto& p : powers) p *= c * c;
  }
  double const sum = std::accumulate(powers.begin(), powers.end(), 0.0);
  std::vector<double> fractions;
  for (double p : powers) fractions.push_back(sum > 0 ? p / sum : 0);
  return fractions;
}

template <class T, class ExecSpace>
std::vector<double> Reconstruction<T, ExecSpace>::relative_flux() {
  return m_intensities ? m_intensities->relative_flux(m_data, m_sync) : std::vector<double>();
}

template <class T, class ExecSpace>
void Reconstruction<T, ExecSpace>::restore_flux(std::vector<double> const& flux) {
  PTYKO_ASSERT(m_intensities, "restore_flux without intensity refinement");
  PTYKO_ASSERT(flux.size() == m_data.global_frames, flux.size(), " fluxes for ", m_data.global_frames, " frames");
  m_intensities->restore(m_space, m_data, flux);
}

#define PTYKO_INSTANTIATE(T)                                                                         \
  template std::pair<std::vector<double>, double> mean_pattern<T, Kokkos::DefaultExecutionSpace>(   \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&,      \
      Sync<T, Kokkos::DefaultExecutionSpace>&);                                                      \
  template State<T, Kokkos::DefaultExecutionSpace> initial_state<T, Kokkos::DefaultExecutionSpace>( \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&,      \
      Sync<T, Kokkos::DefaultExecutionSpace>&, int, int, HostComplex3 const&, int, std::uint64_t,    \
      double, ProbeFocus);                                                                           \
  template class Reconstruction<T, Kokkos::DefaultExecutionSpace>;
PTYKO_INSTANTIATE(float)
PTYKO_INSTANTIATE(double)
#undef PTYKO_INSTANTIATE

}  // namespace ptyko
