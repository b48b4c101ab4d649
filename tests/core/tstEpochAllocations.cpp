// Issue 6: "keep FFT plans and buffers allocated across batches, no
// per-batch allocations". Every solver, after its setup and warm-up epochs,
// runs further epochs (probe updates, the modes' orthogonalisation, a scale
// normalisation, the isolated positions' direct updates) while a Kokkos
// Tools callback counts the memory allocations of Kokkos Views; none may
// happen. A View made per batch or per epoch (a scratch buffer, a host
// mirror of a device View) shows here by its label.
// On devices (and the device forms on the host) the same epochs of the
// batch solvers are also counted for the host's waits for the device
// (fences): on one rank there may be a few per epoch, none per batch
// (docs/performance.md, section 5, item 50).
#include <ptyko/core/cxi.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/kernels/pinned_mirror.hpp>
#include <ptyko/core/scan.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/core/solver.hpp>
#include <ptyko/core/sync.hpp>

#include <gtest/gtest.h>

#include <tools_counters.hpp>
#include <test_files.hpp>

#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace ptyko;
using Exec = Kokkos::DefaultExecutionSpace;

/// A small simulated scan, 144 positions of 16 x 16 with 2 modes and 2 %
/// dead (masked) pixels, wide enough (a step of half the frame) that sparse
/// batches hold positions whose footprints meet no other (the direct
/// updates); written once, removed when the tests end.
std::filesystem::path const& dataset_path() {
  static std::filesystem::path const path = [] {
    SimulationOptions sim;
    sim.frames = 144;
    sim.detector = 16;
    sim.step_px = 8;
    sim.seed = 3;
    sim.dead_pixel_fraction = 0.02;  // masked pixels: the normalisations measure the masked power
    std::filesystem::path p = test::temp_path("epoch-allocations.cxi");
    cxi_write(p.string(), simulate(sim));
    return p;
  }();
  return path;
}

class RemoveDataset : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove(dataset_path(), ec);
  }
};
[[maybe_unused]] auto* const environment = ::testing::AddGlobalTestEnvironment(new RemoveDataset);

/// A reconstruction of the dataset on one rank with `solver`, 8 epochs of
/// 2 modes and a scale normalisation every 3, after 3 warm-up epochs (DM
/// and RAAR start updating the probe at epoch 2, and plans of the FFT
/// library are made on first use). `sync` must outlive it.
std::unique_ptr<Reconstruction<float, Exec>> warmed_up(std::string const& solver, LocalSync<float, Exec>& sync) {
  Exec space;
  ScanLayout const layout = read_scan_layout(dataset_path().string(), LoadOptions{});
  int const H = layout.grid.height, W = layout.grid.width;
  std::vector<std::size_t> ids(layout.info.frames);
  std::iota(ids.begin(), ids.end(), std::size_t(0));
  auto data = load_local_data<float, Exec>(space, layout, ids, 0, 0, H, W, LoadOptions{});
  SolverOptions options;
  options.solver = solver;
  options.epochs = 8;
  options.modes = 2;
  options.rescale_every = 3;  // a normalisation among the counted epochs (epochs 3 and 6)
  double const diameter = default_probe_diameter(typical_step(layout.positions_px), layout.info.ny);
  auto state = initial_state<float, Exec>(space, data, sync, H, W, HostComplex3(), options.modes, options.seed,
                                          diameter);
  auto rec = std::make_unique<Reconstruction<float, Exec>>(space, std::move(data), std::move(state), options, sync,
                                                           layout.positions_px);
  for (int e = 0; e < 3; ++e) rec->step();
  return rec;
}

class EpochAllocations : public ::testing::TestWithParam<std::string> {};

TEST_P(EpochAllocations, NoneAfterTheFirstEpochs) {
  LocalSync<float, Exec> sync;
  auto const rec = warmed_up(GetParam(), sync);
  test::AllocationCounter const counter;
  while (!rec->done()) rec->step();
  EXPECT_TRUE(counter.counts().empty()) << GetParam() << " allocated during epochs 4-8:\n" << counter.listed();
  EXPECT_EQ(rec->state().cost.size(), 8u);
  // The batch-gradient solvers' direct updates ran too (86, 37 and 144 of
  // the 144 positions for LSQML, rPIE and ePIE on this scan).
  if (GetParam() != "dm" && GetParam() != "raar") EXPECT_GT(rec->isolated_positions(), 0u);
}

class EpochWaits : public ::testing::TestWithParam<std::string> {};

TEST_P(EpochWaits, NonePerBatchOnOneRank) {
  if (std::string const why = test::fences_uncountable<Exec>(); !why.empty()) GTEST_SKIP() << why;
  LocalSync<float, Exec> sync;
  auto const rec = warmed_up(GetParam(), sync);
  test::FenceCounter const counter;
  while (!rec->done()) rec->step();
  // Epochs 4-8 have 5 x 9 (rPIE), 5 x 18 (LSQML) and 5 x 144 (ePIE)
  // batches; a wait per batch would pass 8 per epoch.
  EXPECT_LE(counter.device_waits(), 5 * 8) << GetParam() << " waited during epochs 4-8:\n" << counter.device_listed();
  EXPECT_GT(counter.device_waits(), 0) << "the epochs' ends wait: the counter must see them";
}

// On a device an epoch copies to the host only into page-locked memory
// (docs/performance.md item 70): a copy into pageable memory would make the
// host wait for the device's queue by itself, behind the fences counted
// above. GPU builds only.
TEST_P(EpochWaits, NoCopyToPageableMemory) {
  if (host_reads_v<RealView1<float, Exec::memory_space>>)
    GTEST_SKIP() << "the host reads this build's memory: nothing is staged";
  LocalSync<float, Exec> sync;
  auto const rec = warmed_up(GetParam(), sync);
  test::PageableCopyCounter const counter;
  while (!rec->done()) rec->step();
  EXPECT_EQ(counter.total(), 0) << GetParam() << " copied into pageable memory in epochs 4-8:\n" << counter.listed();
}

// The counter itself sees such a copy.
TEST(EpochWaits, ThePageableCopyCounterSeesACopy) {
  if (host_reads_v<RealView1<float, Exec::memory_space>>)
    GTEST_SKIP() << "the host reads this build's memory: no copy from a device";
  RealView1<float, Exec::memory_space> device("ptyko::test::device", 16);
  Kokkos::View<float*, Kokkos::HostSpace> pageable("ptyko::test::pageable", 16);
  test::PageableCopyCounter const counter;
  Kokkos::deep_copy(pageable, device);
  EXPECT_EQ(counter.total(), 1) << counter.listed();
}

INSTANTIATE_TEST_SUITE_P(Solvers, EpochWaits, ::testing::Values("lsqml", "rpie", "epie"),
                         [](auto const& info) { return info.param; });

INSTANTIATE_TEST_SUITE_P(Solvers, EpochAllocations, ::testing::Values("lsqml", "rpie", "epie", "dm", "raar"),
                         [](auto const& info) { return info.param; });

// The counter itself sees allocations: a test that cannot fail is a defect.
TEST(EpochAllocations, TheCounterSeesAView) {
  test::AllocationCounter const counter;
  Kokkos::View<float*> v("ptyko::test::counted", 16);
  EXPECT_EQ(counter.counts()["ptyko::test::counted"], 1);
}

}  // namespace
