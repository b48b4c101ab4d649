#pragma once
// Helpers for tests that run the `ptyko` executable as a user would: its path
// comes from CMake (PTYKO_EXE), mpiexec's from PTYKO_MPIEXEC,
// PTYKO_MPIEXEC_NUMPROC_FLAG and PTYKO_MPIEXEC_FLAGS. Each test gets a fresh
// folder (TempDirTest); files are written with core's CXI/HDF5 layer.

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/core/result_file.hpp>
#include <ptyko/core/simulate.hpp>

#include <gtest/gtest.h>

#include <cxi_paths.hpp>
#include <test_files.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace ptyko::test {

namespace fs = std::filesystem;

inline std::string env_or(char const* name, std::string const& fallback) {
  char const* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

inline std::string ptyko_exe() { return env_or("PTYKO_EXE", "ptyko"); }

inline std::string shell_quote(std::string const& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// `[mpiexec -n ranks FLAGS] [wrapper] ptyko args...` as a shell command
/// (ranks 0: no mpiexec; `wrapper`, e.g. "taskset -c 0", runs each rank).
inline std::string ptyko_command(std::vector<std::string> const& args, int ranks = 0,
                                 std::string const& wrapper = "") {
  std::string cmd;
  if (ranks > 0)
    cmd = env_or("PTYKO_MPIEXEC", "mpiexec") + " " + env_or("PTYKO_MPIEXEC_NUMPROC_FLAG", "-n") + " " +
          std::to_string(ranks) + " " + env_or("PTYKO_MPIEXEC_FLAGS", "--oversubscribe") + " ";
  if (!wrapper.empty()) cmd += wrapper + " ";
  cmd += shell_quote(ptyko_exe());
  for (auto const& a : args) cmd += " " + shell_quote(a);
  return cmd;
}

inline std::string read_text(fs::path const& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines_of(std::string const& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

inline bool contains(std::string const& text, std::string const& part) { return text.find(part) != std::string::npos; }

struct Outcome {
  int code = -1;
  std::string out, err;
};

/// Every file under a folder: size, modification time and a content hash.
using Snapshot = std::map<std::string, std::array<std::uint64_t, 3>>;

inline Snapshot snapshot(fs::path const& dir) {
  Snapshot s;
  for (auto const& e : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    ::stat(e.path().c_str(), &st);
    std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a
    if (e.is_regular_file())
      for (unsigned char c : read_text(e.path())) hash = (hash ^ c) * 1099511628211ULL;
    std::uint64_t const mtime = std::uint64_t(st.st_mtim.tv_sec) * 1000000000ULL + std::uint64_t(st.st_mtim.tv_nsec);
    s[fs::relative(e.path(), dir).string()] = {std::uint64_t(st.st_size), mtime, hash};
  }
  return s;
}

/// A fresh folder per test (`m_dir`, TempDirTest), with the runs'
/// stdout/stderr kept apart in a sibling folder so that they do not count as
/// outputs. Both are kept after a failure.
class DriverTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    m_io = m_dir.string() + ".io";
    remove_folder(m_io);
    fs::create_directories(m_io);
    // Open MPI as root, more ranks than cores, containers without CMA.
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
    ::setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
    ::setenv("OMP_NUM_THREADS", "1", 1);
  }
  void TearDown() override {
    if (!HasFailure()) remove_folder(m_io);
    TempDirTest::TearDown();
  }

  /// Runs ptyko in `dir` and waits (each rank through `wrapper`, if any).
  Outcome run(std::vector<std::string> const& args, int ranks = 0, std::string const& wrapper = "") const {
    std::string const cmd = "cd " + shell_quote(m_dir.string()) + " && " + ptyko_command(args, ranks, wrapper) + " >" +
                            shell_quote((m_io / "stdout").string()) + " 2>" + shell_quote((m_io / "stderr").string());
    int const status = std::system(cmd.c_str());
    Outcome o;
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    o.out = read_text(m_io / "stdout");
    o.err = read_text(m_io / "stderr");
    return o;
  }

  /// `ptyko reconstruct INPUT -o OUT` for 60 epochs of one probe mode (the
  /// refinement tests' runs) plus `extra`; expects success, returns the result.
  ResultContents reconstruct(std::string const& input, std::string const& out, std::vector<std::string> extra,
                             int ranks = 0, std::string const& solver = "lsqml") const {
    std::vector<std::string> args = {"reconstruct", input, "-o", out, "--solver", solver, "--epochs", "60",
                                     "--modes", "1", "--no-images", "-q", "--error-every", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome const o = run(args, ranks);
    EXPECT_EQ(o.code, 0) << o.err;
    return read_result(file(out));
  }

  /// Runs ptyko on bad input and checks what the issue asks: exit code 2, one
  /// error line naming everything in `phrases`, no file in the folder changed
  /// (the input untouched) and none added (no output, no temporary, no
  /// picture). With mpiexec (`ranks` > 0) the MPI library may add its own
  /// lines; ptyko's message must then appear exactly once.
  Outcome expect_rejected(std::vector<std::string> const& args, std::vector<std::string> const& phrases,
                          int ranks = 0) const {
    Snapshot const before = snapshot(m_dir);
    Outcome const o = run(args, ranks);
    EXPECT_EQ(o.code, 2) << "stderr: " << o.err;
    std::vector<std::string> errors;
    for (auto const& l : lines_of(o.err))
      if (l.rfind("ptyko: error: ", 0) == 0) errors.push_back(l);
    EXPECT_EQ(errors.size(), 1u) << "stderr: " << o.err;
    if (ranks == 0) EXPECT_EQ(lines_of(o.err).size(), 1u) << "stderr: " << o.err;
    std::string const msg = errors.empty() ? std::string() : errors.front();
    for (auto const& p : phrases) EXPECT_TRUE(contains(msg, p)) << "'" << p << "' not in: " << msg;
    Snapshot const after = snapshot(m_dir);
    EXPECT_EQ(before, after) << "files changed or appeared in " << m_dir;
    return o;
  }

  fs::path m_io;
};

// ------------------------------------------------------------------ files

// CXI dataset paths: cxi_paths.hpp.

/// A small simulated dataset that a test can break in one place, then write
/// through the h5:: layer (so that it can also write what cxi_write refuses).
struct TestCxi {
  std::size_t n = 0, d = 0;
  std::vector<float> frames;                    ///< (n, d, d), centred
  std::vector<double> translations;             ///< (n, 3)
  std::vector<std::size_t> data_dims;           ///< default (n, d, d)
  std::vector<std::size_t> translation_dims;    ///< default (n, 3)
  std::string data_type = "float32";
  std::optional<double> energy, wavelength, distance, pixel_size;
  std::vector<Complex<double>> illumination;    ///< probe guess, empty: none
  std::vector<std::size_t> illumination_dims;
  bool with_data = true, with_translations = true;

  float& at(std::size_t f, std::size_t i, std::size_t j) { return frames[(f * d + i) * d + j]; }

  void write(std::string const& path) const {
    auto f = h5::File::create(path);
    if (with_data) {
      auto dims = data_dims.empty() ? std::vector<std::size_t>{n, d, d} : data_dims;
      h5::write(f, k_detector_data, frames.data(), dims, {}, data_type);
      h5::soft_link(f, k_detector_data, k_data);
    }
    if (with_translations) {
      auto dims = translation_dims.empty() ? std::vector<std::size_t>{n, 3} : translation_dims;
      h5::write(f, k_translation, translations.data(), dims);
    }
    if (energy) h5::write_scalar(f, k_energy, *energy);
    if (wavelength) h5::write_scalar(f, k_wavelength, *wavelength);
    if (distance) h5::write_scalar(f, k_distance, *distance);
    if (pixel_size) h5::write_scalar(f, k_pixel_x, *pixel_size);
    if (!illumination.empty()) h5::write(f, k_illumination, illumination.data(), illumination_dims);
    f.close();
  }
};

/// `frames` positions of a `detector`-pixel simulation (one probe mode,
/// `photons` per frame, `step` pixels apart or 70 % overlap), as a TestCxi.
inline TestCxi simulated(int frames = 20, int detector = 16, double photons = 1e5, double step = 0,
                         bool with_guess = false) {
  SimulationOptions o;
  o.frames = frames;
  o.detector = detector;
  o.modes = 1;
  o.photons = photons;
  o.step_px = step;
  o.seed = 3;
  CxiContents const c = simulate(o);
  TestCxi t;
  t.n = std::size_t(frames);
  t.d = std::size_t(detector);
  t.frames.assign(c.frames.data(), c.frames.data() + c.frames.span());
  for (auto const& tr : c.translations) t.translations.insert(t.translations.end(), tr.begin(), tr.end());
  t.energy = c.geometry.energy_joule();
  t.distance = c.geometry.distance_m;
  t.pixel_size = c.geometry.pixel_size_x_m;
  if (with_guess) {
    auto const& p = c.truth->probe;
    t.illumination.assign(p.data(), p.data() + p.span());
    t.illumination_dims = {p.extent(0), p.extent(1), p.extent(2)};
  }
  return t;
}

}  // namespace ptyko::test
