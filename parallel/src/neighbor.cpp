// neighbor (neighbour-consensus): each rank holds only its object tile (its
// positions' footprints) and completes the solvers' object sums by exchanging
// the overlaps with the ranks whose tiles share pixels with its own.
//
// Why this is exact (sync_every = 1): an object pixel receives contributions
// only from positions whose footprint covers it, and those positions' ranks
// all hold the pixel in their tiles. Each rank sends its own (not yet summed)
// contributions over every overlap to the neighbour sharing it and adds what
// it receives, so every pixel of every tile ends with the global sum: the
// same update as full-sync's all-reduce, with perimeter-sized messages.
// Probe sums (M x D x D) and scalars use a small all-reduce.
//
// sync_every = k > 1 (approximate, tike-style consensus): ranks update their
// tiles from local sums only; every k batches, and at the end of each epoch,
// overlapping pixels are replaced by the illumination-weighted average of the
// ranks' values: only those in the tiles the batches since the last
// reconcile touched, the only pixels any rank changed. The probe sums stay
// exact (a small all-reduce).
//
// Both modes plan each exchange on the host from the batches' host tile
// lists (MirroredTileList): no tile list is copied back from a device. With
// the tiles' sources (which ranks' positions touched each tile,
// Reconstruction gives them since reads_tile_sources) a rank sends only the
// tiles its own positions touched, where its sums and weights are non-zero,
// and receives those its neighbour's touched.

#include "link_pixels.hpp"
#include "overlap_maximum.hpp"
#include "product_moves.hpp"
#include "strategies.hpp"

#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/huge_pages.hpp>
#include <ptyko/kernels/update.hpp>
#include <ptyko/parallel/impl/staging.hpp>
#include <ptyko/parallel/partition.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace ptyko::parallel::impl {

template <class T, class ExecSpace>
class Neighbor final : public Strategy<T, ExecSpace> {
 public:
  using Base = Strategy<T, ExecSpace>;
  using Mem = typename ExecSpace::memory_space;
  using typename Base::ComplexField;
  using typename Base::ProbeField;
  using typename Base::RealField;
  using Base::max;
  using Base::sum;
  using Base::sum_object;
  using Buffer = RealView1<T, Mem>;

  Neighbor(Communicator comm, ScanLayout const& layout, StrategyOptions const& options)
      : m_comm(std::move(comm)), m_sync_every(options.sync_every) {
    int const D = layout.info.ny;
    require_a_frame_per_rank(layout, m_comm);
    m_partition = partition_scan(layout.positions_px, D, layout.grid.height, layout.grid.width, m_comm.size(),
                                 options.held_positions, options.footprint_margin);
    int const r = m_comm.rank();
    Box const& tile = m_partition.tiles[r];
    m_decomposition.frame_ids = m_partition.frames[r];
    m_decomposition.tile_y = tile.y;
    m_decomposition.tile_x = tile.x;
    m_decomposition.tile_height = tile.height;
    m_decomposition.tile_width = tile.width;
    m_global_height = layout.grid.height;
    m_global_width = layout.grid.width;
    for (Box const& t : m_partition.tiles)
      m_on_tile_grid = m_on_tile_grid && t.y % tile_edge == 0 && t.x % tile_edge == 0;
    for (int s : m_partition.neighbours[r]) {
      Link link;
      link.rank = s;
      Box const g = intersect(tile, m_partition.tiles[s]);
      link.out.region = link.in.region = Box{g.y - tile.y, g.x - tile.x, g.height, g.width};  // tile-local
      link.whole = {link.in.region.y, link.in.region.x, link.in.region.height, link.in.region.width, 0};
      std::size_t const n = 3 * g.area();
      link.send = Buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::neighbor::send"), n);
      link.recv = Buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::neighbor::recv"), n);
      link.send_host = create_pinned_mirror(link.send);
      link.recv_host = create_pinned_mirror(link.recv);
      m_links.push_back(std::move(link));
    }
    std::vector<Box> regions;
    for (Link const& l : m_links) regions.push_back(l.in.region);
    m_received_max = OverlapMaximum<T>(regions);
    // Room for the largest plan once: every tile of the grid that meets a
    // link's region, once each way (no allocation in an epoch).
    std::size_t most_parts = 0;
    for (Link const& l : m_links) {
      Box const& g = l.out.region;
      if (g.empty()) continue;
      auto const span = [](int first, int size) {  // grid tiles over [first, first + size), global pixels >= 0
        return std::size_t((first + size - 1) / tile_edge - first / tile_edge + 1);
      };
      most_parts += 2 * span(tile.y + g.y, g.height) * span(tile.x + g.x, g.width);
    }
    if (most_parts > 0) {
      m_parts = RegionParts<Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::neighbor::parts"), most_parts);
      m_parts_host = Kokkos::create_mirror_view(m_parts);
    }
    // The corners of this rank's footprints in its tile: footprint_counts
    // are made from them when needed (not kept: a tile-sized array). A
    // resumed run's footprints are those of its refined positions.
    m_D = D;
    std::vector<std::array<double, 2>> own;
    for (std::size_t id : m_partition.frames[r])
      own.push_back(options.held_positions.empty() ? layout.positions_px[id] : options.held_positions[id]);
    set_corners(own);
    if (m_sync_every > 1) {
      m_weight = make_object_field<RealField>(ExecSpace(), "ptyko::neighbor::weight", tile.height, tile.width, T(0));
      m_own = RealField(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::neighbor::own_weight"),
                        tile.height, tile.width);
      m_acc = ComplexField(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::neighbor::weighted"),
                           tile.height, tile.width);
      fence(ExecSpace(), "ptyko::neighbor::weight");  // the fill, before any solver's instance reads it
    }
  }

  std::string name() const override { return m_sync_every == 1 ? "neighbor" : "neighbor, approximate"; }
  int ranks() const override { return m_comm.size(); }
  int rank() const override { return m_comm.rank(); }
  bool reads_batch_illumination() const override { return m_sync_every > 1; }  // see after_batch
  /// The box, widened to whole object tiles of the global grid, meets one
  /// rank's tile alone: no other rank holds those pixels, nor lists those
  /// tiles in a batch's tile list (footprint_tiles marks whole tiles), so
  /// leaving a position there out of the batch tiles changes no link's
  /// plan. Off the tile grid, nothing is private.
  bool footprint_private(std::array<double, 4> const& box) const override {
    if (!m_on_tile_grid) return false;
    if (!(std::isfinite(box[0]) && std::isfinite(box[1]) && std::isfinite(box[2]) && std::isfinite(box[3])))
      return false;
    auto const grid = [](double v) { return int(std::floor(v / tile_edge)) * tile_edge; };
    int const y0 = grid(box[0]), x0 = grid(box[1]), y1 = grid(box[2]) + tile_edge, x1 = grid(box[3]) + tile_edge;
    Box const widened{y0, x0, y1 - y0, x1 - x0};
    int holders = 0;
    for (Box const& t : m_partition.tiles) holders += !intersect(widened, t).empty();
    return holders == 1;
  }
  /// The exact mode moves isolated positions' products between the ranks
  /// holding their pixels (sum_batch), on the tile grid, where the batch
  /// tiles and their plans agree on every rank.
  std::vector<std::array<int, 4>> held_boxes() const override {
    if (m_sync_every > 1 || !m_on_tile_grid) return {};
    std::vector<std::array<int, 4>> out;
    for (Box const& t : m_partition.tiles) out.push_back({t.y, t.x, t.height, t.width});
    return out;
  }
  /// Both modes send the tiles this rank's positions touched: the exact
  /// one its sums after every batch (sum_object), the approximate one its
  /// weighted object at a reconcile.
  bool reads_tile_sources() const override { return true; }
  Decomposition const& decomposition() const override { return m_decomposition; }
  Communicator const& communicator() const override { return m_comm; }
  Partition const& partition() const { return m_partition; }

  void sum_object(ExecSpace const& space, ComplexField const& num, RealField const& w) override {
    if (m_sync_every > 1) return;  // approximate: local sums, reconciled in after_batch
    for (Link& l : m_links) l.whole_region();
    exchange_sums(space, num, w);
  }

  /// The batch's sums lie in `tiles`: each link moves only the parts of
  /// those tiles inside its region. Both ranks of a link list the same
  /// tiles there in the same order (tile origins on one global grid,
  /// partition_scan; tiles marked from the footprints over whole tiles,
  /// footprint_tiles), so both pack and unpack the same pixels.
  /// Only the overlaps change, so the largest summed weight is the larger
  /// of `local_max` and the largest the unpacks leave (a pixel two links
  /// share passes an intermediate sum first, never more than its last);
  /// unknown (-1) when `local_max` is. The approximate mode sums nothing
  /// here: the weights stay this rank's own, `local_max`.
  double sum_object(ExecSpace const& space, ComplexField const& num, RealField const& w,
                    MirroredTileList<Mem> const& tiles, double local_max) override {
    return sum_batch(space, num, w, tiles, local_max, ProbeField(), RealField(), false, {}, {}).value;
  }
  /// The overlap exchange, the isolated positions' products and the probe
  /// sums' all-reduce behind one wait for the device (exchange_sums), one
  /// after the other in MPI; with `fold`, the batch's largest weight over
  /// all ranks in the probe sums' all-reduce (finish_probe_sums).
  BatchMaximum sum_batch(ExecSpace const& space, ComplexField const& num, RealField const& w,
                         MirroredTileList<Mem> const& tiles, double local_max, ProbeField const& probe_num,
                         RealField const& probe_w, bool probe, SharedProducts<T, Mem> const& shared,
                         FoldedMaximum<T, Mem> const& fold) override {
    PTYKO_ASSERT(shared.plan == nullptr || (m_sync_every == 1 && m_on_tile_grid),
                 "products move in the exact mode on the tile grid only (held_boxes)");
    // One rank: its sums are the sums, and nothing is waited for (on a
    // device the batch then runs from its sums to its update without the
    // host, as with LocalSync).
    if (m_comm.size() == 1) return {local_max, false};
    bool const folding = probe && fold.slots.extent(0) == std::size_t(m_comm.size());
    // This rank's largest weight unknown (devices): its own part is queued
    // to the host behind the exchange's wait, and the largest the unpacks
    // leave is found on the host from the messages (OverlapMaximum),
    // instead of a reduction over the summed tiles and a second wait.
    bool const own_queued = folding && local_max < 0 && fold.queue_own && fold.own_queued && host_reads_messages;
    StagedAllreduce<T, Mem> probe_sums;
    if (probe) {
      probe_sums.add(probe_num);  // one allocation, one run (UpdateSums), the fold's slots after them
      probe_sums.add(probe_w);
      if (folding) probe_sums.add(fold.slots);
    }
    if (m_sync_every > 1 || m_links.empty()) {  // nothing to exchange: the weights are this rank's own
      if (own_queued) fold.queue_own();
      if (probe) {
        probe_sums.stage(space, m_staging);
        fence(space, "ptyko::neighbor::probe_sums");
      }
      return finish_probe_sums(space, probe_sums, own_queued ? fold.own_queued() : local_max,
                               folding ? &fold : nullptr);
    }
    if (m_on_tile_grid && tiles.sources) {
      plan_links_by_source(space, &tiles, 1);
    } else if (m_on_tile_grid) {
      m_origins.clear();
      append_origins(tiles.host, m_origins);  // row-major, as footprint_tiles lists them
      plan_links(space);
    } else {  // tile lists may disagree: whole overlaps
      for (Link& l : m_links) l.whole_region();
    }
    if (own_queued) fold.queue_own();  // reads the weights before the unpacks add to them
    double received = 0;
    double const unpacked =
        exchange_sums(space, num, w, local_max >= 0, &probe_sums, &shared, own_queued ? &received : nullptr);
    double const largest = own_queued        ? std::max(fold.own_queued(), received)
                           : local_max >= 0 ? std::max(local_max, unpacked)
                                            : -1;
    return finish_probe_sums(space, probe_sums, largest, folding ? &fold : nullptr);
  }

  void sum_probe(ExecSpace const& space, ProbeField const& num, RealField const& w) override {
    // Always exact, also when the object is only reconciled every k batches:
    // M x D x D values are cheap, and probes drifting apart between
    // reconciliations would give each tile its own phase and scale, which no
    // averaging of the overlaps can repair. Measured: probes averaged once
    // per epoch (tike) or every k batches lose accuracy, and per epoch
    // diverge over more epochs (docs/performance.md item 47).
    allreduce_views(space, m_comm, num, w, ReduceOp::sum, m_staging);  // one call: UpdateSums keeps them adjacent
  }

  void sum(double* v, int n) override { m_comm.allreduce(v, std::size_t(n), Datatype::float64, ReduceOp::sum); }
  void max(double* v, int n) override { m_comm.allreduce(v, std::size_t(n), Datatype::float64, ReduceOp::max); }

  void after_batch(ExecSpace const& space, ComplexField const& object, RealField const& illumination,
                   MirroredTileList<Mem> const& tiles) override {
    if (m_sync_every == 1) return;
    if (illumination.extent(0) > 0) {
      // The batch's illumination lies in its tiles: add those, not the tile.
      add_into(space, m_weight, illumination, tiles.list);
      m_weighted_tiles.push_back(tiles);
      m_weights_recorded = true;
    }
    if (++m_batches_since_sync % m_sync_every == 0) reconcile(space, object);
  }

  void end_epoch(ExecSpace const& space, ComplexField const& object, ProbeField const& probe,
                 RealField const&) override {
    if (m_sync_every == 1) {
      // Identical sums give identical probes; the broadcast makes it exact.
      broadcast_view(space, m_comm, probe, 0, m_staging);
      return;
    }
    reconcile(space, object);
    broadcast_view(space, m_comm, probe, 0, m_staging);
  }

  std::size_t take_bytes_moved() override { return m_comm.take_bytes_moved(); }

  /// Refined positions: the stitching weights of gather_object and the
  /// consensus weights of solvers that record no illumination are the
  /// footprints where the positions are now (with the file's, the pixels
  /// only moved footprints reach would be stitched as 1).
  void positions_moved(std::vector<std::array<double, 2>> const& own) override {
    set_corners(own);
    if (m_cover.extent(0) > 0) {
      auto const h = footprint_counts();
      Kokkos::deep_copy(m_cover, h);  // host -> device: footprint counts, after a refinement
    }
  }

  HostComplex2 gather_object(ExecSpace const& space, ComplexField const& object) override {
    // Every rank sends (weighted object, weight) over its tile, rank 0 adds
    // them up and divides: seamless, and exact where the tiles agree. The
    // weight is the footprint count plus a tiny floor, so that a pixel no
    // footprint covers now (refined positions may have left it after
    // updating it) takes the plain mean of its holders, its common value
    // in the exact mode, instead of being lost. (In the exact mode every
    // weighting gives the common value to double rounding, far below the
    // float it is stored in.)
    // Rank 0 adds its own tile in place; the others send theirs. The sums go
    // straight into the result, beside one weight per pixel (object-sized
    // buffers are most of a gather's time: their first touch).
    Box const tile = m_partition.tiles[m_comm.rank()];
    if (m_comm.size() == 1) return single_tile_object(object, tile);
    auto h_obj = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), object);  // device -> host: tile
    auto const h_cover = footprint_counts();
    constexpr double floor = 1e-6;  // counts are whole numbers
    auto const weighted = [&](std::size_t k) {  // this rank's (c re, c im, c) at tile pixel k
      double const c = double(h_cover.data()[k]) + floor;
      return std::array<double, 3>{c * double(h_obj.data()[k].real()), c * double(h_obj.data()[k].imag()), c};
    };
    bool const root = m_comm.rank() == 0;
    std::vector<char> bytes(root ? 0 : tile.area() * 3 * sizeof(double));
    auto* v = reinterpret_cast<double*>(bytes.data());
    for (std::size_t k = 0; !root && k < tile.area(); ++k) {
      auto const p = weighted(k);
      std::copy(p.begin(), p.end(), v + 3 * k);
    }
    std::vector<std::size_t> offsets;
    auto const all = m_comm.gather_bytes(bytes, offsets, 0);
    if (!root) return HostComplex2();
    HostComplex2 out("ptyko::neighbor::object", m_global_height, m_global_width);  // weighted sums, then the object
    std::vector<double> weight(std::size_t(m_global_height) * std::size_t(m_global_width), 0.0);
    for (int r = 0; r < m_comm.size(); ++r) {
      Box const t = m_partition.tiles[r];
      auto const* src = reinterpret_cast<double const*>(all.data() + offsets[r]);
      for (int y = 0; y < t.height; ++y)
        for (int x = 0; x < t.width; ++x) {
          std::size_t const k = std::size_t(y) * t.width + x;
          Complex<double>& o = out(t.y + y, t.x + x);
          double& w = weight[std::size_t(t.y + y) * std::size_t(m_global_width) + std::size_t(t.x + x)];
          auto const p = r == 0 ? weighted(k) : std::array<double, 3>{src[3 * k], src[3 * k + 1], src[3 * k + 2]};
          o += Complex<double>(p[0], p[1]);
          w += p[2];
        }
    }
    for (int y = 0; y < m_global_height; ++y)
      for (int x = 0; x < m_global_width; ++x) {
        double const c = weight[std::size_t(y) * std::size_t(m_global_width) + std::size_t(x)];  // > 0 where a tile is
        Complex<double>& o = out(y, x);
        o = c > 0 ? Complex<double>(o.real() / c, o.imag() / c) : Complex<double>(1, 0);
      }
    (void)space;
    return out;
  }

 private:
  // gather_object on one rank: its tile as it is (the stitch's (c o) / c
  // rounds back to the float o) and free space (1) around it, without the
  // stitch's weights and sums.
  HostComplex2 single_tile_object(ComplexField const& object, Box const& tile) const {
    auto const inner = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), object);  // device -> host: tile
    HostComplex2 out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::neighbor::object"), m_global_height,
                     m_global_width);  // every pixel written below
    Complex<double> const free_space(1, 0);
    for (int y = 0; y < m_global_height; ++y) {
      Complex<double>* row = &out(y, 0);
      if (y < tile.y || y >= tile.y + tile.height) {
        std::fill_n(row, m_global_width, free_space);
        continue;
      }
      std::fill_n(row, tile.x, free_space);
      for (int x = 0; x < tile.width; ++x) row[tile.x + x] = Complex<double>(inner(y - tile.y, x));
      std::fill(row + tile.x + tile.width, row + m_global_width, free_space);
    }
    return out;
  }

  // A link's outgoing and incoming pixels are the same (its region, or the
  // batch tiles' parts inside it) unless the batch tiles name their
  // sources: then it sends the parts its own positions touched and
  // receives those the neighbour's touched.
  struct Link {
    int rank = 0;
    LinkPixels<Mem> out, in;
    Buffer send, recv;
    PinnedMirror<Buffer> send_host, recv_host;  // staging: page-locked where the build has a device
    HostPart whole;                             // its region as one part, packed at 0
    void whole_region() { out.tiled = in.tiled = false; }
  };

  // Every link exchanges the parts of the tiles at m_origins inside its
  // region, both ways; the parts of all links go to the device in one copy.
  void plan_links(ExecSpace const& space) {
    m_part_list.clear();
    for (Link& l : m_links) {
      l.out.first_part = m_part_list.size();
      plan_tile_parts(l.out, m_origins, m_part_list);
      l.in.tiled = false;  // not planned: a copy of out after the upload
    }
    upload_parts(space);
    for (Link& l : m_links) l.in = l.out;
  }

  // The batch tiles name their sources: every link sends the parts of the
  // tiles this rank's positions touched in any of the `n` lists and
  // receives those of the tiles its neighbour's touched (its neighbour
  // plans the same two lists the other way round). This rank's sums (and
  // weights) are zero on the tiles it did not touch, so the result is that
  // of exchanging every listed tile.
  void plan_links_by_source(ExecSpace const& space, MirroredTileList<Mem> const* lists, std::size_t n) {
    // The origins of the tiles `rank` touched, row-major without repeats.
    auto touched_by = [&](int rank, std::vector<std::array<int, 2>>& out) {
      out.clear();
      for (std::size_t j = 0; j < n; ++j) {
        auto const& h = lists[j].host;
        for (std::size_t k = 0; k < h.extent(0); ++k)
          if (lists[j].sources->touched_by(k, rank)) out.push_back({h(k, 0), h(k, 1)});
      }
      if (n > 1) {
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
      }
    };
    touched_by(m_comm.rank(), m_origins);
    m_part_list.clear();
    for (Link& l : m_links) {
      l.out.first_part = m_part_list.size();
      plan_tile_parts(l.out, m_origins, m_part_list);
      touched_by(l.rank, m_in_origins);
      l.in.first_part = m_part_list.size();
      plan_tile_parts(l.in, m_in_origins, m_part_list);
    }
    upload_parts(space);
  }

  // m_part_list to the device, and every planned LinkPixels' view of its parts.
  void upload_parts(ExecSpace const& space) {
    if (m_part_list.size() > m_parts.extent(0)) {  // grows to the largest plan, then stays
      m_parts = RegionParts<Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::neighbor::parts"),
                                 m_part_list.size());
      m_parts_host = Kokkos::create_mirror_view(m_parts);
    }
    for (std::size_t b = 0; b < m_part_list.size(); ++b)
      for (int c = 0; c < 5; ++c) m_parts_host(b, c) = m_part_list[b][c];
    if (!m_part_list.empty())
      Kokkos::deep_copy(space, Kokkos::subview(m_parts, std::make_pair(std::size_t(0), m_part_list.size()), Kokkos::ALL),
                        Kokkos::subview(m_parts_host, std::make_pair(std::size_t(0), m_part_list.size()),
                                        Kokkos::ALL));  // host -> device: this plan's parts, all links
    for (Link& l : m_links)
      for (LinkPixels<Mem>* p : {&l.out, &l.in})
        if (p->tiled)
          p->parts = Kokkos::subview(m_parts, std::make_pair(p->first_part, p->first_part + std::size_t(p->n_parts)),
                                     Kokkos::ALL);
  }

  // Completes the sums (num, w) (num may be empty: w only) over every
  // link's pixels as planned (its region or its parts; out: what this rank
  // sends, in: what it receives) in one exchange with every neighbour: pack
  // all, send/receive, add all (every pack reads the sums before any unpack
  // adds to them). A message with no pixels is not sent: both ranks of a
  // link plan the same pixels for it.
  // With `largest`, the unpacks also return the largest weight they leave
  // (blocking), else 0. `also`: an all-reduce (the probe sums) staged with
  // the exchange, behind the same wait for the device; the caller runs it
  // after the unpacks (finish_probe_sums).
  // `products`: isolated positions' products to move with the sums
  // (SharedProducts; sent after the sums on each link, received into their
  // foreign slots after the unpacks).
  // `received`: set to the largest summed weight over the pixels received,
  // found on the host from the messages (OverlapMaximum) while the device
  // unpacks them; only where the host reads them (host_reads_messages).
  double exchange_sums(ExecSpace const& space, ComplexField const& num, RealField const& w, bool largest = false,
                       StagedAllreduce<T, Mem>* also = nullptr, SharedProducts<T, Mem> const* products = nullptr,
                       double* received = nullptr) {
    PTYKO_ASSERT(received == nullptr || host_reads_messages, "the host cannot read the messages in device memory");
    double unpacked = 0;
    if (received != nullptr) *received = 0;
    std::size_t const values = num.extent(0) > 0 ? 3 : 1;  // complex sum and weight, or weight
    bool packed = false;
    for (Link& l : m_links)
      if (l.out.count() > 0) {
        for_each_in_link(space, "ptyko::neighbor::pack", l.out, PackSums<T, Mem>{{num, w, l.send, l.out.count()}});
        packed = true;
      }
    constexpr bool direct = mpi_can_read_v<Mem>;
    SharedIsolated<Mem> const* plan = products != nullptr ? products->plan : nullptr;
    if (plan != nullptr && m_products.pack(space, *plan, products->own)) packed = true;
    if (!direct)  // every link's staging copy queued behind the packs: one wait for all of them
      for (Link& l : m_links) {
        std::size_t const n = values * l.out.count();
        if (n > 0)
          Kokkos::deep_copy(space, Kokkos::subview(l.send_host, std::make_pair(std::size_t(0), n)),
                            Kokkos::subview(l.send, std::make_pair(std::size_t(0), n)));  // device -> host: stage
      }
    bool const with_also = also != nullptr && !also->empty();
    if (with_also) also->stage(space, m_staging);
    // MPI reads the packed (or staged) values, and a staged receive must not
    // overwrite the host buffer the last exchange still copies from.
    bool receives = plan != nullptr && !plan->receives.empty();
    for (Link const& l : m_links) receives = receives || l.in.count() > 0;
    if (packed || with_also || (!direct && receives)) fence(space, "ptyko::neighbor::packed");
    std::vector<Request> requests;
    requests.reserve(2 * m_links.size() + (plan != nullptr ? plan->sends.size() + plan->receives.size() : 0));
    for (Link& l : m_links) {
      if (l.in.count() == 0) continue;
      T* recv = direct ? l.recv.data() : l.recv_host.data();
      requests.push_back(m_comm.irecv(recv, values * l.in.count(), datatype_of<T>(), l.rank, tag));
    }
    if (plan != nullptr) m_products.post_receives(m_comm, *plan, requests);
    for (Link& l : m_links) {
      std::size_t const n = values * l.out.count();
      if (n == 0) continue;
      T const* send = direct ? l.send.data() : l.send_host.data();
      requests.push_back(m_comm.isend(send, n, datatype_of<T>(), l.rank, tag));
    }
    if (plan != nullptr) m_products.post_sends(m_comm, *plan, requests);
    // The caller's all-reduce comes after the unpacks, as a separate
    // sum_probe would run it: with it in flight beside the messages, OpenMPI on one node was
    // slower (item 48), and before the unpacks a rank would wait there
    // instead of unpacking while its neighbour catches up.
    if (requests.empty()) return unpacked;
    m_comm.wait_all(requests);
    for (Link& l : m_links) {
      std::size_t const n = values * l.in.count();
      if (n == 0) continue;
      if (!direct)
        Kokkos::deep_copy(space, Kokkos::subview(l.recv, std::make_pair(std::size_t(0), n)),
                          Kokkos::subview(l.recv_host, std::make_pair(std::size_t(0), n)));  // host -> device
      UnpackAddSums<T, Mem> const unpack{{num, w, l.recv, l.in.count()}};
      if (largest)
        unpacked = std::max(unpacked, max_over_link(space, "ptyko::neighbor::unpack_add_max", l.in, unpack));
      else
        for_each_in_link(space, "ptyko::neighbor::unpack_add", l.in, unpack);
    }
    if (plan != nullptr) m_products.unpack(space, *plan, products->foreign);
    if (received != nullptr) *received = received_maximum(values);
    return unpacked;
  }

  // MPI reads the messages from host memory, staged or not (not GPU-aware
  // MPI reading a device's).
  static constexpr bool host_reads_messages =
      !mpi_can_read_v<Mem> || Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;

  // The largest summed weight over the pixels every link received, from
  // the messages as MPI left them: `values` per pixel (3: the complex sum
  // first, then the weights; 1: weights only).
  double received_maximum(std::size_t values) {
    constexpr bool direct = mpi_can_read_v<Mem>;
    m_link_weights.clear();
    for (Link const& l : m_links) {
      LinkWeights<T> lw;
      auto const parts = [&](LinkPixels<Mem> const& p, HostPart const*& first, int& n) {
        first = p.tiled ? m_part_list.data() + p.first_part : &l.whole;
        n = p.tiled ? p.n_parts : int(p.count() > 0);
      };
      parts(l.out, lw.out, lw.n_out);
      parts(l.in, lw.in, lw.n_in);
      T const* const sent = direct ? l.send.data() : l.send_host.data();
      T const* const got = direct ? l.recv.data() : l.recv_host.data();
      lw.sent = sent + (values == 3 ? 2 * l.out.count() : 0);
      lw.received = got + (values == 3 ? 2 * l.in.count() : 0);
      m_link_weights.push_back(lw);
    }
    return m_received_max.largest(m_link_weights);
  }

  /// The probe sums' all-reduce, staged by exchange_sums (or the caller)
  /// behind its wait for the device; with `fold`, the batch's largest weight
  /// over all ranks travels in its slots: this rank's is `largest` (after
  /// the sums), or what fold->after_sums finds when that is unknown, or
  /// fold->outside where that is larger. Without `fold`, returns `largest`.
  BatchMaximum finish_probe_sums(ExecSpace const& space, StagedAllreduce<T, Mem>& probe_sums, double largest,
                                 FoldedMaximum<T, Mem> const* fold) {
    if (fold == nullptr) {
      probe_sums.finish(space, m_comm, ReduceOp::sum);
      return {largest, false};
    }
    double const mine = std::max(largest >= 0 ? largest : fold->after_sums(), fold->outside);
    return {allreduce_maximum_in_slots(space, probe_sums, m_comm, mine, m_fold), true};
  }

  // Overlaps become the weighted average of the ranks' values: O <- sum_r
  // w_r O_r / sum_r w_r, with w the illumination since the last reconcile
  // (footprint counts when the solver records none, e.g. DM).
  // Only the overlaps change (elsewhere the weighted average is the rank's
  // own value), and of those only the tiles some batch touched since the
  // last reconcile: elsewhere no rank changed the object, so every rank
  // still holds the last average (and no rank has weight there). Every rank
  // of a link lists the same touched tiles in its overlap (the global
  // batches' tiles on one tile grid), so both pack the same pixels; with
  // the tiles' sources, each sends those its own positions touched. Without
  // recorded illumination, or off the tile grid, whole overlaps are averaged.
  void reconcile(ExecSpace const& space, ComplexField const& object) {
    bool sourced = m_weights_recorded && m_on_tile_grid && !m_weighted_tiles.empty();
    for (auto const& t : m_weighted_tiles) sourced = sourced && t.sources;
    if (sourced) {
      // Each rank's weights lie on the tiles its positions touched: it
      // sends those, and takes the average where its neighbour sends.
      plan_links_by_source(space, m_weighted_tiles.data(), m_weighted_tiles.size());
    } else if (m_weights_recorded && m_on_tile_grid) {
      m_origins.clear();
      for (auto const& t : m_weighted_tiles) append_origins(t.host, m_origins);
      std::sort(m_origins.begin(), m_origins.end());
      m_origins.erase(std::unique(m_origins.begin(), m_origins.end()), m_origins.end());
      plan_links(space);
    } else {
      for (Link& l : m_links) l.whole_region();
    }
    RealField const w = m_weights_recorded ? m_weight : cover_weights();
    // (w, w O) on every pixel that is sent or receives: where it only
    // receives, this rank's weight is zero and the average is the
    // neighbours' value.
    for (Link const& l : m_links) {
      for_each_in_link(space, "ptyko::neighbor::weighted_copy", l.out, WeightedCopy<T, Mem>{object, w, m_own, m_acc});
      if (sourced)
        for_each_in_link(space, "ptyko::neighbor::weighted_copy", l.in, WeightedCopy<T, Mem>{object, w, m_own, m_acc});
    }
    // The sums of (w O, w) over the ranks, as the exact mode sums its own.
    exchange_sums(space, m_acc, m_own);
    for (Link const& l : m_links)
      for_each_in_link(space, "ptyko::neighbor::apply_average", l.in, ApplyAverage<T, Mem>{object, m_acc, m_own});
    for (auto const& t : m_weighted_tiles) zero_tiles(space, t.list, m_weight);
    m_weighted_tiles.clear();
    m_batches_since_sync = 0;
  }

  // m_corners from this rank's positions (global object pixels): its
  // frames', fewer than the partition's when empty frames were dropped.
  void set_corners(std::vector<std::array<double, 2>> const& own) {
    Box const& tile = m_partition.tiles[m_comm.rank()];
    m_corners.clear();
    for (auto const& p : own)
      m_corners.push_back({int(std::floor(p[0] - m_D / 2)) - tile.y, int(std::floor(p[1] - m_D / 2)) - tile.x});
  }

  // How many of this rank's footprints cover each tile pixel: the stitching
  // weights of gather_object, and the consensus weights of solvers that
  // record no illumination. Host code.
  Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace> footprint_counts() const {
    Box const tile = m_partition.tiles[m_comm.rank()];
    Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace> cover(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::neighbor::cover"), tile.height, tile.width);
    parallel::footprint_counts(m_corners, m_D, tile.height, tile.width, cover.data());
    return cover;
  }

  // footprint_counts on the device, made on first use.
  RealField const& cover_weights() {
    if (m_cover.extent(0) == 0) {
      auto const h = footprint_counts();
      m_cover = RealField(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::neighbor::cover"), h.extent(0),
                          h.extent(1));
      Kokkos::deep_copy(m_cover, h);  // host -> device: footprint counts, once
    }
    return m_cover;
  }

 public:
  // acc += w over the tiles.
  static void add_into(ExecSpace const& space, RealField const& acc, RealField const& w, TileList<Mem> const& tiles) {
    auto A = acc;
    auto W = w;
    for_each_tile_span(space, "ptyko::neighbor::add_weight", tiles, int(acc.extent(0)), int(acc.extent(1)),
                       KOKKOS_LAMBDA(int y, int x0, int x1) {
                         T* a = &A(y, 0);
                         T const* v = &W(y, 0);
                         for (int x = x0; x < x1; ++x) a[x] += v[x];
                       });
  }

 private:
  static constexpr int tag = 4711;  // ProductMoves::tag for the products
  ProductMoves<T, ExecSpace> m_products;  ///< isolated positions' products (SharedProducts)
  Communicator m_comm;
  int m_sync_every;
  Partition m_partition;
  Decomposition m_decomposition;
  int m_global_height = 0, m_global_width = 0;
  std::vector<Link> m_links;
  bool m_on_tile_grid = true;  ///< every rank's tile origin on the tile grid (partition_scan)
  std::vector<std::array<int, 2>> m_corners;  ///< this rank's footprints' first pixels, tile coordinates
  int m_D = 0;                                 ///< footprint edge - 1 (frames of D x D)
  RealField m_cover;   ///< footprint counts on the device, when a reconcile needs them
  RealField m_weight;  ///< illumination since the last reconcile (sync_every > 1)
  RealField m_own;              ///< reconcile: summed weights over the overlaps
  ComplexField m_acc;           ///< reconcile: weighted object sums over the overlaps
  std::vector<MirroredTileList<Mem>> m_weighted_tiles;  ///< tiles m_weight holds values in
  bool m_weights_recorded = false;  ///< the solver passes its illumination to after_batch
  std::vector<std::array<int, 2>> m_origins;  ///< scratch: tile origins of a plan
  std::vector<std::array<int, 2>> m_in_origins;  ///< scratch: the tiles one neighbour's positions touched
  std::vector<std::array<int, 5>> m_part_list;  ///< scratch: the plan's parts, link after link
  RegionParts<Mem> m_parts;                     ///< the plan's parts on the device
  typename RegionParts<Mem>::HostMirror m_parts_host;
  int m_batches_since_sync = 0;
  HostStaging m_staging;
  OverlapMaximum<T> m_received_max;              ///< over the links' regions (received_maximum)
  std::vector<LinkWeights<T>> m_link_weights;  ///< its input, refilled per batch
  std::vector<T> m_fold;  ///< the fold's slots on the host (finish_probe_sums)
};

template <class T, class ExecSpace>
std::unique_ptr<Strategy<T, ExecSpace>> make_neighbor(Communicator const& comm, ScanLayout const& layout,
                                                      StrategyOptions const& options) {
  return std::make_unique<Neighbor<T, ExecSpace>>(comm, layout, options);
}

template std::unique_ptr<Strategy<float, Kokkos::DefaultExecutionSpace>>
make_neighbor<float, Kokkos::DefaultExecutionSpace>(Communicator const&, ScanLayout const&, StrategyOptions const&);
template std::unique_ptr<Strategy<double, Kokkos::DefaultExecutionSpace>>
make_neighbor<double, Kokkos::DefaultExecutionSpace>(Communicator const&, ScanLayout const&, StrategyOptions const&);

}  // namespace ptyko::parallel::impl
