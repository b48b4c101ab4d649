#pragma once
// Per-batch sums shared by the PIE-family and LSQML solvers: from the
// real-space exit-wave updates delta (B, M, D, D) of a batch,
//   obj_num   = sum_b S_b^T sum_m conj(P_m) delta(b, m)     (H, W) complex
//   obj_w     = sum_b S_b^T sum_m |P_m|^2                    (H, W) real
//   probe_num = sum_b conj(S_b O) delta(b, .)                (M, D, D) complex
//   probe_w   = sum_b |S_b O|^2                              (D, D) real
// then summed over ranks through Sync. Buffers are allocated once.
//
// Isolated positions (begin_isolated) skip the object sums: rPIE updates
// the object directly from their products, LSQML takes its direction there
// from them.
//
// A batch writes obj_num and obj_w only inside its footprints' tiles (the
// batch's TileList, which covers every rank's positions of the batch), so
// the object sums are zeroed and maximised over those tiles only: the other
// pixels stay zero from one batch to the next.

#include <ptyko/core/sync.hpp>
#include <ptyko/kernels/exit_wave.hpp>
#include <ptyko/kernels/forward.hpp>
#include <ptyko/kernels/huge_pages.hpp>
#include <ptyko/kernels/isolated_update.hpp>
#include <ptyko/kernels/patch.hpp>
#include <ptyko/kernels/pinned_mirror.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/kernels/update.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <limits>

namespace ptyko::impl {

template <class T, class ExecSpace>
class UpdateSums {
 public:
  using Mem = typename ExecSpace::memory_space;
  ComplexView2<T, Mem> obj_num;
  RealView2<T, Mem> obj_w;

 private:
  // One allocation holds probe_num and then probe_w, so that a strategy
  // sums both in one collective (allreduce_views); the two Views below are
  // unmanaged views into it.
  RealView1<T, Mem> m_probe_sums;

 public:
  ComplexView3<T, Mem> probe_num;
  RealView2<T, Mem> probe_w;

  UpdateSums() = default;
  UpdateSums(ExecSpace const& space, int H, int W, int M, int D, int max_batch)
      : obj_num(make_object_field<ComplexView2<T, Mem>>(space, "ptyko::UpdateSums::obj_num", H, W, Complex<T>(0))),
        obj_w(make_object_field<RealView2<T, Mem>>(space, "ptyko::UpdateSums::obj_w", H, W, T(0))),
        m_probe_sums(Kokkos::view_alloc(space, "ptyko::UpdateSums::probe_sums"), (2 * std::size_t(M) + 1) * D * D),
        probe_num(reinterpret_cast<Complex<T>*>(m_probe_sums.data()), M, D, D),
        probe_w(m_probe_sums.data() + 2 * std::size_t(M) * D * D, D, D),
        m_probe_int(Kokkos::view_alloc(space, "ptyko::UpdateSums::probe_intensity"), D, D),
        m_row_bounds(Kokkos::view_alloc(space, "ptyko::UpdateSums::footprint_row_bounds"), D + 1),
        m_products(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::UpdateSums::products"),
                   max_batch, D, D),
        m_maxima(Kokkos::view_alloc(space, "ptyko::UpdateSums::maxima"), 4),
        m_maxima_host(create_pinned_mirror(m_maxima)) {}

  /// Zeroes every sum (whole object).
  void zero(ExecSpace const& space, bool probe) {
    Kokkos::deep_copy(space, obj_num, Complex<T>(0));
    Kokkos::deep_copy(space, obj_w, T(0));
    m_written = MirroredTileList<Mem>();
    m_tiled = false;
    m_shared = nullptr;
    forget_batch(space, probe);
  }

  /// Starts a batch whose object sums lie in `tiles`: zeroes the tiles the
  /// previous batch wrote (the rest of the object sums is already zero).
  /// `shared`: the batch's isolated positions whose pixels other ranks
  /// hold too (LocalBatch::shared), whose products reduce moves.
  void begin_batch(ExecSpace const& space, MirroredTileList<Mem> const& tiles, bool probe,
                   SharedIsolated<Mem> const* shared = nullptr) {
    if (m_written.list.extent(0) > 0) {
      if (!m_num_zeroed && !m_w_zeroed)
        zero_tiles(space, m_written.list, obj_num, obj_w);
      else if (!m_num_zeroed)
        zero_tiles(space, m_written.list, obj_num);
      else if (!m_w_zeroed)
        zero_tiles(space, m_written.list, obj_w);
    }
    m_written = tiles;
    m_tiled = true;
    m_shared = shared;
    if (shared && shared->foreign() > int(m_foreign.extent(0)))  // grows in the first epoch, then stays
      m_foreign = ComplexView3<T, Mem>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                                          "ptyko::UpdateSums::foreign_products"),
                                       shared->foreign(), m_products.extent(1), m_products.extent(2));
    forget_batch(space, probe);
  }

  /// The object pass of this batch that reads obj_num last zeroes it behind
  /// itself (SumAfterUse::zeroed): the next begin_batch leaves it alone.
  /// Use the returned value as that pass's argument.
  SumAfterUse zero_numerator_after_use() {
    m_num_zeroed = m_tiled;
    return m_tiled ? SumAfterUse::zeroed : SumAfterUse::kept;
  }

  /// The same for obj_w, when `unread_after` (nothing reads it after that
  /// pass: Sync::reads_batch_illumination() is false) and the pass reads
  /// this obj_w (not another weight, IlluminationNorm::all); else kept.
  SumAfterUse zero_weight_after_use(bool unread_after) {
    m_w_zeroed = m_tiled && unread_after;
    return m_w_zeroed ? SumAfterUse::zeroed : SumAfterUse::kept;
  }

  /// The same for probe_num: the probe pass that reads it last clears it
  /// (probe_w is read by every mode's plane of that pass and is zeroed by
  /// the next batch as before). Use the returned value as that pass's
  /// argument.
  SumAfterUse zero_probe_numerator_after_use() {
    m_probe_num_zero = true;
    return SumAfterUse::zeroed;
  }

  /// Caches sum_m |P_m|^2 of `probe` for the illumination sums: call it
  /// whenever the probe changed, before accumulate / add_illumination (once
  /// per batch or pass, not per chunk of positions).
  void set_probe(ExecSpace const& space, ComplexView3<T, Mem> const& probe) {
    probe_intensity(space, probe, m_probe_int);
  }

  /// set_probe once per batch (begin_batch): the batch's probe is fixed
  /// until its update, and begin_isolated and the pipeline both need it.
  void set_batch_probe(ExecSpace const& space, ComplexView3<T, Mem> const& probe) {
    if (m_batch_probe_set) return;
    set_probe(space, probe);
    m_batch_probe_set = true;
  }

  /// Makes the last `isolated` positions of the batch `idx` isolated
  /// (LocalBatch::isolated): they add nothing to the object sums;
  /// accumulate keeps their products sum_m conj(P_m) delta at their batch
  /// slots instead (kept_isolated), for an update from their footprints
  /// alone once the batch's largest weight over all ranks is known (reduce):
  /// rPIE's apply_isolated_update, LSQML's isolated_directions. Call after
  /// begin_batch, with the batch's probe. Returns this rank's largest
  /// isolated weight, for reduce: on host spaces a host value (blocking),
  /// unless `in_space` (one rank: no maximum over ranks); on devices always
  /// left in a slot in the space's memory (non-blocking; ScalarArg), which
  /// reduce on several ranks brings to the host with the other maxima,
  /// behind one wait.
  ScalarArg<T, Mem> begin_isolated(ExecSpace const& space, ComplexView3<T, Mem> const& probe,
                                   PositionView<T, Mem> const& positions, IndexView<Mem> const& idx, int isolated,
                                   bool in_space = false) {
    in_space = in_space || !is_host_space_v<ExecSpace>;
    int const B = int(idx.extent(0));
    set_batch_probe(space, probe);
    IndexView<Mem> const alone = Kokkos::subview(idx, std::make_pair(B - isolated, B));
    m_isolated_from = B - isolated;
    m_isolated_in_pipeline = false;
    footprint_row_bounds(space, m_probe_int, m_row_bounds);
    if (!in_space) return max_isolated_weight(space, positions, alone, m_probe_int, m_row_bounds);
    max_isolated_weight(space, positions, alone, m_probe_int, m_row_bounds, maximum_slot(isolated_slot));
    return ScalarArg<T, Mem>(maximum_slot(isolated_slot));
  }

  /// begin_isolated for rPIE on one rank, where the batch's largest weight
  /// is this rank's: accumulate updates each isolated position as its chunk
  /// goes, O += step S^T(sum_m conj(P_m) delta) / ((1 - alpha) S^T sum_m
  /// |P_m|^2 + alpha w_max) (apply_isolated_update), with its product still
  /// in cache. That needs w_max first, so the other positions' illumination
  /// is added now (accumulate then skips it); w_max is the larger of the
  /// isolated positions' maximum and the others', which stay in slots in
  /// the space's memory on devices (no wait for the host) and reduce
  /// returns as the object's maximum.
  void begin_isolated_updates(ExecSpace const& space, ComplexView3<T, Mem> const& probe,
                              PositionView<T, Mem> const& positions, IndexView<Mem> const& idx, int isolated,
                              ComplexView2<T, Mem> const& object, double alpha, double step) {
    int const B = int(idx.extent(0));
    ScalarArg<T, Mem> w_max = begin_isolated(space, probe, positions, idx, isolated, /*in_space=*/true);
    m_isolated_in_pipeline = true;
    m_object = object;
    add_illumination(space, positions, Kokkos::subview(idx, std::make_pair(0, B - isolated)), obj_w);
    if constexpr (is_host_space_v<ExecSpace>) {
      w_max.value = m_w_max;  // the scatter's maximum
    } else {
      max_over_tiles(space, m_written.list, obj_w, maximum_slot(summed_slot));
      w_max = w_max.with(maximum_slot(summed_slot));
    }
    m_isolated_step = PreconditionedStepArg<T, Mem>{alpha, w_max, step};
    m_batch_w_max = w_max;  // the batch's, for reduce: no pass of its own on any space
    m_batch_w_max_set = true;
  }

  /// The isolated positions of the batch `idx` (begin_isolated) and their
  /// products sum_m conj(P_m) delta, which accumulate kept.
  struct IsolatedProducts {
    IndexView<Mem> indices;
    ComplexView3<T, Mem> products;
  };
  IsolatedProducts kept_isolated(IndexView<Mem> const& idx) const {
    int const B = int(idx.extent(0));
    auto const alone = std::make_pair(std::min(m_isolated_from, B), B);
    return {Kokkos::subview(idx, alone), Kokkos::subview(m_products, alone, Kokkos::ALL, Kokkos::ALL)};
  }

  /// Other ranks' isolated positions whose footprints reach this rank's
  /// pixels (LocalBatch::shared), and the parts of their products reduce
  /// received: update their pixels here as the owners update theirs
  /// (apply_isolated_update, isolated_directions with the object's extent).
  struct ForeignProducts {
    ShiftedPositions<T, Mem> placed;
    ComplexView3<T, Mem> products;
  };
  ForeignProducts foreign_isolated() const {
    if (m_shared == nullptr) return {};
    return {ShiftedPositions<T, Mem>{m_shared->foreign_positions, m_shared->foreign_shifts},
            m_foreign};
  }

  /// sum_m |P_m|^2 of the batch's probe (set_batch_probe): the isolated
  /// positions' weights are its S^T.
  RealView2<T, Mem> const& batch_probe_intensity() const { return m_probe_int; }

  /// Adds the batch's contributions; `patches` must hold S_b O of the batch
  /// and set_probe must have seen `probe`. `idx` may be a part of the batch
  /// starting at its position `first`; the isolated ones keep their
  /// products at their batch slots (begin_isolated) or update the object
  /// (begin_isolated_updates).
  void accumulate(ExecSpace const& space, ComplexView3<T, Mem> const& probe,
                  ComplexView3<T, Mem> const& patches, PositionView<T, Mem> const& positions,
                  IndexView<Mem> const& idx, ComplexView4<T, Mem> const& delta, bool probe_sums, int first = 0) {
    int const B = int(idx.extent(0));
    if (B == 0) return;
    int const summed = std::clamp(m_isolated_from - first, 0, B);
    bool const keep = summed < B && !m_isolated_in_pipeline;
    probe_adjoint_product(space, keep ? summed : B, probe, delta, m_products);
    if (summed > 0)
      scatter_products(space, positions, Kokkos::subview(idx, std::make_pair(0, summed)),
                       m_isolated_from == no_isolated || !m_isolated_in_pipeline);
    if (keep) {  // at their batch slots, which the chunks' own slots never reach again
      ComplexView4<T, Mem> const g =
          Kokkos::subview(delta, std::make_pair(summed, B), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
      ComplexView3<T, Mem> const slots =
          Kokkos::subview(m_products, std::make_pair(first + summed, first + B), Kokkos::ALL, Kokkos::ALL);
      probe_adjoint_product(space, B - summed, probe, g, slots);
    } else if (summed < B) {
      IndexView<Mem> const tail = Kokkos::subview(idx, std::make_pair(summed, B));
      ComplexView3<T, Mem> const products =
          Kokkos::subview(m_products, std::make_pair(summed, B), Kokkos::ALL, Kokkos::ALL);
      apply_isolated_update(space, positions, tail, products, m_probe_int, m_object, m_isolated_step);
    }
    if (probe_sums) {
      m_probe_num_zero = false;
      add_probe_sums(space, B, patches, delta, probe_num, probe_w);
    }
  }

  /// Slots for the products sum_m conj(P_m) delta(b, m) of a chunk of B
  /// positions, for a caller that forms them in a kernel of its own while
  /// it writes delta (DM's wave update); then add_products.
  ComplexView3<T, Mem> product_slots(int B) const {
    return Kokkos::subview(m_products, std::make_pair(0, B), Kokkos::ALL, Kokkos::ALL);
  }

  /// accumulate's object sums for the positions `idx`, from the products
  /// already in product_slots (batches without isolated positions; no probe
  /// sums).
  void add_products(ExecSpace const& space, PositionView<T, Mem> const& positions, IndexView<Mem> const& idx) {
    PTYKO_ASSERT(m_isolated_from == no_isolated, "add_products is for batches without isolated positions");
    if (idx.extent(0) > 0) scatter_products(space, positions, idx, true);
  }

  /// target += sum_b S_b^T sum_m |P_m|^2 for the positions `idx`, with the
  /// probe of the last set_probe. On host spaces the scatter also keeps the
  /// largest value it leaves (for reduce: on one rank the batch's maximum
  /// weight without a pass of its own); blocking there.
  void add_illumination(ExecSpace const& space, PositionView<T, Mem> const& positions, IndexView<Mem> const& idx,
                        RealView2<T, Mem> const& target) {
    int const B = int(idx.extent(0));
    if (B == 0) return;
    auto pint = m_probe_int;
    auto const row = KOKKOS_LAMBDA(int, int i) { return &pint(i, 0); };
    if constexpr (is_host_space_v<ExecSpace>)
      m_w_max = std::max(m_w_max, scatter_add_patches_max(space, B, int(pint.extent(0)), positions, idx, target, row,
                                                          "ptyko::UpdateSums::illumination"));
    else
      scatter_add_patches(space, B, int(pint.extent(0)), positions, idx, target, row,
                          "ptyko::UpdateSums::illumination");
  }

  /// Sums over ranks; returns the global maxima of obj_w and probe_w.
  /// `isolated_max`: this rank's largest weight of isolated positions
  /// outside the sums (begin_isolated), taken into the object maximum. On
  /// one rank the maxima not known yet stay where their reductions leave
  /// them, for the update kernels to read (ScalarArg): a device then runs
  /// the batch from its sums to its update without waiting for the host.
  /// On several they are host values, maximised over ranks (collective).
  std::array<ScalarArg<T, Mem>, 2> reduce(ExecSpace const& space, Sync<T, ExecSpace>& sync, bool probe,
                                          ScalarArg<T, Mem> const& isolated_max = 0.0) {
    // The batch's largest weight without a pass of its own where possible:
    // set by begin_isolated_updates, or from the strategy's sum, given on
    // host spaces the largest weight the illumination scatter left (the
    // tiles are zero elsewhere).
    PTYKO_ASSERT(!m_batch_w_max_set || sync.ranks() == 1, "isolated updates in the pipeline are for one rank");
    double known = -1;
    bool global = false;
    if (m_tiled) {
      // On several ranks the probe sums' all-reduce may carry the batch's
      // largest weight too (FoldedMaximum): the strategy then asks for this
      // rank's after the sums, when it does not know it itself (devices).
      FoldedMaximum<T, Mem> fold;
      if (sync.ranks() > 1 && probe) {
        fold.slots = fold_slots(space, sync.ranks());
        fold.outside = isolated_max.value;
        fold.outside_in_space = !isolated_max.on_host();
        fold.queue_own = [&] {
          max_over_tiles(space, m_written.list, obj_w, maximum_slot(object_slot));
          Kokkos::deep_copy(space, m_maxima_host, m_maxima);  // device -> host: the maxima (page-locked: queued)
        };
        fold.own_queued = [&] {
          double largest = std::max(0.0, double(m_maxima_host(object_slot)));  // below 0: no value, 0
          if (!isolated_max.on_host()) largest = std::max(largest, double(m_maxima_host(isolated_slot)));
          return largest;
        };
        fold.after_sums = [&] {
          fold.queue_own();
          fence(space, "ptyko::UpdateSums::maxima");
          return fold.own_queued();
        };
      }
      auto const sums = sync.sum_batch(space, obj_num, obj_w, m_written, m_w_max_known ? m_w_max : -1.0, probe_num,
                                       probe_w, probe, SharedProducts<T, Mem>{m_shared, m_products, m_foreign}, fold);
      known = sums.value;
      global = sums.global && sync.ranks() > 1;
    } else {
      PTYKO_ASSERT(m_shared == nullptr, "isolated positions' products move with tiled sums only");
      sync.sum_object(space, obj_num, obj_w);
      if (probe) sync.sum_probe(space, probe_num, probe_w);
    }
    // The maxima still unknown are reduced into slots in the space's memory.
    // The probe's stays there on any number of ranks: the summed probe
    // weight is the same on every rank, and so is its largest value.
    bool const obj_unknown = known < 0 && !m_batch_w_max_set;
    if (obj_unknown && m_tiled)
      max_over_tiles(space, m_written.list, obj_w, maximum_slot(object_slot));
    else if (obj_unknown)
      max_value(space, obj_w, maximum_slot(object_slot));
    ScalarArg<T, Mem> const probe_max = probe ? ScalarArg<T, Mem>(maximum_slot(probe_slot)) : ScalarArg<T, Mem>(0.0);
    if (sync.ranks() == 1) {
      if (probe) max_value(space, probe_w, maximum_slot(probe_slot));
      ScalarArg<T, Mem> object = m_batch_w_max_set ? m_batch_w_max
                                 : obj_unknown     ? ScalarArg<T, Mem>(maximum_slot(object_slot))
                                                   : ScalarArg<T, Mem>(known);
      object.value = std::max(object.value, isolated_max.value);
      if (!isolated_max.on_host()) object = object.with(isolated_max.slot);
      return {object, probe_max};
    }
    // Several ranks: the strategy's sums told the largest over all ranks,
    // or the object's goes back to the host, where no strategy told it,
    // with the isolated positions' where it is in its slot (devices), and
    // is maximised over ranks (the probe's reduction queued after the copy,
    // which then does not wait for it).
    if (global) {
      if (probe) max_value(space, probe_w, maximum_slot(probe_slot));
      return {ScalarArg<T, Mem>(known), probe_max};
    }
    double object = known;
    if (obj_unknown || !isolated_max.on_host()) {
      Kokkos::deep_copy(space, m_maxima_host, m_maxima);  // device -> host: the maxima
      fence(space, "ptyko::UpdateSums::maxima");
      if (obj_unknown) object = std::max(0.0, double(m_maxima_host(object_slot)));  // below 0: no value, 0
    }
    if (probe) max_value(space, probe_w, maximum_slot(probe_slot));
    object = std::max(object, isolated_max.value);
    if (!isolated_max.on_host()) object = std::max(object, double(m_maxima_host(isolated_slot)));
    sync.max(&object, 1);
    return {ScalarArg<T, Mem>(object), probe_max};
  }

 private:
  // m_maxima's slots: obj_w's and probe_w's maxima (reduce), the isolated
  // positions' and, on devices, the other positions' (begin_isolated_updates).
  static constexpr int object_slot = 0, probe_slot = 1, isolated_slot = 2, summed_slot = 3;
  Kokkos::View<T, Mem> maximum_slot(int k) const { return Kokkos::View<T, Mem>(m_maxima.data() + k); }

  /// FoldedMaximum's slots for `ranks` ranks, right after probe_w in the
  /// probe sums' allocation, which grows once (the first batch summed over
  /// several ranks) and keeps the sums it holds.
  RealView1<T, Mem> fold_slots(ExecSpace const& space, int ranks) {
    std::size_t const n = 2 * probe_num.span() + probe_w.span();
    if (m_probe_sums.extent(0) < n + std::size_t(ranks)) {
      RealView1<T, Mem> grown(Kokkos::view_alloc(space, "ptyko::UpdateSums::probe_sums"), n + std::size_t(ranks));
      auto const sums = std::make_pair(std::size_t(0), n);
      Kokkos::deep_copy(space, Kokkos::subview(grown, sums), Kokkos::subview(m_probe_sums, sums));  // device -> device: once per run
      fence(space, "ptyko::UpdateSums::fold_slots");  // the copy reads the old allocation, released below
      int const M = int(probe_num.extent(0)), D = int(probe_w.extent(0));
      m_probe_sums = grown;
      probe_num = ComplexView3<T, Mem>(reinterpret_cast<Complex<T>*>(m_probe_sums.data()), M, D, D);
      probe_w = RealView2<T, Mem>(m_probe_sums.data() + 2 * std::size_t(M) * D * D, D, D);
    }
    return Kokkos::subview(m_probe_sums, std::make_pair(n, n + std::size_t(ranks)));
  }

  void zero_probe(ExecSpace const& space) {
    if (!m_probe_num_zero) Kokkos::deep_copy(space, probe_num, Complex<T>(0));
    m_probe_num_zero = true;
    Kokkos::deep_copy(space, probe_w, T(0));
  }

  /// obj_num += S^T of the products in product_slots for the positions
  /// `idx`, and with `illumination` obj_w += S^T sum_m |P_m|^2.
  void scatter_products(ExecSpace const& space, PositionView<T, Mem> const& positions, IndexView<Mem> const& idx,
                        bool illumination) {
    add_patches(space, product_slots(int(idx.extent(0))), positions, idx, obj_num);
    if (illumination) add_illumination(space, positions, idx, obj_w);
  }

  /// Forgets what the sums knew of the previous batch (its isolated
  /// positions, its probe sums and largest weights, which sums its last
  /// readers cleared) and zeroes the probe sums when `probe`: the common
  /// start of zero() and begin_batch().
  void forget_batch(ExecSpace const& space, bool probe) {
    m_isolated_from = no_isolated;
    m_batch_probe_set = false;
    m_w_max = 0;
    m_w_max_known = is_host_space_v<ExecSpace>;
    m_batch_w_max_set = false;
    m_num_zeroed = m_w_zeroed = false;
    if (probe) zero_probe(space);
  }

  static constexpr int no_isolated = std::numeric_limits<int>::max();
  int m_isolated_from = no_isolated;  ///< the batch's first isolated position (begin_isolated)
  ComplexView2<T, Mem> m_object;      ///< the object isolated positions update (in the pipeline)
  bool m_batch_probe_set = false;      ///< set_batch_probe ran since begin_batch
  bool m_isolated_in_pipeline = true;  ///< begin_isolated_updates, not begin_isolated
  PreconditionedStepArg<T, Mem> m_isolated_step{0, 0.0, 0};  ///< in the pipeline
  ScalarArg<T, Mem> m_batch_w_max{0.0};  ///< the batch's largest weight (begin_isolated_updates)
  bool m_batch_w_max_set = false;        ///< m_batch_w_max is set for this batch
  MirroredTileList<Mem> m_written;  ///< tiles of the current batch (when m_tiled)
  bool m_tiled = false;     ///< false: the sums may span the whole object
  bool m_num_zeroed = false;  ///< obj_num is already zero on m_written
  bool m_w_zeroed = false;    ///< obj_w is already zero on m_written
  bool m_probe_num_zero = true;  ///< probe_num is all zero (allocated zeroed)
  double m_w_max = 0;  ///< host spaces: the largest value add_illumination left since the batch began;
                       ///< with isolated positions in the pipeline, the batch's largest weight
  bool m_w_max_known = is_host_space_v<ExecSpace>;  ///< m_w_max holds the batch's largest (local) weight
  RealView2<T, Mem> m_probe_int;
  RealView1<T, Mem> m_row_bounds;  ///< footprint_row_bounds of m_probe_int, for max_isolated_weight
  ComplexView3<T, Mem> m_products;
  SharedIsolated<Mem> const* m_shared = nullptr;  ///< the batch's (begin_batch)
  ComplexView3<T, Mem> m_foreign;  ///< parts of other ranks' products (foreign_isolated)
  RealView1<T, Mem> m_maxima;  ///< reduce's maxima of obj_w and probe_w, before their copy to the host
  PinnedMirror<RealView1<T, Mem>> m_maxima_host;
};

}  // namespace ptyko::impl
