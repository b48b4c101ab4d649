// Strict input handling of `ptyko reconstruct`, one test per kind of bad
// input or option (issue: "each case is a test"). The built binary runs on a
// file the test breaks in one place; each run must end with exit code 2, one
// error line naming the file/dataset/option and what to do, the input
// untouched and nothing left behind (expect_rejected in driver_test.hpp).
#include "driver_test.hpp"

#include <ptyko/parallel/partition.hpp>

#include <cmath>
#include <fstream>
#include <limits>

namespace {

using namespace ptyko;
using namespace ptyko::test;

class Inputs : public DriverTest {
 protected:
  // A valid file, written as `name`; the tests break copies of it.
  std::string good(std::string const& name = "scan.cxi") const {
    simulated().write(file(name));
    return name;
  }
  // The options of a quick run on `input`, plus `extra`.
  static std::vector<std::string> args(std::string const& input, std::vector<std::string> extra = {}) {
    std::vector<std::string> a{"reconstruct", input, "-o", "out.h5", "--epochs", "2", "--no-images", "-q"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

// ------------------------------------------------------------------ files

TEST_F(Inputs, MissingFile) { expect_rejected(args("missing.cxi"), {"missing.cxi", "no such file"}); }

TEST_F(Inputs, UnreadableFile) {
  std::string const in = good();
  fs::permissions(file(in), fs::perms::none);
  if (::access(file(in).c_str(), R_OK) == 0) {
    fs::permissions(file(in), fs::perms::owner_read | fs::perms::owner_write);
    GTEST_SKIP() << "running as root: every file is readable";
  }
  expect_rejected(args(in), {in, "cannot be read"});
  fs::permissions(file(in), fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(Inputs, NotHdf5) {
  std::ofstream(file("notes.cxi")) << "this is not an HDF5 file\n";
  expect_rejected(args("notes.cxi"), {"notes.cxi", "not an HDF5 file"});
}

TEST_F(Inputs, TruncatedHdf5) {
  std::string const in = good();
  fs::resize_file(file(in), fs::file_size(file(in)) / 2);
  expect_rejected(args(in), {in, "truncated"});
}

TEST_F(Inputs, NoDataDataset) {
  auto t = simulated();
  t.with_data = false;
  t.write(file("nodata.cxi"));
  expect_rejected(args("nodata.cxi"), {"nodata.cxi", "no diffraction data", k_data});
}

TEST_F(Inputs, NoTranslationDataset) {
  auto t = simulated();
  t.with_translations = false;
  t.write(file("nopos.cxi"));
  expect_rejected(args("nopos.cxi"), {"nopos.cxi", "no scan positions", k_translation, "add"});
}

TEST_F(Inputs, DataRankNotThree) {
  auto t = simulated();
  t.data_dims = {t.n * t.d, t.d};
  t.write(file("rank2.cxi"));
  expect_rejected(args("rank2.cxi"), {"rank2.cxi", "rank 2", "(frames, y, x)"});
}

TEST_F(Inputs, FrameAndTranslationCountsDiffer) {
  auto t = simulated();
  t.translations.resize(3 * (t.n - 1));
  t.translation_dims = {t.n - 1, 3};
  t.write(file("counts.cxi"));
  expect_rejected(args("counts.cxi"), {"counts.cxi", "20 frames", "19 translations", "must match"});
}

TEST_F(Inputs, AllFramesZero) {
  auto t = simulated();
  std::fill(t.frames.begin(), t.frames.end(), 0.f);
  t.write(file("zero.cxi"));
  expect_rejected(args("zero.cxi"), {"zero.cxi", "all 20 frames", "no counts"});
}

TEST_F(Inputs, MissingEnergyAndWavelength) {
  auto t = simulated();
  t.energy.reset();
  t.write(file("noenergy.cxi"));
  expect_rejected(args("noenergy.cxi"), {"noenergy.cxi", k_energy, k_wavelength, "add one"});
}

TEST_F(Inputs, ZeroDistance) {
  auto t = simulated();
  t.distance = 0.0;
  t.write(file("dist.cxi"));
  expect_rejected(args("dist.cxi"), {"dist.cxi", k_distance, "positive"});
}

TEST_F(Inputs, NegativePixelSize) {
  auto t = simulated();
  t.pixel_size = -75e-6;
  t.write(file("pixel.cxi"));
  expect_rejected(args("pixel.cxi"), {"pixel.cxi", "pixel size", "positive"});
}

TEST_F(Inputs, ProbeGuessOfWrongSize) {
  auto t = simulated();
  t.illumination.assign(1 * 8 * 8, Complex<double>(1, 0));
  t.illumination_dims = {1, 8, 8};
  t.write(file("guess.cxi"));
  expect_rejected(args("guess.cxi"), {"guess.cxi", "probe guess is 8x8", "16x16", k_illumination});
}

// A detector mask from another file (--mask): a missing file, dataset or
// a mask of the wrong shape is refused before anything is read.
TEST_F(Inputs, MaskFileProblems) {
  std::string const in = good();
  {
    auto f = h5::File::create(file("mask.h5"));
    std::vector<std::uint8_t> m(8 * 8, 0);
    h5::write(f, "/mask", m.data(), {8, 8});
    f.close();
  }
  expect_rejected(args(in, {"--mask", "nomask.h5"}), {"--mask", "nomask.h5", "no such file"});
  expect_rejected(args(in, {"--mask", "mask.h5:/entry/pixel_mask"}), {"--mask", "no dataset /entry/pixel_mask"});
  expect_rejected(args(in, {"--mask", "mask.h5"}), {"mask.h5", "--mask /mask", "8x8", "16x16"});
  expect_rejected(args(in, {"--mask-above", "0"}), {"--mask-above", "> 0"});
}

// --probe: a missing file or dataset, a file without a probe where one is
// looked for, and a probe of another size are refused before the run.
TEST_F(Inputs, ProbeFileProblems) {
  std::string const in = good();
  {
    auto f = h5::File::create(file("probes.h5"));
    std::vector<Complex<double>> p8(8 * 8, Complex<double>(1, 0)), p16(2 * 16 * 16, Complex<double>(1, 0));
    h5::write(f, "/small", p8.data(), {8, 8});
    h5::write(f, "/modes", p16.data(), {2, 16, 16});
    f.close();
  }
  expect_rejected(args(in, {"--probe", "none.h5"}), {"--probe", "none.h5", "no such file"});
  expect_rejected(args(in, {"--probe", "probes.h5"}), {"--probe", "probes.h5", "/reconstruction/probe",
                                                       "illumination", "probes.h5:/path/to/probe"});
  expect_rejected(args(in, {"--probe", "probes.h5:/other"}), {"--probe", "no dataset /other"});
  expect_rejected(args(in, {"--probe", "probes.h5:/small"}), {"probes.h5", "--probe /small", "8x8", "16x16"});
  Outcome const o = run(args(in, {"--probe", "probes.h5:/modes"}));  // the right shape: accepted
  EXPECT_EQ(o.code, 0) << o.err;
}

// Frames that are not square are read through their largest centred
// square (with a warning naming --crop); a given window must lie inside the
// frames; a centre needs a window.
TEST_F(Inputs, OblongFramesNameCrop) {
  auto t = simulated();
  t.data_dims = {t.n, t.d / 2, 2 * t.d};
  t.write(file("oblong.cxi"));
  Outcome const automatic = run(args("oblong.cxi"));  // the largest centred square, said so
  EXPECT_EQ(automatic.code, 0) << automatic.err;
  EXPECT_TRUE(contains(automatic.err, "frames are 8 x 32, not square: using the 8 x 8 window")) << automatic.err;
  EXPECT_TRUE(contains(automatic.err, "--crop 8")) << automatic.err;
  expect_rejected(args("oblong.cxi", {"--crop", "12"}), {"oblong.cxi", "--crop 12", "at most 8"});
  expect_rejected(args("oblong.cxi", {"--crop", "8", "--crop-centre-x", "2"}),
                  {"oblong.cxi", "(y, x) = (4, 2)", "leaves", "columns -2 to 5"});
  expect_rejected(args("oblong.cxi", {"--crop-centre-y", "4"}), {"--crop-centre-y/-x", "--crop N"});
  expect_rejected(args("oblong.cxi", {"--crop", "-1"}), {"--crop", ">= 0"});
  expect_rejected(args("oblong.cxi", {"--crop", "8", "--bin", "3"}), {"oblong.cxi", "--bin 3", "8-pixel crop"});
  expect_rejected(args("oblong.cxi", {"--bin", "0"}), {"--bin", ">= 1"});
}

// Frames without a position are skipped (tstReconstructRun,
// SkipsFramesWithoutAPosition); a scan without any has nothing to run.
TEST_F(Inputs, PositionsNaN) {
  auto t = simulated();
  for (std::size_t n = 0; n < t.n; ++n) t.translations[3 * n + n % 2] = std::nan("");
  t.write(file("posnan.cxi"));
  expect_rejected(args("posnan.cxi"), {"posnan.cxi", k_translation, "none of the 20 translations", "finite"});
}

TEST_F(Inputs, PositionsSpanningAnObjectTooLargeForMemory) {
  auto t = simulated();
  t.translations[0] = 1.0;  // one position a metre away: millions of object pixels
  t.translations[1] = 1.0;
  t.write(file("far.cxi"));
  expect_rejected(args("far.cxi"), {"far.cxi", k_translation, "too large for memory", "units"});
}

TEST_F(Inputs, MoreRanksThanFrames) {
  auto t = simulated(2);
  t.write(file("two.cxi"));
  expect_rejected(args("two.cxi"), {"two.cxi", "3 MPI ranks for 2 frames", "at most 2"}, 3);
}

// ------------------------------------------------------------------ options

TEST_F(Inputs, UnknownSolverListsTheValidOnes) {
  good();
  expect_rejected(args("scan.cxi", {"--solver", "magic"}),
                  {"--solver 'magic'", "lsqml", "rpie", "epie", "dm", "raar"});
}

TEST_F(Inputs, UnknownStrategyListsTheValidOnes) {
  good();
  expect_rejected(args("scan.cxi", {"--strategy", "fast"}), {"--strategy 'fast'", "full-sync", "neighbor"});
}

TEST_F(Inputs, SyncEveryIsNeighbourConsensusOnly) {
  good();
  expect_rejected(args("scan.cxi", {"--strategy", "full-sync", "--sync-every", "4"}),
                  {"--sync-every 4", "full-sync", "--strategy neighbor"});
  EXPECT_EQ(run(args("scan.cxi", {"--sync-every", "4"})).code, 0);  // the default strategy takes it
}

TEST_F(Inputs, UnknownNoiseModelListsTheValidOnes) {
  good();
  expect_rejected(args("scan.cxi", {"--noise", "laplace"}), {"--noise 'laplace'", "gaussian", "poisson"});
}

TEST_F(Inputs, UnknownProbeFocusListsTheValidOnes) {
  good();
  expect_rejected(args("scan.cxi", {"--probe-focus", "sideways"}),
                  {"--probe-focus 'sideways'", "auto", "upstream", "downstream"});
}

TEST_F(Inputs, NegativeProbeFocusFrames) {
  good();
  expect_rejected(args("scan.cxi", {"--probe-focus-frames", "-1"}), {"--probe-focus-frames", ">= 0", "got -1"});
}

TEST_F(Inputs, BatchSizeZero) {
  good();
  expect_rejected(args("scan.cxi", {"--batch-size", "0"}), {"--batch-size", ">= 1", "got 0"});
}

TEST_F(Inputs, BatchSizeLargerThanTheFrames) {
  good();
  expect_rejected(args("scan.cxi", {"--batch-size", "50"}), {"--batch-size 50", "20", "at most 20"});
}

TEST_F(Inputs, NegativeEpochs) {
  good();
  expect_rejected(args("scan.cxi", {"--epochs", "-1"}), {"--epochs", ">= 0", "-1"});
}

TEST_F(Inputs, NegativeFourierRelax) {
  good();
  expect_rejected(args("scan.cxi", {"--solver", "dm", "--fourier-relax", "-1"}), {"--fourier-relax", "[0, 1)", "-1"});
}

TEST_F(Inputs, ConfigFourierRelaxOfOne) {
  good();
  std::ofstream(file("run.toml")) << "[solver]\nname = \"dm\"\nfourier_relax = 1.0\n";
  expect_rejected(args("scan.cxi", {"--config", "run.toml"}), {"--fourier-relax", "[0, 1)", "got 1"});
}

TEST_F(Inputs, ConfigOverlapPassesOfZero) {
  good();
  std::ofstream(file("run.toml")) << "[solver]\nname = \"dm\"\noverlap_passes = 0\n";
  expect_rejected(args("scan.cxi", {"--config", "run.toml"}), {"--overlap-passes", ">= 1", "got 0"});
}

TEST_F(Inputs, UnknownFFTPlanner) {
  good();
  expect_rejected(args("scan.cxi", {"--fft-planner", "fastest"}), {"--fft-planner", "fastest", "auto, estimate or measure"});
}

TEST_F(Inputs, OutputFolderMissing) {
  good();
  expect_rejected({"reconstruct", "scan.cxi", "-o", "no/such/folder/out.h5"},
                  {"no/such/folder/out.h5", "does not exist", "create it first"});
}

TEST_F(Inputs, OutputFolderUnwritable) {
  good();
  // Root writes anywhere but to a read-only file system: /proc stands in.
  fs::create_directories(file("locked"));
  fs::permissions(file("locked"), fs::perms::owner_read | fs::perms::owner_exec);
  bool const root = ::access(file("locked").c_str(), W_OK) == 0;
  std::string const out = root ? "/proc/ptyko-out.h5" : "locked/out.h5";
  expect_rejected({"reconstruct", "scan.cxi", "-o", out, "--epochs", "1"}, {out, "cannot write"});
  fs::permissions(file("locked"), fs::perms::owner_all);
}

TEST_F(Inputs, OutputIsTheInput) {
  good();
  expect_rejected({"reconstruct", "scan.cxi", "-o", "scan.cxi"}, {"-o scan.cxi", "is the input", "untouched"});
  expect_rejected({"reconstruct", "scan.cxi", "-o", "./scan.cxi"}, {"is the input"});
}

TEST_F(Inputs, NoOutput) {
  good();
  expect_rejected({"reconstruct", "scan.cxi"}, {"-o OUT.h5"});
}

TEST_F(Inputs, BadOptionValueIsAParseError) {
  good();
  expect_rejected(args("scan.cxi", {"--epochs", "many"}), {"--epochs"});
}

// ------------------------------------------------------------------ config files

TEST_F(Inputs, ConfigUnknownKeyNamesKeyAndFile) {
  good();
  std::ofstream(file("run.toml")) << "[solver]\nname = \"rpie\"\nepoch = 5\n";
  expect_rejected(args("scan.cxi", {"--config", "run.toml"}), {"run.toml:3", "solver.epoch", "epochs"});
}

TEST_F(Inputs, ConfigUnknownTable) {
  good();
  std::ofstream(file("run.toml")) << "[solvr]\nname = \"rpie\"\n";
  expect_rejected(args("scan.cxi", {"--config", "run.toml"}), {"run.toml", "solvr", "[solver]"});
}

TEST_F(Inputs, ConfigWrongType) {
  good();
  std::ofstream(file("run.toml")) << "[solver]\nepochs = \"ten\"\n";
  expect_rejected(args("scan.cxi", {"--config", "run.toml"}), {"run.toml:2", "solver.epochs", "integer"});
}

TEST_F(Inputs, ConfigSyntaxError) {
  good();
  std::ofstream(file("run.toml")) << "[solver\nname = rpie\n";
  expect_rejected(args("scan.cxi", {"--config", "run.toml"}), {"run.toml:1", "not valid TOML"});
}

TEST_F(Inputs, ConfigMissing) {
  good();
  expect_rejected(args("scan.cxi", {"--config", "none.toml"}), {"--config none.toml", "no such file"});
}

TEST_F(Inputs, ResumeFromSomethingElse) {
  good();
  expect_rejected({"reconstruct", "--resume", "scan.cxi"}, {"--resume scan.cxi", "not a ptyko checkpoint"});
}

// ------------------------------------------------------------------ several ranks

// One rank only reads a broken frame: the job still ends with one message,
// exit code 2 and no hang (the ranks agree on the outcome before any
// collective call).
TEST_F(Inputs, ErrorOnOneRankOnlyStopsEveryRank) {
  auto t = simulated();
  auto const layout_positions = [&] {
    std::vector<std::array<double, 2>> p;
    for (std::size_t n = 0; n < t.n; ++n) p.push_back({-t.translations[3 * n + 1], -t.translations[3 * n]});
    return p;
  }();
  // Any frame of rank 1 will do: the split is by position (recursive bisection).
  auto const part = parallel::partition_scan(layout_positions, int(t.d), 1000, 1000, 2);
  std::size_t const victim = part.frames[1].front();
  t.write(file("rank1.cxi"));
  // The victim's chunk (one frame, deflated) damaged in the middle of its stream.
  haddr_t address = 0;
  hsize_t bytes = 0;
  {
    h5::Handle id(H5Fopen(file("rank1.cxi").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    h5::Handle ds(H5Dopen2(id, "/entry_1/instrument_1/detector_1/data", H5P_DEFAULT));
    hsize_t const at[3] = {victim, 0, 0};
    unsigned filters = 0;
    ASSERT_GE(H5Dget_chunk_info_by_coord(ds, at, &filters, &address, &bytes), 0);
    ASSERT_GT(bytes, 32u);
  }
  {
    std::fstream f(file("rank1.cxi"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(address + bytes / 4));
    std::string const junk(bytes / 2, '\x5a');
    f.write(junk.data(), std::streamsize(junk.size()));
  }
  expect_rejected(args("rank1.cxi"), {"rank1.cxi", "cannot read /entry_1/instrument_1/detector_1/data"}, 2);
}

}  // namespace
