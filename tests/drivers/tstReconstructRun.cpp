// `ptyko` as users run it, on small simulated files:
//  * --help of every sub-command shows an example;
//  * TOML configuration: --print-config prints the defaults as TOML that
//    reads back to the same text; files are applied under the command line;
//    the configuration is printed at start and stored in the result;
//  * --log-file, --quiet;
//  * warnings about suspicious data (low counts, saturated pixels, empty
//    frames, which are skipped, low overlap);
//  * the result without the phase ramp the data cannot determine;
//  * checkpoint and resume at 1 and 2 ranks (and 2 -> 1), an interrupted run
//    (SIGINT; SIGUSR1 to one rank of two) resumed matching the uninterrupted
//    one, and a rank failing mid-run stopping the whole job.
#include "driver_test.hpp"

#include <ptyko/core/checkpoint.hpp>
#include <ptyko/core/illumination.hpp>
#include <ptyko/core/phase_ramp.hpp>
#include <ptyko/core/probe_resample.hpp>
#include <ptyko/core/result_file.hpp>

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <regex>
#include <thread>

namespace {

using namespace ptyko;
using namespace ptyko::test;
using namespace std::chrono_literals;

class Run : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    simulated().write(file("scan.cxi"));
  }
  Outcome ok(std::vector<std::string> const& args, int ranks = 0) const {
    Outcome o = run(args, ranks);
    EXPECT_EQ(o.code, 0) << "stderr: " << o.err;
    return o;
  }

  // A process started in the background (sh execs into it: pid is ptyko's,
  // or mpiexec's).
  pid_t start(std::vector<std::string> const& args, int ranks = 0) const {
    std::string const cmd = "cd " + shell_quote(m_dir.string()) + " && exec " + ptyko_command(args, ranks) + " >" +
                            shell_quote((m_io / "stdout").string()) + " 2>" + shell_quote((m_io / "stderr").string());
    pid_t const pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  }
  // Waits until the background run's stdout holds `text`; false on timeout.
  bool wait_for_output(std::string const& text, std::chrono::seconds timeout = 120s) const {
    auto const end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      if (contains(read_text(m_io / "stdout"), text)) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
  Outcome finish(pid_t pid) const {
    int status = 0;
    ::waitpid(pid, &status, 0);
    Outcome o;
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    o.out = read_text(m_io / "stdout");
    o.err = read_text(m_io / "stderr");
    return o;
  }
};

// Largest |a - b| / max |b| over two complex arrays.
template <class View>
double relative_difference(View const& a, View const& b) {
  EXPECT_EQ(a.span(), b.span());
  double num = 0, den = 0;
  for (std::size_t k = 0; k < std::min(a.span(), b.span()); ++k) {
    num = std::max(num, std::abs(std::complex<double>(a.data()[k].real() - b.data()[k].real(),
                                                      a.data()[k].imag() - b.data()[k].imag())));
    den = std::max(den, std::abs(std::complex<double>(b.data()[k].real(), b.data()[k].imag())));
  }
  return den > 0 ? num / den : num;
}

void expect_same_result(std::string const& a_path, std::string const& b_path, double tolerance) {
  ResultContents const a = read_result(a_path), b = read_result(b_path);
  EXPECT_LE(relative_difference(a.object, b.object), tolerance) << a_path << " vs " << b_path;
  EXPECT_LE(relative_difference(a.probe, b.probe), tolerance) << a_path << " vs " << b_path;
  ASSERT_EQ(a.cost.size(), b.cost.size());
  for (std::size_t e = 0; e < a.cost.size(); ++e)
    EXPECT_NEAR(a.cost[e], b.cost[e], tolerance * std::abs(b.cost[e]) + 1e-12) << "epoch " << e;
}

/// A --mask file (/mask, nonzero = bad) of a d x d detector with the
/// pixels (y, x) `bad` marked.
void write_mask_file(std::string const& path, std::size_t d, std::vector<std::array<std::size_t, 2>> const& bad) {
  std::vector<std::uint8_t> mask(d * d, 0);
  for (auto const& [y, x] : bad) mask[y * d + x] = 1;
  auto f = h5::File::create(path);
  h5::write(f, "/mask", mask.data(), {d, d});
  f.close();
}

std::vector<pid_t> descendants_named(pid_t root, std::string const& name) {
  std::vector<pid_t> found, frontier{root};
  while (!frontier.empty()) {
    pid_t const parent = frontier.back();
    frontier.pop_back();
    for (auto const& e : fs::directory_iterator("/proc")) {
      std::string const id = e.path().filename().string();
      if (id.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string const stat = read_text(e.path() / "stat");
      auto const close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 2));
      char state = 0;
      pid_t ppid = 0;
      rest >> state >> ppid;
      if (ppid != parent) continue;
      pid_t const pid = pid_t(std::stol(id));
      frontier.push_back(pid);
      if (stat.substr(stat.find('(') + 1, close - stat.find('(') - 1) == name) found.push_back(pid);
    }
  }
  return found;
}

// ------------------------------------------------------------------ help

TEST_F(Run, EverySubcommandHasHelpWithAnExample) {
  for (std::string sub : {"simulate", "info", "reconstruct", "view"}) {
    auto const o = ok({sub, "--help"});
    EXPECT_TRUE(contains(o.out, "Example")) << sub << ":\n" << o.out;
    EXPECT_TRUE(contains(o.out, "ptyko " + sub)) << sub << ":\n" << o.out;
  }
  auto const o = ok({"--help"});
  for (std::string sub : {"simulate", "info", "reconstruct", "view"}) EXPECT_TRUE(contains(o.out, sub));
}

// ------------------------------------------------------------------ configuration

TEST_F(Run, PrintConfigIsValidTomlThatReadsBack) {
  auto const defaults = ok({"reconstruct", "--print-config"}).out;
  EXPECT_TRUE(contains(defaults, "[solver]"));
  EXPECT_TRUE(contains(defaults, "name = \"lsqml\""));
  EXPECT_TRUE(contains(defaults, "epochs = 100"));
  EXPECT_TRUE(contains(defaults, "# batch_size = "));  // no value: the solver's default
  // Exact neighbour-consensus by default: the same result as full-sync,
  // with fewer bytes and, measured, faster at every rank count tried.
  EXPECT_TRUE(contains(defaults, "strategy = \"neighbor\"")) << defaults;
  for (std::string t : {"[probe]", "[object]", "[positions]", "[parallel]", "[output]"})
    EXPECT_TRUE(contains(defaults, t)) << t;
  std::ofstream(file("defaults.toml")) << defaults;
  EXPECT_EQ(ok({"reconstruct", "--config", "defaults.toml", "--print-config"}).out, defaults);
}

TEST_F(Run, CommandLineOverridesTheConfigFile) {
  std::ofstream(file("run.toml")) << "input = \"scan.cxi\"\n"
                                     "[solver]\nname = \"rpie\"\nepochs = 7\nbatch_size = 4\n"
                                     "[output]\npath = \"from_file.h5\"\nimages = false\nquiet = true\n";
  auto const shown = ok({"reconstruct", "--config", "run.toml", "--epochs", "3", "--print-config"}).out;
  EXPECT_TRUE(contains(shown, "epochs = 3"));
  EXPECT_TRUE(contains(shown, "name = \"rpie\""));
  EXPECT_TRUE(contains(shown, "batch_size = 4"));
  EXPECT_TRUE(contains(shown, "path = \"from_file.h5\""));

  // The file alone is a complete run; the result stores what ran.
  ok({"reconstruct", "--config", "run.toml", "--epochs", "3"});
  ASSERT_TRUE(fs::exists(file("from_file.h5")));
  EXPECT_FALSE(fs::exists(file("from_file_probe.png")));  // images = false
  ResultContents const r = read_result(file("from_file.h5"));
  EXPECT_EQ(r.cost.size(), 3u);
  EXPECT_TRUE(contains(r.config, "name = \"rpie\""));
  EXPECT_TRUE(contains(r.config, "epochs = 3"));
  EXPECT_TRUE(contains(r.config, "batch_size = 4"));
  EXPECT_TRUE(contains(r.config, "alpha = 0.1"));  // resolved per-solver default

  // The stored configuration is itself a valid config file.
  std::ofstream(file("stored.toml")) << r.config;
  auto const again = ok({"reconstruct", "--config", "stored.toml", "--print-config"}).out;
  EXPECT_TRUE(contains(again, "alpha = 0.1"));
}

// The DM/RAAR power bound: a flag and a key like the others, absent (the
// solver's default) until given, stored resolved in the result.
TEST_F(Run, FourierRelaxOption) {
  EXPECT_TRUE(contains(ok({"reconstruct", "--print-config"}).out, "# fourier_relax = "));
  auto const shown = ok({"reconstruct", "--print-config", "--fourier-relax", "0.05"}).out;
  EXPECT_TRUE(contains(shown, "\nfourier_relax = 0.05\n")) << shown;
  std::ofstream(file("run.toml")) << "[solver]\nfourier_relax = 0\n";
  EXPECT_TRUE(contains(ok({"reconstruct", "--config", "run.toml", "--print-config"}).out, "\nfourier_relax = 0.0\n"));

  ok({"reconstruct", "scan.cxi", "-o", "dm.h5", "--solver", "dm", "--epochs", "1", "-q", "--no-images"});
  EXPECT_TRUE(contains(read_result(file("dm.h5")).config, "\nfourier_relax = 0.02\n"));  // DM's default
  ok({"reconstruct", "scan.cxi", "-o", "dm0.h5", "--solver", "dm", "--epochs", "1", "-q", "--no-images",
      "--fourier-relax", "0"});
  EXPECT_TRUE(contains(read_result(file("dm0.h5")).config, "\nfourier_relax = 0.0\n"));
}

// Frames in photons, detector units or unknown units: integer frames are
// counts; floats with fractions have no known counting noise (nothing is
// compared with it, and the run says so) unless --adu-per-photon gives their
// units, whose noise is then that of the photons times the units.
TEST_F(Run, PhotonsPerDetectorUnit) {
  auto const noise_of = [&](std::string const& name) { return read_result(file(name)).counting_noise_cost; };
  std::vector<std::string> const common{"--epochs", "2", "--no-images"};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), common.begin(), common.end());
    return a;
  };
  auto const counts = ok(with({"reconstruct", "scan.cxi", "-o", "counts.h5"}));
  EXPECT_FALSE(contains(counts.out, "not photon counts")) << counts.out;
  EXPECT_TRUE(contains(counts.out, "x counting noise)")) << counts.out;
  double const photons = noise_of("counts.h5");
  EXPECT_GT(photons, 0);

  TestCxi scaled = simulated();
  for (float& v : scaled.frames) v *= 0.37f;
  scaled.write(file("scaled.cxi"));
  auto const unknown = ok(with({"reconstruct", "scaled.cxi", "-o", "unknown.h5"}));
  EXPECT_TRUE(contains(unknown.out, "scaled.cxi: the frames are not photon counts (float32 with fractions"))
      << unknown.out;
  EXPECT_FALSE(contains(unknown.out, "x counting noise")) << unknown.out;
  EXPECT_EQ(noise_of("unknown.h5"), 0.0);  // not stored
  EXPECT_TRUE(contains(ok({"info", "scaled.cxi"}).out, "photons                unknown: "));
  EXPECT_TRUE(contains(ok({"info", "scan.cxi"}).out, "photons                taken as counts"));

  auto const told = ok(with({"reconstruct", "scaled.cxi", "-o", "told.h5", "--adu-per-photon", "0.37"}));
  EXPECT_FALSE(contains(told.out, "not photon counts")) << told.out;
  EXPECT_NEAR(noise_of("told.h5"), 0.37 * photons, 1e-5 * photons);
  EXPECT_TRUE(contains(read_result(file("told.h5")).config, "\nadu_per_photon = 0.37\n"));

  expect_rejected({"reconstruct", "scan.cxi", "-o", "x.h5", "--adu-per-photon", "0"},
                  {"--adu-per-photon must be > 0", "got 0"});

  // Counts times a gain of 6, as integers: the step is read from the values.
  TestCxi gained = simulated();
  for (float& v : gained.frames) v *= 6;
  gained.data_type = "int32";
  gained.write(file("gained.cxi"));
  auto const step = ok(with({"reconstruct", "gained.cxi", "-o", "gained.h5"}));
  EXPECT_TRUE(contains(step.out, "gained.cxi: every value is a multiple of 6: taken as 6 detector units per photon "
                                 "(--adu-per-photon 6; give it to say otherwise)"))
      << step.out;
  EXPECT_NEAR(noise_of("gained.h5"), 6 * photons, 1e-5 * photons);
  EXPECT_TRUE(contains(ok({"info", "gained.cxi"}).out, "photons                every value is a multiple of 6"));
  auto const one = ok(with({"reconstruct", "gained.cxi", "-o", "one.h5", "--adu-per-photon", "1"}));
  EXPECT_FALSE(contains(one.out, "multiple of")) << one.out;

  // Detector units above a threshold: zeros, and nothing between 1 and 20.
  TestCxi thresholded = simulated();
  for (std::size_t k = 0; k < thresholded.frames.size(); ++k) {
    float& v = thresholded.frames[k];
    v = v < 3 ? 0.f : 10 * v + float(k % 3);
  }
  for (std::size_t f = 0; f < thresholded.n; ++f)
    for (std::size_t y : {0, 1})
      for (std::size_t x : {0, 1}) thresholded.at(f, y, x) = 0;
  thresholded.data_type = "int32";
  thresholded.write(file("thresholded.cxi"));
  auto const adu = ok(with({"reconstruct", "thresholded.cxi", "-o", "adu.h5"}));
  EXPECT_TRUE(contains(adu.out, "thresholded.cxi: no value lies between 1 and ")) << adu.out;
  EXPECT_TRUE(contains(adu.out, "not photon counts, so their counting noise is not known")) << adu.out;
  EXPECT_EQ(noise_of("adu.h5"), 0.0);
  EXPECT_TRUE(contains(ok({"info", "thresholded.cxi"}).out, "photons                unknown: no value lies"));
}

// The geometry from the command line: a file without its energy and
// distance reconstructs with --energy-kev and --distance as the complete
// file does; its errors name the options, and so does `ptyko info`.
TEST_F(Run, GeometryFromTheCommandLine) {
  TestCxi bare = simulated();
  double const kev = *bare.energy / 1.602176634e-16, distance = *bare.distance;
  bare.energy.reset();
  bare.distance.reset();
  bare.write(file("bare.cxi"));
  auto const exact = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v);
    return std::string(text);
  };
  std::vector<std::string> const common{"--epochs", "3", "-q", "--no-images"};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), common.begin(), common.end());
    return a;
  };
  expect_rejected(with({"reconstruct", "bare.cxi", "-o", "b.h5"}), {"bare.cxi", "or give --energy-kev"});
  expect_rejected(with({"reconstruct", "bare.cxi", "-o", "b.h5", "--energy-kev", exact(kev)}),
                  {"bare.cxi", "or give --distance"});
  expect_rejected(with({"reconstruct", "bare.cxi", "-o", "b.h5", "--energy-kev", "0.01"}),
                  {"--energy-kev 0.01", "keV"});
  expect_rejected(with({"reconstruct", "scan.cxi", "-o", "b.h5", "--pixel-size", "-75e-6"}),
                  {"--pixel-size must be a positive"});

  ok(with({"reconstruct", "scan.cxi", "-o", "file.h5"}));
  ok(with({"reconstruct", "bare.cxi", "-o", "given.h5", "--energy-kev", exact(kev), "--distance",
           exact(distance)}));
  expect_same_result(file("given.h5"), file("file.h5"), 1e-5);
  EXPECT_TRUE(contains(read_result(file("given.h5")).config, "\ndistance = "));

  auto const info = ok({"info", "bare.cxi", "--energy-kev", "8", "--distance", "2.5"}).out;
  EXPECT_TRUE(contains(info, "8.0000 keV (1.28174e-15 J) (--energy-kev)")) << info;
  EXPECT_TRUE(contains(info, "detector distance      2.5 m (--distance)")) << info;
}

// An option the solver does not use is named on the command line, not
// silently dropped (DM's beta is 1 whatever --beta says).
TEST_F(Run, OptionsTheSolverDoesNotUseAreNamed) {
  auto const dm = ok({"reconstruct", "scan.cxi", "-o", "dm.h5", "--solver", "dm", "--epochs", "1", "-q", "--no-images",
                      "--alpha", "0.3", "--beta", "0.5", "--cost-every", "2"});
  EXPECT_TRUE(contains(dm.err, "ptyko: warning: --alpha is not used by dm (only by rpie, epie or lsqml)\n")) << dm.err;
  EXPECT_TRUE(contains(dm.err, "ptyko: warning: --beta is not used by dm (only by rpie, epie, lsqml or raar)\n"))
      << dm.err;
  EXPECT_FALSE(contains(dm.err, "--cost-every")) << dm.err;
  auto const lsqml = ok({"reconstruct", "scan.cxi", "-o", "l.h5", "--epochs", "1", "-q", "--no-images", "--beta", "0.2",
                         "--fourier-relax", "0.1", "--overlap-passes", "2"});
  EXPECT_TRUE(contains(lsqml.err, "--fourier-relax is not used by lsqml (only by dm or raar)")) << lsqml.err;
  EXPECT_TRUE(contains(lsqml.err, "--overlap-passes is not used by lsqml")) << lsqml.err;
  EXPECT_FALSE(contains(lsqml.err, "--beta")) << lsqml.err;
  // Options of a refinement, or of the probe's update, without it (the
  // background's: when it is off; without either flag the frames decide).
  auto const without = ok({"reconstruct", "scan.cxi", "-o", "w.h5", "--epochs", "1", "-q", "--no-images",
                           "--refine-step", "1", "--background-every", "3", "--no-refine-background",
                           "--no-probe-update", "--probe-support", "5"});
  for (auto const* line : {"--refine-step is not used without --refine-positions",
                           "--background-every is not used without --refine-background",
                           "--probe-support is not used without the probe's update"})
    EXPECT_TRUE(contains(without.err, line)) << without.err;
  auto const with = ok({"reconstruct", "scan.cxi", "-o", "w.h5", "--epochs", "1", "-q", "--no-images",
                        "--refine-positions", "--refine-step", "1", "--probe-support", "5"});
  EXPECT_FALSE(contains(with.err, "warning")) << with.err;
}

// DM measures the model cost every --cost-every epochs and at the last:
// the lines between show "cost -", the result keeps NaN there, and the run
// ends with a measured cost.
TEST_F(Run, CostEveryShowsADashBetweenMeasurementsAndMeasuresTheLastEpoch) {
  auto const o = ok({"reconstruct", "scan.cxi", "-o", "dm.h5", "--solver", "dm", "--epochs", "5", "--cost-every", "3",
                     "--no-images"});
  EXPECT_TRUE(contains(o.out, "epoch    2/5  cost -           ")) << o.out;
  EXPECT_TRUE(contains(o.out, "epoch    3/5  cost -           ")) << o.out;
  EXPECT_FALSE(contains(o.out, "nan")) << o.out;
  EXPECT_TRUE(contains(o.out, ", final cost ")) << o.out;
  auto const cost = read_result(file("dm.h5")).cost;
  ASSERT_EQ(cost.size(), 5u);
  for (int e : {0, 3, 4}) EXPECT_TRUE(std::isfinite(cost[e]) && cost[e] > 0) << "epoch " << e;
  for (int e : {1, 2}) EXPECT_TRUE(std::isnan(cost[e])) << "epoch " << e;
}

// Detector frames larger than the useful far field and not square, with
// the beam off their centre: the 16 x 16 frames of scan.cxi inside 22 x 30
// frames (beam at row 11, column 17) padded with counts that must not be
// read. --crop 16 around the beam reconstructs exactly what scan.cxi does,
// also on two ranks; `ptyko info` describes the window and finds the beam.
TEST_F(Run, CropOfOblongFramesMatchesTheSquareFile) {
  TestCxi const square = simulated();
  std::size_t const ny = 22, nx = 30, y0 = 3, x0 = 9, d = square.d;
  TestCxi oblong = square;
  oblong.data_dims = {square.n, ny, nx};
  oblong.frames.assign(square.n * ny * nx, 7.f);
  for (std::size_t f = 0; f < square.n; ++f)
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) oblong.frames[(f * ny + y0 + i) * nx + x0 + j] = square.frames[(f * d + i) * d + j];
  oblong.write(file("oblong.cxi"));
  std::vector<std::string> const crop{"--crop", "16", "--crop-centre-y", "11", "--crop-centre-x", "17"};
  auto with = [](std::vector<std::string> a, std::vector<std::string> const& extra) {
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  std::vector<std::string> const quick{"--epochs", "3", "-q", "--no-images"};
  ok(with({"reconstruct", "scan.cxi", "-o", "square.h5"}, quick));
  ok(with(with({"reconstruct", "oblong.cxi", "-o", "cropped.h5"}, quick), crop));
  expect_same_result(file("cropped.h5"), file("square.h5"), 0.0);
  EXPECT_TRUE(contains(read_result(file("cropped.h5")).config, "\ncrop = 16\ncrop_centre_y = 11\ncrop_centre_x = 17\n"));
  ok(with({"reconstruct", "scan.cxi", "-o", "square2.h5"}, quick), 2);
  ok(with(with({"reconstruct", "oblong.cxi", "-o", "cropped2.h5"}, quick), crop), 2);
  expect_same_result(file("cropped2.h5"), file("square2.h5"), 0.0);
  // The beam found in the frames (--find-beam): the same window, the same run.
  Outcome const found = ok(with(with({"reconstruct", "oblong.cxi", "-o", "found.h5"}, quick), {"--crop", "16", "--find-beam"}));
  expect_same_result(file("found.h5"), file("square.h5"), 0.0);
  std::string const found_info = ok(with({"info", "oblong.cxi"}, {"--crop", "16", "--find-beam"})).out;
  EXPECT_TRUE(contains(found_info, "(y, x) = (11, 17) of the stored frames: the window is centred there")) << found_info;
  // Centred on the frames instead (row 11, column 15): other pixels, another result.
  ok(with({"reconstruct", "oblong.cxi", "-o", "centred.h5", "--crop", "16"}, quick));
  EXPECT_GT(relative_difference(read_result(file("centred.h5")).object, read_result(file("square.h5")).object), 0.1);
  // Without a crop: the largest square around the centre, as --crop 22 reads it.
  Outcome const automatic = ok(with({"reconstruct", "oblong.cxi", "-o", "auto.h5"}, quick));
  EXPECT_TRUE(contains(automatic.err, "frames are 22 x 30, not square: using the 22 x 22 window")) << automatic.err;
  ok(with({"reconstruct", "oblong.cxi", "-o", "crop22.h5", "--crop", "22"}, quick));
  expect_same_result(file("auto.h5"), file("crop22.h5"), 0.0);

  std::string const info = ok(with({"info", "oblong.cxi"}, crop)).out;
  EXPECT_TRUE(contains(info, "of 22 x 30 pixels")) << info;
  EXPECT_TRUE(contains(info, "16 x 16 pixels from row 3, column 9 (beam at 11, 17)")) << info;
  std::string const whole = ok({"info", "scan.cxi"}).out;
  EXPECT_TRUE(contains(whole, "intensity centre")) << whole;
}

// Oversampled data: every count of scan.cxi's 16 x 16 frames split over
// 2 x 2 pixels half the size (q, q, q, v - 3q: integers, so the sums are
// exact). --bin 2 gives scan.cxi's frames and geometry back, and the same
// reconstruction bit for bit.
TEST_F(Run, BinOfFinerFramesMatchesTheCoarseFile) {
  TestCxi const coarse = simulated();
  std::size_t const d = coarse.d, f2 = 2 * d;
  TestCxi fine = coarse;
  fine.d = f2;
  fine.frames.assign(coarse.n * f2 * f2, 0.f);
  for (std::size_t f = 0; f < coarse.n; ++f)
    for (std::size_t y = 0; y < d; ++y)
      for (std::size_t x = 0; x < d; ++x) {
        float const v = coarse.frames[(f * d + y) * d + x];
        ASSERT_EQ(v, std::floor(v));  // counts
        float const q = std::floor(v / 4);
        fine.at(f, 2 * y, 2 * x) = q;
        fine.at(f, 2 * y, 2 * x + 1) = q;
        fine.at(f, 2 * y + 1, 2 * x) = q;
        fine.at(f, 2 * y + 1, 2 * x + 1) = v - 3 * q;
      }
  fine.pixel_size = *coarse.pixel_size / 2;
  fine.write(file("fine.cxi"));
  std::vector<std::string> const quick{"--epochs", "3", "-q", "--no-images"};
  auto with = [](std::vector<std::string> a, std::vector<std::string> const& extra) {
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  ok(with({"reconstruct", "scan.cxi", "-o", "coarse.h5"}, quick));
  ok(with({"reconstruct", "fine.cxi", "-o", "binned.h5", "--bin", "2"}, quick));
  expect_same_result(file("binned.h5"), file("coarse.h5"), 0.0);
  std::string const info = ok({"info", "fine.cxi", "--bin", "2"}).out;
  EXPECT_TRUE(contains(info, "binned 2 x 2 into 16 x 16")) << info;
}

TEST_F(Run, ConfigurationIsPrintedAtStart) {
  auto const o = ok({"reconstruct", "scan.cxi", "-o", "out.h5", "--epochs", "1", "--no-images"});
  EXPECT_TRUE(contains(o.out, "configuration (TOML)"));
  EXPECT_TRUE(contains(o.out, "[solver]"));
  EXPECT_TRUE(contains(o.out, "epoch    1/1"));
}

// The start line says what each rank runs on. A host build starts the
// threads OMP_NUM_THREADS names, as OpenMP does (the tests' runs set 1):
// ptyko gives a Threads build that default too, where Kokkos's is one
// thread (parallel/src/environment.cpp).
TEST_F(Run, StartLineNamesEachRanksThreads) {
  using Exec = Kokkos::DefaultExecutionSpace;
  char const* kokkos_threads = std::getenv("KOKKOS_NUM_THREADS");  // it would win: set aside for this run
  std::string const saved = kokkos_threads ? kokkos_threads : "";
  ::unsetenv("KOKKOS_NUM_THREADS");
  ::setenv("OMP_NUM_THREADS", "2", 1);
  auto const o = ok({"reconstruct", "scan.cxi", "-o", "out.h5", "--epochs", "1", "--no-images"});
  if (kokkos_threads) ::setenv("KOKKOS_NUM_THREADS", saved.c_str(), 1);
  std::string const name = Exec::name();
  std::string expected = "one " + name + " device each";
  if (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible)
    expected = (name == "Serial" ? "1 " : "2 ") + name + " thread(s) each";
  EXPECT_TRUE(contains(o.out, "on 1 rank(s) (neighbor), " + expected + ", single precision")) << o.out;
}

TEST_F(Run, LogFileAndQuiet) {
  auto const o = ok({"reconstruct", "scan.cxi", "-o", "out.h5", "--epochs", "2", "-q", "--log-file", "run.log"});
  EXPECT_EQ(o.out, "");
  std::string const log = read_text(file("run.log"));
  EXPECT_TRUE(contains(log, "epoch    1/2")) << log;
  EXPECT_TRUE(contains(log, "epoch    2/2")) << log;
  EXPECT_TRUE(contains(log, "[solver]")) << log;
  EXPECT_TRUE(contains(log, "wrote out.h5")) << log;
  EXPECT_TRUE(fs::exists(file("out_object_phase.png")));
}

// ------------------------------------------------------------------ warnings

TEST_F(Run, WarnsAboutLowCounts) {
  simulated(20, 16, 30).write(file("dim.cxi"));
  auto const o = ok({"reconstruct", "dim.cxi", "-o", "out.h5", "--epochs", "1", "-q", "--no-images"});
  EXPECT_TRUE(contains(o.err, "ptyko: warning: dim.cxi: only")) << o.err;
  EXPECT_TRUE(contains(o.err, "counts per frame")) << o.err;
}

// Mini-batches smaller than the rank count leave ranks idle at every batch.
TEST_F(Run, WarnsAboutBatchesSmallerThanTheRankCount) {
  auto const small = ok({"reconstruct", "scan.cxi", "-o", "out.h5", "--epochs", "1", "-q", "--no-images", "--solver",
                         "rpie", "--batch-size", "2"},
                        3);
  EXPECT_TRUE(contains(small.err, "ptyko: warning: --batch-size 2 is below the 3 ranks")) << small.err;
  auto const enough = ok({"reconstruct", "scan.cxi", "-o", "out.h5", "--epochs", "1", "-q", "--no-images", "--solver",
                          "rpie", "--batch-size", "3"},
                         3);
  EXPECT_FALSE(contains(enough.err, "--batch-size")) << enough.err;
}

// Ranks bound to fewer CPUs than their threads take turns on them while
// other CPUs idle (OMP_PROC_BIND with mpiexec --bind-to none pins every
// rank to the first CPU): said once, before the run, with the remedy.
TEST_F(Run, WarnsAboutRanksSharingACpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &set)) first = c;
  std::string const taskset = "taskset -c " + std::to_string(first);
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || std::system((taskset + " true >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "needs two CPUs online and taskset";
  std::vector<std::string> const args{"reconstruct", "scan.cxi", "-o", "out.h5", "--epochs", "1", "-q", "--no-images"};
  Outcome const pinned = run(args, 2, taskset);
  EXPECT_EQ(pinned.code, 0) << pinned.err;
  std::string const expected = "ptyko: warning: 2 ranks on node ";
  auto const at = pinned.err.find(expected);
  ASSERT_NE(at, std::string::npos) << pinned.err;
  EXPECT_EQ(pinned.err.find(expected, at + 1), std::string::npos) << "said once: " << pinned.err;
  EXPECT_TRUE(contains(pinned.err, "run 2 threads on 1 of its")) << pinned.err;
  EXPECT_TRUE(contains(pinned.err, "CPUs (" + std::to_string(first) + "), which take turns")) << pinned.err;
  Outcome const spread = ok(args, 2);  // mpiexec's own binding: a core each, or none when oversubscribed
  EXPECT_FALSE(contains(spread.err, "take turns")) << spread.err;
}

// Pixels at the type's largest value in some frames (counters that
// saturated) are masked and named; at it in every frame (an Eiger's mark of
// its gaps and bad pixels, or a pixel saturated throughout) they are masked
// as marks are: the run equals that with those pixels in a --mask file.
// --mask-above above the type's largest value keeps them. Pixels at the
// frames' largest value, when many values share it (frames clipped below
// their type's largest), are masked too.
TEST_F(Run, MasksSaturatedPixels) {
  auto t = simulated();
  for (std::size_t f = 0; f < t.n; ++f) {
    for (std::size_t j = 0; j < 3; ++j)
      if (f % 2 == 0) t.at(f, 8, 7 + j) = 65535;
    t.at(f, 2, 13) = 65535;  // in every frame
  }
  for (auto& v : t.frames) v = std::min(v, 65535.f);
  t.data_type = "uint16";
  t.write(file("sat.cxi"));
  auto const o = ok({"reconstruct", "sat.cxi", "-o", "out.h5", "--epochs", "2", "--no-images"});
  EXPECT_TRUE(contains(o.err, "ptyko: warning: sat.cxi: 3 pixel(s) (1.17 %) reach 65535, the largest uint16 value, "
                              "in some frame: saturated counters, masked in every frame"))
      << o.err;
  EXPECT_TRUE(contains(o.out, "sat.cxi: 1 detector pixel(s) hold the same mark (65535) in every frame looked at"))
      << o.out;
  EXPECT_TRUE(contains(ok({"info", "sat.cxi"}).out, "saturated pixels       3 reach 65535, the largest uint16 value, "
                                                    "in some frame: reconstruct masks them"));
  write_mask_file(file("saturated.h5"), t.d, {{2, 13}, {8, 7}, {8, 8}, {8, 9}});
  ok({"reconstruct", "sat.cxi", "-o", "masked.h5", "--epochs", "2", "-q", "--no-images", "--mask", "saturated.h5"});
  expect_same_result(file("out.h5"), file("masked.h5"), 1e-6);
  auto const kept = ok({"reconstruct", "sat.cxi", "-o", "kept.h5", "--epochs", "2", "--no-images", "--mask-above", "1e9"});
  EXPECT_FALSE(contains(kept.err, "saturated counters")) << kept.err;
  EXPECT_TRUE(contains(kept.out, "--mask-above 1e+09: 0 pixel(s)")) << kept.out;

  // Float data clipped at a common ceiling, reached by two pixels in some
  // frames: masked alike.
  t = simulated();
  for (std::size_t f = 0; f < t.n; ++f) t.at(f, 8, 8) = 1e6f;
  for (std::size_t f = 0; f < t.n; f += 4) t.at(f, 8, 9) = 1e6f;
  t.write(file("clip.cxi"));
  EXPECT_TRUE(contains(ok({"info", "clip.cxi"}).out, "clipped values         25 share the largest value 1e+06: a "
                                                     "detector (or a program) clipping there"));
  EXPECT_FALSE(contains(ok({"info", "scan.cxi"}).out, "clipped values"));
  auto const c = ok({"reconstruct", "clip.cxi", "-o", "clip.h5", "--epochs", "2", "-q", "--no-images"});
  EXPECT_TRUE(contains(c.err, "clip.cxi: 25 values in 2 pixel(s) share the frames' largest value 1e+06: a detector "
                              "(or a program) clipping there; masked in every frame"))
      << c.err;
  write_mask_file(file("clipped.h5"), t.d, {{8, 8}, {8, 9}});
  ok({"reconstruct", "clip.cxi", "-o", "masked.h5", "--epochs", "2", "-q", "--no-images", "--mask", "clipped.h5"});
  expect_same_result(file("clip.h5"), file("masked.h5"), 1e-6);
  // Photon counts share their largest value with no other: nothing masked.
  auto const counts = ok({"reconstruct", "scan.cxi", "-o", "counts.h5", "--epochs", "1", "-q", "--no-images"});
  EXPECT_FALSE(contains(counts.err, "masked")) << counts.err;
}

// The detector mask of another file (--mask, and --mask-invert for one
// that marks measured pixels) silences the saturated-pixel warning, shows
// in `ptyko info`, and is kept in the stored configuration.
TEST_F(Run, MaskFromAnotherFile) {
  auto t = simulated();
  for (std::size_t f = 0; f < t.n; f += 2) t.at(f, 8, 7) = 65535;  // a hot pixel
  for (auto& v : t.frames) v = std::min(v, 65535.f);
  t.data_type = "uint16";
  t.write(file("hot.cxi"));
  std::vector<std::uint8_t> bad(t.d * t.d, 0), good(t.d * t.d, 1);
  bad[8 * t.d + 7] = 1;
  good[8 * t.d + 7] = 0;
  {
    auto f = h5::File::create(file("detector.h5"));
    h5::write(f, "/entry/instrument/detector/detectorSpecific/pixel_mask", bad.data(), {t.d, t.d});
    h5::write(f, "/good", good.data(), {t.d, t.d});
    f.close();
  }
  auto const plain = ok({"reconstruct", "hot.cxi", "-o", "plain.h5", "--epochs", "1", "-q", "--no-images"});
  EXPECT_TRUE(contains(plain.err, "1 pixel(s) (0.39 %) reach 65535, the largest uint16 value")) << plain.err;
  for (auto const& mask : std::vector<std::vector<std::string>>{{"--mask", "detector.h5"},
                                                                {"--mask", "detector.h5:/good", "--mask-invert"}}) {
    std::vector<std::string> a{"reconstruct", "hot.cxi", "-o", "masked.h5", "--epochs", "1", "-q", "--no-images"};
    a.insert(a.end(), mask.begin(), mask.end());
    auto const o = ok(a);
    EXPECT_FALSE(contains(o.err, "65535")) << o.err;
    EXPECT_TRUE(contains(read_result(file("masked.h5")).config, "mask = \"" + file(mask[1]) + "\"")) << mask[1];
  }
  auto const info = ok({"info", "hot.cxi", "--mask", "detector.h5"});
  EXPECT_TRUE(contains(info.out, "99.61 % of pixels measured (detector.h5:/entry/instrument/detector/"))
      << info.out;
}

// Pixels that hold NaN or infinity in some frame (a program that filled
// module gaps with NaN and wrote no mask) are masked in every frame, on
// every rank alike (frame 2 is one rank's only): the same run as with those
// pixels in a --mask file. Before, the run stopped at the first NaN. A NaN
// in the dark frame masks its pixel too.
TEST_F(Run, MasksPixelsThatHoldNaN) {
  auto t = simulated();
  t.at(2, 3, 5) = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t f = 0; f < t.n; ++f) t.at(f, 9, 1) = std::numeric_limits<float>::infinity();
  t.write(file("gaps.cxi"));
  {
    h5::Handle id(H5Fopen(file("gaps.cxi").c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    std::vector<double> dark(t.d * t.d, 0.0);
    dark[12 * t.d + 12] = std::nan("");
    hsize_t const dd[2] = {t.d, t.d};
    h5::Handle ds(H5Screate_simple(2, dd, nullptr));
    h5::Handle d(H5Dcreate2(id, "/entry_1/instrument_1/detector_1/dark", H5T_IEEE_F64LE, ds, H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT));
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, dark.data());
  }
  write_mask_file(file("gaps_mask.h5"), t.d, {{3, 5}, {9, 1}, {12, 12}});
  EXPECT_TRUE(contains(ok({"info", "gaps.cxi"}).out,
                       "invalid pixels         3 hold NaN or infinity in some frame: reconstruct masks them"));
  for (int ranks : {0, 2}) {
    std::vector<std::string> const a{"reconstruct", "gaps.cxi", "--epochs", "3", "--no-images", "--strategy",
                                     "neighbor"};
    auto nan = a, masked = a;
    nan.insert(nan.end(), {"-o", "nan.h5"});
    masked.insert(masked.end(), {"-o", "masked.h5", "--mask", "gaps_mask.h5", "-q"});
    auto const o = ok(nan, ranks);
    EXPECT_TRUE(contains(o.err, "gaps.cxi: 3 detector pixel(s) hold NaN or infinity in some frame (module gaps")) << o.err;
    ok(masked, ranks);
    expect_same_result(file("nan.h5"), file("masked.h5"), 1e-6);
  }
}

// A frame without an intensity in most pixels (a failed readout: all NaN,
// or 60 % of it) is skipped rather than its pixels masked in every frame:
// the run is that of the file with it empty, with the one NaN pixel
// elsewhere masked.
TEST_F(Run, SkipsFramesOfNaN) {
  auto t = simulated();
  float const nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t k = 0; k < t.d * t.d; ++k) {
    t.frames[5 * t.d * t.d + k] = nan;
    if (k % 5 < 3) t.frames[12 * t.d * t.d + k] = nan;
  }
  t.at(2, 3, 5) = nan;
  t.write(file("readout.cxi"));
  TestCxi without = t;  // the same frames empty: skipped alike, on the same object grid
  for (std::size_t f : {5, 12})
    for (std::size_t k = 0; k < t.d * t.d; ++k) without.frames[f * t.d * t.d + k] = 0;
  without.at(2, 3, 5) = 0;
  without.write(file("without.cxi"));
  write_mask_file(file("pixel.h5"), t.d, {{3, 5}});
  EXPECT_TRUE(contains(ok({"info", "readout.cxi"}).out,
                       "empty frames           2 (2 of them hold no intensity in most pixels: NaN, infinity, or "
                       "negative values and no counts)"));
  auto const o = ok({"reconstruct", "readout.cxi", "-o", "readout.h5", "--epochs", "3", "--no-images"});
  EXPECT_TRUE(contains(o.err, "readout.cxi: 2 of 20 frames hold no intensity in most pixels (NaN, infinity, or "
                              "negative values and no counts) (frames 5, 12): they are skipped"))
      << o.err;
  EXPECT_TRUE(contains(o.err, "readout.cxi: 1 detector pixel(s) hold NaN or infinity")) << o.err;
  ok({"reconstruct", "without.cxi", "-o", "without.h5", "--epochs", "3", "--no-images", "-q", "--mask", "pixel.h5"});
  expect_same_result(file("readout.h5"), file("without.h5"), 1e-6);
  ok({"reconstruct", "readout.cxi", "-o", "two.h5", "--epochs", "3", "--no-images", "-q", "--strategy", "neighbor"}, 2);
  expect_same_result(file("two.h5"), file("without.h5"), 1e-4);
}

// Negative values: a detector's marks (the same negative value in a pixel
// in every frame: a Pilatus's -1 in its gaps, -2 at bad pixels) are masked,
// on every rank alike; the noise of a subtracted background (negative values
// that vary from frame to frame) is read as 0, in integer and float frames.
// The runs equal those of the files with the marks in a --mask file and the
// noise as zeros; with --clip-negative, that of the file with every negative
// value 0. Until 2026-12-07 every negative integer's pixel was masked and
// negative float values stopped the run. Many negative values turn the
// background's refinement on.
TEST_F(Run, NegativeValues) {
  auto t = simulated();
  for (std::size_t f = 0; f < t.n; ++f) {
    t.at(f, 4, 4) = -1;
    t.at(f, 6, 7) = -2;
    t.at(f, 10 + f % 4, 12) = -float(1 + f % 3);  // noise: the pixel and value vary
  }
  t.data_type = "int32";
  t.write(file("pilatus.cxi"));
  TestCxi zeros = t;
  for (auto& v : zeros.frames) v = std::max(v, 0.f);
  zeros.write(file("zeros.cxi"));
  write_mask_file(file("pilatus_mask.h5"), t.d, {{4, 4}, {6, 7}});
  auto const info = ok({"info", "pilatus.cxi"}).out;
  EXPECT_TRUE(contains(info, "marked pixels          2 hold the same mark (-2, -1) in every frame looked at"))
      << info;
  EXPECT_TRUE(contains(info, "negative values        20 (")) << info;
  EXPECT_FALSE(contains(info, "refines the background")) << info;  // 0.39 %
  std::vector<std::string> const a{"reconstruct", "--epochs", "3", "--no-images", "--strategy", "neighbor"};
  auto run = [&](std::string const& in, std::string const& out, std::vector<std::string> const& more, int ranks) {
    auto v = a;
    v.insert(v.end(), {in, "-o", out});
    v.insert(v.end(), more.begin(), more.end());
    return ok(v, ranks);
  };
  for (int ranks : {0, 2}) {
    auto const o = run("pilatus.cxi", "marked.h5", {}, ranks);
    EXPECT_TRUE(contains(o.out, "pilatus.cxi: 2 detector pixel(s) hold the same mark (-2, -1) in every frame "
                                "looked at"))
        << o.out;
    EXPECT_TRUE(contains(o.out, "pilatus.cxi: 20 negative value(s) at measured pixels (0.394 % of them, down to -3;"))
        << o.out;
    EXPECT_FALSE(contains(o.out, "the background is refined")) << o.out;  // under 1 % of the values
    run("zeros.cxi", "masked.h5", {"--mask", "pilatus_mask.h5", "-q"}, ranks);
    expect_same_result(file("marked.h5"), file("masked.h5"), 1e-6);
  }
  // (The marks read as 0 make 60 negative values, 1.17 %: without
  // --no-refine-background the background would be refined.)
  run("pilatus.cxi", "clipped.h5", {"--clip-negative", "--no-refine-background", "-q"}, 0);
  run("zeros.cxi", "plain.h5", {"-q"}, 0);
  expect_same_result(file("clipped.h5"), file("plain.h5"), 1e-6);

  // Float frames with a background subtracted: no marks, the noise as
  // zeros, and so many of them (over 1 % of the values) that the background
  // is refined unless --no-refine-background says otherwise.
  auto b = simulated();
  for (auto& v : b.frames) v -= 0.5f;
  b.write(file("background.cxi"));
  for (auto& v : b.frames) v = std::max(v, 0.f);
  b.write(file("subtracted.cxi"));
  EXPECT_TRUE(contains(ok({"info", "background.cxi"}).out, "read as 0; reconstruct refines the background"));
  for (int ranks : {0, 2}) {  // the ranks decide alike, from all frames' values
    auto const o = run("background.cxi", "background.h5", {}, ranks);
    EXPECT_FALSE(contains(o.out, "same mark")) << o.out;
    EXPECT_TRUE(contains(o.out, "negative value(s) at measured pixels (")) << o.out;
    EXPECT_TRUE(contains(o.out, "% of them, down to -0.5;")) << o.out;
    EXPECT_TRUE(contains(o.out, "background.cxi: the background is refined (--refine-background)")) << o.out;
    EXPECT_TRUE(contains(read_result(file("background.h5")).config, "refine = true")) << "kept for --resume";
    run("subtracted.cxi", "subtracted.h5", {"-q", "--refine-background"}, ranks);
    expect_same_result(file("background.h5"), file("subtracted.h5"), 1e-6);
  }
  auto const off = run("background.cxi", "background.h5", {"--no-refine-background"}, 0);
  EXPECT_FALSE(contains(off.out, "the background is refined")) << off.out;
  run("subtracted.cxi", "subtracted.h5", {"-q"}, 0);
  expect_same_result(file("background.h5"), file("subtracted.h5"), 1e-6);
}

// --mask-above: a pixel that reaches the level in any frame (here only in
// frame 0, which one rank of two reads) is masked in all frames on every
// rank: the same run as with that pixel in a --mask file.
TEST_F(Run, MaskAboveMasksPixelsReachingItInAnyFrame) {
  auto t = simulated();
  t.at(0, 8, 7) = 65535;
  t.at(0, 3, 12) = 70000;
  t.write(file("hot.cxi"));
  write_mask_file(file("hot_mask.h5"), t.d, {{8, 7}, {3, 12}});
  for (int ranks : {0, 2}) {
    std::vector<std::string> a{"reconstruct", "hot.cxi", "--epochs", "3", "--no-images", "--strategy", "neighbor"};
    auto const above = [&] {
      auto v = a;
      v.insert(v.end(), {"-o", "above.h5", "--mask-above", "65000"});
      return v;
    }();
    auto const masked = [&] {
      auto v = a;
      v.insert(v.end(), {"-o", "masked.h5", "--mask", "hot_mask.h5", "-q"});
      return v;
    }();
    auto const o = ok(above, ranks);
    EXPECT_TRUE(contains(o.out, "--mask-above 65000: 2 pixel(s) (0.78 %) reach it in some frame: masked")) << o.out;
    EXPECT_FALSE(contains(o.err, "largest value")) << o.err;
    ok(masked, ranks);
    expect_same_result(file("above.h5"), file("masked.h5"), 0.0);
  }
  auto const none = ok({"reconstruct", "hot.cxi", "-o", "none.h5", "--epochs", "1", "--no-images", "--mask-above",
                        "1e9"});
  EXPECT_TRUE(contains(none.out, "--mask-above 1e+09: 0 pixel(s)")) << none.out;
}

// --probe: the probe of an earlier result (or a dataset named in any HDF5
// file) starts the run: kept as it was (0 epochs), and a run that starts
// from it fits the data faster than one from a computed probe (measured:
// cost 804 against 1109 after 2 epochs).
TEST_F(Run, ProbeFromAnEarlierResult) {
  ok({"reconstruct", "scan.cxi", "-o", "first.h5", "--epochs", "30", "--modes", "2", "-q", "--no-images"});
  ResultContents const first = read_result(file("first.h5"));
  for (std::string const spec : {"first.h5", "first.h5:/reconstruction/probe"}) {
    ok({"reconstruct", "scan.cxi", "-o", "again.h5", "--epochs", "0", "--modes", "2", "--probe", spec, "-q",
        "--no-images"});
    ResultContents const again = read_result(file("again.h5"));
    EXPECT_LE(relative_difference(again.probe, first.probe), 1e-6) << spec;
    EXPECT_TRUE(contains(again.config, "guess = \"" + file(spec) + "\"")) << again.config;
  }
  ok({"reconstruct", "scan.cxi", "-o", "warm.h5", "--epochs", "2", "--modes", "2", "--probe", "first.h5", "-q",
      "--no-images"});
  ok({"reconstruct", "scan.cxi", "-o", "cold.h5", "--epochs", "2", "--modes", "2", "-q", "--no-images"});
  double const warm = read_result(file("warm.h5")).cost.back(), cold = read_result(file("cold.h5")).cost.back();
  EXPECT_LT(warm, 0.85 * cold) << "cost after 2 epochs from the earlier probe " << warm << ", from a computed one "
                              << cold;
}

// --probe from a result of other frames: a run on the whole 32 x 32 frames
// starts one on their 16 x 16 crop, whose object pixels are twice as large.
// The probe is resampled onto them (its centred spectrum, the same field),
// said so, kept as resampled at 0 epochs (up to the power scaling to the
// counts), and the run fits the data faster than from a computed probe
// (measured: cost 5135 against 22438 after 3 epochs).
TEST_F(Run, ProbeFromAResultOfOtherFramesIsResampled) {
  ok({"simulate", "-o", "wide.cxi", "--frames", "60", "--detector", "32", "--modes", "1"});
  ok({"reconstruct", "wide.cxi", "-o", "whole.h5", "--epochs", "30", "-q", "--no-images"});
  ResultContents const whole = read_result(file("whole.h5"));
  std::vector<std::string> const cropped = {"reconstruct", "wide.cxi", "--crop", "16", "--no-images"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = cropped;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Outcome const kept = ok(with({"-o", "kept.h5", "--epochs", "0", "--probe", "whole.h5"}));
  EXPECT_TRUE(contains(kept.out, "--probe whole.h5: 32 x 32 pixels of")) << kept.out;
  EXPECT_TRUE(contains(kept.out, "resampled onto this run's 16 x 16")) << kept.out;
  auto const [py, px] = whole.object_pixel_size_m;
  HostComplex3 const expected = resample_probe(whole.probe, {py, px}, 16, 16, {2 * py, 2 * px}, "whole.h5").probe;
  HostComplex3 const start = read_result(file("kept.h5")).probe;
  ASSERT_EQ(start.span(), expected.span());
  std::complex<double> ab = 0, aa = 0;  // the best scale of the start onto the expected probe
  for (std::size_t k = 0; k < start.span(); ++k) {
    std::complex<double> const a(start.data()[k].real(), start.data()[k].imag()),
        b(expected.data()[k].real(), expected.data()[k].imag());
    ab += std::conj(a) * b;
    aa += std::norm(a);
  }
  double diff = 0, norm = 0;
  for (std::size_t k = 0; k < start.span(); ++k) {
    std::complex<double> const a(start.data()[k].real(), start.data()[k].imag()),
        b(expected.data()[k].real(), expected.data()[k].imag());
    diff += std::norm(ab / aa * a - b);
    norm += std::norm(b);
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-5);

  ok(with({"-o", "warm.h5", "--epochs", "3", "--probe", "whole.h5", "-q"}));
  ok(with({"-o", "cold.h5", "--epochs", "3", "-q"}));
  double const warm = read_result(file("warm.h5")).cost.back(), cold = read_result(file("cold.h5")).cost.back();
  EXPECT_LT(warm, 0.5 * cold) << "cost after 3 epochs from the resampled probe " << warm << ", from a computed one "
                             << cold;
}

// A probe computed from the data starts on the side of the focus and at the
// diameter that a few rPIE epochs from each start choose
// (core/probe_focus.hpp): reported, and kept in the stored configuration;
// --probe-focus names the side (the trial then tries diameters only), and
// with --probe-diameter too there is no trial. The simulated beam diverges (the sample downstream of the
// focus), so the named upstream start is the true probe's twin and fits the
// data worse (measured: trial costs 24450 upstream, 9381 downstream; after
// 5 epochs 23926 from upstream against 6090).
TEST_F(Run, ProbeFocusIsChosenByTheData) {
  ok({"simulate", "-o", "diverging.cxi", "--frames", "100", "--detector", "32", "--modes", "1", "--diverging"});
  std::vector<std::string> const run = {"reconstruct", "diverging.cxi", "--epochs", "5", "--no-images"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = run;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Outcome const chosen = ok(with({"-o", "auto.h5"}));
  EXPECT_TRUE(contains(chosen.out, "computed probe downstream of the focus")) << chosen.out;
  ResultContents const automatic = read_result(file("auto.h5"));
  EXPECT_TRUE(contains(automatic.config, "focus = \"downstream\"")) << automatic.config;
  EXPECT_FALSE(contains(automatic.config, "diameter = 0.0")) << automatic.config;  // the chosen one
  Outcome const named = ok(with({"-o", "up.h5", "--probe-focus", "upstream"}));
  EXPECT_TRUE(contains(named.out, "computed probe upstream of the focus")) << named.out;
  EXPECT_FALSE(contains(named.out, "downstream")) << named.out;
  ResultContents const upstream = read_result(file("up.h5"));
  EXPECT_TRUE(contains(upstream.config, "focus = \"upstream\"")) << upstream.config;
  EXPECT_GT(upstream.cost.back(), 2 * automatic.cost.back());
  ok(with({"-o", "down.h5", "--probe-focus", "downstream"}));
  expect_same_result(file("down.h5"), file("auto.h5"), 0);  // the trial leaves nothing behind
  // The stored configuration repeats the run without a trial.
  std::ofstream(file("auto.toml")) << automatic.config;
  Outcome const again = ok({"reconstruct", "--config", "auto.toml", "-o", "again.h5"});
  EXPECT_FALSE(contains(again.out, "computed probe")) << again.out;
  expect_same_result(file("again.h5"), file("auto.h5"), 0);
}

// A scan of more frames than --probe-focus-frames tries a compact part of
// each rank's frames (at least 64 of each): one rank 64 of 200, two ranks
// 64 each. Measured: trial costs 18288 upstream, 8248 downstream on one
// rank; 22189 and 8356 on two.
TEST_F(Run, ProbeFocusTrialOnAPartOfALargerScan) {
  ok({"simulate", "-o", "diverging.cxi", "--frames", "200", "--detector", "32", "--modes", "1", "--diverging"});
  for (int ranks : {0, 2}) {
    Outcome const o = ok({"reconstruct", "diverging.cxi", "-o", "part.h5", "--epochs", "1", "--no-images",
                          "--probe-focus-frames", "64"},
                         ranks);
    SCOPED_TRACE(ranks);
    EXPECT_TRUE(contains(o.out, "computed probe downstream of the focus")) << o.out;
    EXPECT_TRUE(contains(o.out, ranks ? "on 128 of 200 frames" : "on 64 of 200 frames")) << o.out;
    EXPECT_TRUE(contains(read_result(file("part.h5")).config, "focus_frames = 64"));
  }
}

// A dark frame and a monitor in the file (as PyNX writes them) are applied
// and reported; a frame without beam by its monitor is skipped; --no-dark
// and --no-monitor leave the frames as stored.
TEST_F(Run, DarkFrameAndMonitorOfTheFile) {
  auto t = simulated();
  t.write(file("pynx.cxi"));
  {
    h5::Handle id(H5Fopen(file("pynx.cxi").c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    std::vector<double> dark(t.d * t.d, 1.0), monitor(t.n, 1e5);
    monitor[3] = 10;
    hsize_t const dd[2] = {t.d, t.d}, md[1] = {t.n};
    h5::Handle ds(H5Screate_simple(2, dd, nullptr)), ms(H5Screate_simple(1, md, nullptr));
    h5::Handle d(H5Dcreate2(id, "/entry_1/instrument_1/detector_1/dark", H5T_IEEE_F64LE, ds, H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT));
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, dark.data());
    h5::Handle m(H5Dcreate2(id, "/entry_1/data_1/monitor", H5T_IEEE_F64LE, ms, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT));
    H5Dwrite(m, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, monitor.data());
  }
  auto const info = ok({"info", "pynx.cxi"});
  EXPECT_TRUE(contains(info.out, "dark frame             subtracted from every frame")) << info.out;
  EXPECT_TRUE(contains(info.out, "1 frame(s) below a tenth of it: skipped")) << info.out;
  auto const used = ok({"reconstruct", "pynx.cxi", "-o", "used.h5", "--epochs", "1", "-q", "--no-images"});
  EXPECT_TRUE(contains(used.err, "1 of 20 frames hold no counts (frame 3)")) << used.err;
  auto const plain = ok({"reconstruct", "pynx.cxi", "-o", "plain.h5", "--epochs", "1", "-q", "--no-images",
                         "--no-dark", "--no-monitor"});
  EXPECT_FALSE(contains(plain.err, "hold no counts")) << plain.err;
  EXPECT_TRUE(contains(read_result(file("plain.h5")).config, "dark = false")) << read_result(file("plain.h5")).config;
}

TEST_F(Run, SkipsEmptyFramesWithAWarning) {
  auto t = simulated();
  for (std::size_t f : {3, 11})
    for (std::size_t k = 0; k < t.d * t.d; ++k) t.frames[f * t.d * t.d + k] = 0;
  t.write(file("gaps.cxi"));
  auto const o = ok({"reconstruct", "gaps.cxi", "-o", "out.h5", "--epochs", "2", "--no-images"});
  EXPECT_TRUE(contains(o.err, "gaps.cxi: 2 of 20 frames hold no counts (frames 3, 11): they are skipped")) << o.err;
  EXPECT_TRUE(contains(o.out, "18 frames of 16x16")) << o.out;
  ResultContents const r = read_result(file("out.h5"));
  ASSERT_EQ(r.cost.size(), 2u);
  EXPECT_TRUE(std::isfinite(r.cost.back()));
  EXPECT_EQ(r.positions_px.size(), 20u);  // the file's positions, as stored
  // The same at 2 ranks, with either strategy (neighbour-consensus ranks
  // keep their tiles' origins when frames are dropped: a rank that lost it
  // planned other overlap tiles than its neighbour, and MPI stopped the job
  // with a truncated message).
  for (char const* strategy : {"full-sync", "neighbor"}) {
    ok({"reconstruct", "gaps.cxi", "-o", "out2.h5", "--epochs", "2", "--no-images", "-q", "--strategy", strategy}, 2);
    expect_same_result(file("out2.h5"), file("out.h5"), 1e-4);
  }
  // A scan large enough for the ranks' tiles to sit on the object tile grid
  // (where each batch exchanges only its own tiles).
  t = simulated(120, 16);
  for (std::size_t k = 0; k < t.d * t.d; ++k) t.frames[7 * t.d * t.d + k] = 0;
  t.write(file("large.cxi"));
  ok({"reconstruct", "large.cxi", "-o", "one.h5", "--epochs", "2", "--no-images", "-q"});
  ok({"reconstruct", "large.cxi", "-o", "two.h5", "--epochs", "2", "--no-images", "-q", "--strategy", "neighbor"}, 2);
  expect_same_result(file("two.h5"), file("one.h5"), 1e-4);
  // Refined positions of the kept frames only: the neighbour's stitching
  // footprints follow them (a first version expected one per frame of the
  // partition, the skipped ones included, and stopped the run).
  ok({"reconstruct", "large.cxi", "-o", "moved.h5", "--epochs", "3", "--no-images", "-q", "--refine-positions",
      "--refine-start", "1"}, 2);
}

// Frames whose translations hold NaN (encoders that missed a reading) are
// skipped like empty frames: the run is that of the file without them. A
// NaN z, which 2D ptychography does not use, is no reason to skip.
TEST_F(Run, SkipsFramesWithoutAPosition) {
  auto t = simulated();
  t.translations[3 * 7 + 2] = std::nan("");
  TestCxi without = t;
  t.translations[3 * 3 + 0] = std::nan("");
  t.translations[3 * 11 + 1] = std::numeric_limits<double>::infinity();
  t.write(file("nan.cxi"));
  without.n = 18;
  without.frames.clear();
  without.translations.clear();
  for (std::size_t f = 0; f < t.n; ++f) {
    if (f == 3 || f == 11) continue;
    without.frames.insert(without.frames.end(), t.frames.begin() + f * t.d * t.d, t.frames.begin() + (f + 1) * t.d * t.d);
    without.translations.insert(without.translations.end(), t.translations.begin() + 3 * f,
                                t.translations.begin() + 3 * (f + 1));
  }
  without.write(file("without.cxi"));
  auto const info = ok({"info", "nan.cxi"});
  EXPECT_TRUE(contains(info.out, "unplaced frames        2 (their translations are not finite")) << info.out;
  auto const o = ok({"reconstruct", "nan.cxi", "-o", "nan.h5", "--epochs", "3", "--no-images"});
  EXPECT_TRUE(contains(o.err, std::string("nan.cxi: 2 of 20 frames have no position (") + k_translation +
                                  " holds NaN or infinite translations) (frames 3, 11): they are skipped"))
      << o.err;
  EXPECT_TRUE(contains(o.out, "18 frames of 16x16")) << o.out;
  ok({"reconstruct", "without.cxi", "-o", "without.h5", "--epochs", "3", "--no-images", "-q"});
  expect_same_result(file("nan.h5"), file("without.h5"), 1e-6);
  EXPECT_EQ(read_result(file("nan.h5")).positions_px.size(), 20u);
  ok({"reconstruct", "nan.cxi", "-o", "two.h5", "--epochs", "3", "--no-images", "-q", "--strategy", "neighbor"}, 2);
  expect_same_result(file("two.h5"), file("without.h5"), 1e-4);
  // A resumed run finds the same stand-in positions as the checkpoint.
  ok({"reconstruct", "nan.cxi", "-o", "more.h5", "--epochs", "4", "--no-images", "-q", "--resume", "nan.h5"});
}

TEST_F(Run, WarnsAboutLowOverlap) {
  // Steps of 10 pixels with a probe about 7 pixels across: no overlap.
  simulated(12, 16, 1e5, 10, true).write(file("sparse_guess.cxi"));
  auto const g = ok({"reconstruct", "sparse_guess.cxi", "-o", "out.h5", "--epochs", "1", "-q", "--no-images"});
  EXPECT_TRUE(contains(g.err, "sparse_guess.cxi: the scan overlap is only")) << g.err;
  EXPECT_TRUE(contains(g.err, "probe guess")) << g.err;
  // Without a guess, from the reconstructed probe at the end.
  simulated(12, 16, 1e5, 10, false).write(file("sparse.cxi"));
  auto const r = ok({"reconstruct", "sparse.cxi", "-o", "out.h5", "--epochs", "1", "-q", "--no-images",
                     "--probe-diameter", "5"});
  EXPECT_TRUE(contains(r.err, "sparse.cxi: the scan overlap is only")) << r.err;
  EXPECT_TRUE(contains(r.err, "reconstructed probe")) << r.err;
  // A well-overlapped scan says nothing.
  auto const quiet = ok({"reconstruct", "scan.cxi", "-o", "out.h5", "--epochs", "1", "-q", "--no-images"});
  EXPECT_EQ(quiet.err, "");
}

// The closing line compares the final cost with what counting noise alone
// leaves (core/noise_floor.hpp); a run whose model misses the frames (here
// the x translations negated: a geometry error) is warned about. Measured
// (100 frames of 32 x 32, 50 LSQML epochs): 0.99 x against 79 x.
TEST_F(Run, WarnsWhenTheModelLeavesTheFramesUnexplained) {
  ok({"simulate", "-o", "noise.cxi", "--frames", "100", "--detector", "32", "--modes", "1"});
  std::vector<std::string> const run = {"reconstruct", "noise.cxi", "-o", "out.h5", "--epochs", "50", "--no-images"};
  auto const good = ok(run);
  std::smatch m;
  std::regex const ratio("final cost [0-9.e+]+ \\(([0-9.]+) x counting noise\\)");
  ASSERT_TRUE(std::regex_search(good.out, m, ratio)) << good.out;
  EXPECT_LT(std::stod(m[1]), 1.5);
  EXPECT_FALSE(contains(good.err, "counting noise")) << good.err;
  std::vector<std::string> flipped = run;
  flipped.push_back("--flip-x");
  auto const wrong = ok(flipped);
  ASSERT_TRUE(std::regex_search(wrong.out, m, ratio)) << wrong.out;
  EXPECT_GT(std::stod(m[1]), 3);
  EXPECT_TRUE(contains(wrong.err, "times what counting noise alone leaves")) << wrong.err;
}

// ------------------------------------------------------------------ checkpoint / resume

TEST_F(Run, ResultHasNoPhaseRampUnlessKept) {
  // DM drifts into a phase ramp the data cannot see; the result is written
  // without it, the checkpoint keeps the run's own state, and
  // --keep-phase-ramp writes that state as the result.
  std::vector<std::string> const common{"reconstruct", "scan.cxi", "--solver", "dm", "--epochs", "8", "-q", "--no-images"};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.begin(), common.begin(), common.end());
    return a;
  };
  ok(with({"-o", "gauge.h5"}));
  ok(with({"-o", "kept.h5", "--keep-phase-ramp"}));
  ResultContents const gauge = read_result(file("gauge.h5"));
  ResultContents const kept = read_result(file("kept.h5"));
  int const H = int(gauge.object.extent(0)), W = int(gauge.object.extent(1));
  PhaseRamp const left = object_phase_ramp(gauge.object, illumination_map(gauge.probe, gauge.positions_px, H, W));
  EXPECT_LT(std::hypot(left.y_rad_per_px, left.x_rad_per_px), 1e-6);
  // The same run: its state is the kept result, and the kept result without
  // its ramp is the written one.
  Checkpoint const state = read_checkpoint(file("gauge.h5"));
  EXPECT_LT(relative_difference(state.result.object, kept.object), 1e-7);
  EXPECT_LT(relative_difference(state.result.probe, kept.probe), 1e-7);
  PhaseRamp const removed = remove_object_phase_ramp(kept.object, kept.probe, kept.positions_px);
  EXPECT_GT(std::hypot(removed.y_rad_per_px, removed.x_rad_per_px), 1e-6);
  EXPECT_LT(relative_difference(kept.object, gauge.object), 1e-5);
  EXPECT_LT(relative_difference(kept.probe, gauge.probe), 1e-5);
}

TEST_F(Run, ResumeMatchesUninterruptedRun) {
  for (std::string solver : {"rpie", "lsqml"}) {
    std::vector<std::string> common{"--solver", solver, "-q", "--no-images"};
    auto with = [&](std::vector<std::string> a) {
      a.insert(a.end(), common.begin(), common.end());
      return a;
    };
    ok(with({"reconstruct", "scan.cxi", "-o", "full.h5", "--epochs", "6"}));
    ok(with({"reconstruct", "scan.cxi", "-o", "part.h5", "--epochs", "3", "--checkpoint-every", "2"}));
    EXPECT_EQ(read_checkpoint(file("part.h5")).epoch, 3);
    // The checkpoint was made with -q; this terminal asked for progress.
    auto const resumed = ok({"reconstruct", "--resume", "part.h5", "--epochs", "6"});
    EXPECT_TRUE(contains(resumed.out, "epoch    6/6")) << resumed.out;
    expect_same_result(file("part.h5"), file("full.h5"), 1e-6);
    // A finished run has nothing more to do.
    auto const again = ok({"reconstruct", "--resume", "part.h5"});
    EXPECT_TRUE(contains(again.err, "nothing to do")) << again.err;
  }
}

// A checkpoint stores its solver's options resolved (DM: batch 64, beta 1,
// no momentum). Resumed with another solver (DM, then LSQML, as PyNX's
// "DM**100, ML**40"), the run takes that solver's defaults for the options
// not given again, exactly as if they were given; options given on the
// command line stay, and the same solver keeps the checkpoint's.
TEST_F(Run, ResumeWithAnotherSolverTakesItsDefaults) {
  std::vector<std::string> const quiet{"-q", "--no-images"};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), quiet.begin(), quiet.end());
    return a;
  };
  ok(with({"reconstruct", "scan.cxi", "-o", "dm.h5", "--solver", "dm", "--epochs", "3"}));
  for (auto const* name : {"lsqml.h5", "explicit.h5", "beta.h5"}) fs::copy_file(file("dm.h5"), file(name));
  auto const switched =
      ok({"reconstruct", "--resume", "lsqml.h5", "--solver", "lsqml", "--epochs", "6", "--no-images"});
  EXPECT_TRUE(contains(switched.out, "the checkpoint ran dm; lsqml continues it")) << switched.out;
  std::string const config = read_result(file("lsqml.h5")).config;
  for (auto const* line : {"name = \"lsqml\"", "batch_size = 8", "alpha = 0.1", "beta = 0.1", "momentum = 0.9",
                           "update_start = 0"})
    EXPECT_TRUE(contains(config, std::string("\n") + line + "\n")) << line << " in\n" << config;
  ok(with({"reconstruct", "--resume", "explicit.h5", "--solver", "lsqml", "--epochs", "6", "--batch-size", "8",
           "--alpha", "0.1", "--beta", "0.1", "--momentum", "0.9", "--probe-update-start", "0"}));
  expect_same_result(file("lsqml.h5"), file("explicit.h5"), 0);
  // A flag given with the switch is kept.
  ok(with({"reconstruct", "--resume", "beta.h5", "--solver", "lsqml", "--epochs", "4", "--beta", "0.3"}));
  EXPECT_TRUE(contains(read_result(file("beta.h5")).config, "\nbeta = 0.3\n"));
  // The same solver continues with the checkpoint's options.
  ok(with({"reconstruct", "scan.cxi", "-o", "b4.h5", "--solver", "lsqml", "--epochs", "2", "--batch-size", "4"}));
  auto const same = ok({"reconstruct", "--resume", "b4.h5", "--epochs", "3", "--no-images"});
  EXPECT_FALSE(contains(same.out, "the checkpoint ran")) << same.out;
  EXPECT_TRUE(contains(read_result(file("b4.h5")).config, "\nbatch_size = 4\n"));
}

// --modes on resume adds modes to the checkpoint's probe or drops the
// weakest, keeping its power (the model's counts): the first resumed epoch's
// cost stays near the checkpoint's last. --probe on resume is not used, and
// says so.
TEST_F(Run, ResumeWithOtherModesAndProbe) {
  ok({"reconstruct", "scan.cxi", "-o", "one.h5", "--modes", "1", "--epochs", "6", "-q", "--no-images"});
  fs::copy_file(file("one.h5"), file("three.h5"));
  double const last = read_result(file("one.h5")).cost.back();
  auto const added = ok({"reconstruct", "--resume", "three.h5", "--modes", "3", "--epochs", "7", "--no-images"});
  EXPECT_TRUE(contains(added.out, "the checkpoint's probe has 1 mode(s); 2 added")) << added.out;
  ResultContents const three = read_result(file("three.h5"));
  ASSERT_EQ(three.probe.extent(0), 3u);
  ASSERT_EQ(three.cost.size(), 7u);
  EXPECT_LT(three.cost[6], 1.2 * last);
  EXPECT_TRUE(contains(three.config, "\nmodes = 3\n"));

  fs::copy_file(file("three.h5"), file("two.h5"));
  auto const dropped = ok({"reconstruct", "--resume", "two.h5", "--modes", "2", "--epochs", "8", "--no-images"});
  EXPECT_TRUE(contains(dropped.out, "the checkpoint's probe has 3 mode(s); the weakest 1 dropped")) << dropped.out;
  ResultContents const two = read_result(file("two.h5"));
  ASSERT_EQ(two.probe.extent(0), 2u);
  EXPECT_LT(two.cost[7], 1.2 * three.cost[6]);

  ok({"reconstruct", "scan.cxi", "-o", "other.h5", "--epochs", "1", "-q", "--no-images"});
  auto const probe = ok({"reconstruct", "--resume", "two.h5", "--probe", "other.h5", "--epochs", "9", "-q"});
  EXPECT_TRUE(contains(probe.err, "--probe other.h5: not used: a resumed run continues the probe")) << probe.err;
  EXPECT_FALSE(contains(read_result(file("two.h5")).config, "other.h5"));
}

TEST_F(Run, ResumeAtTwoRanksAndFromTwoRanksToOne) {
  std::vector<std::string> const common{"--solver", "lsqml", "-q", "--no-images"};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), common.begin(), common.end());
    return a;
  };
  ok(with({"reconstruct", "scan.cxi", "-o", "full2.h5", "--epochs", "6"}), 2);
  ok(with({"reconstruct", "scan.cxi", "-o", "part2.h5", "--epochs", "3"}), 2);
  fs::copy_file(file("part2.h5"), file("part1.h5"));
  ok({"reconstruct", "--resume", "part2.h5", "--epochs", "6"}, 2);
  expect_same_result(file("part2.h5"), file("full2.h5"), 1e-6);
  // 2 ranks -> 1 rank, and -> the neighbor strategy at 2 ranks.
  fs::copy_file(file("part1.h5"), file("part_nb.h5"));
  ok({"reconstruct", "--resume", "part1.h5", "--epochs", "6"});
  expect_same_result(file("part1.h5"), file("full2.h5"), 1e-4);
  ok({"reconstruct", "--resume", "part_nb.h5", "--epochs", "6", "--strategy", "neighbor"}, 2);
  expect_same_result(file("part_nb.h5"), file("full2.h5"), 1e-4);
}

TEST_F(Run, InterruptedRunResumesToTheSameResult) {
  pid_t const pid = start({"reconstruct", "scan.cxi", "-o", "stopped.h5", "--solver", "rpie", "--epochs", "100000",
                           "--no-images", "--error-every", "0"});
  ASSERT_TRUE(wait_for_output("epoch    2/"));
  ::kill(pid, SIGINT);
  Outcome const o = finish(pid);
  EXPECT_EQ(o.code, 130) << o.err;
  EXPECT_TRUE(contains(o.err, "stopped by SIGINT after epoch")) << o.err;
  EXPECT_TRUE(contains(o.err, "resume with: " + ptyko_exe() + " reconstruct --resume stopped.h5")) << o.err;
  int const stopped = read_checkpoint(file("stopped.h5")).epoch;
  EXPECT_GE(stopped, 2);
  int const epochs = std::max(stopped + 3, 20);
  ok({"reconstruct", "--resume", "stopped.h5", "--epochs", std::to_string(epochs)});
  ok({"reconstruct", "scan.cxi", "-o", "full.h5", "--solver", "rpie", "--epochs", std::to_string(epochs),
      "--no-images", "-q"});
  expect_same_result(file("stopped.h5"), file("full.h5"), 1e-6);
}

// Only one of two ranks hears the signal (SIGUSR1, what Open MPI's mpiexec
// forwards): both stop after the same epoch, with one checkpoint.
TEST_F(Run, StopIsCollective) {
  pid_t const pid = start({"reconstruct", "scan.cxi", "-o", "stopped.h5", "--solver", "lsqml", "--epochs", "100000",
                           "--no-images", "--error-every", "0"},
                          2);
  ASSERT_TRUE(wait_for_output("epoch    2/"));
  auto const ranks = descendants_named(pid, "ptyko");
  ASSERT_EQ(ranks.size(), 2u);
  ::kill(ranks.back(), SIGUSR1);
  Outcome const o = finish(pid);
  EXPECT_NE(o.code, 0);
  EXPECT_TRUE(contains(o.err, "stopped by SIGUSR1 after epoch")) << o.err;
  EXPECT_TRUE(contains(o.err, "resume with: mpiexec -n 2 ")) << o.err;
  int const stopped = read_checkpoint(file("stopped.h5")).epoch;
  int const epochs = std::max(stopped + 3, 12);
  ok({"reconstruct", "--resume", "stopped.h5", "--epochs", std::to_string(epochs), "-q"}, 2);
  ok({"reconstruct", "scan.cxi", "-o", "full.h5", "--solver", "lsqml", "--epochs", std::to_string(epochs),
      "--no-images", "-q"},
     2);
  expect_same_result(file("stopped.h5"), file("full.h5"), 1e-6);
}

// Rank 0 fails in the middle of the run (its output folder disappears before
// a checkpoint) while rank 1 computes: the job ends with the message, no hang.
TEST_F(Run, FailingRankStopsTheJob) {
  fs::create_directories(file("results"));
  pid_t const pid = start({"reconstruct", "scan.cxi", "-o", "results/out.h5", "--epochs", "100000",
                           "--checkpoint-every", "1", "--no-images"},
                          2);
  ASSERT_TRUE(wait_for_output("epoch    2/"));
  // ptyko may create its next checkpoint temporary in the folder while it is
  // being removed ("Directory not empty"): try again until it is gone.
  std::error_code ec;
  for (int k = 0; k < 1000 && fs::exists(file("results")); ++k) fs::remove_all(file("results"), ec);
  EXPECT_FALSE(fs::exists(file("results"))) << ec.message();
  Outcome const o = finish(pid);
  EXPECT_NE(o.code, 0);
  // The folder vanishes before or while the checkpoint is written.
  EXPECT_TRUE(contains(o.err, "ptyko: error: results/out.h5")) << o.err;
}

// ------------------------------------------------------------------ several views

TEST_F(Run, SeveralViewsStillWork) {
  fs::copy_file(file("scan.cxi"), file("other.cxi"));
  ok({"reconstruct", "scan.cxi", "other.cxi", "-o", "views", "--epochs", "2", "-q", "--no-images"});
  expect_same_result(file("views/scan.h5"), file("views/other.h5"), 1e-6);
}

}  // namespace
