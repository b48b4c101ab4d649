#include <ptyko/core/frame_stats.hpp>
#include <ptyko/core/probe_focus.hpp>
#include <ptyko/core/reconstruction.hpp>

#include <Kokkos_Core.hpp>

#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <limits>
#include <memory>

namespace ptyko {

std::size_t probe_focus_quota(std::size_t own, std::size_t global, int max_frames) {
  if (max_frames <= 0 || global <= std::size_t(max_frames)) return own;
  // The share rounded up, so that the ranks' parts add up to max_frames or
  // a few more.
  std::size_t const share = (std::size_t(max_frames) * own + global - 1) / global;
  return std::min(own, std::max<std::size_t>(share, probe_focus_rank_frames));
}

std::vector<std::size_t> compact_frames(std::vector<std::array<double, 2>> const& positions,
                                        std::vector<std::size_t> const& ids, std::size_t count) {
  std::vector<std::size_t> out;
  if (count >= ids.size()) {
    out = ids;
  } else if (count > 0) {
    double cy = 0, cx = 0;
    for (std::size_t id : ids) {
      cy += positions.at(id)[0];
      cx += positions.at(id)[1];
    }
    cy /= double(ids.size());
    cx /= double(ids.size());
    // The centroid of a rank's frames may lie outside them (a ring of a
    // spiral held by one rank): the part grows around the frame nearest it.
    auto const distance2 = [&](std::size_t id, double y, double x) {
      double const dy = positions[id][0] - y, dx = positions[id][1] - x;
      return dy * dy + dx * dx;
    };
    auto const nearer = [&](double y, double x) {
      return [&, y, x](std::size_t a, std::size_t b) {
        double const da = distance2(a, y, x), db = distance2(b, y, x);
        return da < db || (da == db && a < b);
      };
    };
    std::size_t const seed = *std::min_element(ids.begin(), ids.end(), nearer(cy, cx));
    out = ids;
    std::nth_element(out.begin(), out.begin() + std::ptrdiff_t(count), out.end(),
                     nearer(positions[seed][0], positions[seed][1]));
    out.resize(count);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

/// What the trials run on: the rank's data and the scan's positions, or a
/// compact part of each rank's frames, renumbered (see choose_probe_start).
template <class T, class ExecSpace>
struct TrialFrames {
  LocalData<T, ExecSpace> data;
  std::vector<std::array<double, 2>> positions, file_positions;
};

template <class T, class ExecSpace>
TrialFrames<T, ExecSpace> trial_frames(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                       Sync<T, ExecSpace>& sync,
                                       std::vector<std::array<double, 2>> const& all_positions,
                                       std::vector<std::array<double, 2>> const& file_positions, int max_frames) {
  std::size_t const N = all_positions.size();
  if (max_frames <= 0 || N <= std::size_t(max_frames)) return {data, all_positions, file_positions};
  auto const mine =
      compact_frames(all_positions, data.frame_ids, probe_focus_quota(data.frame_ids.size(), N, max_frames));
  // Every rank learns the others' parts (one sum of a double per frame), so
  // that the trial's frames are numbered alike everywhere.
  std::vector<double> chosen(N, 0.0);
  for (std::size_t id : mine) chosen[id] = 1.0;
  sync.sum(chosen.data(), int(N));
  TrialFrames<T, ExecSpace> out;
  std::vector<std::size_t> new_id(N, 0);
  for (std::size_t id = 0; id < N; ++id)
    if (chosen[id] > 0) {
      new_id[id] = out.positions.size();
      out.positions.push_back(all_positions[id]);
      if (!file_positions.empty()) out.file_positions.push_back(file_positions[id]);
    }
  std::vector<int> keep;
  std::vector<std::size_t> ids;
  for (std::size_t f = 0; f < data.frame_ids.size(); ++f)
    if (chosen[data.frame_ids[f]] > 0) {
      keep.push_back(int(f));
      ids.push_back(new_id[data.frame_ids[f]]);
    }
  out.data = select_frames(space, data, keep, ids, out.positions.size());
  return out;
}

/// Whether one side's cost is probe_focus_decisive_ratio times the other's
/// (or only one side was tried: 0).
bool parted(double upstream_cost, double downstream_cost) {
  if (upstream_cost == 0 || downstream_cost == 0) return true;
  return std::max(upstream_cost, downstream_cost) >=
         probe_focus_decisive_ratio * std::min(upstream_cost, downstream_cost);
}

bool parted(ProbeStartTrial const& t) { return parted(t.upstream_cost, t.downstream_cost); }

}  // namespace

std::vector<double> probe_diameter_candidates(double default_diameter, int D) {
  std::vector<double> out;
  for (double factor : {1.0, 1.6, 2.5}) {
    double const d = std::clamp(default_diameter * factor, 4.0, std::max(4.0, 0.6 * D));
    if (out.empty() || d > 1.1 * out.back()) out.push_back(d);
  }
  return out;
}

std::vector<ProbeStart> probe_starts(ProbeFocus focus, std::vector<double> const& diameters) {
  std::vector<ProbeStart> out;
  for (ProbeFocus side : {ProbeFocus::upstream, ProbeFocus::downstream})
    if (focus == ProbeFocus::automatic || focus == side)
      for (double d : diameters) out.push_back({side, d});
  return out;
}

template <class T, class ExecSpace>
ProbeStartTrial choose_probe_start(ExecSpace const& space, LocalData<T, ExecSpace> const& data,
                                   Sync<T, ExecSpace>& sync, int tile_height, int tile_width,
                                   SolverOptions const& run, std::vector<ProbeStart> const& starts,
                                   std::vector<std::array<double, 2>> const& all_positions,
                                   std::vector<std::array<double, 2>> const& file_positions, int max_frames) {
  PTYKO_REQUIRE(!starts.empty(), "choose_probe_start: no start to try");
  // rPIE is the cheapest epoch and tells the sides apart as clearly as
  // LSQML; DM's costs from either side stay alike for its first epochs.
  SolverOptions trial;
  trial.solver = "rpie";
  trial.epochs = probe_focus_max_epochs;
  trial.batching = run.batching;
  trial.noise = run.noise;
  trial.modes = run.modes;
  trial.seed = run.seed;
  trial.probe_support = run.probe_support;
  trial.update_probe = run.update_probe;
  trial.illumination = run.illumination;
  trial.fft_planner = run.fft_planner;
  trial.pipeline_chunk = run.pipeline_chunk;
  // Plain rPIE: a few epochs' costs compare the starts, and momentum would
  // carry each start's first moves on unevenly.
  trial.momentum = 0;
  auto const try_frames = [&](TrialFrames<T, ExecSpace> const& part) {
    auto const trial_run = [&](ProbeStart const& start) {
      State<T, ExecSpace> state = initial_state<T, ExecSpace>(space, part.data, sync, tile_height, tile_width,
                                                              HostComplex3(), run.modes, run.seed, start.diameter,
                                                              start.focus);
      state.tile_y = part.data.tile_y;
      state.tile_x = part.data.tile_x;
      return std::make_unique<Reconstruction<T, ExecSpace>>(space, part.data, std::move(state), trial, sync,
                                                            part.positions, part.file_positions);
    };
    ProbeStartTrial out;
    out.frames = part.positions.size();
    out.starts = starts;
    // Every start for the first epochs, one at a time (each epoch is whole
    // and collective, so the strategy sees one run's epoch at a time).
    std::size_t best[2] = {starts.size(), starts.size()};  // each side's lowest cost (upstream, downstream)
    for (std::size_t k = 0; k < starts.size(); ++k) {
      auto rec = trial_run(starts[k]);
      double cost = 0;
      for (int e = 0; e < probe_focus_min_epochs; ++e) cost = rec->step().cost;
      out.costs.push_back(cost);  // a sum over all ranks: every rank decides alike
      std::size_t& side = best[starts[k].focus == ProbeFocus::downstream];
      if (side == starts.size() || cost < out.costs[side]) side = k;
    }
    out.epochs = probe_focus_min_epochs;
    out.upstream_cost = best[0] < starts.size() ? out.costs[best[0]] : 0;
    out.downstream_cost = best[1] < starts.size() ? out.costs[best[1]] : 0;
    if (!parted(out)) {
      // The sides are close (a probe much larger than the starts, or one at
      // its focus): each side's best start runs afresh, both in turn, until
      // the sides part.
      out.sides_ran_on = true;
      auto up = trial_run(starts[best[0]]);
      auto down = trial_run(starts[best[1]]);
      for (out.epochs = 1; out.epochs <= probe_focus_max_epochs; ++out.epochs) {
        out.upstream_cost = up->step().cost;
        out.downstream_cost = down->step().cost;
        if (out.epochs >= probe_focus_min_epochs && parted(out)) break;
      }
      out.epochs = std::min(out.epochs, probe_focus_max_epochs);
      out.start = starts[out.downstream_cost < out.upstream_cost ? best[1] : best[0]];
      return out;
    }
    out.start = starts[std::size_t(std::min_element(out.costs.begin(), out.costs.end()) - out.costs.begin())];
    return out;
  };
  // The part's frames (a copy) are released before any trial of the whole.
  ProbeStartTrial out = try_frames(trial_frames(space, data, sync, all_positions, file_positions, max_frames));
  if (out.frames < all_positions.size() && !parted(out)) {
    // The part did not tell the sides apart (it may hold little of the
    // sample: a scan's middle over empty support film): the whole scan
    // decides, as without a part.
    std::size_t const undecided = out.frames;
    out = try_frames(TrialFrames<T, ExecSpace>{data, all_positions, file_positions});
    out.undecided_frames = undecided;
  }
  return out;
}

#define PTYKO_INSTANTIATE(T)                                                                                  \
  template ProbeStartTrial choose_probe_start<T, Kokkos::DefaultExecutionSpace>(                              \
      Kokkos::DefaultExecutionSpace const&, LocalData<T, Kokkos::DefaultExecutionSpace> const&,               \
      Sync<T, Kokkos::DefaultExecutionSpace>&, int, int, SolverOptions const&, std::vector<ProbeStart> const&, \
      std::vector<std::array<double, 2>> const&, std::vector<std::array<double, 2>> const&, int);
PTYKO_INSTANTIATE(float)
PTYKO_INSTANTIATE(double)
#undef PTYKO_INSTANTIATE

}  // namespace ptyko
