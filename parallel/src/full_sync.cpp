// full-sync: every rank holds the whole object and probe; the sums of every
// batch are all-reduced, so every rank applies the identical update and P
// ranks reproduce the 1-rank result to float rounding (the global batches do
// not depend on P). A batch's isolated positions (rPIE, ePIE, LSQML: their
// footprints meet no other of the batch) stay out of the sums: their
// owners send their products to every other rank, and every rank applies
// the same update from them, as one rank does. Frames go to ranks as
// equal-count compact groups.

#include "product_moves.hpp"
#include "strategies.hpp"

#include <ptyko/core/batching.hpp>
#include <ptyko/parallel/impl/staging.hpp>

namespace ptyko::parallel::impl {

template <class T, class ExecSpace>
class FullSync final : public Strategy<T, ExecSpace> {
 public:
  using Base = Strategy<T, ExecSpace>;
  using typename Base::ComplexField;
  using typename Base::ProbeField;
  using typename Base::RealField;
  using Base::max;
  using Base::sum;
  using Base::sum_object;
  using Mem = typename ExecSpace::memory_space;

  FullSync(Communicator comm, ScanLayout const& layout) : m_comm(std::move(comm)) {
    m_decomposition.frame_ids = frames_of_rank(layout, m_comm);
    m_decomposition.tile_y = 0;
    m_decomposition.tile_x = 0;
    m_decomposition.tile_height = layout.grid.height;
    m_decomposition.tile_width = layout.grid.width;
  }

  std::string name() const override { return "full-sync"; }
  bool reads_batch_illumination() const override { return false; }
  int ranks() const override { return m_comm.size(); }
  int rank() const override { return m_comm.rank(); }
  Decomposition const& decomposition() const override { return m_decomposition; }
  Communicator const& communicator() const override { return m_comm; }

  void sum_object(ExecSpace const& space, ComplexField const& num, RealField const& w) override {
    allreduce_view(space, m_comm, num, ReduceOp::sum, m_staging);
    allreduce_view(space, m_comm, w, ReduceOp::sum, m_staging);
  }
  /// Only the batch's tiles: every rank has the whole object and the same
  /// global batches, hence the same tile list, and nothing outside it. The
  /// unpack writes every pixel of the tiles, so it also returns their
  /// largest weight (one rank: `local_max`, the sums are its own).
  double sum_object(ExecSpace const& space, ComplexField const& num, RealField const& w,
                    MirroredTileList<Mem> const& batch_tiles, double local_max) override {
    return sum_batch(space, num, w, batch_tiles, local_max, ProbeField(), RealField(), false, {}, {}).value;
  }
  /// Every rank holds every pixel: isolated positions (whose footprints
  /// meet no other of the batch) are updated by every rank from their
  /// owner's product (SharedProducts), instead of through the tile sums.
  /// A product is 8 bytes a footprint pixel, sent once to each other rank,
  /// where the tiles are 12 (sum and weight) over whole tiles, all-reduced.
  std::vector<std::array<int, 4>> held_boxes() const override {
    if (m_comm.size() == 1) return {};
    return std::vector<std::array<int, 4>>(std::size_t(m_comm.size()),
                                           {0, 0, m_decomposition.tile_height, m_decomposition.tile_width});
  }
  /// The packed tiles and the probe sums in one all-reduce call, the
  /// isolated positions' products beside it: one wait for the device, and
  /// staged, one collective. The largest weight the unpack finds is the
  /// same on every rank (their sums are); the isolated positions' largest
  /// weights, outside the sums, ride in the probe sums' all-reduce
  /// (FoldedMaximum), so the maximum is global without a collective or a
  /// wait of its own. Without isolated positions it is global anyway.
  BatchMaximum sum_batch(ExecSpace const& space, ComplexField const& num, RealField const& w,
                         MirroredTileList<Mem> const& batch_tiles, double local_max, ProbeField const& probe_num,
                         RealField const& probe_w, bool probe, SharedProducts<T, Mem> const& shared,
                         FoldedMaximum<T, Mem> const& fold) override {
    auto const& tiles = batch_tiles.list;
    if (m_comm.size() == 1) return {local_max, false};
    std::size_t const P = std::size_t(m_comm.size());
    bool const folding = probe && fold.slots.extent(0) == P;
    std::size_t const n = 3 * tiles.extent(0) * std::size_t(tile_edge) * tile_edge;
    if (m_packed.extent(0) < n)  // grows to the largest batch, then stays
      m_packed = RealView1<T, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::FullSync::packed"), n);
    RealView1<T, Mem> packed = Kokkos::subview(m_packed, std::make_pair(std::size_t(0), n));
    if (n > 0) pack_tiles(space, tiles, num, w, packed);
    SharedIsolated<Mem> const* plan = shared.plan;
    if (plan != nullptr) m_products.pack(space, *plan, shared.own);
    StagedAllreduce<T, Mem> sums;
    sums.add(packed);
    if (probe) {
      sums.add(probe_num);  // the probe sums: one allocation, one run (UpdateSums)
      sums.add(probe_w);
      if (folding) sums.add(fold.slots);  // right after probe_w
    }
    sums.stage(space, m_staging);
    // This rank's largest weight outside the sums. Where part of it is in
    // the space's memory (devices), after_sums reads it, with its largest
    // weight over the tiles before the sums (at most the summed one the
    // unpack finds): its wait also covers the packs and staging copies.
    double mine = std::max(0.0, fold.outside);
    if (folding && fold.outside_in_space)
      mine = std::max(mine, fold.after_sums());
    else
      fence(space, "ptyko::FullSync::packed");
    // The products first, then the all-reduce: with a collective in flight
    // beside point-to-point messages OpenMPI on one node was slower
    // (docs/performance.md, item 48).
    if (plan != nullptr) {
      m_requests.clear();
      m_products.post_receives(m_comm, *plan, m_requests);
      m_products.post_sends(m_comm, *plan, m_requests);
      m_comm.wait_all(m_requests);
    }
    double outside = -1;
    if (folding)
      outside = allreduce_maximum_in_slots(space, sums, m_comm, mine, m_fold);
    else
      sums.finish(space, m_comm, ReduceOp::sum);
    if (plan != nullptr) m_products.unpack(space, *plan, shared.foreign);
    double const summed = n > 0 ? unpack_summed_tiles(space, tiles, packed, sums, num, w) : -1;
    if (folding) return {std::max(summed, outside), true};
    // Without the fold the maximum is global unless some rank holds weights
    // outside the sums: an isolated position of any rank is sent to every
    // other, so every rank has a plan for such a batch, and none for a
    // batch without (all ranks agree).
    return {summed, summed >= 0 && plan == nullptr};
  }
  void sum_probe(ExecSpace const& space, ProbeField const& num, RealField const& w) override {
    allreduce_views(space, m_comm, num, w, ReduceOp::sum, m_staging);  // one call: UpdateSums keeps them adjacent
  }
  void sum(double* v, int n) override { m_comm.allreduce(v, std::size_t(n), Datatype::float64, ReduceOp::sum); }
  void max(double* v, int n) override { m_comm.allreduce(v, std::size_t(n), Datatype::float64, ReduceOp::max); }

  void end_epoch(ExecSpace const& space, ComplexField const&, ProbeField const& probe, RealField const&) override {
    // Identical sums give identical probes; the broadcast makes it exact
    // even if an MPI library's reductions differed in the last bit.
    broadcast_view(space, m_comm, probe, 0, m_staging);
  }
  std::size_t take_bytes_moved() override { return m_comm.take_bytes_moved(); }

  HostComplex2 gather_object(ExecSpace const& space, ComplexField const& object) override {
    if (m_comm.rank() != 0) return HostComplex2();
    return to_host_complex(space, object);
  }

 private:
  // unpack_tiles with the largest summed weight. On devices the host reads
  // it from the reduced values it holds (the staging buffer), and the
  // unpack is only queued: no wait for the device per batch (the reduction
  // in unpack_tiles would be one); host spaces find it in their unpack.
  template <class Sums>
  double unpack_summed_tiles(ExecSpace const& space, TileList<Mem> const& tiles, RealView1<T, Mem> const& packed,
                             Sums const& sums, ComplexField const& num, RealField const& w) {
    std::size_t const pixels = packed.extent(0) / 3;  // packed: (re, im) pairs, then the weights
    T const* reduced = is_host_space_v<ExecSpace> ? nullptr : sums.reduced_on_host(2 * pixels, pixels);
    if (reduced == nullptr) return unpack_tiles(space, tiles, packed, num, w);
    double const largest = double(max_nonnegative(reduced, 0, pixels, T(0)));  // pixels past the object hold 0
    unpack_tiles(space, tiles, packed, num, w, false);
    return largest;
  }

  Communicator m_comm;
  Decomposition m_decomposition;
  HostStaging m_staging;
  RealView1<T, Mem> m_packed;            ///< the tiles of sum_object, contiguous
  ProductMoves<T, ExecSpace> m_products;  ///< isolated positions' products (SharedProducts)
  std::vector<Request> m_requests;
  std::vector<T> m_fold;  ///< allreduce_maximum_in_slots's host scratch
};

template <class T, class ExecSpace>
std::unique_ptr<Strategy<T, ExecSpace>> make_full_sync(Communicator const& comm, ScanLayout const& layout) {
  return std::make_unique<FullSync<T, ExecSpace>>(comm, layout);
}

template std::unique_ptr<Strategy<float, Kokkos::DefaultExecutionSpace>>
make_full_sync<float, Kokkos::DefaultExecutionSpace>(Communicator const&, ScanLayout const&);
template std::unique_ptr<Strategy<double, Kokkos::DefaultExecutionSpace>>
make_full_sync<double, Kokkos::DefaultExecutionSpace>(Communicator const&, ScanLayout const&);

}  // namespace ptyko::parallel::impl
