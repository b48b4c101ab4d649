// `ptyko reconstruct --refine-positions` on a simulated scan whose
// translations were written with random errors of about a pixel, as stages
// report them: the refined positions (the result's positions_px) come back
// onto the simulation's true ones, the cost falls to that of the true
// positions, the file's positions are kept beside them, and a resumed run
// refines exactly as an uninterrupted one. On one rank and on two
// (neighbour-consensus: positions refine on their own rank's tile).
#include "driver_test.hpp"

#include <ptyko/core/position_refinement.hpp>
#include <ptyko/core/result_file.hpp>

#include <cmath>
#include <random>

namespace {

using namespace ptyko;
using namespace ptyko::test;
using Positions = std::vector<std::array<double, 2>>;

class RefinePositions : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    Outcome const o = run({"simulate", "-o", "scan.cxi", "--frames", "200", "--detector", "32", "--modes", "1",
                           "--photons", "1e7", "--seed", "4"});
    ASSERT_EQ(o.code, 0) << o.err;
    std::string const path = file("scan.cxi");
    auto f = h5::File::open_read(path);
    std::vector<std::size_t> dims;
    auto const t = h5::read<double>(f, "/entry_1/ptyko_truth/positions_px", &dims);
    for (std::size_t n = 0; n < dims[0]; ++n) m_truth.push_back({t[2 * n], t[2 * n + 1]});
    auto translation = h5::read<double>(f, k_translation, &dims);
    double const lambda = h5::read<double>(f, k_wavelength)[0], z = h5::read<double>(f, k_distance)[0];
    double const px = h5::read<double>(f, k_pixel_x)[0], py = h5::read<double>(f, k_pixel_y)[0];
    double const dx = lambda * z / (32 * px), dy = lambda * z / (32 * py);
    f.close();

    // Random errors (pixels, sigma 0.9) less their affine part, which
    // refinement keeps as the file gives it: moving the probe by e moves
    // the sample's translation by -e.
    std::mt19937 gen(9);
    std::normal_distribution<double> noise(0, 0.9);
    std::size_t const N = m_truth.size();
    Positions error(N);
    double sums[12] = {};
    for (std::size_t n = 0; n < N; ++n) {
      error[n] = {noise(gen), noise(gen)};
      add_affine_sample(sums, m_truth[n], error[n]);
    }
    auto const a = fit_affine(sums);
    for (std::size_t n = 0; n < N; ++n) {
      double const ry = m_truth[n][0], rx = m_truth[n][1];
      translation[3 * n + 0] -= (error[n][1] - (a[3] * ry + a[4] * rx + a[5])) * dx;
      translation[3 * n + 1] -= (error[n][0] - (a[0] * ry + a[1] * rx + a[2])) * dy;
    }
    h5::Handle id(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    ASSERT_GE(id.get(), 0);
    h5::Handle ds(H5Dopen2(id, k_translation, H5P_DEFAULT));
    ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, translation.data()), 0);
  }

  // RMS distance of `p` to the truth, less the one offset between the
  // result's grid and the truth's (from the file's positions, whose errors
  // have zero mean).
  double error_of(Positions const& p, Positions const& file_positions) const {
    double oy = 0, ox = 0;
    std::size_t const N = m_truth.size();
    for (std::size_t n = 0; n < N; ++n) {
      oy += (file_positions[n][0] - m_truth[n][0]) / double(N);
      ox += (file_positions[n][1] - m_truth[n][1]) / double(N);
    }
    double s = 0;
    for (std::size_t n = 0; n < N; ++n)
      s += std::pow(p[n][0] - m_truth[n][0] - oy, 2) + std::pow(p[n][1] - m_truth[n][1] - ox, 2);
    return std::sqrt(s / double(N));
  }

  ResultContents reconstruct(std::string const& out, std::vector<std::string> extra, int ranks = 0,
                             std::string const& solver = "lsqml") const {
    std::vector<std::string> args = {"reconstruct", "scan.cxi", "-o", out, "--solver", solver, "--epochs", "60",
                                     "--modes", "1", "--no-images", "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome const o = run(args, ranks);
    EXPECT_EQ(o.code, 0) << o.err;
    return read_result(file(out));
  }

  Positions m_truth;
};

TEST_F(RefinePositions, PositionsComeBackOntoTheTruth) {
  ResultContents const plain = reconstruct("plain.h5", {});
  ResultContents const refined = reconstruct("refined.h5", {"--refine-positions", "--refine-start", "10"});
  // Without refinement the positions are the file's, and none are stored apart.
  EXPECT_TRUE(plain.file_positions_px.empty());
  Positions const& given = plain.positions_px;
  ASSERT_EQ(refined.file_positions_px.size(), given.size());
  for (std::size_t n = 0; n < given.size(); ++n) {
    EXPECT_EQ(refined.file_positions_px[n][0], given[n][0]);
    EXPECT_EQ(refined.file_positions_px[n][1], given[n][1]);
  }
  // Measured: 1.21 -> 0.22 px rms (0.25 on two ranks); final cost 5.2e4 ->
  // 1.8e3 per frame (1e7 photons per frame).
  double const before = error_of(given, given), after = error_of(refined.positions_px, given);
  EXPECT_GT(before, 1.0);
  EXPECT_LT(after, 0.3 * before);
  EXPECT_LT(refined.cost.back(), 0.5 * plain.cost.back());

  // DM forms no exit-wave update in its epoch: the refiner makes a pass of
  // its own (LSQML collects the sums from its own waves). Measured: 0.24 px.
  ResultContents const dm = reconstruct("dm.h5", {"--refine-positions", "--refine-start", "10"}, 0, "dm");
  EXPECT_LT(error_of(dm.positions_px, given), 0.5 * before);
}

// Neighbour-consensus refines as full-sync does: its tiles hold the
// footprints as far out as a position may move (else a rank's tile edge
// clamped the outer positions sooner: 1.1e-5 px and 0.3 % of the cost apart
// on one rank), and its stitched object keeps the pixels the refined
// footprints left. On one rank bit for bit, on two to float rounding:
// without momentum, which carries those last digits on (up to 2.5e-3 px
// apart after 60 epochs, against 1e-3 without it).
TEST_F(RefinePositions, NeighbourConsensusRefinesAsFullSync) {
  for (int ranks : {0, 2}) {
    std::string const n = std::to_string(ranks);
    std::vector<std::string> const common{"--refine-positions", "--refine-start", "10", "--momentum", "0", "--strategy"};
    auto with = [&](std::string const& strategy) {
      auto a = common;
      a.push_back(strategy);
      return a;
    };
    ResultContents const full = reconstruct("full" + n + ".h5", with("full-sync"), ranks);
    ResultContents const nb = reconstruct("nb" + n + ".h5", with("neighbor"), ranks);
    ASSERT_EQ(full.positions_px.size(), nb.positions_px.size());
    double const tolerance = ranks == 0 ? 0.0 : 1e-3;
    for (std::size_t k = 0; k < full.positions_px.size(); ++k) {
      EXPECT_NEAR(nb.positions_px[k][0], full.positions_px[k][0], tolerance) << ranks << " ranks, position " << k;
      EXPECT_NEAR(nb.positions_px[k][1], full.positions_px[k][1], tolerance) << ranks << " ranks, position " << k;
    }
    EXPECT_NEAR(nb.cost.back(), full.cost.back(), (ranks == 0 ? 0.0 : 1e-4) * full.cost.back()) << ranks << " ranks";
  }
}

TEST_F(RefinePositions, TwoRanksOfNeighbourConsensusAndAResumedRun) {
  ResultContents const two =
      reconstruct("two.h5", {"--refine-positions", "--refine-start", "10", "--strategy", "neighbor"}, 2);
  EXPECT_LT(error_of(two.positions_px, two.file_positions_px), 0.3 * error_of(two.file_positions_px,
                                                                              two.file_positions_px));

  // 30 epochs, then resumed to 60: the same positions as 60 at once.
  ResultContents const whole = reconstruct("whole.h5", {"--refine-positions", "--refine-start", "10"});
  Outcome const first = run({"reconstruct", "scan.cxi", "-o", "part.h5", "--solver", "lsqml", "--epochs", "30",
                             "--modes", "1", "--no-images", "-q", "--refine-positions", "--refine-start", "10"});
  ASSERT_EQ(first.code, 0) << first.err;
  Outcome const resumed = run({"reconstruct", "--resume", "part.h5", "--epochs", "60", "-q"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  ResultContents const part = read_result(file("part.h5"));
  ASSERT_EQ(part.positions_px.size(), whole.positions_px.size());
  for (std::size_t n = 0; n < part.positions_px.size(); ++n) {
    ASSERT_EQ(part.positions_px[n][0], whole.positions_px[n][0]) << n;
    ASSERT_EQ(part.positions_px[n][1], whole.positions_px[n][1]) << n;
  }
  EXPECT_EQ(part.file_positions_px, whole.file_positions_px);
}

}  // namespace
