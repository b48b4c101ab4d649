// `ptyko reconstruct INPUT.cxi -o OUT.h5`: solver and parallel strategy
// picked at run time; one progress line per epoch on rank 0; warnings about
// suspicious data; checkpoints (every K epochs, on SIGINT/SIGTERM/SIGUSR1, at
// the end) from which `--resume` continues.
//
// Errors: everything that depends on the input files and the options is
// checked before the first collective call, and the ranks agree on the
// outcome (agreed() below): a problem seen by one rank only (a frame with NaN
// that only it reads) stops every rank with one message and exit code 2, with
// no hang and no MPI_Abort. An exception later on (inside the epochs) ends in
// main(), which prints it and aborts every rank (MPI_Abort).
//
// Stopping: a signal sets a flag; after each epoch the ranks take the maximum
// of their flags (one all-reduce), so every rank stops after the same epoch,
// writes the checkpoint (the gathered object) and exits with 128 + signal.
// The current epoch is finished first: a checkpoint is only ever written at
// an epoch boundary, where the state is complete (mid-epoch, the solvers'
// sums and DM's exit waves are half updated).

#include "commands.hpp"
#include "run_config.hpp"

#include <ptyko/core/background_refinement.hpp>
#include <ptyko/core/checkpoint.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/frame_stats.hpp>
#include <ptyko/core/illumination.hpp>
#include <ptyko/core/images.hpp>
#include <ptyko/core/metrics.hpp>
#include <ptyko/core/phase_ramp.hpp>
#include <ptyko/core/probe_focus.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/core/result_file.hpp>
#include <ptyko/core/scan.hpp>
#include <ptyko/core/simulate.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/communicator.hpp>
#include <ptyko/parallel/environment.hpp>
#include <ptyko/parallel/strategy.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>

namespace ptyko::drivers {
namespace {

namespace fs = std::filesystem;
using Exec = Kokkos::DefaultExecutionSpace;
using parallel::Communicator;
using parallel::Datatype;
using parallel::ReduceOp;

// ------------------------------------------------------------------ signals

volatile std::sig_atomic_t g_stop_signal = 0;
int g_signal_rank = 0;  // only rank 0 says that it heard the signal

extern "C" void on_stop_signal(int sig) {
  if (g_stop_signal == 0) g_stop_signal = sig;
  if (g_signal_rank == 0) {
    static char const msg[] =
        "\nptyko: stop requested: finishing this epoch, then writing a checkpoint (signal again to stop at once)\n";
    ssize_t const written = ::write(2, msg, sizeof(msg) - 1);  // async-signal-safe
    (void)written;
  }
}

// SIGINT (Ctrl-C), SIGTERM (kill, batch systems) and SIGUSR1 (what Open MPI's
// mpiexec forwards to every rank: it answers SIGINT/SIGTERM by killing the
// ranks after one second) request a stop; a second signal of the same kind
// ends the program at once (SA_RESETHAND restores the default action).
class StopSignals {
 public:
  explicit StopSignals(int rank) {
    g_signal_rank = rank;
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    for (int k = 0; k < 3; ++k) sigaction(k_signals[k], &sa, &m_old[k]);
  }
  ~StopSignals() {
    for (int k = 0; k < 3; ++k) sigaction(k_signals[k], &m_old[k], nullptr);
  }
  StopSignals(StopSignals const&) = delete;
  StopSignals& operator=(StopSignals const&) = delete;

 private:
  static constexpr int k_signals[3] = {SIGINT, SIGTERM, SIGUSR1};
  struct sigaction m_old[3];
};

char const* signal_name(int s) {
  switch (s) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    default: return "a signal";
  }
}

// ------------------------------------------------------------------ output

std::string format_duration(double s) {
  if (!std::isfinite(s)) return "?";
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{:.0f} min {:02.0f} s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f} h {:02.0f} min", std::floor(s / 3600), std::fmod(s / 60, 60));
}

std::string format_bytes(double b) {
  if (b < 1024) return fmt::format("{:.0f} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
  if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / 1024 / 1024);
  return fmt::format("{:.2f} GiB", b / 1024 / 1024 / 1024);
}

std::string shell_quote(std::string const& s) {
  bool safe = !s.empty();
  for (char c : s) safe = safe && (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=:,+@%", c));
  if (safe) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The command that resumes: `[mpiexec -n P] ptyko reconstruct ... --resume PATH`.
std::string resume_command(int ranks, std::vector<std::string> const& args, std::string const& resume) {
  auto const& argv = invocation();
  std::string cmd = ranks > 1 ? fmt::format("mpiexec -n {} ", ranks) : "";
  cmd += shell_quote(argv.empty() ? std::string("ptyko") : argv[0]) + " reconstruct";
  for (auto const& a : args) cmd += " " + shell_quote(a);
  return cmd + " --resume " + shell_quote(resume);
}

// Progress, notes and warnings of one view, on its rank 0: the terminal
// (progress on stdout unless --quiet; warnings and stop notes on stderr) and
// the --log-file (everything, appended).
class Log {
 public:
  Log(bool root, RunConfig const& cfg, std::string label)
      : m_root(root), m_quiet(cfg.quiet), m_prefix(label.empty() ? "" : "[" + label + "] ") {}
  ~Log() {
    if (m_file) std::fclose(m_file);
  }
  Log(Log const&) = delete;
  Log& operator=(Log const&) = delete;

  bool root() const { return m_root; }
  void open(std::string const& path) {
    if (!m_root || path.empty()) return;
    m_file = std::fopen(path.c_str(), "a");
    PTYKO_REQUIRE(m_file != nullptr, "--log-file ", path, ": cannot open it for writing (", std::strerror(errno),
                  ")");
    std::time_t const now = std::time(nullptr);
    char when[64];
    std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    std::string cmd;
    for (auto const& a : invocation()) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
    to_file(fmt::format("# {} {}", when, cmd));
  }
  /// A progress or information line.
  void info(std::string const& line) {
    if (!m_root) return;
    if (!m_quiet) {
      fmt::print("{}{}\n", m_prefix, line);
      std::fflush(stdout);
    }
    to_file(line);
  }
  /// A warning, always shown.
  void warn(std::string const& line) {
    if (!m_root) return;
    fmt::print(stderr, "ptyko: warning: {}{}\n", m_prefix, line);
    std::fflush(stderr);
    to_file("warning: " + line);
  }
  /// A note that must be seen even with --quiet (stop, resume command).
  void note(std::string const& line) {
    if (!m_root) return;
    fmt::print(stderr, "ptyko: {}{}\n", m_prefix, line);
    std::fflush(stderr);
    to_file(line);
  }

 private:
  void to_file(std::string const& line) {
    if (!m_file) return;
    std::fprintf(m_file, "%s%s\n", m_prefix.c_str(), line.c_str());
    std::fflush(m_file);
  }
  bool m_root, m_quiet;
  std::string m_prefix;
  std::FILE* m_file = nullptr;
};

// --mask-above: a pixel that reaches `level` in any frame of any rank is
// bad in all frames (saturated counters, hot pixels, module gaps filled
// with the type's maximum), on every rank alike. Collective.
template <class T, class Exec>
void mask_pixels_reaching(Communicator const& comm, Exec const& space, LocalData<T, Exec>& data, double level,
                          std::string const& input, Log& log) {
  std::vector<float> const local = pixel_maxima(space, data);
  std::vector<double> maxima(local.begin(), local.end());
  comm.allreduce(maxima.data(), maxima.size(), Datatype::float64, ReduceOp::max);
  std::vector<std::uint8_t> bad(maxima.size());
  std::size_t count = 0;
  for (std::size_t k = 0; k < maxima.size(); ++k) count += bad[k] = maxima[k] >= level ? 1 : 0;
  if (count > 0) mask_pixels(space, data, bad);
  double const share = double(count) / double(maxima.size());
  log.info(fmt::format("reconstruct: --mask-above {:g}: {} pixel(s) ({:.2f} %) reach it in some frame: masked", level,
                       count, 100 * share));
  if (share > 0.05)
    log.warn(fmt::format("{}: --mask-above {:g} masks {:.1f} % of the detector: is the level below the real "
                         "intensities? (ptyko info shows the brightest pixel)",
                         input, level, 100 * share));
}

// ------------------------------------------------------------------ agreement

// Runs `f` on every rank of `comm`; when it throws on any rank, every rank
// learns it (two small all-reduces), the lowest failing rank prints its
// message, and every rank throws Exit (2: bad input, 1: internal error).
// `f` must not call collectives: a rank that failed early would miss them.
template <class F>
void agreed(Communicator const& comm, F&& f) {
  int code = 0;
  std::string what;
  try {
    f();
  } catch (UserError const& e) {
    code = 2;
    what = e.what();
  } catch (Exit const&) {
    throw;
  } catch (std::exception const& e) {
    code = 1;
    what = std::string("internal: ") + e.what();
  }
  int worst = code;
  if (comm.size() > 1) comm.allreduce(&worst, 1, Datatype::int32, ReduceOp::max);
  if (worst == 0) return;
  int first = code ? comm.rank() : comm.size();
  if (comm.size() > 1) comm.allreduce(&first, 1, Datatype::int32, ReduceOp::min);
  if (comm.rank() == first) {
    fmt::print(stderr, "ptyko: error: {}\n", what);
    std::fflush(stderr);
  }
  throw Exit{worst};
}

// ------------------------------------------------------------------ checks

// Error of the gathered object against the file's truth (rank 0 only).
class TruthScore {
 public:
  TruthScore(ScanLayout const& layout, Log& log) {
    if (!log.root() || !layout.info.has_truth) return;
    m_truth = cxi_read_truth(layout.info);
    if (!m_truth) return;
    if (layout.info.windowed()) {  // binning alone keeps the object pixel, hence the truth's grid
      log.warn("the file's truth belongs to its whole frames' grid, not to the --crop window's; no error against it "
               "is reported");
      m_truth.reset();
      return;
    }
    auto const& t = *m_truth;
    if (int(t.object.extent(0)) != layout.grid.height || int(t.object.extent(1)) != layout.grid.width) {
      log.warn(fmt::format("the truth object ({} x {}) is not on the reconstruction grid ({} x {}); no error "
                           "against it is reported",
                           t.object.extent(0), t.object.extent(1), layout.grid.height, layout.grid.width));
      m_truth.reset();
      return;
    }
    m_illumination = illumination_map(t.probe, t.positions_px, layout.grid.height, layout.grid.width);
  }
  bool active() const { return m_truth.has_value(); }
  double error(HostComplex2 const& object) const { return object_error(object, m_truth->object, m_illumination).nrmse; }

 private:
  std::optional<CxiTruth> m_truth;
  HostRealImage m_illumination;
};

// The object tile and the solvers' object-sized work arrays must fit: an
// absurd scan extent (wrong units) fails here, before any allocation.
void check_object_memory(ScanLayout const& layout, parallel::Decomposition const& d, std::size_t real_bytes) {
  double const area = double(d.tile_height) * double(d.tile_width);
  // object + two complex sums + two real weights (the "all" illumination)
  double const bytes = area * double(real_bytes) * (3 * 2 + 2);
  long const pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  double const memory = double(pages) * double(page);
  PTYKO_REQUIRE(bytes < 0.5 * memory, layout.info.path, ": ", layout.info.translation_path, ": the scan spans an ",
                layout.grid.height, " x ", layout.grid.width, " pixel object, which needs about ",
                fmt::format("{:.1f}", bytes / (1 << 30)), " GiB per rank, more than half of this machine's ",
                fmt::format("{:.1f}", memory / (1 << 30)),
                " GiB: check the translations' units (metres) and the geometry (energy, distance, pixel size), "
                "or run on more ranks with --strategy neighbor (the default)");
}

// A checkpoint fits this input: same object grid, probe size and positions.
void check_checkpoint_matches(Checkpoint const& c, ScanLayout const& layout, std::string const& path) {
  auto const& r = c.result;
  bool same = int(r.object.extent(0)) == layout.grid.height && int(r.object.extent(1)) == layout.grid.width &&
              int(r.probe.extent(1)) == layout.info.ny && r.positions_px.size() == layout.positions_px.size();
  // A run that refined its positions kept the file's apart.
  auto const& given = r.file_positions_px.empty() ? r.positions_px : r.file_positions_px;
  same = same && given.size() == layout.positions_px.size() &&
         (r.relative_flux.empty() || r.relative_flux.size() == layout.positions_px.size());
  for (std::size_t n = 0; same && n < given.size(); ++n)
    same = std::abs(given[n][0] - layout.positions_px[n][0]) < 1e-6 &&
           std::abs(given[n][1] - layout.positions_px[n][1]) < 1e-6;
  PTYKO_REQUIRE(same, path, ": this checkpoint (object ", r.object.extent(0), " x ", r.object.extent(1), ", ",
                r.positions_px.size(), " positions) does not belong to ", layout.info.path, " (object ",
                layout.grid.height, " x ", layout.grid.width, ", ", layout.positions_px.size(),
                " positions) with these position options: resume with the input and --flip/--swap options it was "
                "made with");
}

std::string frame_list(std::vector<std::size_t> const& ids) {
  std::string s;
  for (std::size_t k = 0; k < ids.size() && k < 8; ++k) s += (k ? ", " : "") + std::to_string(ids[k]);
  if (ids.size() > 8) s += fmt::format(", ... ({} more)", ids.size() - 8);
  return s;
}

// What the file says about its detector that ptyko does not act on: a
// detector turned about the beam (ptyko turns frames by whole quarters
// only), and a direct beam (corner_position) away from the centre the
// frames are read around.
template <class Log>
void warn_detector_placement(Log& log, std::string const& input, CxiInfo const& info) {
  if (info.orientation.rotation_deg > 1.0)
    log.warn(fmt::format("{}: basis_vectors turn the detector {:.1f} degrees about the beam; the frames are read "
                         "along the nearest axes and this rotation is not corrected",
                         input, info.orientation.rotation_deg));
  if (!info.beam_from_corner) return;
  auto const [by, bx] = *info.beam_from_corner;
  int const wy = info.ny * info.bin, wx = info.nx * info.bin;
  double const cy = info.window_y + wy / 2, cx = info.window_x + wx / 2;
  bool const on_detector = by >= 0 && bx >= 0 && by <= info.stored_ny - 1 && bx <= info.stored_nx - 1;
  if (on_detector && std::hypot(by - cy, bx - cx) > 2.0)
    log.warn(fmt::format("{}: corner_position puts the direct beam at stored pixel (y, x) = ({:.1f}, {:.1f}), but "
                         "the frames are read around ({:.0f}, {:.0f}); if the diffraction is centred on the beam, "
                         "give --crop N --crop-centre-y {:.0f} --crop-centre-x {:.0f} (`ptyko info` shows the "
                         "intensity centre)",
                         input, by, bx, cy, cx, std::round(by), std::round(bx)));
}

// A scan whose steps leave less than 50 % overlap between neighbouring
// footprints of `probe` (the guess, or the reconstructed one when there was
// none): `which` names that probe, `risk` what follows.
template <class Log>
void warn_low_overlap(Log& log, std::string const& input, double step, HostComplex3 const& probe, char const* which,
                      char const* risk) {
  double const d = probe_diameter_px(probe);
  double const overlap = overlap_ratio(step, d);
  if (overlap < 0.5)
    log.warn(fmt::format("{}: the scan overlap is only {:.0f} % (step {:.3g} px, {} {:.3g} px across): below 50 % "
                         "{}; scan with smaller steps",
                         input, 100 * overlap, step, which, d, risk));
}

// ------------------------------------------------------------------ one view

struct ViewJob {
  std::string input, output;
  std::string resume;  ///< checkpoint to continue from ("" to start afresh)
  std::string label;   ///< prefix of the messages when several views run
  bool single = true;  ///< the only view: say here how to resume
};

// Reconstructs one view (one CXI file) on the ranks of `comm`. Throws Exit
// after an agreed error or a stop (128 + signal), having said so.
template <class T>
void run_view(Communicator const& comm, RunConfig const& cfg, ViewJob const& job) {
  Exec space;
  Log log(comm.rank() == 0, cfg, job.label);
  std::string const& input = job.input;

  // 1. Everything that reads files or can fail on one rank only.
  ScanLayout layout;
  SolverOptions resolved = cfg.solver;
  std::optional<Checkpoint> checkpoint;
  std::unique_ptr<parallel::Strategy<T, Exec>> strategy;
  LocalData<T, Exec> data;
  HostComplex3 guess;
  std::unique_ptr<TruthScore> truth;
  std::vector<std::array<double, 2>> file_positions;  // the file's (layout's may be a checkpoint's refined ones)
  agreed(comm, [&] {
    log.open(cfg.log_file);
    layout = read_scan_layout(input, cfg.load);
    if (layout.info.auto_crop)
      log.warn(fmt::format("{}: frames are {} x {}, not square: using the {} x {} window around their centre "
                           "(--crop {}); give --crop N and --crop-centre-y/-x where the beam is elsewhere",
                           input, layout.info.stored_ny, layout.info.stored_nx, layout.info.ny * layout.info.bin,
                           layout.info.nx * layout.info.bin, layout.info.ny * layout.info.bin));
    warn_detector_placement(log, input, layout.info);
    if (layout.info.beam_found)
      log.info(fmt::format("reconstruct: {}: the beam found at stored pixel (y, x) = ({}, {}): reading the {} x {} "
                           "window around it (--crop {} --crop-centre-y {} --crop-centre-x {})",
                           input, (*layout.info.beam_found)[0], (*layout.info.beam_found)[1],
                           layout.info.ny * layout.info.bin, layout.info.nx * layout.info.bin,
                           layout.info.ny * layout.info.bin, (*layout.info.beam_found)[0],
                           (*layout.info.beam_found)[1]));
    resolve_solver_defaults(resolved, layout.info.frames);  // e.g. a batch larger than the frames
    if (!job.resume.empty()) {
      checkpoint = read_checkpoint(job.resume);
      check_checkpoint_matches(*checkpoint, layout, job.resume);
    }
    file_positions = layout.positions_px;
    parallel::StrategyOptions sopts;
    sopts.sync_every = cfg.sync_every;
    // The ranks split the frames by the file's positions, as the run that
    // wrote the checkpoint did (a resumed run then continues it exactly);
    // their tiles also hold the refined positions' footprints, from where
    // the refinement continues.
    if (checkpoint && !checkpoint->result.file_positions_px.empty())
      sopts.held_positions = checkpoint->result.positions_px;
    // Refinement moves a position up to its largest shift from the file's:
    // the tiles hold that much around the footprints (else a rank's tile
    // edge would stop it sooner than the object's edge stops full-sync).
    if (resolved.refine_positions)
      sopts.footprint_margin = int(std::ceil(resolved.positions_max_shift >= 0 ? resolved.positions_max_shift
                                                                               : layout.info.ny / 4.0));
    strategy = parallel::make_strategy<T, Exec>(cfg.strategy, comm, layout, sopts);
    if (!sopts.held_positions.empty()) layout.positions_px = sopts.held_positions;
    auto const& dec = strategy->decomposition();
    check_object_memory(layout, dec, sizeof(T));
    std::string resampled;
    if (!cfg.probe_guess.empty())
      guess = read_probe_guess(cfg.probe_guess, layout.info, {layout.grid.pixel_size_y, layout.grid.pixel_size_x},
                               &resampled);
    else
      guess = cxi_read_illumination(layout.info, &resampled);
    if (!resampled.empty()) log.info("reconstruct: " + resampled);
    LoadOptions load = cfg.load;
    load.float_frames = resolved.refine_intensities;  // refinement scales them: float from the start
    data = load_local_data<T, Exec>(space, layout, dec.frame_ids, dec.tile_y, dec.tile_x, dec.tile_height,
                                    dec.tile_width, load);
    truth = std::make_unique<TruthScore>(layout, log);
  });
  auto const& dec = strategy->decomposition();
  std::size_t const N = layout.info.frames;

  // 2. What the frames look like, over all ranks (collective).
  if (cfg.mask_above) mask_pixels_reaching(comm, space, data, *cfg.mask_above, input, log);
  FrameStats const stats = frame_stats(space, data);
  std::vector<double> counts(N, 0.0);
  for (std::size_t f = 0; f < stats.counts.size(); ++f) counts[data.frame_ids[f]] = stats.counts[f];
  comm.allreduce(counts.data(), N, Datatype::float64, ReduceOp::sum);
  double max_value = stats.max_value;
  comm.allreduce(&max_value, 1, Datatype::float64, ReduceOp::max);
  double const ceiling = data_type_ceiling(layout.info.data_type);
  double at[2] = {ceiling > 0 ? double(count_pixels_at_least(space, data, float(ceiling))) : 0.0,
                  max_value > 0 ? double(count_pixels_at_least(space, data, float(max_value))) : 0.0};
  comm.allreduce(at, 2, Datatype::float64, ReduceOp::sum);

  std::vector<std::size_t> empty, kept;
  for (std::size_t n = 0; n < N; ++n) (counts[n] > 0 ? kept : empty).push_back(n);
  agreed(comm, [&] {  // every rank decides alike
    PTYKO_REQUIRE(!kept.empty(), input, ": all ", N, " frames of ", layout.info.data_path,
                  " hold no counts (every measured pixel is 0): nothing to reconstruct; check the file and its mask");
  });
  double mean_counts = 0;
  for (std::size_t n : kept) mean_counts += counts[n];
  mean_counts /= double(kept.size());
  if (mean_counts < 100)
    log.warn(fmt::format("{}: only {:.3g} counts per frame on average (over measured pixels): very low for "
                         "ptychography; check the data (units, background subtraction, binning)",
                         input, mean_counts));
  if (at[0] > 0)
    log.warn(fmt::format("{}: {:.0f} pixels hold {:.0f}, the largest {} value: saturated (or unmasked bad) pixels "
                         "bias the reconstruction; mask them (--mask-above {:.0f}, or the file's or a --mask file's "
                         "mask)",
                         input, at[0], ceiling, layout.info.data_type, ceiling));
  else if (max_value >= 100 && at[1] >= std::max(10.0, 0.05 * double(N)))
    log.warn(fmt::format("{}: {:.0f} pixels share the largest value {:.6g}: this looks like a saturated detector "
                         "(or clipped data); mask them (--mask-above {:.6g}, or the file's or a --mask file's mask)",
                         input, at[1], max_value, max_value));
  if (!empty.empty()) {
    log.warn(fmt::format("{}: {} of {} frames hold no counts (frame{} {}): they are skipped", input, empty.size(), N,
                         empty.size() > 1 ? "s" : "", frame_list(empty)));
    // Renumber the kept frames 0..K-1 and drop the empty ones from this rank.
    std::vector<std::size_t> new_id(N, 0);
    for (std::size_t k = 0; k < kept.size(); ++k) new_id[kept[k]] = k;
    std::vector<int> keep_local;
    std::vector<std::size_t> ids;
    for (int f = 0; f < data.local_frames(); ++f)
      if (counts[data.frame_ids[std::size_t(f)]] > 0) {
        keep_local.push_back(f);
        ids.push_back(new_id[data.frame_ids[std::size_t(f)]]);
      }
    data = select_frames(space, data, keep_local, ids, kept.size());
  }
  std::vector<std::array<double, 2>> positions;
  positions.reserve(kept.size());
  for (std::size_t n : kept) positions.push_back(layout.positions_px[n]);
  agreed(comm, [&] { resolve_solver_defaults(resolved, kept.size()); });
  double const step = typical_step(positions);
  if (guess.extent(0) > 0)
    warn_low_overlap(log, input, step, guess, "probe guess", "ptychography may not converge");

  std::vector<std::array<double, 2>> kept_file_positions;  // batches and refinement's limit follow the file's
  kept_file_positions.reserve(kept.size());
  for (std::size_t n : kept) kept_file_positions.push_back(file_positions[n]);

  // 3. The state: afresh, or cut from the checkpoint.
  State<T, Exec> state;
  ProbeFocus focus = parse_probe_focus(cfg.probe_focus);
  if (checkpoint) {
    state = state_from_checkpoint<T, Exec>(space, *checkpoint, dec.tile_y, dec.tile_x, dec.tile_height,
                                           dec.tile_width);
  } else {
    double const diameter = cfg.probe_diameter > 0 ? cfg.probe_diameter : default_probe_diameter(step, layout.info.ny);
    if (guess.extent(0) > 0 && focus != ProbeFocus::automatic)
      log.warn(fmt::format("--probe-focus {}: the probe starts from the given guess, so the side of the focus is "
                           "the guess's; --probe-focus only places a probe computed from the data",
                           cfg.probe_focus));
    if (guess.extent(0) == 0 && focus == ProbeFocus::automatic) {
      // The data choose the side (core/probe_focus.hpp).
      auto const t0 = std::chrono::steady_clock::now();
      ProbeFocusTrial const trial = choose_probe_focus<T, Exec>(space, data, *strategy, dec.tile_height,
                                                                dec.tile_width, resolved, diameter, positions,
                                                                kept_file_positions, cfg.probe_focus_frames);
      focus = trial.focus;
      log.info(fmt::format("reconstruct: computed probe {} of the focus ({} rPIE epochs from each side on {}{} "
                           "frames in {:.2g} s{}: cost {:.5g} from upstream, {:.5g} from downstream; --probe-focus "
                           "sets the side)",
                           to_string(focus), trial.epochs, trial.frames,
                           trial.frames < positions.size() ? fmt::format(" of {}", positions.size()) : "",
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                           trial.undecided_frames > 0
                               ? fmt::format(", after {} of them had not decided", trial.undecided_frames)
                               : "",
                           trial.upstream_cost, trial.downstream_cost));
    }
    state = initial_state<T, Exec>(space, data, *strategy, dec.tile_height, dec.tile_width, guess, cfg.solver.modes,
                                   cfg.solver.seed, diameter,
                                   focus == ProbeFocus::automatic ? ProbeFocus::upstream : focus);
    state.tile_y = dec.tile_y;
    state.tile_x = dec.tile_x;
  }
  // How the frames are held (uint16 counts unless some rank's are not counts).
  double all_counts = data.frames.is_counts() ? 1.0 : 0.0;
  comm.allreduce(&all_counts, 1, Datatype::float64, ReduceOp::min);
  Reconstruction<T, Exec> rec(space, std::move(data), std::move(state), resolved, *strategy, positions,
                              kept_file_positions);
  SolverOptions const& opts = rec.options();
  if (checkpoint && opts.refine_intensities && !checkpoint->result.relative_flux.empty()) {
    // The frames as the checkpointed run had scaled them.
    std::vector<double> flux;
    flux.reserve(kept.size());
    for (std::size_t n : kept) flux.push_back(checkpoint->result.relative_flux.at(n));
    rec.restore_flux(flux);
  }
  RunConfig ran = resolved_config(cfg, opts, input, job.output);
  ran.solver.modes = rec.state().modes();
  if (!checkpoint && guess.extent(0) == 0) ran.probe_focus = to_string(focus);  // the side the trial chose
  comm.take_bytes_moved();  // the set-up's traffic is not the first epoch's

  log.info(fmt::format("reconstruct: {} frames of {}x{} ({}) from {}, {} on {} rank(s) ({}), {} precision, {} mode(s)",
                       kept.size(), layout.info.ny, layout.info.nx, all_counts > 0 ? "uint16 counts" : "float32",
                       input, opts.solver, comm.size(), strategy->name(), sizeof(T) == 4 ? "single" : "double",
                       rec.state().modes()));
  log.info(fmt::format("reconstruct: object {} x {} pixels of {:.4g} m, batch size {} ({}), noise {}",
                       layout.grid.height, layout.grid.width, layout.grid.pixel_size_x, opts.batch_size,
                       to_string(opts.batching), opts.noise == NoiseModel::gaussian ? "gaussian" : "poisson"));
  // Mini-batch solvers synchronise every batch; with fewer positions per
  // batch than ranks, some ranks hold none of a batch and only wait there
  // (DM and RAAR update from all positions at once).
  if (opts.solver != "dm" && opts.solver != "raar" && opts.batch_size < comm.size())
    log.warn(fmt::format("--batch-size {} is below the {} ranks: in each mini-batch some ranks hold no position and "
                         "only wait at its sums; --batch-size {} or more keeps every rank busy",
                         opts.batch_size, comm.size(), comm.size()));
  double isolated = double(rec.isolated_positions());  // summed over ranks: collective
  comm.allreduce(&isolated, 1, Datatype::float64, ReduceOp::sum);
  if (isolated > 0)
    log.info(fmt::format("reconstruct: {:.0f} of {} positions meet no other of their batch: "
                         "updated without object sums",
                         isolated, kept.size()));
  if (checkpoint) {
    log.info(fmt::format("reconstruct: resuming from {} after epoch {} (written by {} rank(s), {})", job.resume,
                         checkpoint->epoch, checkpoint->ranks, checkpoint->strategy));
    if (opts.solver == "dm" || opts.solver == "raar")
      log.info("reconstruct: " + opts.solver +
               " restarts its exit waves from P S O (they are not checkpointed): expect a higher cost for a few "
               "epochs (docs/usage.md)");
  }
  {
    std::string text = to_toml(ran, false);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    log.info("reconstruct: configuration (TOML):\n" + text);
  }
  if (rec.done() && checkpoint) {
    log.note(fmt::format("{} already holds {} epochs (>= --epochs {}): nothing to do; give a larger --epochs to "
                         "continue",
                         job.resume, checkpoint->epoch, opts.epochs));
    return;
  }

  // 4. The epochs.
  std::vector<double> errors;
  std::vector<double> fractions;
  if (checkpoint) {
    errors = checkpoint->result.object_error;
    fractions = checkpoint->result.mode_power_fractions;
  }
  errors.resize(std::size_t(rec.state().epoch), std::nan(""));
  int const first_epoch = rec.state().epoch;
  double elapsed = 0;
  int stop = 0;

  // Every frame's position as the result keeps it: refined where refined,
  // the file's for skipped frames.
  auto result_positions = [&] {
    std::vector<std::array<double, 2>> p = file_positions;
    for (std::size_t k = 0; k < kept.size(); ++k) p[kept[k]] = rec.positions()[k];
    return p;
  };
  // Every file frame's relative flux when intensities are refined (those
  // skipped for holding no counts had no beam: 0), else empty. Collective.
  auto result_flux = [&] {
    std::vector<double> const kept_flux = rec.relative_flux();
    std::vector<double> flux;
    if (kept_flux.empty()) return flux;
    flux.assign(N, 0.0);
    for (std::size_t k = 0; k < kept.size(); ++k) flux[kept[k]] = kept_flux[k];
    return flux;
  };
  // Gathers the object (collective) unless `gathered` holds it already,
  // and writes the checkpoint on rank 0; there object and probe become the
  // result's (without the phase ramp unless --keep-phase-ramp).
  auto save = [&](HostComplex2& object, HostComplex3& probe, bool gathered = false) {
    if (!gathered) object = strategy->gather_object(space, rec.state().object);
    probe = strategy->probe_on_host(space, rec.state().probe);
    std::vector<double> const flux = result_flux();  // collective
    if (!log.root()) return;
    Checkpoint c;
    ResultContents& r = c.result;
    r.object = object;
    r.probe = probe;
    r.positions_px = result_positions();
    if (cfg.remove_phase_ramp) {
      // The result takes the gauge without a mean phase gradient; the
      // checkpoint keeps the run's own state for --resume.
      c.state_object = object;
      c.state_probe = probe;
      r.object = HostComplex2(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::result_object"),
                              object.extent(0), object.extent(1));  // every pixel copied below
      r.probe = HostComplex3(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::result_probe"), probe.extent(0),
                             probe.extent(1), probe.extent(2));
      Kokkos::deep_copy(r.object, object);  // host -> host: the state's object, left as it is
      Kokkos::deep_copy(r.probe, probe);    // host -> host: the state's probe
      remove_object_phase_ramp(r.object, r.probe, r.positions_px);
    }
    if (opts.refine_positions) r.file_positions_px = file_positions;
    r.relative_flux = flux;
    r.background = background_on_host(space, rec.state());
    r.object_pixel_size_m = {layout.grid.pixel_size_y, layout.grid.pixel_size_x};
    r.cost = rec.state().cost;
    r.noise_model = opts.noise == NoiseModel::gaussian ? "gaussian" : "poisson";
    r.epoch_seconds = rec.state().epoch_seconds;
    r.bytes_moved = rec.state().bytes_moved;
    r.mode_power_fractions = fractions;
    if (truth->active()) r.object_error = errors;
    r.config = to_toml(ran, false);
    r.provenance = provenance(comm.size());
    c.epoch = rec.state().epoch;
    c.seed = opts.seed;
    c.rng_state = rec.state().rng_state;
    c.ranks = comm.size();
    c.strategy = strategy->name();
    c.double_precision = sizeof(T) == 8;
    c.input = fs::absolute(input).lexically_normal().string();
    if (!job.single) fs::create_directories(fs::path(job.output).parent_path());
    write_checkpoint(job.output, c);
    object = r.object;  // the pictures show the result
    probe = r.probe;
  };

  HostComplex2 object;
  HostComplex3 probe;
  bool object_gathered = false;  // the last epoch's score gathered the final object
  while (!rec.done()) {
    EpochReport const last = rec.step();
    elapsed += last.seconds;
    if (!last.mode_power_fractions.empty()) fractions = last.mode_power_fractions;
    double error = std::nan("");
    // Every rank must take the same decision: gather_object is collective.
    bool const final_epoch = rec.done();
    if (layout.info.has_truth && (final_epoch || (cfg.error_every > 0 && last.epoch % cfg.error_every == 0))) {
      HostComplex2 gathered = strategy->gather_object(space, rec.state().object);  // collective
      if (truth->active()) error = truth->error(gathered);
      if (final_epoch) {  // what save would gather again
        object = gathered;
        object_gathered = true;
      }
    }
    errors.push_back(error);
    double const eta = elapsed / (last.epoch - first_epoch) * (opts.epochs - last.epoch);
    // DM/RAAR with --cost-every K > 1 measure the cost only every K epochs.
    std::string const cost = std::isfinite(last.cost) ? fmt::format("{:.5g}", last.cost) : std::string("-");
    std::string line = fmt::format("epoch {:>4}/{}  cost {:<11} {:6.3f} s/epoch  ETA {}", last.epoch, opts.epochs, cost,
                                   last.seconds, format_duration(eta));
    if (comm.size() > 1) line += fmt::format("  moved {}", format_bytes(last.bytes));
    if (std::isfinite(last.position_rms_move_px))
      line += fmt::format("  positions {:.3f} px rms, {:.2f} max", last.position_rms_move_px,
                          last.position_max_move_px);
    if (std::isfinite(last.flux_rms_deviation))
      line += fmt::format("  flux {:.1f} % rms, {:.3f}-{:.3f}", 100 * last.flux_rms_deviation, last.flux_min,
                          last.flux_max);
    if (std::isfinite(last.background_fraction))
      line += fmt::format("  background {:.2f} % of counts", 100 * last.background_fraction);
    if (std::isfinite(error)) line += fmt::format("  error {:.4f}", error);
    log.info(line);

    // Every rank stops after the same epoch: the largest flag wins.
    stop = int(strategy->max(double(g_stop_signal)));
    if (stop) break;
    if (cfg.checkpoint_every > 0 && last.epoch % cfg.checkpoint_every == 0 && !rec.done()) {
      save(object, probe);
      log.info(fmt::format("reconstruct: checkpoint after epoch {} in {}", last.epoch, job.output));
    }
  }
  save(object, probe, object_gathered);

  if (stop) {
    log.note(fmt::format("stopped by {} after epoch {} of {}: checkpoint written to {}", signal_name(stop),
                         rec.state().epoch, opts.epochs, job.output));
    if (job.single)
      log.note("resume with: " + resume_command(comm.size(), {}, job.output));
    throw Exit{128 + stop};
  }

  std::vector<double> const flux = result_flux();  // collective
  if (log.root()) {
    std::vector<std::string> pictures;
    if (cfg.images) {
      std::string const noise = opts.noise == NoiseModel::gaussian ? "gaussian" : "poisson";
      pictures = write_result_pictures(job.output, object, probe, fractions, rec.state().cost, noise,
                                       opts.refine_positions ? file_positions : std::vector<std::array<double, 2>>(),
                                       opts.refine_positions ? result_positions() : std::vector<std::array<double, 2>>(),
                                       flux, background_on_host(space, rec.state()));
    }
    std::string done = fmt::format("reconstruct: wrote {} after {} epochs in {}", job.output, rec.state().epoch,
                                   format_duration(elapsed));
    auto const& costs = rec.state().cost;
    auto const measured = std::find_if(costs.rbegin(), costs.rend(), [](double c) { return std::isfinite(c); });
    if (measured != costs.rend())  // else: no epoch ran, or none measured its cost
      done += measured == costs.rbegin()
                  ? fmt::format(", final cost {:.5g}", *measured)
                  : fmt::format(", cost {:.5g} at epoch {}", *measured, costs.rend() - measured);  // a stop between DM's measurements
    if (truth->active() && !errors.empty() && std::isfinite(errors.back()))
      done += fmt::format(", error against the truth {:.4f}", errors.back());
    log.info(done);
    for (auto const& p : pictures) log.info("reconstruct: wrote " + p);
    if (guess.extent(0) == 0 && probe.extent(0) > 0)
      warn_low_overlap(log, input, step, probe, "reconstructed probe", "the result may be unreliable");
  }
}

// ------------------------------------------------------------------ views

// Several views (e.g. the angles of a tomography series): with P >= V ranks
// the ranks form V groups (MPI_Comm_split), one view each; with P < V every
// rank reconstructs whole views in turn on its own.
template <class T>
int run(RunConfig const& cfg, std::string const& resume_file, std::string const& resume_dir) {
  auto world = Communicator::world();
  int const P = world.size(), V = int(cfg.inputs.size());
  auto job_of = [&](int v) {
    ViewJob j;
    j.input = cfg.inputs[v];
    j.single = V == 1;
    j.output = j.single ? cfg.output : view_output(cfg, v);
    if (j.single) {
      j.resume = resume_file;
    } else {
      j.label = fs::path(j.input).stem().string();
      if (!resume_dir.empty() && is_checkpoint(j.output)) j.resume = j.output;
    }
    return j;
  };
  if (V == 1) {
    run_view<T>(world, cfg, job_of(0));
    return 0;
  }
  auto attempt = [&](Communicator const& comm, int v) {
    try {
      run_view<T>(comm, cfg, job_of(v));
      return 0;
    } catch (Exit const& e) {
      return e.code;
    }
  };
  int code = 0;
  if (P >= V) {
    int const view = int((long(world.rank()) * V) / P);  // contiguous groups, sizes differ by <= 1
    auto group = world.split(view, world.rank());
    code = attempt(group, view);
  } else {
    auto self = world.split(world.rank(), 0);
    for (int view = world.rank(); view < V; view += P) {
      code = std::max(code, attempt(self, view));
      if (code >= 128) break;  // stopped: the remaining views start on --resume
    }
  }
  world.allreduce(&code, 1, Datatype::int32, ReduceOp::max);
  if (code >= 128 && world.rank() == 0) {
    // The original command line with --resume FOLDER: finished views are
    // skipped, stopped ones continue, the others start.
    auto const& argv = invocation();
    std::vector<std::string> args;
    for (std::size_t k = 2; k < argv.size(); ++k) {
      if (argv[k] == "--resume") {
        ++k;
        continue;
      }
      if (argv[k].rfind("--resume=", 0) == 0) continue;
      args.push_back(argv[k]);
    }
    fmt::print(stderr, "ptyko: resume with: {}\n", resume_command(P, args, cfg.output));
  }
  if (code) throw Exit{code};
  return 0;
}

int reconstruct(parallel::Environment& env, ReconstructArgs const& args) {
  auto world = Communicator::world();
  RunConfig cfg;
  std::string resume_file, resume_dir;
  agreed(world, [&] {
    std::error_code ec;
    if (!args.resume.empty()) {
      if (fs::is_directory(args.resume, ec)) {
        resume_dir = args.resume;
      } else {
        PTYKO_REQUIRE(fs::exists(args.resume, ec), "--resume ", args.resume, ": no such file");
        PTYKO_REQUIRE(is_checkpoint(args.resume), "--resume ", args.resume,
                      ": not a ptyko checkpoint (a result of ptyko reconstruct): nothing to resume from");
        resume_file = args.resume;
        Checkpoint const c = read_checkpoint(args.resume);
        apply_toml(cfg, c.result.config, args.resume + ":/reconstruction/config");
        cfg.output = args.resume;  // where it is now, not where it was written
        cfg.quiet = RunConfig().quiet;  // the terminal is this run's: only its own -q silences it
        if (!fs::exists(cfg.inputs.empty() ? std::string() : cfg.inputs[0], ec) && fs::exists(c.input, ec))
          cfg.inputs = {c.input};
      }
    }
    if (!args.config_file.empty()) apply_toml_file(cfg, args.config_file);
    apply_command_line(cfg, args);
    if (!resume_dir.empty() && cfg.output.empty()) cfg.output = resume_dir;
    if (args.print_config) return;
    finish_run_config(cfg);
    PTYKO_REQUIRE(resume_dir.empty() || cfg.inputs.size() > 1, "--resume ", resume_dir,
                  " is a folder: give the checkpoint file of the view to continue (or several inputs)");
    PTYKO_REQUIRE(resume_file.empty() || cfg.inputs.size() == 1, "--resume ", resume_file,
                  " is the checkpoint of one view: give one input");
  });
  if (args.print_config) {
    if (env.rank() == 0) fmt::print("{}", to_toml(cfg, true));
    return 0;
  }
  StopSignals signals(env.rank());
  // Ranks bound to fewer CPUs than their threads (said before any file is read).
  if (!env.cpu_warning().empty()) {
    fmt::print(stderr, "ptyko: warning: {}\n", env.cpu_warning());
    std::fflush(stderr);
  }
  return cfg.double_precision ? run<double>(cfg, resume_file, resume_dir) : run<float>(cfg, resume_file, resume_dir);
}

}  // namespace

void add_reconstruct(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("reconstruct", "Reconstruct object and probe from a CXI file");
  cmd->footer(
      "Every option can also sit in a TOML file (--config; --print-config writes one to start from); flags\n"
      "override it. The result OUT.h5 is also a checkpoint: --resume continues it. SIGINT, SIGTERM or SIGUSR1\n"
      "stop after the current epoch with a checkpoint (exit code 128 + signal).\n"
      "Examples:\n"
      "  ptyko reconstruct data.cxi -o out.h5\n"
      "  ptyko reconstruct data.cxi -o out.h5 --solver rpie --epochs 200 --batch-size 16\n"
      "  ptyko reconstruct --print-config > run.toml\n"
      "  ptyko reconstruct --config run.toml data.cxi -o out.h5 --checkpoint-every 20\n"
      "  ptyko reconstruct --resume out.h5 --epochs 400\n"
      "  mpiexec -n 4 ptyko reconstruct data.cxi -o out.h5 --sync-every 4   (approximate neighbour consensus)\n"
      "  mpiexec -n 8 ptyko reconstruct angle_*.cxi -o results/   (one result per view, 8 ranks shared)\n"
      "See docs/usage.md.");
  auto args = std::make_shared<ReconstructArgs>();
  add_run_options(*cmd, *args);
  cmd->callback([&action, args] {
    action = [args](parallel::Environment& env) { return reconstruct(env, *args); };
  });
}

}  // namespace ptyko::drivers
