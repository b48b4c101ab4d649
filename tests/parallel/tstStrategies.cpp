// Parallel strategies under mpiexec (ctest runs this at 1, 2, 3 and 4 ranks):
//  * full-sync reproduces the single-process result to float rounding;
//  * neighbor with sync-every 1 reproduces full-sync, moving only overlaps,
//    holding only its tile, every rank ending an epoch with the same probe;
//  * neighbor's overlap sum is exact and moves exactly the overlap bytes;
//  * neighbor with sync-every 4 converges about as well, without seams, and
//    its reconcile averages (and moves) only the overlaps' touched tiles;
//  * each rank reads exactly its own frames;
//  * no strategy allocates a View in an epoch once the first have run.
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/fftshift.hpp>
#include <ptyko/core/illumination.hpp>
#include <ptyko/core/metrics.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/core/scan.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/parallel/communicator.hpp>
#include <ptyko/parallel/partition.hpp>
#include <ptyko/parallel/strategy.hpp>
#include <ptyko/kernels/pinned_mirror.hpp>
#include <ptyko/kernels/tiles.hpp>

#include <gtest/gtest.h>

#include <tools_counters.hpp>
#include <test_files.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

namespace {

using namespace ptyko;
using namespace ptyko::parallel;
using Exec = Kokkos::DefaultExecutionSpace;

// Small simulated datasets for the whole run, written by rank 0: `path`,
// `wide_path`, small frames over an object many footprints wide (ranks'
// tiles then have pixels no other rank holds), and `many_path`, more small
// frames than one batch of LSQML sends as rows of step sums
// (lsqml_step_rows_limit).
class DatasetEnvironment : public ::testing::Environment {
 public:
  static std::string path, wide_path, many_path;
  void SetUp() override {
    SimulationOptions o;
    o.frames = 160;
    o.detector = 32;
    o.modes = 2;
    o.photons = 2e5;
    o.seed = 11;
    path = write(o, "strategies.cxi");
    o.frames = 400;
    o.detector = 16;
    o.step_px = 8;
    wide_path = write(o, "strategies-wide.cxi");
    o.frames = lsqml_step_rows_limit + 100;
    many_path = write(o, "strategies-many.cxi");
  }
  void TearDown() override {
    auto comm = Communicator::world();
    comm.barrier();
    if (comm.rank() == 0)
      std::filesystem::remove(path), std::filesystem::remove(wide_path), std::filesystem::remove(many_path);
  }

 private:
  static std::string write(SimulationOptions const& o, char const* file) {
    auto comm = Communicator::world();
    char name[256] = {0};
    if (comm.rank() == 0) {
      std::snprintf(name, sizeof(name), "%s", test::temp_path(file).c_str());
      cxi_write(name, simulate(o));
    }
    comm.broadcast(name, sizeof(name), Datatype::byte, 0);
    return name;
  }
};
std::string DatasetEnvironment::path, DatasetEnvironment::wide_path, DatasetEnvironment::many_path;
auto* const dataset_env = ::testing::AddGlobalTestEnvironment(new DatasetEnvironment);

struct RunResult {
  HostComplex2 object;  // rank 0 only
  HostComplex3 probe;
  std::vector<double> cost;
  Decomposition dec;
  std::size_t tile_area = 0;
  std::size_t isolated = 0;  // this rank's positions updated without object sums
  HostComplex2 tile;         // this rank's object (its tile), as it holds it
};

template <class T>
SolverOptions options(std::string const& solver, int epochs) {
  SolverOptions o;
  o.solver = solver;
  o.epochs = epochs;
  o.modes = 2;
  o.batch_size = 16;
  o.seed = 5;
  return o;
}

// Changes to the options of a run (batch size, isolated updates).
using Tweak = std::function<void(SolverOptions&)>;

// Runs the epochs of an assembled reconstruction (default: all of them).
template <class T>
using Drive = std::function<void(Reconstruction<T, Exec>&)>;

// A run assembled like `ptyko reconstruct`, with a strategy ("" = LocalSync
// on this rank alone, holding every frame).
template <class T>
RunResult run(std::string const& strategy_name, int sync_every, std::string const& solver, int epochs,
              Tweak const& tweak = {}, std::string const& path = DatasetEnvironment::path,
              Drive<T> const& drive = {}) {
  Exec space;
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(path, {});
  RunResult out;
  std::unique_ptr<Strategy<T, Exec>> strategy;
  LocalSync<T, Exec> local;
  Sync<T, Exec>* sync = &local;
  if (!strategy_name.empty()) {
    StrategyOptions so;
    so.sync_every = sync_every;
    strategy = make_strategy<T, Exec>(strategy_name, comm, layout, so);
    out.dec = strategy->decomposition();
    sync = strategy.get();
  } else {
    out.dec.frame_ids.resize(layout.positions_px.size());
    for (std::size_t i = 0; i < out.dec.frame_ids.size(); ++i) out.dec.frame_ids[i] = i;
    out.dec.tile_height = layout.grid.height;
    out.dec.tile_width = layout.grid.width;
  }
  auto const& d = out.dec;
  out.tile_area = std::size_t(d.tile_height) * d.tile_width;
  auto data = load_local_data<T, Exec>(space, layout, d.frame_ids, d.tile_y, d.tile_x, d.tile_height, d.tile_width, {});
  double const diameter = default_probe_diameter(typical_step(layout.positions_px), layout.info.ny);
  auto state = initial_state<T, Exec>(space, data, *sync, d.tile_height, d.tile_width, HostComplex3(), 2, 5, diameter);
  SolverOptions o = options<T>(solver, epochs);
  if (tweak) tweak(o);
  Reconstruction<T, Exec> rec(space, std::move(data), std::move(state), o, *sync, layout.positions_px);
  if (drive)
    drive(rec);
  else
    while (!rec.done()) rec.step();
  out.cost = rec.state().cost;
  out.isolated = rec.isolated_positions();
  {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.state().object);
    out.tile = HostComplex2("tile", h.extent(0), h.extent(1));
    for (std::size_t k = 0; k < h.span(); ++k) out.tile.data()[k] = Complex<double>(h.data()[k]);
  }
  if (strategy) {
    out.object = strategy->gather_object(space, rec.state().object);
    out.probe = strategy->probe_on_host(space, rec.state().probe);
  } else {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.state().object);
    out.object = HostComplex2("object", h.extent(0), h.extent(1));
    for (std::size_t k = 0; k < h.span(); ++k) out.object.data()[k] = Complex<double>(h.data()[k]);
    auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.state().probe);
    out.probe = HostComplex3("probe", hp.extent(0), hp.extent(1), hp.extent(2));
    for (std::size_t k = 0; k < hp.span(); ++k) out.probe.data()[k] = Complex<double>(hp.data()[k]);
  }
  return out;
}

template <class View>
double relative_difference(View const& a, View const& b) {
  double num = 0, den = 0;
  for (std::size_t k = 0; k < a.span(); ++k) {
    num += std::norm(std::complex<double>(a.data()[k].real() - b.data()[k].real(), a.data()[k].imag() - b.data()[k].imag()));
    den += std::norm(std::complex<double>(b.data()[k].real(), b.data()[k].imag()));
  }
  return std::sqrt(num / den);
}

bool is_root() { return Communicator::world().rank() == 0; }

TEST(FullSync, ReproducesOneRankForRpieAndLsqml) {
  for (std::string solver : {"rpie", "lsqml"}) {
    auto ref = run<float>("", 1, solver, 4);
    auto par = run<float>("full-sync", 1, solver, 4);
    if (!is_root()) continue;
    double const dobj = relative_difference(par.object, ref.object);
    double const dprobe = relative_difference(par.probe, ref.probe);
    // Same global batches; only the order of float additions differs.
    EXPECT_LT(dobj, 1e-5) << solver;
    EXPECT_LT(dprobe, 1e-5) << solver;
    for (std::size_t e = 0; e < ref.cost.size(); ++e)
      EXPECT_NEAR(par.cost[e], ref.cost[e], 1e-5 * ref.cost[e]) << solver << " epoch " << e;
  }
}

// LSQML's step sizes over ranks both ways (host_step_means): a global batch
// of at most lsqml_step_rows_limit positions brings every position's sums
// as rows, a larger one sums them in two all-reduces; either must give the
// one-rank run to float rounding.
TEST(Neighbor, ReproducesOneRankWithLsqmlStepSumsInRowsAndInTwoSums) {
  for (int batch : {(lsqml_step_rows_limit + 100) / 2, lsqml_step_rows_limit + 100}) {
    Tweak const tweak = [batch](SolverOptions& o) { o.batch_size = batch; };
    auto ref = run<float>("", 1, "lsqml", 3, tweak, DatasetEnvironment::many_path);
    auto par = run<float>("neighbor", 1, "lsqml", 3, tweak, DatasetEnvironment::many_path);
    if (!is_root()) continue;
    EXPECT_LT(relative_difference(par.object, ref.object), 1e-5) << "batch " << batch;
    EXPECT_LT(relative_difference(par.probe, ref.probe), 1e-5) << "batch " << batch;
    for (std::size_t e = 0; e < ref.cost.size(); ++e)
      EXPECT_NEAR(par.cost[e], ref.cost[e], 1e-5 * ref.cost[e]) << "batch " << batch << ", epoch " << e;
  }
}

// The Poisson direction too: before its ratio was capped
// (poisson_ratio_max), pixels the first epochs' model left far too dark
// scaled the waves by up to 1e6, and the order of the ranks' sums gave
// other runs (LSQML's first-epoch cost 37749 on one rank, 34544 on two).
TEST(FullSync, ReproducesOneRankWithPoissonNoise) {
  Tweak const poisson = [](SolverOptions& o) { o.noise = NoiseModel::poisson; };
  for (std::string solver : {"rpie", "lsqml"}) {
    auto ref = run<float>("", 1, solver, 4, poisson);
    auto par = run<float>("full-sync", 1, solver, 4, poisson);
    auto nb = run<float>("neighbor", 1, solver, 4, poisson);
    if (!is_root()) continue;
    EXPECT_LT(relative_difference(par.object, ref.object), 1e-4) << solver;
    EXPECT_LT(relative_difference(nb.object, ref.object), 1e-4) << solver;
    for (std::size_t e = 0; e < ref.cost.size(); ++e) {
      EXPECT_NEAR(par.cost[e], ref.cost[e], 1e-4 * ref.cost[e]) << solver << " epoch " << e;
      EXPECT_NEAR(nb.cost[e], ref.cost[e], 1e-4 * ref.cost[e]) << solver << " epoch " << e;
    }
  }
}

TEST(Neighbor, ReproducesFullSync) {
  for (std::string solver : {"rpie", "lsqml", "dm"}) {
    auto full = run<float>("full-sync", 1, solver, 4);
    auto nb = run<float>("neighbor", 1, solver, 4);
    if (!is_root()) continue;
    EXPECT_LT(relative_difference(nb.object, full.object), 1e-4) << solver;
    EXPECT_LT(relative_difference(nb.probe, full.probe), 1e-4) << solver;
  }
}

// rPIE's and LSQML's isolated positions (footprints that meet no other of their batch)
// are updated without object sums, after the sums, with the batch's largest
// weight over all ranks; the other ranks holding their pixels get the parts
// of their products those need (SharedIsolated) and update them alike. Small batches make many of them; the result must be the
// one with every position summed (double: to rounding), and the ranks'
// tile lists must still agree (else the exchange would fail or corrupt).
// Neighbour-consensus moves the parts to the holders near a cut, full-sync
// every isolated product to every other rank.
void expect_isolated_positions_give_the_sums(std::string const& strategy) {
  auto comm = Communicator::world();
  auto const batch4 = [](SolverOptions& o) { o.batch_size = 4; };
  auto const summed = [](SolverOptions& o) {
    o.batch_size = 4;
    o.isolated_updates = false;
  };
  auto const& wide = DatasetEnvironment::wide_path;
  for (char const* solver : {"rpie", "lsqml"}) {
    auto const direct = run<double>(strategy, 1, solver, 4, batch4, wide);
    auto const ref = run<double>(strategy, 1, solver, 4, summed, wide);
    double isolated = double(direct.isolated), none = double(ref.isolated);
    comm.allreduce(&isolated, 1, Datatype::float64, ReduceOp::sum);
    comm.allreduce(&none, 1, Datatype::float64, ReduceOp::sum);
    if (!is_root()) continue;
    double const dobj = relative_difference(direct.object, ref.object);
    std::printf("[ measured ] %s, %s, %d rank(s): %.0f of 400 positions isolated, object difference %.2e\n",
                strategy.c_str(), solver, comm.size(), isolated, dobj);
    EXPECT_EQ(none, 0.0) << solver;
    EXPECT_GT(isolated, 0.0) << solver;
    EXPECT_LT(dobj, 1e-9) << solver;
    EXPECT_LT(relative_difference(direct.probe, ref.probe), 1e-9) << solver;
    for (std::size_t e = 0; e < ref.cost.size(); ++e)
      EXPECT_NEAR(direct.cost[e], ref.cost[e], 1e-9 * ref.cost[e]) << solver << ", epoch " << e;
  }
}

TEST(Neighbor, IsolatedPositionsGiveTheResultOfTheSums) { expect_isolated_positions_give_the_sums("neighbor"); }
TEST(FullSync, IsolatedPositionsGiveTheResultOfTheSums) { expect_isolated_positions_give_the_sums("full-sync"); }

// Pixels two ranks hold must stay equal bit for bit in the exact mode:
// every holder updates its copy of an isolated position's pixels from the
// owner's product (SharedIsolated), as the owner does. Compares every
// rank's tile with every other's where they overlap, after 4 epochs of
// float rPIE and LSQML with most positions isolated and many of them
// near a cut.
void expect_ranks_holding_a_pixel_hold_the_same_value(std::string const& strategy) {
  auto comm = Communicator::world();
  auto const batch4 = [](SolverOptions& o) { o.batch_size = 4; };
  for (char const* solver : {"rpie", "lsqml"}) {
    auto const nb = run<float>(strategy, 1, solver, 4, batch4, DatasetEnvironment::wide_path);
    // (tile_y, tile_x, height, width) then the values, to rank 0.
    std::vector<double> mine = {double(nb.dec.tile_y), double(nb.dec.tile_x), double(nb.dec.tile_height),
                                double(nb.dec.tile_width)};
    for (std::size_t k = 0; k < nb.tile.span(); ++k) {
      mine.push_back(nb.tile.data()[k].real());
      mine.push_back(nb.tile.data()[k].imag());
    }
    std::vector<char> bytes(reinterpret_cast<char const*>(mine.data()),
                            reinterpret_cast<char const*>(mine.data() + mine.size()));
    std::vector<std::size_t> offsets;
    auto const all = comm.gather_bytes(bytes, offsets, 0);
    if (!is_root()) continue;
    auto const tile = [&](int r) { return reinterpret_cast<double const*>(all.data() + offsets[r]); };
    std::size_t shared = 0, differ = 0;
    for (int a = 0; a < comm.size(); ++a)
      for (int b = a + 1; b < comm.size(); ++b) {
        double const *ta = tile(a), *tb = tile(b);
        int const ay = int(ta[0]), ax = int(ta[1]), ah = int(ta[2]), aw = int(ta[3]);
        int const by = int(tb[0]), bx = int(tb[1]), bh = int(tb[2]), bw = int(tb[3]);
        for (int y = std::max(ay, by); y < std::min(ay + ah, by + bh); ++y)
          for (int x = std::max(ax, bx); x < std::min(ax + aw, bx + bw); ++x) {
            double const* va = ta + 4 + 2 * (std::size_t(y - ay) * aw + (x - ax));
            double const* vb = tb + 4 + 2 * (std::size_t(y - by) * bw + (x - bx));
            ++shared;
            differ += va[0] != vb[0] || va[1] != vb[1];
          }
      }
    std::printf("[ measured ] %s, %s, %d rank(s): %zu pixels held by two ranks, %zu differ\n", strategy.c_str(), solver,
                comm.size(), shared, differ);
    EXPECT_EQ(differ, 0u) << solver;
    if (comm.size() > 1) EXPECT_GT(shared, 0u) << solver;
  }
}

TEST(Neighbor, RanksHoldingAPixelHoldTheSameValue) { expect_ranks_holding_a_pixel_hold_the_same_value("neighbor"); }
// Full-sync: every rank holds every pixel, the isolated positions' too.
TEST(FullSync, RanksHoldTheSameObject) { expect_ranks_holding_a_pixel_hold_the_same_value("full-sync"); }

// The gathered object is the tiles stitched: where rank 0's tile lies, its
// values, and free space (1) where no tile lies. On one rank the tile is
// taken as it is, without the stitch's sums: exactly its values. On several
// the stitch is the holders' weighted mean, and holders of a pixel updated
// by summed positions may differ in the last bit (their sums' order).
TEST(Neighbor, GatheredObjectIsTheTilesStitched) {
  bool const one_rank = Communicator::world().size() == 1;  // collective: every rank asks
  auto nb = run<float>("neighbor", 1, "lsqml", 2);
  if (!is_root()) return;
  auto const& d = nb.dec;
  std::size_t differ = 0, inside = 0, outside_not_one = 0, outside = 0;
  for (int y = 0; y < int(nb.object.extent(0)); ++y)
    for (int x = 0; x < int(nb.object.extent(1)); ++x) {
      Complex<double> const o = nb.object(y, x);
      bool const in_tile = y >= d.tile_y && y < d.tile_y + d.tile_height && x >= d.tile_x && x < d.tile_x + d.tile_width;
      if (in_tile) {
        Complex<double> const t = nb.tile(y - d.tile_y, x - d.tile_x);
        ++inside;
        double const tolerance = one_rank ? 0.0 : 1e-6 * std::abs(std::complex<double>(t.real(), t.imag()));
        differ += std::abs(std::complex<double>(o.real() - t.real(), o.imag() - t.imag())) > tolerance;
      } else if (one_rank) {
        ++outside;
        outside_not_one += o.real() != 1.0 || o.imag() != 0.0;
      }
    }
  EXPECT_EQ(inside, std::size_t(d.tile_height) * std::size_t(d.tile_width));
  EXPECT_EQ(differ, 0u) << "of " << inside << " pixels of rank 0's tile";
  if (one_rank) {
    EXPECT_GT(outside, 0u) << "the object's margin lies outside the tile";
    EXPECT_EQ(outside_not_one, 0u);
  }
}

TEST(Neighbor, HoldsOnlyItsTileAndIdenticalProbes) {
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  auto nb = run<float>("neighbor", 1, "lsqml", 2);
  int const D = layout.info.ny;
  double const full = double(layout.grid.height) * layout.grid.width;
  // Domain share plus a halo of about half a patch around it.
  double const halo = double(D + 3) * (nb.dec.tile_height + nb.dec.tile_width);
  EXPECT_LE(double(nb.tile_area), 1.3 * full / comm.size() + halo);
  if (comm.size() > 1) EXPECT_LT(double(nb.tile_area), full);
  // Every rank ends the epoch with the same probe: compare all with rank 0's.
  std::vector<char> mine(reinterpret_cast<char const*>(nb.probe.data()),
                         reinterpret_cast<char const*>(nb.probe.data() + nb.probe.span()));
  std::vector<std::size_t> offsets;
  auto all = comm.gather_bytes(mine, offsets, 0);
  if (comm.rank() == 0)
    for (int r = 1; r < comm.size(); ++r)
      EXPECT_EQ(0, std::memcmp(all.data() + offsets[r], mine.data(), mine.size())) << "rank " << r;
}

// Each rank contributes, on its tile, the number of its own footprints
// covering each pixel; after one exchange every pixel must hold the count
// over all frames, and the bytes moved must be exactly the overlaps.
template <class T>
void fill_coverage(Exec const& space, ScanLayout const& layout, Decomposition const& d,
                   ComplexView2<T, Exec::memory_space> const& num, RealView2<T, Exec::memory_space> const& w,
                   std::size_t every = 1) {
  int const D = layout.info.ny;
  auto hn = Kokkos::create_mirror_view(num);
  auto hw = Kokkos::create_mirror_view(w);
  Kokkos::deep_copy(hn, Complex<T>(0));
  Kokkos::deep_copy(hw, T(0));
  for (auto id : d.frame_ids) {
    if (id % every != 0) continue;  // a batch: every `every`-th frame of the scan
    int const cy = int(std::floor(layout.positions_px[id][0] - D / 2)) - d.tile_y;
    int const cx = int(std::floor(layout.positions_px[id][1] - D / 2)) - d.tile_x;
    for (int i = 0; i <= D; ++i)
      for (int j = 0; j <= D; ++j) {
        hn(cy + i, cx + j) += Complex<T>(1, 2);
        hw(cy + i, cx + j) += 1;
      }
  }
  Kokkos::deep_copy(space, num, hn);
  Kokkos::deep_copy(space, w, hw);
}

// Pixels of the rank's tile where (num, w) is not (1 + 2i, 1) times the
// global coverage of every `every`-th frame.
int coverage_mismatches(ScanLayout const& layout, Decomposition const& d,
                        ComplexView2<float, Exec::memory_space> const& num,
                        RealView2<float, Exec::memory_space> const& w, std::size_t every = 1) {
  int const D = layout.info.ny;
  Kokkos::View<int**, Kokkos::HostSpace> cover("cover", layout.grid.height, layout.grid.width);
  for (std::size_t id = 0; id < layout.positions_px.size(); id += every) {
    auto const& pos = layout.positions_px[id];
    int const cy = int(std::floor(pos[0] - D / 2)), cx = int(std::floor(pos[1] - D / 2));
    for (int i = 0; i <= D; ++i)
      for (int j = 0; j <= D; ++j) cover(cy + i, cx + j) += 1;
  }
  auto hn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), num);
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  int wrong = 0;
  for (int y = 0; y < d.tile_height; ++y)
    for (int x = 0; x < d.tile_width; ++x) {
      int const c = cover(d.tile_y + y, d.tile_x + x);
      wrong += hw(y, x) != float(c) || hn(y, x) != Complex<float>(c, 2 * c);
    }
  return wrong;
}

TEST(Neighbor, OverlapSumIsExactAndMovesOnlyOverlaps) {
  Exec space;
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  auto strategy = make_strategy<float, Exec>("neighbor", comm, layout, {});
  auto const& d = strategy->decomposition();
  ComplexView2<float, Exec::memory_space> num("num", d.tile_height, d.tile_width);
  RealView2<float, Exec::memory_space> w("w", d.tile_height, d.tile_width);
  fill_coverage<float>(space, layout, d, num, w);
  strategy->take_bytes_moved();
  strategy->sum_object(space, num, w);
  std::size_t const moved = strategy->take_bytes_moved();

  int const D = layout.info.ny;
  Partition const p = partition_scan(layout.positions_px, D, layout.grid.height, layout.grid.width, comm.size());
  std::size_t expected = 0;
  for (int s : p.neighbours[comm.rank()])
    expected += 2 * 3 * sizeof(float) * intersect(p.tiles[comm.rank()], p.tiles[s]).area();
  EXPECT_EQ(moved, expected);

  EXPECT_EQ(coverage_mismatches(layout, d, num, w), 0);
}

// A batch of every `every`-th frame of the scan (on every rank): its tiles in
// this rank's object coordinates, and the rank's own footprint counts of
// the batch in (num, w) (fill_coverage), ready for a tiled sum_object.
struct BatchSums {
  MirroredTileList<Exec::memory_space> tiles;
  ComplexView2<float, Exec::memory_space> num;
  RealView2<float, Exec::memory_space> w;
};

BatchSums batch_sums(Exec const& space, ScanLayout const& layout, Decomposition const& d, std::size_t every) {
  int const D = layout.info.ny;
  std::vector<std::array<double, 2>> centres;
  for (std::size_t id = 0; id < layout.positions_px.size(); id += every)
    centres.push_back({layout.positions_px[id][0] - d.tile_y, layout.positions_px[id][1] - d.tile_x});
  BatchSums b{make_mirrored_tile_list<Exec::memory_space>(footprint_tiles(centres, D, d.tile_height, d.tile_width),
                                                          "batch_tiles"),
              ComplexView2<float, Exec::memory_space>("num", d.tile_height, d.tile_width),
              RealView2<float, Exec::memory_space>("w", d.tile_height, d.tile_width)};
  fill_coverage<float>(space, layout, d, b.num, b.w, every);
  return b;
}

// A batch (every 7th frame of the scan, on every rank): the sums lie in the
// batch's tiles, and the tiled exchange must give every pixel of the tile
// the batch's global coverage, moving fewer bytes than the whole overlaps.
TEST(Neighbor, TiledOverlapSumIsExactAndMovesOnlyTheBatchTiles) {
  Exec space;
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  auto strategy = make_strategy<float, Exec>("neighbor", comm, layout, {});
  auto const& d = strategy->decomposition();
  EXPECT_EQ(d.tile_y % tile_edge, 0);  // one tile grid for every rank
  EXPECT_EQ(d.tile_x % tile_edge, 0);
  int const D = layout.info.ny;
  std::size_t const every = 7;
  auto [tiles, num, w] = batch_sums(space, layout, d, every);
  strategy->take_bytes_moved();
  EXPECT_LT(strategy->sum_object(space, num, w, tiles, -1.0), 0.0);  // without this rank's maximum: not known
  std::size_t const moved = strategy->take_bytes_moved();

  Partition const p = partition_scan(layout.positions_px, D, layout.grid.height, layout.grid.width, comm.size());
  std::size_t whole = 0;
  for (int s : p.neighbours[comm.rank()])
    whole += 2 * 3 * sizeof(float) * intersect(p.tiles[comm.rank()], p.tiles[s]).area();
  if (whole > 0) {
    EXPECT_GT(moved, 0u);
    EXPECT_LT(moved, whole);
  }

  EXPECT_EQ(coverage_mismatches(layout, d, num, w, every), 0);
}

// The same batch with its tiles' sources (which ranks' positions touched
// each tile, as Reconstruction gives them when the strategy names every
// frame's rank): each link sends only the parts of the tiles this rank's
// positions touched and receives those its neighbour's touched, exactly
// those bytes, fewer than the batch tiles' parts both ways, and the sums
// are the same.
TEST(Neighbor, TiledSumWithSourcesMovesOnlyEachRanksOwnTiles) {
  Exec space;
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  auto strategy = make_strategy<float, Exec>("neighbor", comm, layout, {});
  auto const& d = strategy->decomposition();
  int const D = layout.info.ny, me = comm.rank();
  std::size_t const every = 7;
  auto [tiles, num, w] = batch_sums(space, layout, d, every);
  EXPECT_TRUE(strategy->reads_tile_sources());
  EXPECT_EQ(strategy->rank(), me);
  Partition const p = partition_scan(layout.positions_px, D, layout.grid.height, layout.grid.width, comm.size());
  std::vector<int> const rank_of = p.frame_ranks();
  std::vector<std::array<double, 2>> centres;
  std::vector<int> ranks;
  for (std::size_t id = 0; id < layout.positions_px.size(); id += every) {
    centres.push_back({layout.positions_px[id][0] - d.tile_y, layout.positions_px[id][1] - d.tile_x});
    ranks.push_back(rank_of[id]);
  }
  std::vector<std::array<int, 2>> origins;
  for (std::size_t k = 0; k < tiles.host.extent(0); ++k) origins.push_back({tiles.host(k, 0), tiles.host(k, 1)});
  auto sourced = tiles;
  sourced.sources = std::make_shared<TileSources const>(
      footprint_tile_sources(origins, centres, ranks, D, d.tile_height, d.tile_width));

  strategy->take_bytes_moved();
  strategy->sum_object(space, num, w, sourced, -1.0);
  std::size_t const moved = strategy->take_bytes_moved();
  EXPECT_EQ(coverage_mismatches(layout, d, num, w, every), 0);

  // The bytes: 3 floats per pixel of the parts sent and of those received.
  std::size_t expected = 0, both_ways = 0;
  for (int s : p.neighbours[me]) {
    Box const g = intersect(p.tiles[me], p.tiles[s]);
    Box const region{g.y - d.tile_y, g.x - d.tile_x, g.height, g.width};
    for (std::size_t k = 0; k < origins.size(); ++k) {
      std::size_t const area = intersect(Box{origins[k][0], origins[k][1], tile_edge, tile_edge}, region).area();
      expected += 3 * sizeof(float) * area * (sourced.sources->touched_by(k, me) + sourced.sources->touched_by(k, s));
      both_ways += 2 * 3 * sizeof(float) * area;
    }
  }
  EXPECT_EQ(moved, expected);
  double totals[2] = {double(moved), double(both_ways)};
  comm.allreduce(totals, 2, Datatype::float64, ReduceOp::sum);
  if (totals[1] > 0) {
    EXPECT_LT(totals[0], totals[1]);
    if (me == 0)
      std::printf("[ measured ] %d ranks: a batch of every 7th frame moves %.0f bytes with its tiles' sources, "
                  "%.0f without (%.2f)\n",
                  comm.size(), totals[0], totals[1], totals[0] / totals[1]);
  }
}

// full-sync over a batch's tiles (every 7th frame): every pixel of the tiles
// holds the sum over all frames of the batch, and with several ranks the
// sum returns the largest weight over the tiles, equal to max_over_tiles
// (the solvers then skip that pass); one rank returns the maximum it was
// given (its sums are already global).
TEST(FullSync, TiledSumReturnsTheLargestWeight) {
  Exec space;
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  auto strategy = make_strategy<float, Exec>("full-sync", comm, layout, {});
  auto const& d = strategy->decomposition();
  std::size_t const every = 7;
  auto [tiles, num, w] = batch_sums(space, layout, d, every);
  double const largest = strategy->sum_object(space, num, w, tiles, 0.5);
  EXPECT_EQ(coverage_mismatches(layout, d, num, w, every), 0);
  if (comm.size() == 1) {
    EXPECT_EQ(largest, 0.5);
  } else {
    EXPECT_GE(largest, 1.0);  // a count of footprints
    EXPECT_EQ(largest, max_over_tiles(space, tiles.list, w));
  }
}

// Exact neighbour-consensus over a batch's tiles, given this rank's own
// largest weight: the sum returns the largest summed weight over the tiles,
// bit-equal to max_over_tiles after the sum. Only the overlaps are summed,
// so the largest value can come from this rank's own maximum or from an
// unpack; on four ranks at least one rank's comes from an overlap, which
// the test reports. The approximate mode sums nothing and returns the
// maximum it was given.
TEST(Neighbor, TiledSumReturnsTheLargestWeightGivenTheLocalOne) {
  Exec space;
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  auto strategy = make_strategy<float, Exec>("neighbor", comm, layout, {});
  auto const& d = strategy->decomposition();
  std::size_t const every = 7;
  auto [tiles, num, w] = batch_sums(space, layout, d, every);
  double const local = max_over_tiles(space, tiles.list, w);
  double const largest = strategy->sum_object(space, num, w, tiles, local);
  EXPECT_EQ(coverage_mismatches(layout, d, num, w, every), 0);
  double const after = max_over_tiles(space, tiles.list, w);
  EXPECT_EQ(largest, after);
  double raised = after > local ? 1.0 : 0.0;
  comm.allreduce(&raised, 1, Datatype::float64, ReduceOp::max);
  if (comm.size() > 1) EXPECT_EQ(raised, 1.0) << "no rank's maximum lies in an overlap: the unpack's maximum is untested";

  StrategyOptions so;
  so.sync_every = 2;
  auto approximate = make_strategy<float, Exec>("neighbor", comm, layout, so);
  auto [atiles, anum, aw] = batch_sums(space, layout, approximate->decomposition(), every);
  EXPECT_EQ(approximate->sum_object(space, anum, aw, atiles, 0.25), 0.25);
}

// A batch's sums with the largest weight folded into the probe sums'
// all-reduce (FoldedMaximum): every rank gets the largest summed weight
// over all ranks' tiles, or a rank's weight outside the sums where that is
// larger, and the probe sums come out summed as without the fold, bit for
// bit (integers). This rank's largest weight is given (host spaces) or
// asked for after the sums (after_sums, devices). Full-sync needs no fold:
// its unpack finds the same global value. Without probe sums nothing is
// folded and the value is this rank's.
TEST(Strategies, BatchSumFoldsTheLargestWeightIntoTheProbeSums) {
  Exec space;
  using Mem = Exec::memory_space;
  auto comm = Communicator::world();
  int const P = comm.size(), r = comm.rank();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  int const M = 2, D = 4;
  std::size_t const n = (2 * M + 1) * D * D;
  for (std::string const spec : {"neighbor", "neighbor:2", "full-sync"}) {
    bool const full = spec == "full-sync";
    for (int variant = 0; variant < (full ? 8 : 4); ++variant) {
      // Full-sync also with part of the outside weight in the space's
      // memory (devices), which it asks for before its sums.
      bool const given = variant % 2 == 0, outside_wins = variant % 4 >= 2, in_space = variant >= 4;
      SCOPED_TRACE(spec + (given ? ", maximum given" : ", maximum after the sums") +
                   (outside_wins ? ", outside larger" : "") + (in_space ? ", outside in the space" : ""));
      StrategyOptions so;
      so.sync_every = spec == "neighbor:2" ? 2 : 1;
      auto strategy = make_strategy<float, Exec>(full ? "full-sync" : "neighbor", comm, layout, so);
      auto [tiles, num, w] = batch_sums(space, layout, strategy->decomposition(), 7);
      double const local = max_over_tiles(space, tiles.list, w);
      // The probe sums and P slots in one allocation, as UpdateSums keeps them.
      RealView1<float, Mem> probe_sums("probe_sums", n + P);
      Kokkos::deep_copy(probe_sums, float(r + 1));
      ComplexView3<float, Mem> probe_num(reinterpret_cast<Complex<float>*>(probe_sums.data()), M, D, D);
      RealView2<float, Mem> probe_w(probe_sums.data() + 2 * M * D * D, D, D);
      FoldedMaximum<float, Mem> fold;
      fold.slots = Kokkos::subview(probe_sums, std::make_pair(n, n + P));
      // Weights outside the sums (isolated positions), on the host.
      fold.outside = outside_wins ? 1000.0 + r : 0.25 * r;
      fold.outside_in_space = in_space;
      int asked = 0;
      fold.after_sums = [&, list = tiles.list, weight = w] {  // init-captures: C++17 lambdas cannot capture structured bindings
        ++asked;
        return max_over_tiles(space, list, weight);
      };
      auto const out = strategy->sum_batch(space, num, w, tiles, given ? local : -1.0, probe_num, probe_w, true,
                                           {}, fold);
      double expected = std::max(max_over_tiles(space, tiles.list, w), fold.outside);
      comm.allreduce(&expected, 1, Datatype::float64, ReduceOp::max);
      if (P > 1) {
        EXPECT_TRUE(out.global);
        EXPECT_EQ(out.value, expected);
        if (outside_wins) EXPECT_EQ(out.value, 1000.0 + P - 1);
        int const asks = full ? in_space : !given;  // full-sync knows its summed maximum from the unpack
        EXPECT_EQ(asked, asks) << "the maximum after the sums is asked for when it is not given";
      } else {
        EXPECT_FALSE(out.global);
      }
      auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probe_sums);
      int wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += host(i) != float(P * (P + 1) / 2);
      EXPECT_EQ(wrong, 0) << "probe sums not summed over the ranks";

      RealView1<float, Mem> plain("plain_probe_sums", n + P);
      Kokkos::deep_copy(plain, 1.0f);
      ComplexView3<float, Mem> plain_num(reinterpret_cast<Complex<float>*>(plain.data()), M, D, D);
      RealView2<float, Mem> plain_w(plain.data() + 2 * M * D * D, D, D);
      auto const no_probe = strategy->sum_batch(space, num, w, tiles, local, plain_num, plain_w, false, {}, fold);
      if (!full) EXPECT_FALSE(no_probe.global) << "nothing to fold into without probe sums";
    }
  }
}

// w <- 1 where w > 0 (a free function: CUDA's device lambdas cannot live in
// a test's private body).
void set_positive_to_one(Exec const& space, RealView2<float, Exec::memory_space> const& w) {
  Kokkos::parallel_for(
      "set_positive_to_one", Kokkos::RangePolicy<Exec>(space, 0, w.span()),
      KOKKOS_LAMBDA(std::size_t k) { w.data()[k] = w.data()[k] > 0 ? 1.0f : 0.0f; });
}

// Devices do not know a rank's largest weight before the sums: exact
// neighbour-consensus then queues this rank's own largest weight before the
// exchange (FoldedMaximum::queue_own) and finds the largest the unpacks
// leave from the messages on the host (OverlapMaximum), instead of asking
// for a reduction after the sums (after_sums, a second wait for the device).
// The value is the same, bit for bit: the largest summed weight over all
// ranks' tiles. With and without the tiles' sources (each side sending its
// own tiles, or both the same), and in the approximate mode (own weights).
TEST(Neighbor, BatchSumFindsTheLargestWeightFromTheMessages) {
  Exec space;
  using Mem = Exec::memory_space;
  auto comm = Communicator::world();
  int const P = comm.size();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  int const M = 1, D = 4;
  std::size_t const n = (2 * M + 1) * D * D;
  for (std::string const spec : {"neighbor", "neighbor:2"})
    for (bool const sourced : {false, true}) {
      SCOPED_TRACE(spec + (sourced ? ", with the tiles' sources" : ""));
      StrategyOptions so;
      so.sync_every = spec == "neighbor" ? 1 : 2;
      auto strategy = make_strategy<float, Exec>("neighbor", comm, layout, so);
      auto const& d = strategy->decomposition();
      auto [tiles, num, w] = batch_sums(space, layout, d, 7);
      if (sourced) {
        Partition const p = partition_scan(layout.positions_px, layout.info.ny, layout.grid.height,
                                           layout.grid.width, P);
        std::vector<int> const rank_of = p.frame_ranks();
        std::vector<std::array<double, 2>> centres;
        std::vector<int> ranks;
        for (std::size_t id = 0; id < layout.positions_px.size(); id += 7) {
          centres.push_back({layout.positions_px[id][0] - d.tile_y, layout.positions_px[id][1] - d.tile_x});
          ranks.push_back(rank_of[id]);
        }
        std::vector<std::array<int, 2>> origins;
        for (std::size_t k = 0; k < tiles.host.extent(0); ++k) origins.push_back({tiles.host(k, 0), tiles.host(k, 1)});
        tiles.sources = std::make_shared<TileSources const>(
            footprint_tile_sources(origins, centres, ranks, layout.info.ny, d.tile_height, d.tile_width));
      }
      // Weight 1 wherever this rank's footprints reach: the largest sum
      // (2 or more) then lies where ranks' weights meet, in an overlap.
      set_positive_to_one(space, w);
      double const own = max_over_tiles(space, tiles.list, w);
      RealView1<float, Mem> probe_sums("probe_sums", n + P);
      ComplexView3<float, Mem> probe_num(reinterpret_cast<Complex<float>*>(probe_sums.data()), M, D, D);
      RealView2<float, Mem> probe_w(probe_sums.data() + 2 * M * D * D, D, D);
      FoldedMaximum<float, Mem> fold;
      fold.slots = Kokkos::subview(probe_sums, std::make_pair(n, n + P));
      int queued = 0, read = 0, asked = 0;
      double queued_value = -1;
      fold.queue_own = [&, list = tiles.list, weight = w] {
        ++queued;
        queued_value = max_over_tiles(space, list, weight);  // before the sums: this rank's own
      };
      fold.own_queued = [&] {
        ++read;
        return queued_value;
      };
      fold.after_sums = [&] {
        ++asked;
        return -1.0;
      };
      auto const out = strategy->sum_batch(space, num, w, tiles, -1.0, probe_num, probe_w, true, {}, fold);
      double const summed = max_over_tiles(space, tiles.list, w);
      double expected = summed;
      comm.allreduce(&expected, 1, Datatype::float64, ReduceOp::max);
      if (P == 1) {
        EXPECT_FALSE(out.global);
        continue;
      }
      EXPECT_TRUE(out.global);
      EXPECT_EQ(out.value, expected);
      EXPECT_EQ(asked, 0) << "no reduction after the sums";
      EXPECT_EQ(queued, 1);
      EXPECT_EQ(read, 1);
      EXPECT_EQ(queued_value, own);
      EXPECT_EQ(own, 1.0);
      if (so.sync_every == 1) EXPECT_GE(out.value, 2.0) << "the largest sum lies in an overlap: the messages' maximum";
    }
}

// Approximate consensus (sync-every 2) after two batches (every 7th frame
// from 0 and from 3): the object is f(y, x) on every rank, plus i (r + 1)
// on the tiles the batches touched, where rank r's illumination is r + 1
// per batch. Only touched pixels shared by several tiles change, to the
// weighted average f + i sum w_r (r + 1) / sum w_r over the ranks holding
// them (w_r: rank r's summed illumination), and only those pixels travel. A reconcile with no batch since the last
// one moves no object pixel.
// With the batch tiles' sources (`sourced`), a rank's illumination and its
// own object values lie only on the tiles its own positions touched, the
// average runs over the ranks that touched a pixel's tile, and each link
// sends the tiles this rank touched and receives those its neighbour
// touched.
void reconcile_averages_only_touched_tiles(bool sourced) {
  Exec space;
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  StrategyOptions so;
  so.sync_every = 2;
  auto strategy = make_strategy<float, Exec>("neighbor", comm, layout, so);
  EXPECT_TRUE(strategy->reads_tile_sources());
  auto const& d = strategy->decomposition();
  int const D = layout.info.ny, r = comm.rank(), H = d.tile_height, W = d.tile_width, P = comm.size();
  Partition const p = partition_scan(layout.positions_px, D, layout.grid.height, layout.grid.width, P);
  std::vector<int> const rank_of = p.frame_ranks();
  // touched[q](y, x): in how many batches rank q's positions touched the
  // pixel's tile (any rank's, unsourced); q's weight there is that times q + 1.
  std::vector<Kokkos::View<int**, Kokkos::HostSpace>> touched;
  for (int q = 0; q < P; ++q) touched.emplace_back("touched", H, W);
  std::array<RealView2<float, Exec::memory_space>, 2> illum;
  std::array<MirroredTileList<Exec::memory_space>, 2> tiles;
  for (int b = 0; b < 2; ++b) {
    std::vector<std::array<double, 2>> centres;
    std::vector<int> ranks;
    for (std::size_t id = b == 0 ? 0 : 3; id < layout.positions_px.size(); id += 7) {
      centres.push_back({layout.positions_px[id][0] - d.tile_y, layout.positions_px[id][1] - d.tile_x});
      ranks.push_back(rank_of[id]);
    }
    auto const origins = footprint_tiles(centres, D, H, W);
    tiles[b] = make_mirrored_tile_list<Exec::memory_space>(origins, "batch_tiles");
    auto const sources = footprint_tile_sources(origins, centres, ranks, D, H, W);
    if (sourced) tiles[b].sources = std::make_shared<TileSources const>(sources);
    Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> h("illum", H, W);
    for (std::size_t k = 0; k < origins.size(); ++k)
      for (int q = 0; q < P; ++q) {
        if (sourced && !sources.touched_by(k, q)) continue;
        for (int y = origins[k][0]; y < std::min(H, origins[k][0] + tile_edge); ++y)
          for (int x = origins[k][1]; x < std::min(W, origins[k][1] + tile_edge); ++x) {
            touched[q](y, x) += 1;
            if (q == r) h(y, x) = float(r + 1);
          }
      }
    illum[b] = RealView2<float, Exec::memory_space>("illum", H, W);
    Kokkos::deep_copy(illum[b], h);
  }
  auto f = [&](int y, int x) { return float((3 * (d.tile_y + y) + 7 * (d.tile_x + x)) % 13); };
  auto object_h = Kokkos::View<Complex<float>**, Kokkos::LayoutRight, Kokkos::HostSpace>("object", H, W);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) object_h(y, x) = Complex<float>(f(y, x), touched[r](y, x) > 0 ? float(r + 1) : 0.f);
  ComplexView2<float, Exec::memory_space> object("object", H, W);
  Kokkos::deep_copy(object, object_h);

  strategy->take_bytes_moved();
  strategy->after_batch(space, object, illum[0], tiles[0]);
  EXPECT_EQ(strategy->take_bytes_moved(), 0u);  // the first of two batches: no reconcile
  strategy->after_batch(space, object, illum[1], tiles[1]);
  std::size_t const moved = strategy->take_bytes_moved();
  auto const after = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), object);

  // Touched tiles are the same on every rank's grid: rank q's marks, seen
  // from this rank, at the same global pixels.
  Box const mine = p.tiles[r];
  std::size_t expected_bytes = 0;
  for (int s : p.neighbours[r]) {
    Box const g = intersect(mine, p.tiles[s]);
    for (int y = g.y; y < g.y + g.height; ++y)
      for (int x = g.x; x < g.x + g.width; ++x)
        expected_bytes +=
            3 * sizeof(float) * ((touched[r](y - mine.y, x - mine.x) > 0) + (touched[s](y - mine.y, x - mine.x) > 0));
  }
  EXPECT_EQ(moved, expected_bytes);
  if (P > 1) EXPECT_GT(moved, 0u);
  int wrong = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      double num = 0, den = 0;
      for (int s = 0; s < P; ++s) {
        Box const& t = p.tiles[s];
        int const gy = mine.y + y, gx = mine.x + x;
        if (gy >= t.y && gy < t.y + t.height && gx >= t.x && gx < t.x + t.width) {
          double const weight = double(s + 1) * touched[s](y, x);
          num += weight * (s + 1);
          den += weight;
        }
      }
      float const im = den > 0 ? float(num / den) : 0.f;
      wrong += std::abs(after(y, x).real() - f(y, x)) > 0 || std::abs(after(y, x).imag() - im) > 1e-5f * im;
    }
  EXPECT_EQ(wrong, 0);

  // The end of the epoch right after: nothing touched since, no object pixel moves.
  ComplexView3<float, Exec::memory_space> probe("probe", 1, D, D);
  strategy->end_epoch(space, object, probe, illum[1]);
  std::size_t const probe_bytes = sizeof(Complex<float>) * D * D;
  EXPECT_LE(strategy->take_bytes_moved(), P > 1 ? 2 * probe_bytes : 0);
  auto const again = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), object);
  EXPECT_EQ(0, std::memcmp(again.data(), after.data(), after.span() * sizeof(Complex<float>)));
}

TEST(Neighbor, ReconcileAveragesOnlyTheTilesTheBatchesTouched) { reconcile_averages_only_touched_tiles(false); }

TEST(Neighbor, ReconcileWithSourcesMovesOnlyEachRanksOwnTiles) { reconcile_averages_only_touched_tiles(true); }

// RMS residual (after object_error's scale, ramp and integer shift) over
// pixels held by more than one tile, divided by the RMS residual over the
// other well-lit pixels.
double overlap_residual_ratio(ScanLayout const& layout, CxiTruth const& truth, HostRealImage const& illum,
                              HostComplex2 const& object, ObjectError const& e, int ranks) {
  int const D = layout.info.ny;
  Partition const p = partition_scan(layout.positions_px, D, layout.grid.height, layout.grid.width, ranks);
  double lit_max = 0;
  for (std::size_t k = 0; k < illum.span(); ++k) lit_max = std::max(lit_max, illum.data()[k]);
  int const sy = int(std::lround(e.shift_y)), sx = int(std::lround(e.shift_x));
  double in_sum = 0, out_sum = 0;
  std::size_t in_n = 0, out_n = 0;
  for (int y = 0; y < layout.grid.height; ++y)
    for (int x = 0; x < layout.grid.width; ++x) {
      if (illum(y, x) < 0.3 * lit_max) continue;
      int const ry = y - sy, rx = x - sx;
      if (ry < 0 || rx < 0 || ry >= layout.grid.height || rx >= layout.grid.width) continue;
      std::complex<double> const r(object(ry, rx).real(), object(ry, rx).imag());
      std::complex<double> const t(truth.object(y, x).real(), truth.object(y, x).imag());
      double const err = std::norm(e.scale * std::polar(1.0, e.ramp_y * y + e.ramp_x * x) * r - t);
      int tiles = 0;
      for (auto const& tile : p.tiles)
        tiles += y >= tile.y && y < tile.y + tile.height && x >= tile.x && x < tile.x + tile.width;
      (tiles > 1 ? in_sum : out_sum) += err;
      (tiles > 1 ? in_n : out_n) += 1;
    }
  EXPECT_GT(in_n, 0u);
  EXPECT_GT(out_n, 0u);
  return std::sqrt(in_sum / std::max<std::size_t>(in_n, 1)) / std::sqrt(out_sum / std::max<std::size_t>(out_n, 1));
}

TEST(Neighbor, ApproximateConsensusConvergesWithoutSeams) {
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  int const epochs = 30;
  auto full = run<float>("full-sync", 1, "rpie", epochs);
  auto approx = run<float>("neighbor", 4, "rpie", epochs);
  if (!is_root()) return;
  auto truth = *cxi_read_truth(layout.info);
  auto illum = illumination_map(truth.probe, truth.positions_px, layout.grid.height, layout.grid.width);
  ObjectError const ef = object_error(full.object, truth.object, illum);
  ObjectError const ea = object_error(approx.object, truth.object, illum);
  // tike-style consensus costs accuracy per epoch; within 10 % of full-sync.
  EXPECT_LT(ea.nrmse, 1.10 * ef.nrmse) << "full-sync " << ef.nrmse << ", approximate " << ea.nrmse;

  // No seam: the residual inside pixels shared by several tiles, relative to
  // the residual elsewhere in the well-lit region, is no worse than the same
  // ratio for full-sync (whose result has no tiles, hence no seams).
  if (comm.size() == 1) return;
  auto const ra = overlap_residual_ratio(layout, truth, illum, approx.object, ea, comm.size());
  auto const rf = overlap_residual_ratio(layout, truth, illum, full.object, ef, comm.size());
  std::printf("[ measured ] %d ranks, %d epochs: NRMSE full-sync %.4f, neighbor sync-every 4 %.4f; "
              "overlap/elsewhere residual ratio full-sync %.3f, neighbor sync-every 4 %.3f\n",
              comm.size(), epochs, ef.nrmse, ea.nrmse, rf, ra);
  EXPECT_LT(ra, 1.1 * rf);
}

// Expects frame f of `data` to be frame ids[f] of the file, un-shifted.
// Frames that are all counts (integers in [0, 65535]) are held as uint16.
// Issue 6: buffers kept across batches. After three epochs (the probe
// updates and the strategies' buffers made), further epochs allocate no
// View on any rank: full-sync's packed batch sums, neighbor's halo buffers
// and the approximate mode's reconcile included.
TEST(Strategies, NoViewAllocatedInAnEpoch) {
  struct Case {
    char const* strategy;
    int sync_every;
    char const* solver;
  };
  int const rank = Communicator::world().rank();  // collective: not in a message only a failing rank writes
  for (Case const c : {Case{"full-sync", 1, "lsqml"}, Case{"full-sync", 1, "dm"}, Case{"neighbor", 1, "rpie"},
                       Case{"neighbor", 4, "lsqml"}, Case{"neighbor", 1, "dm"}}) {
    std::string allocated;
    run<float>(c.strategy, c.sync_every, c.solver, 6, {}, DatasetEnvironment::path,
               [&](Reconstruction<float, Exec>& rec) {
                 for (int e = 0; e < 3; ++e) rec.step();
                 test::AllocationCounter const counter;
                 while (!rec.done()) rec.step();
                 allocated = counter.listed();
               });
    EXPECT_EQ(allocated, "") << c.strategy << " (sync-every " << c.sync_every << "), " << c.solver << ", rank "
                             << rank << " allocated in epochs 4-6";
  }
}

// Full-sync on a device waits for it once per rPIE batch, at its staging
// fence: the summed tiles' largest weight comes from the reduced values the
// host holds, and their unpack is only queued (it reduced on the device, a
// second wait per batch, until 2026-12-06).
TEST(FullSync, OneWaitPerRpieBatchOnDevices) {
  if (std::string const why = test::fences_uncountable<Exec>(); !why.empty()) GTEST_SKIP() << why;
  bool const one_rank = Communicator::world().size() == 1;  // collective: every rank asks
  int waits = 0;
  std::string listed;
  run<float>("full-sync", 1, "rpie", 5, {}, DatasetEnvironment::path, [&](Reconstruction<float, Exec>& rec) {
    for (int e = 0; e < 2; ++e) rec.step();
    test::FenceCounter const counter;
    while (!rec.done()) rec.step();
    waits = counter.device_waits();
    listed = counter.device_listed();
  });
  // 160 frames in batches of 16: 10 per epoch, and 7 waits per epoch
  // besides (modes, cost, probe broadcast, end); two per batch would be
  // 81. One rank sums nothing: no wait per batch at all.
  int const per_batch = one_rank ? 0 : 1;
  EXPECT_LE(waits, 3 * (10 * per_batch + 8)) << "waits in epochs 3-5:\n" << listed;
  EXPECT_GE(waits, 3 * 10 * per_batch) << "the staging fence must be seen once per batch:\n" << listed;
}

// On a device every copy an epoch makes to the host goes to page-locked
// memory (HostPinnedSpace), where it stays queued behind the caller's one
// wait: a copy into pageable memory would make the host wait for the
// device's queue by itself. rPIE and LSQML with both strategies; GPU builds
// only (elsewhere the host reads every space).
TEST(Strategies, NoCopyToPageableMemoryInAnEpoch) {
  if (host_reads_v<RealView1<float, Exec::memory_space>>)
    GTEST_SKIP() << "the host reads this build's memory: nothing is staged";
  for (std::string const strategy : {"neighbor", "full-sync"})
    for (std::string const solver : {"rpie", "lsqml"}) {
      SCOPED_TRACE(strategy + ", " + solver);
      int copies = 0;
      std::string listed;
      run<float>(strategy, 1, solver, 4, {}, DatasetEnvironment::path, [&](Reconstruction<float, Exec>& rec) {
        for (int e = 0; e < 2; ++e) rec.step();
        test::PageableCopyCounter const counter;
        while (!rec.done()) rec.step();
        copies = counter.total();
        listed = counter.listed();
      });
      EXPECT_EQ(copies, 0) << "copies from the device to pageable memory in epochs 3-4:\n" << listed;
    }
}

// Exact neighbour-consensus on devices: one wait per rPIE batch (the
// exchange's, with the probe sums and this rank's own largest weight behind
// it; the largest the unpacks leave comes from the messages), two per
// LSQML batch (its step sums besides).
TEST(Neighbor, OneWaitPerRpieBatchOnDevices) {
  if (std::string const why = test::fences_uncountable<Exec>(); !why.empty()) GTEST_SKIP() << why;
  bool const one_rank = Communicator::world().size() == 1;
  for (std::string const solver : {"rpie", "lsqml"}) {
    SCOPED_TRACE(solver);
    int waits = 0;
    std::string listed;
    run<float>("neighbor", 1, solver, 5, {}, DatasetEnvironment::path, [&](Reconstruction<float, Exec>& rec) {
      for (int e = 0; e < 2; ++e) rec.step();
      test::FenceCounter const counter;
      while (!rec.done()) rec.step();
      waits = counter.device_waits();
      listed = counter.device_listed();
    });
    // 160 frames in batches of 16: 10 per epoch, and about 8 waits per
    // epoch besides (modes, cost, probe broadcast, end); one more per batch
    // would exceed the bound.
    int const batches = 10, per_batch = one_rank ? 0 : solver == "rpie" ? 1 : 2;
    EXPECT_LE(waits, 3 * (batches * per_batch + 8)) << "waits in epochs 3-5:\n" << listed;
    EXPECT_GE(waits, 3 * batches * per_batch) << "the exchange's fence must be seen once per batch:\n" << listed;
  }
}

template <class Data>
void expect_frames_of(Data const& data, ScanLayout const& layout, std::vector<std::size_t> const& ids,
                      bool counts = true) {
  EXPECT_EQ(data.frame_ids, ids);
  EXPECT_EQ(data.frames.is_counts(), counts) << data.frames.type_name();
  std::vector<float> const frames = data.frames.visit([](auto const& v) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);  // device -> host: the frames
    return std::vector<float>(h.data(), h.data() + h.span());
  });
  int const D = layout.info.ny;
  std::size_t const pixels = std::size_t(D) * D;
  ASSERT_EQ(frames.size(), ids.size() * pixels);
  for (std::size_t f = 0; f < ids.size(); ++f) {
    HostFrames one = cxi_read_frames(layout.info, {ids[f]});
    std::vector<float> corner(pixels);
    ifftshift2(one.data(), corner.data(), D, D);
    EXPECT_EQ(0, std::memcmp(corner.data(), &frames[f * pixels], pixels * sizeof(float))) << "frame " << f;
  }
}

TEST(Reading, EachRankReadsExactlyItsFrames) {
  Exec space;
  auto comm = Communicator::world();
  ScanLayout const layout = read_scan_layout(DatasetEnvironment::path, {});
  auto strategy = make_strategy<float, Exec>("neighbor", comm, layout, {});
  auto const& d = strategy->decomposition();
  Partition const p = partition_scan(layout.positions_px, layout.info.ny, layout.grid.height, layout.grid.width,
                                     comm.size());
  EXPECT_EQ(d.frame_ids, p.frames[comm.rank()]);
  auto data = load_local_data<float, Exec>(space, layout, d.frame_ids, d.tile_y, d.tile_x, d.tile_height,
                                           d.tile_width, {});
  expect_frames_of(data, layout, d.frame_ids);
}

// Frames are loaded in chunks of 512: an unordered list of 1100 frames
// crosses two chunk boundaries and ends in a partial chunk. `edit` changes
// the simulated file before it is written.
void expect_chunked_load(std::string const& name, std::function<void(CxiContents&)> const& edit, bool counts) {
  Exec space;
  auto comm = Communicator::world();
  std::string const path = test::temp_path(name + "_" + std::to_string(comm.rank()) + ".cxi");
  SimulationOptions o;
  o.frames = 1200;
  o.detector = 16;
  o.modes = 1;
  o.seed = 5;
  o.photons = 2e4;  // below 65535 counts in any pixel of a 16 x 16 frame
  CxiContents c = simulate(o);
  edit(c);
  cxi_write(path, c);
  ScanLayout const layout = read_scan_layout(path, {});
  std::vector<std::size_t> ids;
  for (std::size_t k = 0; k < 1100; ++k) ids.push_back((k * 7) % 1200);  // unordered, distinct
  auto data = load_local_data<float, Exec>(space, layout, ids, 0, 0, layout.grid.height, layout.grid.width, {});
  expect_frames_of(data, layout, ids, counts);
  std::filesystem::remove(path);
}

TEST(Reading, ChunkedLoadKeepsEveryFrame) {
  expect_chunked_load("chunks", [](CxiContents&) {}, true);
}

// A value that is not a count in the second chunk (local frame 600 is file
// frame 600): the counts loaded so far are widened to float32 and the rest
// is read as float32, every value exact.
TEST(Reading, NonCountValueInALaterChunkWidensToFloat) {
  expect_chunked_load(
      "widen_fraction",
      [](CxiContents& c) {
        c.integer_frames = false;
        c.frames(600, 3, 4) = 0.5f;
      },
      false);
}

// A count above 65535 in the first chunk: float32 from the start.
TEST(Reading, CountAboveSixteenBitsLoadsAsFloat) {
  expect_chunked_load("widen_large", [](CxiContents& c) { c.frames(7, 8, 8) = 70000.f; }, false);
}

}  // namespace
