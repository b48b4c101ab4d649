#pragma once
// Reconstruction's plan of a batch's isolated positions whose pixels
// several ranks hold (core/shared_isolated.hpp). Host code, run once per
// run and after each position refinement.

#include <ptyko/core/shared_isolated.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/patch.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <vector>

namespace ptyko::impl {

/// The plan for `rank` of the batch `ids` (global frame ids): member k is
/// isolated when isolated[k], held by rank frame_rank[ids[k]] at batch
/// slot slots[k] there (this rank's slots; -1 for other ranks' members);
/// `positions` are global object pixels by frame id, `boxes` every rank's
/// tile {y, x, height, width} (Sync::held_boxes). Every rank whose tile
/// meets the footprint of an isolated member holds some of its pixels and
/// gets the part of the product those pixels read from its owner. Null
/// when this rank sends and receives nothing. Both ranks of a message list
/// its parts in the batch's order, so both compute the same offsets.
template <class T, class Mem>
std::shared_ptr<SharedIsolated<Mem> const> plan_shared_isolated(std::vector<int> const& ids,
                                                                std::vector<char> const& isolated,
                                                                std::vector<int> const& slots,
                                                                std::vector<std::array<double, 2>> const& positions,
                                                                std::vector<int> const& frame_rank,
                                                                std::vector<std::array<int, 4>> const& boxes, int rank,
                                                                int D) {
  using Part = std::array<int, 6>;
  std::map<int, std::vector<Part>> sends, receives;  // by rank, ascending
  std::vector<std::array<double, 2>> foreign_pos;
  std::vector<std::array<int, 2>> foreign_shift;
  auto const& mine = boxes[std::size_t(rank)];
  for (std::size_t k = 0; k < ids.size(); ++k) {
    int const id = ids[k], owner = frame_rank[std::size_t(id)];
    if (!isolated[k] || owner < 0) continue;  // (a frame no rank holds: dropped as empty)
    auto const& home = boxes[std::size_t(owner)];
    auto const& global = positions[std::size_t(id)];
    auto const corner = owner_footprint_corner<T>(global, {home[0], home[1]}, D);
    for (int q = 0; q < int(boxes.size()); ++q) {
      if (q == owner || (rank != owner && rank != q)) continue;
      auto const part = product_part_read_by(corner, boxes[std::size_t(q)], D);
      if (part[2] == 0) continue;
      if (rank == owner) {
        PTYKO_ASSERT(slots[k] >= 0, "an isolated position of this rank has no batch slot");
        sends[q].push_back({slots[k], part[0], part[1], part[2], part[3], 0});
      } else {
        receives[owner].push_back({int(foreign_pos.size()), part[0], part[1], part[2], part[3], 0});
        // As the owner's LocalData holds it (before the cast to T).
        foreign_pos.push_back({global[0] - home[0], global[1] - home[1]});
        foreign_shift.push_back({home[0] - mine[0], home[1] - mine[1]});
      }
    }
  }
  if (sends.empty() && receives.empty()) return nullptr;
  auto plan = std::make_shared<SharedIsolated<Mem>>();
  std::vector<Part> parts;
  auto const list = [&](std::map<int, std::vector<Part>>& by_rank, auto& messages) {
    for (auto& [r, ps] : by_rank) {
      typename SharedIsolated<Mem>::Message m;
      m.rank = r;
      m.first = int(parts.size());
      m.count = int(ps.size());
      for (Part& p : ps) {
        p[5] = int(m.values);
        m.values += std::size_t(p[3]) * std::size_t(p[4]);
        parts.push_back(p);
      }
      messages.push_back(m);
    }
  };
  list(sends, plan->sends);
  list(receives, plan->receives);
  plan->parts = typename SharedIsolated<Mem>::Parts(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::SharedIsolated::parts"), parts.size());
  auto parts_host = Kokkos::create_mirror_view(plan->parts);
  for (std::size_t p = 0; p < parts.size(); ++p)
    for (int j = 0; j < 6; ++j) parts_host(p, j) = parts[p][std::size_t(j)];
  Kokkos::deep_copy(plan->parts, parts_host);  // host -> device: the parts, once per run
  int const n = int(foreign_pos.size());
  plan->foreign_positions = decltype(plan->foreign_positions)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::SharedIsolated::foreign_positions"), n);
  plan->foreign_shifts = decltype(plan->foreign_shifts)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::SharedIsolated::foreign_shifts"), n);
  auto hp = Kokkos::create_mirror_view(plan->foreign_positions);
  auto hs = Kokkos::create_mirror_view(plan->foreign_shifts);
  for (int f = 0; f < n; ++f)
    for (int j = 0; j < 2; ++j) {
      hp(f, j) = foreign_pos[std::size_t(f)][std::size_t(j)];
      hs(f, j) = foreign_shift[std::size_t(f)][std::size_t(j)];
    }
  Kokkos::deep_copy(plan->foreign_positions, hp);  // host -> device: other ranks' positions, once per run
  Kokkos::deep_copy(plan->foreign_shifts, hs);     // host -> device: their shifts
  return plan;
}

}  // namespace ptyko::impl
