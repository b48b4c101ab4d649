// Checkpoints under mpiexec (ctest runs this at 1 and 2 ranks), through the
// core/parallel API that `ptyko reconstruct` uses:
//  * a checkpoint file keeps every field, the object exactly (also in double
//    precision), and each rank cuts its tile from the stored whole object;
//  * an interrupted run (3 epochs, checkpoint, a new Reconstruction from it)
//    matches the uninterrupted 6-epoch run to float rounding, for rPIE and
//    LSQML, on the same ranks;
//  * a 2-rank checkpoint resumes on 1 rank, and with another strategy.
#include <ptyko/core/checkpoint.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/core/scan.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/communicator.hpp>
#include <ptyko/parallel/strategy.hpp>

#include <gtest/gtest.h>

#include <test_files.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace {

using namespace ptyko;
using namespace ptyko::parallel;
using Exec = Kokkos::DefaultExecutionSpace;
namespace fs = std::filesystem;

// One small simulated dataset and a scratch folder, made by rank 0.
class Files : public ::testing::Environment {
 public:
  static std::string dataset, folder;
  void SetUp() override {
    auto comm = Communicator::world();
    char name[256] = {0};
    if (comm.rank() == 0) {
      std::snprintf(name, sizeof(name), "%s", test::temp_path("checkpoint").c_str());
      fs::create_directories(name);
      SimulationOptions o;
      o.frames = 48;
      o.detector = 16;
      o.modes = 2;
      o.photons = 1e5;
      o.seed = 7;
      cxi_write(std::string(name) + "/scan.cxi", simulate(o));
    }
    comm.broadcast(name, sizeof(name), Datatype::byte, 0);
    folder = name;
    dataset = folder + "/scan.cxi";
  }
  void TearDown() override {
    auto comm = Communicator::world();
    comm.barrier();
    if (comm.rank() == 0) fs::remove_all(folder);
  }
};
std::string Files::dataset, Files::folder;
auto* const files_env = ::testing::AddGlobalTestEnvironment(new Files);

SolverOptions options(std::string const& solver, int epochs) {
  SolverOptions o;
  o.solver = solver;
  o.epochs = epochs;
  o.batch_size = 8;
  o.seed = 5;
  return o;
}

struct Outcome {
  HostComplex2 object;  // root of the communicator only
  HostComplex3 probe;
  std::vector<double> cost;
};

// A run like `ptyko reconstruct` on `comm` with `strategy`: from the start,
// or from the checkpoint `resume`; `epochs` in all. When `save` is given,
// rank 0 writes the final state there as a checkpoint.
template <class T>
Outcome run(Communicator const& comm, std::string const& strategy_name, std::string const& solver, int epochs,
            std::string const& resume = "", std::string const& save = "") {
  Exec space;
  ScanLayout const layout = read_scan_layout(Files::dataset, {});
  auto strategy = make_strategy<T, Exec>(strategy_name, comm, layout, {});
  auto const& d = strategy->decomposition();
  auto data = load_local_data<T, Exec>(space, layout, d.frame_ids, d.tile_y, d.tile_x, d.tile_height, d.tile_width, {});
  State<T, Exec> state;
  if (resume.empty()) {
    double const diameter = default_probe_diameter(typical_step(layout.positions_px), layout.info.ny);
    state = initial_state<T, Exec>(space, data, *strategy, d.tile_height, d.tile_width, HostComplex3(), 2, 5, diameter);
    state.tile_y = d.tile_y;
    state.tile_x = d.tile_x;
  } else {
    Checkpoint const c = read_checkpoint(resume);
    state = state_from_checkpoint<T, Exec>(space, c, d.tile_y, d.tile_x, d.tile_height, d.tile_width);
  }
  Reconstruction<T, Exec> rec(space, std::move(data), std::move(state), options(solver, epochs), *strategy,
                              layout.positions_px);
  while (!rec.done()) rec.step();
  Outcome out;
  out.object = strategy->gather_object(space, rec.state().object);
  out.probe = strategy->probe_on_host(space, rec.state().probe);
  out.cost = rec.state().cost;
  HostComplex2 object_velocity;  // momentum's (collective)
  if (!save.empty()) object_velocity = strategy->gather_object(space, rec.state().object_velocity);
  if (!save.empty() && comm.rank() == 0) {
    Checkpoint c;
    c.object_velocity = object_velocity;
    c.probe_velocity = strategy->probe_on_host(space, rec.state().probe_velocity);
    c.result.object = out.object;
    c.result.probe = out.probe;
    c.result.positions_px = layout.positions_px;
    c.result.cost = rec.state().cost;
    c.result.epoch_seconds = rec.state().epoch_seconds;
    c.result.bytes_moved = rec.state().bytes_moved;
    c.result.noise_model = "gaussian";
    c.epoch = rec.state().epoch;
    c.seed = 5;
    c.ranks = comm.size();
    c.strategy = strategy->name();
    c.double_precision = sizeof(T) == 8;
    c.input = Files::dataset;
    write_checkpoint(save, c);
  }
  comm.barrier();  // the file is complete before anyone reads it
  return out;
}

template <class View>
double relative_difference(View const& a, View const& b) {
  double num = 0, den = 0;
  for (std::size_t k = 0; k < a.span(); ++k) {
    num += std::norm(std::complex<double>(a.data()[k].real() - b.data()[k].real(),
                                          a.data()[k].imag() - b.data()[k].imag()));
    den += std::norm(std::complex<double>(b.data()[k].real(), b.data()[k].imag()));
  }
  return std::sqrt(num / den);
}

std::string scratch(std::string const& name) { return Files::folder + "/" + name; }

TEST(Checkpoint, FileKeepsEverything) {
  auto comm = Communicator::world();
  if (comm.rank() == 0) {
    Checkpoint c;
    c.result.object = HostComplex2("object", 5, 7);
    for (std::size_t k = 0; k < c.result.object.span(); ++k)
      c.result.object.data()[k] = Complex<double>(1.0 / 3 + double(k), -std::sqrt(2.0) * double(k));
    c.result.probe = HostComplex3("probe", 2, 4, 4);
    for (std::size_t k = 0; k < c.result.probe.span(); ++k) c.result.probe.data()[k] = Complex<double>(std::exp(0.1 * k), 0.5);
    c.result.positions_px = {{1.5, 2.5}, {3.25, 4.0}};
    c.result.cost = {3.0, 2.0, 1.5};
    c.result.epoch_seconds = {0.1, 0.2, 0.3};
    c.result.bytes_moved = {10, 20, 30};
    c.result.object_error = {std::nan(""), 0.5, 0.25};
    c.result.mode_power_fractions = {0.9, 0.1};
    c.result.config = "[solver]\nepochs = 9\n";
    c.result.noise_model = "poisson";
    c.epoch = 3;
    c.seed = 0xFFFFFFFFFFFFFFF1ULL;
    c.rng_state = 42;
    c.ranks = 4;
    c.strategy = "neighbor";
    c.double_precision = true;
    c.input = "/data/scan.cxi";
    c.object_velocity = HostComplex2("object_velocity", 5, 7);
    for (std::size_t k = 0; k < c.object_velocity.span(); ++k)
      c.object_velocity.data()[k] = Complex<double>(0.25 * double(k), 1.0 / 7);
    c.probe_velocity = HostComplex3("probe_velocity", 2, 4, 4);
    for (std::size_t k = 0; k < c.probe_velocity.span(); ++k)
      c.probe_velocity.data()[k] = Complex<double>(-0.5, std::sqrt(double(k)));
    std::string const path = scratch("keep.h5");
    write_checkpoint(path, c);
    EXPECT_TRUE(is_checkpoint(path));
    EXPECT_FALSE(is_checkpoint(Files::dataset));
    EXPECT_FALSE(is_checkpoint(scratch("missing.h5")));
    Checkpoint const r = read_checkpoint(path);
    EXPECT_EQ(r.epoch, 3);
    EXPECT_EQ(r.seed, c.seed);
    EXPECT_EQ(r.rng_state, 42u);
    EXPECT_EQ(r.ranks, 4);
    EXPECT_EQ(r.strategy, "neighbor");
    EXPECT_TRUE(r.double_precision);
    EXPECT_EQ(r.input, c.input);
    EXPECT_EQ(r.result.cost, c.result.cost);
    EXPECT_EQ(r.result.epoch_seconds, c.result.epoch_seconds);
    EXPECT_EQ(r.result.bytes_moved, c.result.bytes_moved);
    EXPECT_EQ(r.result.mode_power_fractions, c.result.mode_power_fractions);
    EXPECT_EQ(r.result.config, c.result.config);
    EXPECT_EQ(r.result.positions_px, c.result.positions_px);
    ASSERT_EQ(r.result.object_error.size(), 3u);
    EXPECT_TRUE(std::isnan(r.result.object_error[0]));
    for (std::size_t k = 0; k < c.result.object.span(); ++k) EXPECT_EQ(r.result.object.data()[k], c.result.object.data()[k]);
    for (std::size_t k = 0; k < c.result.probe.span(); ++k) EXPECT_EQ(r.result.probe.data()[k], c.result.probe.data()[k]);
    for (std::size_t k = 0; k < c.object_velocity.span(); ++k)
      EXPECT_EQ(r.object_velocity.data()[k], c.object_velocity.data()[k]);
    for (std::size_t k = 0; k < c.probe_velocity.span(); ++k)
      EXPECT_EQ(r.probe_velocity.data()[k], c.probe_velocity.data()[k]);

    // Each rank's tile is cut from the whole object.
    Exec space;
    auto const s = state_from_checkpoint<double, Exec>(space, r, 1, 2, 3, 4);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.object);
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) EXPECT_EQ(h(y, x), c.result.object(1 + y, 2 + x));
    // Momentum's velocity too, as the object.
    auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.object_velocity);
    ASSERT_EQ(hv.extent(0), 3u);
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) EXPECT_EQ(hv(y, x), c.object_velocity(1 + y, 2 + x));
    auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.probe_velocity);
    for (std::size_t k = 0; k < hp.span(); ++k) EXPECT_EQ(hp.data()[k], c.probe_velocity.data()[k]);
    EXPECT_EQ(s.epoch, 3);
    EXPECT_EQ(s.cost, c.result.cost);
    EXPECT_EQ(s.modes(), 2);
    EXPECT_EQ(s.tile_y, 1);
    EXPECT_EQ(s.tile_x, 2);
    EXPECT_THROW((state_from_checkpoint<double, Exec>(space, r, 3, 0, 3, 7)), UserError);
    // A result file without the /checkpoint group is no checkpoint.
    write_result(scratch("plain.h5"), c.result);
    EXPECT_FALSE(is_checkpoint(scratch("plain.h5")));
    EXPECT_THROW(read_checkpoint(scratch("plain.h5")), UserError);
  }
  comm.barrier();
}

// Interrupted after 3 of 6 epochs, resumed: the same as running 6 at once.
TEST(Checkpoint, ResumeMatchesUninterruptedRun) {
  auto comm = Communicator::world();
  for (std::string solver : {"rpie", "lsqml"}) {
    auto const full = run<float>(comm, "full-sync", solver, 6);
    std::string const path = scratch("resume-" + solver + ".h5");
    run<float>(comm, "full-sync", solver, 3, "", path);
    auto const resumed = run<float>(comm, "full-sync", solver, 6, path);
    if (comm.rank() != 0) continue;
    EXPECT_LT(relative_difference(resumed.object, full.object), 1e-6) << solver;
    EXPECT_LT(relative_difference(resumed.probe, full.probe), 1e-6) << solver;
    ASSERT_EQ(resumed.cost.size(), full.cost.size());
    for (std::size_t e = 0; e < full.cost.size(); ++e)
      EXPECT_NEAR(resumed.cost[e], full.cost[e], 1e-6 * full.cost[e]) << solver << " epoch " << e;
  }
}

TEST(Checkpoint, ResumeMatchesInDoublePrecision) {
  auto comm = Communicator::world();
  auto const full = run<double>(comm, "full-sync", "lsqml", 4);
  std::string const path = scratch("resume-double.h5");
  run<double>(comm, "full-sync", "lsqml", 2, "", path);
  auto const resumed = run<double>(comm, "full-sync", "lsqml", 4, path);
  if (comm.rank() == 0) {
    EXPECT_LT(relative_difference(resumed.object, full.object), 1e-13);
    EXPECT_LT(relative_difference(resumed.probe, full.probe), 1e-13);
  }
}

// A checkpoint of P ranks continues on 1 rank, and with the other strategy:
// the same to float rounding (full-sync on P ranks reproduces 1 rank).
TEST(Checkpoint, ResumeOnOtherRanksAndStrategy) {
  auto comm = Communicator::world();
  std::string const path = scratch("other.h5");
  run<float>(comm, "full-sync", "lsqml", 3, "", path);
  auto const neighbor = run<float>(comm, "neighbor", "lsqml", 6, path);
  auto const full = run<float>(comm, "full-sync", "lsqml", 6);
  // Rank 0 alone.
  auto self = comm.split(comm.rank(), 0);
  Outcome alone;
  if (comm.rank() == 0) alone = run<float>(self, "full-sync", "lsqml", 6, path);
  comm.barrier();
  if (comm.rank() != 0) return;
  EXPECT_LT(relative_difference(neighbor.object, full.object), 1e-4);
  EXPECT_LT(relative_difference(neighbor.probe, full.probe), 1e-4);
  EXPECT_LT(relative_difference(alone.object, full.object), 1e-4);
  EXPECT_LT(relative_difference(alone.probe, full.probe), 1e-4);
  ASSERT_EQ(alone.cost.size(), 6u);
  for (std::size_t e = 0; e < 6; ++e) EXPECT_NEAR(alone.cost[e], full.cost[e], 1e-4 * full.cost[e]) << e;
}

}  // namespace
