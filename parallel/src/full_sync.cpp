// full-sync: every rank holds the whole object and probe; the sums of every
// batch are all-reduced, so every rank applies the identical update and P
// ranks reproduce the 1-rank result to float rounding (the global batches do
// not depend on P). Frames go to ranks as equal-count compact groups.

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
  /// The packed tiles and the probe sums in one all-reduce call: one wait
  /// for the device, and staged, one collective. The largest weight the
  /// unpack finds is the same on every rank (their sums are): global, as
  /// no weights lie outside the sums (isolated positions, which full-sync's
  /// ranks never take apart: footprint_private, held_boxes).
  BatchMaximum sum_batch(ExecSpace const& space, ComplexField const& num, RealField const& w,
                         MirroredTileList<Mem> const& batch_tiles, double local_max, ProbeField const& probe_num,
                         RealField const& probe_w, bool probe, SharedProducts<T, Mem> const& shared,
                         FoldedMaximum<T, Mem> const& fold) override {
    PTYKO_ASSERT(shared.plan == nullptr, "full-sync holds every pixel on every rank: nothing is shared");
    PTYKO_ASSERT(m_comm.size() == 1 || (fold.outside == 0 && !fold.outside_in_space),
                 "full-sync's ranks take no isolated positions apart");
    auto const& tiles = batch_tiles.list;
    if (m_comm.size() == 1) return {local_max, false};
    std::size_t const n = 3 * tiles.extent(0) * std::size_t(tile_edge) * tile_edge;
    if (m_packed.extent(0) < n)  // grows to the largest batch, then stays
      m_packed = RealView1<T, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::FullSync::packed"), n);
    RealView1<T, Mem> packed = Kokkos::subview(m_packed, std::make_pair(std::size_t(0), n));
    if (n > 0) pack_tiles(space, tiles, num, w, packed);
    StagedAllreduce<T, Mem> sums;
    sums.add(packed);
    if (probe) {
      sums.add(probe_num);  // the probe sums: one allocation, one run (UpdateSums)
      sums.add(probe_w);
    }
    sums.run(space, m_comm, ReduceOp::sum, m_staging);
    if (n == 0) return {-1, false};
    return {unpack_tiles(space, tiles, packed, num, w), true};
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
  Communicator m_comm;
  Decomposition m_decomposition;
  HostStaging m_staging;
  RealView1<T, Mem> m_packed;  ///< the tiles of sum_object, contiguous
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
