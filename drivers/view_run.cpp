// The stages of one view, in the order they run (ViewRun::run). Everything
// that depends on the input files and the options is checked before the
// first collective call, and the ranks agree on the outcome (agreed.hpp);
// an exception later on (inside the epochs) ends in main(), which prints it
// and aborts every rank (MPI_Abort).
//
// Stopping: after each epoch the ranks take the maximum of their stop flags
// (stop_signals.hpp; one all-reduce), so every rank stops after the same
// epoch, writes the checkpoint (the gathered object) and exits with 128 +
// signal. A checkpoint is only ever written at an epoch boundary, where the
// state is complete (mid-epoch, the solvers' sums and DM's exit waves are
// half updated).

#include "view_run.hpp"

#include "agreed.hpp"
#include "run_log.hpp"
#include "stop_signals.hpp"
#include "truth_score.hpp"
#include "view_checks.hpp"

#include <ptyko/core/background_refinement.hpp>
#include <ptyko/core/checkpoint.hpp>
#include <ptyko/core/dataset.hpp>
#include <ptyko/core/frame_stats.hpp>
#include <ptyko/core/images.hpp>
#include <ptyko/core/phase_ramp.hpp>
#include <ptyko/core/probe_focus.hpp>
#include <ptyko/core/probe_modes.hpp>
#include <ptyko/core/reconstruction.hpp>
#include <ptyko/core/result_file.hpp>
#include <ptyko/core/scan.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/strategy.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

namespace ptyko::drivers {
namespace {

namespace fs = std::filesystem;
using Exec = Kokkos::DefaultExecutionSpace;
using parallel::Communicator;
using parallel::Datatype;
using parallel::ReduceOp;
using Positions = std::vector<std::array<double, 2>>;

// One view's run in precision T: each stage reads what the earlier ones
// set (the members, grouped below by the stage that sets them).
template <class T>
class ViewRun {
 public:
  ViewRun(Communicator const& comm, RunConfig const& cfg, ViewJob const& job)
      : m_comm(comm), m_cfg(cfg), m_job(job), m_input(job.input), m_log(comm.rank() == 0, cfg, job.label),
        m_resolved(cfg.solver) {}

  void run() {
    open();
    survey_frames();
    make_reconstruction();
    if (!describe()) return;
    int const stop = run_epochs();
    if (stop) stopped(stop);
    finish();
  }

 private:
  parallel::Decomposition const& decomposition() const { return m_strategy->decomposition(); }
  std::size_t file_frames() const { return m_layout.info.frames; }

  // 1. Everything that reads files or can fail on one rank only.
  void open() {
    agreed(m_comm, [&] {
      m_log.open(m_cfg.log_file);
      m_layout = read_scan_layout(m_input, m_cfg.load);
      say_how_frames_are_read();
      resolve_solver_defaults(m_resolved, m_layout.info.frames);  // e.g. a batch larger than the frames
      if (!m_job.resume.empty()) {
        m_checkpoint = read_checkpoint(m_job.resume);
        check_checkpoint_matches(*m_checkpoint, m_layout, m_job.resume);
        change_checkpoint_modes();
      }
      m_file_positions = m_layout.positions_px;
      make_strategy();
      check_object_memory(m_layout, decomposition(), sizeof(T));
      read_probe_guess_or_illumination();
      LoadOptions load = m_cfg.load;
      load.float_frames = m_resolved.refine_intensities;  // refinement scales them: float from the start
      auto const& dec = decomposition();
      m_data = load_local_data<T, Exec>(m_space, m_layout, dec.frame_ids, dec.tile_y, dec.tile_x, dec.tile_height,
                                        dec.tile_width, load);
      m_truth = std::make_unique<TruthScore>(m_layout, m_log);
    });
  }

  // --modes on resume, when it differs from the checkpoint's probe: modes
  // added (as to a probe guess: mode 0 times smooth random fields, 5 % of
  // its power each, orthogonalised) or the weakest dropped (the checkpoint's
  // modes are sorted by power), the probe's total power and thus the model's
  // counts kept. The probe's momentum restarts from rest: its velocity had
  // the old modes' shape.
  void change_checkpoint_modes() {
    HostComplex3& probe = m_checkpoint->result.probe;
    int const stored = int(probe.extent(0)), wanted = m_cfg.solver.modes;
    if (wanted <= 0 || wanted == stored) return;
    double power = 0;
    for (std::size_t k = 0; k < probe.span(); ++k) power += double(math::norm2(probe.data()[k]));
    probe = initial_probe_from_guess(probe, wanted, m_cfg.solver.seed, power);
    m_checkpoint->probe_velocity = HostComplex3();
    m_log.info(fmt::format("reconstruct: --modes {}: the checkpoint's probe has {} mode(s); {}", wanted, stored,
                           wanted > stored ? fmt::format("{} added at 5 % of the first one's power each", wanted - stored)
                                           : fmt::format("the weakest {} dropped", stored - wanted)));
  }

  void say_how_frames_are_read() {
    auto const& info = m_layout.info;
    if (info.auto_crop)
      m_log.warn(fmt::format("{}: frames are {} x {}, not square: using the {} x {} window around their centre "
                             "(--crop {}); give --crop N and --crop-centre-y/-x where the beam is elsewhere",
                             m_input, info.stored_ny, info.stored_nx, info.ny * info.bin, info.nx * info.bin,
                             info.ny * info.bin));
    warn_detector_placement(m_log, m_input, info);
    if (info.beam_found)
      m_log.info(fmt::format("reconstruct: {}: the beam found at stored pixel (y, x) = ({}, {}): reading the {} x {} "
                             "window around it (--crop {} --crop-centre-y {} --crop-centre-x {})",
                             m_input, (*info.beam_found)[0], (*info.beam_found)[1], info.ny * info.bin,
                             info.nx * info.bin, info.ny * info.bin, (*info.beam_found)[0], (*info.beam_found)[1]));
  }

  void make_strategy() {
    parallel::StrategyOptions sopts;
    sopts.sync_every = m_cfg.sync_every;
    // The ranks split the frames by the file's positions, as the run that
    // wrote the checkpoint did (a resumed run then continues it exactly);
    // their tiles also hold the refined positions' footprints, from where
    // the refinement continues.
    if (m_checkpoint && !m_checkpoint->result.file_positions_px.empty())
      sopts.held_positions = m_checkpoint->result.positions_px;
    // Refinement moves a position up to its largest shift from the file's:
    // the tiles hold that much around the footprints (else a rank's tile
    // edge would stop it sooner than the object's edge stops full-sync).
    if (m_resolved.refine_positions)
      sopts.footprint_margin = int(std::ceil(m_resolved.positions_max_shift >= 0 ? m_resolved.positions_max_shift
                                                                                 : m_layout.info.ny / 4.0));
    m_strategy = parallel::make_strategy<T, Exec>(m_cfg.strategy, m_comm, m_layout, sopts);
    if (!sopts.held_positions.empty()) m_layout.positions_px = sopts.held_positions;
  }

  void read_probe_guess_or_illumination() {
    std::string resampled;
    if (!m_cfg.probe_guess.empty())
      m_guess = read_probe_guess(m_cfg.probe_guess, m_layout.info,
                                 {m_layout.grid.pixel_size_y, m_layout.grid.pixel_size_x}, &resampled);
    else
      m_guess = cxi_read_illumination(m_layout.info, &resampled);
    if (!resampled.empty()) m_log.info("reconstruct: " + resampled);
  }

  // 2. What the frames look like, over all ranks (collective): warnings,
  // and the frames without counts left out.
  void survey_frames() {
    mask_nonfinite_pixels();
    report_negative_values();
    mask_saturated_pixels();
    check_counts();
    if (m_kept.size() < file_frames()) skip_frames();
    m_positions.reserve(m_kept.size());
    m_kept_file_positions.reserve(m_kept.size());  // batches and refinement's limit follow the file's
    for (std::size_t n : m_kept) {
      m_positions.push_back(m_layout.positions_px[n]);
      m_kept_file_positions.push_back(m_file_positions[n]);
    }
    agreed(m_comm, [&] { resolve_solver_defaults(m_resolved, m_kept.size()); });
    m_step = typical_step(m_positions);
    if (m_guess.extent(0) > 0)
      warn_low_overlap(m_log, m_input, m_step, m_guess, "probe guess", "ptychography may not converge");
  }

  // Pixels where some rank's frames held NaN or infinity (each rank masked
  // its own at load) are masked on every rank alike (collective), and named.
  void mask_nonfinite_pixels() {
    std::size_t const pixels = std::size_t(m_layout.info.ny) * std::size_t(m_layout.info.nx);
    std::vector<double> bad(pixels, 0.0);
    for (std::size_t k = 0; k < m_data.nonfinite_pixels.size(); ++k) bad[k] = m_data.nonfinite_pixels[k];
    m_comm.allreduce(bad.data(), pixels, Datatype::float64, ReduceOp::max);
    std::vector<std::uint8_t> flags(pixels);
    std::size_t count = 0;
    for (std::size_t k = 0; k < pixels; ++k) count += flags[k] = bad[k] > 0 ? 1 : 0;
    if (count == 0) return;
    mask_pixels(m_space, m_data, flags);
    m_log.warn(fmt::format("{}: {} detector pixel(s) hold NaN or infinity in some frame (module gaps or bad pixels "
                           "without a mask): masked in every frame",
                           m_input, count));
  }

  // Pixels whose counts were lost (collective), each masked in every frame
  // on every rank alike, and named: with --mask-above, those that reach its
  // level in any frame; else those at the data type's largest value in any
  // frame (saturated counters), then those at the frames' largest value
  // when many values share it (a detector, or a program, clipping there:
  // counts are never so many at their largest).
  void mask_saturated_pixels() {
    std::vector<float> const local = pixel_maxima(m_space, m_data);
    std::vector<double> maxima(local.begin(), local.end());
    m_comm.allreduce(maxima.data(), maxima.size(), Datatype::float64, ReduceOp::max);
    auto mask_from = [&](double level) {
      std::vector<std::uint8_t> bad(maxima.size());
      std::size_t count = 0;
      for (std::size_t k = 0; k < maxima.size(); ++k) {
        count += bad[k] = maxima[k] >= level ? 1 : 0;
        if (bad[k]) maxima[k] = 0;  // masked: its values are 0 now
      }
      if (count > 0) mask_pixels(m_space, m_data, bad);
      return count;
    };
    double const pixels = double(maxima.size());
    if (m_cfg.mask_above) {
      double const level = *m_cfg.mask_above;
      double const share = double(mask_from(level)) / pixels;
      m_log.info(fmt::format("reconstruct: --mask-above {:g}: {:.0f} pixel(s) ({:.2f} %) reach it in some frame: masked",
                             level, share * pixels, 100 * share));
      if (share > 0.05)
        m_log.warn(fmt::format("{}: --mask-above {:g} masks {:.1f} % of the detector: is the level below the real "
                               "intensities? (ptyko info shows the brightest pixel)",
                               m_input, level, 100 * share));
      return;
    }
    std::string const& type = m_layout.info.data_type;
    if (double const ceiling = data_type_ceiling(type); ceiling > 0)
      if (std::size_t const count = mask_from(ceiling))
        m_log.warn(fmt::format("{}: {} pixel(s) ({:.2f} %) reach {:.0f}, the largest {} value, in some frame: "
                               "saturated counters, masked in every frame (--mask-above LEVEL masks from another "
                               "level instead)",
                               m_input, count, 100 * double(count) / pixels, ceiling, type));
    double const top = *std::max_element(maxima.begin(), maxima.end());
    if (top < k_clipped_at_least) return;  // too low to tell a clip from counts
    double at_top = double(count_pixels_at_least(m_space, m_data, float(top)));
    m_comm.allreduce(&at_top, 1, Datatype::float64, ReduceOp::sum);
    if (!looks_clipped(top, at_top, file_frames())) return;
    std::size_t const count = mask_from(top);
    m_log.warn(fmt::format("{}: {:.0f} values in {} pixel(s) share the frames' largest value {:.6g}: a detector (or a "
                           "program) clipping there; masked in every frame (--mask-above LEVEL masks from another "
                           "level, one above {:.6g} keeps them)",
                           m_input, at_top, count, top, top));
  }

  // What became of negative values (collective): a detector's marks were
  // masked (cxi_mask_marked_pixels, alike on every rank), the others read
  // as 0 (load_local_data). Where they were many (a background subtracted),
  // those zeros lift the dark pixels' mean above the data's as a background
  // would: the background is refined unless the options say otherwise
  // (docs/solvers.md: LSQML 0.027 -> 0.012 with 2 counts per pixel).
  void report_negative_values() {
    auto const& info = m_layout.info;
    if (!info.marked_pixels.empty())
      m_log.info(fmt::format("reconstruct: {}: {} detector pixel(s) hold the same mark ({}) in every frame looked at "
                             "(a negative value or the data type's largest: a detector's marks of gaps and bad "
                             "pixels): masked (--clip-negative reads them as they are, negative ones as 0)",
                             m_input, info.marked_pixels.size(), fmt::join(info.mark_values, ", ")));
    double count = double(m_data.negative_values), lowest = m_data.most_negative;
    m_comm.allreduce(&count, 1, Datatype::float64, ReduceOp::sum);
    m_comm.allreduce(&lowest, 1, Datatype::float64, ReduceOp::min);
    if (count == 0) return;
    double measured = double(count_measured_values(m_space, m_data));
    m_comm.allreduce(&measured, 1, Datatype::float64, ReduceOp::sum);
    double const fraction = count / std::max(measured, 1.0);
    m_log.info(fmt::format("reconstruct: {}: {:.0f} negative value(s) at measured pixels ({:.3g} % of them, down to "
                           "{:.6g}; the noise of a subtracted background): read as 0",
                           m_input, count, 100 * fraction, lowest));
    if (!m_cfg.refine_background && fraction >= k_negative_share_for_background) {
      m_resolved.refine_background = true;
      m_log.info(fmt::format("reconstruct: {}: the background is refined (--refine-background), as those zeros lift "
                             "the dark pixels' mean like a background; --no-refine-background to leave it",
                             m_input));
    }
  }

  // Detector units per photon (collective): --adu-per-photon, else what the
  // values imply (adu_per_photon_implied): 1 for counts, their common step
  // for counts times a gain, 0 for frames whose counting noise is not known
  // (normalised or corrected as floats, or thresholded detector units).
  double set_adu_per_photon() {
    if (m_cfg.adu_per_photon) return m_data.adu_per_photon = *m_cfg.adu_per_photon;
    ValueSurvey const survey = survey_values();
    std::string why;
    m_data.adu_per_photon = adu_per_photon_implied(survey, &why);
    std::string const& type = m_layout.info.data_type;
    if (!survey.whole_numbers)
      why = fmt::format("the frames are not photon counts ({} with fractions in {:.3g} % of the values)", type,
                        100 * survey.fractional_values / (survey.nonzero_values + survey.zero_values));
    if (m_data.adu_per_photon == 0)
      m_log.info(fmt::format("reconstruct: {}: {}, so their counting noise is not known: DM's power bound follows "
                             "PtyPy's alone and costs are not compared with the noise; give --adu-per-photon (units "
                             "per photon) if it is known",
                             m_input, why));
    else if (!why.empty())
      m_log.info(fmt::format("reconstruct: {}: {} (--adu-per-photon {:g}; give it to say otherwise)", m_input, why,
                             m_data.adu_per_photon));
    return m_data.adu_per_photon;
  }

  // What all ranks' measured values say about their unit (collective): the
  // common step by Euclid's algorithm over the frames, each round one pass
  // and one all-reduce (photon counts, whose smallest value is 1: none).
  ValueSurvey survey_values() {
    ValueSurvey s;
    double sums[3] = {double(count_fractional_pixels(m_space, m_data)),
                      double(count_pixels_at_least(m_space, m_data, 0.5f)),  // nonzero whole numbers
                      double(count_measured_values(m_space, m_data))};
    m_comm.allreduce(sums, 3, Datatype::float64, ReduceOp::sum);
    s.fractional_values = sums[0];
    s.whole_numbers = is_integer_type(m_layout.info.data_type) || sums[0] == 0;
    s.nonzero_values = sums[1];
    s.zero_values = sums[2] - sums[1];
    if (sums[0] > 0) return s;  // no step to find among fractions
    auto global_min = [&](double modulus) {
      double r = smallest_nonzero_remainder(m_space, m_data, modulus);
      r = r > 0 ? r : std::numeric_limits<double>::infinity();
      m_comm.allreduce(&r, 1, Datatype::float64, ReduceOp::min);
      return std::isfinite(r) ? r : 0.0;
    };
    s.smallest_nonzero = global_min(0);
    double step = s.smallest_nonzero;
    for (double r = step > 1 ? global_min(step) : 0; r > 0; r = global_min(step))  // photon counts: step 1, no pass
      step = double(std::gcd(std::uint64_t(step), std::uint64_t(r)));
    s.unit_step = std::max(step, 1.0);
    return s;
  }

  // Every file frame's counts (collective); sorts the frames into kept and
  // empty ones and warns about low counts.
  void check_counts() {
    std::size_t const N = file_frames();
    FrameStats const stats = frame_stats(m_space, m_data);
    std::vector<double> counts(N, 0.0);
    for (std::size_t f = 0; f < stats.counts.size(); ++f) counts[m_data.frame_ids[f]] = stats.counts[f];
    m_comm.allreduce(counts.data(), N, Datatype::float64, ReduceOp::sum);

    // Frames without a position in the file, or read as zeros for holding
    // no intensity in most pixels, are neither kept nor empty.
    std::vector<double> invalid(N, 0.0);
    for (std::size_t n : m_data.invalid_frames) invalid[n] = 1;
    m_comm.allreduce(invalid.data(), N, Datatype::float64, ReduceOp::max);
    for (std::size_t n : m_layout.unplaced) invalid[n] = -1;
    for (std::size_t n = 0; n < N; ++n)
      if (invalid[n] > 0)
        m_invalid.push_back(n);
      else if (invalid[n] == 0)
        (counts[n] > 0 ? m_kept : m_empty).push_back(n);
    agreed(m_comm, [&] {  // every rank decides alike
      PTYKO_REQUIRE(!m_kept.empty() || m_empty.size() < N, m_input, ": all ", N, " frames of ",
                    m_layout.info.data_path,
                    " hold no counts (every measured pixel is 0): nothing to reconstruct; check the file and its "
                    "mask");
      PTYKO_REQUIRE(!m_kept.empty(), m_input, ": no frame of ", m_layout.info.data_path, " can be used: ",
                    m_empty.size(), " hold no counts, ", m_invalid.size(),
                    " hold no intensity in most pixels, ", m_layout.unplaced.size(),
                    " have no position; check the file and its mask");
    });
    double mean_counts = 0;
    for (std::size_t n : m_kept) mean_counts += counts[n];
    mean_counts /= double(m_kept.size());
    double const adu = set_adu_per_photon();
    if (adu > 0 && mean_counts / adu < 100)
      m_log.warn(fmt::format("{}: only {:.3g} {} per frame on average (over measured pixels): very low for "
                             "ptychography; check the data (units, background subtraction, binning)",
                             m_input, mean_counts / adu, adu != 1 ? "photons" : "counts"));
  }

  // Renumbers the kept frames 0..K-1 and drops the others (empty, or
  // without a position) from this rank.
  void skip_frames() {
    auto say = [&](std::vector<std::size_t> const& ids, char const* why) {
      if (!ids.empty())
        m_log.warn(fmt::format("{}: {} of {} frames {} (frame{} {}): they are skipped", m_input, ids.size(),
                               file_frames(), why, ids.size() > 1 ? "s" : "", frame_list(ids)));
    };
    say(m_empty, "hold no counts");
    say(m_invalid, "hold no intensity in most pixels (NaN, infinity, or negative values and no counts)");
    say(m_layout.unplaced,
        fmt::format("have no position ({} holds NaN or infinite translations)", m_layout.info.translation_path)
            .c_str());
    constexpr std::size_t skipped = std::size_t(-1);
    std::vector<std::size_t> new_id(file_frames(), skipped);
    for (std::size_t k = 0; k < m_kept.size(); ++k) new_id[m_kept[k]] = k;
    std::vector<int> keep_local;
    std::vector<std::size_t> ids;
    for (int f = 0; f < m_data.local_frames(); ++f)
      if (std::size_t const id = new_id[m_data.frame_ids[std::size_t(f)]]; id != skipped) {
        keep_local.push_back(f);
        ids.push_back(id);
      }
    m_data = select_frames(m_space, m_data, keep_local, ids, m_kept.size());
  }

  // 3. The state, afresh or cut from the checkpoint, and the reconstruction.
  void make_reconstruction() {
    auto const& dec = decomposition();
    State<T, Exec> state;
    ProbeFocus focus = parse_probe_focus(m_cfg.probe_focus);
    if (m_checkpoint)
      state = state_from_checkpoint<T, Exec>(m_space, *m_checkpoint, dec.tile_y, dec.tile_x, dec.tile_height,
                                             dec.tile_width);
    else
      state = fresh_state(focus);
    // How the frames are held (uint16 counts unless some rank's are not counts).
    double all_counts = m_data.frames.is_counts() ? 1.0 : 0.0;
    m_comm.allreduce(&all_counts, 1, Datatype::float64, ReduceOp::min);
    m_counts_held = all_counts > 0;
    m_rec = std::make_unique<Reconstruction<T, Exec>>(m_space, std::move(m_data), std::move(state), m_resolved,
                                                      *m_strategy, m_positions, m_kept_file_positions);
    SolverOptions const& opts = m_rec->options();
    if (m_checkpoint && opts.refine_intensities && !m_checkpoint->result.relative_flux.empty()) {
      // The frames as the checkpointed run had scaled them.
      std::vector<double> flux;
      flux.reserve(m_kept.size());
      for (std::size_t n : m_kept) flux.push_back(m_checkpoint->result.relative_flux.at(n));
      m_rec->restore_flux(flux);
    }
    m_ran = resolved_config(m_cfg, opts, m_input, m_job.output);
    m_ran.solver.modes = m_rec->state().modes();
    if (!m_checkpoint && m_guess.extent(0) == 0) {  // what the trial chose
      m_ran.probe_focus = to_string(focus);
      m_ran.probe_diameter = m_start_diameter;
    }
    m_comm.take_bytes_moved();  // the set-up's traffic is not the first epoch's
  }

  // The first state: the probe from the guess or from the data, on the side
  // of the focus and of the size that the options name or that a trial
  // chooses (then `focus` and m_start_diameter become the chosen ones).
  State<T, Exec> fresh_state(ProbeFocus& focus) {
    auto const& dec = decomposition();
    if (m_guess.extent(0) > 0 && focus != ProbeFocus::automatic)
      m_log.warn(fmt::format("--probe-focus {}: the probe starts from the given guess, so the side of the focus is "
                             "the guess's; --probe-focus only places a probe computed from the data",
                             m_cfg.probe_focus));
    if (m_guess.extent(0) > 0 && m_cfg.probe_diameter > 0)
      m_log.warn(fmt::format("--probe-diameter {}: the probe starts from the given guess, whose size is its own; "
                             "--probe-diameter only sizes a probe computed from the data",
                             m_cfg.probe_diameter));
    m_start_diameter = m_cfg.probe_diameter;
    if (m_guess.extent(0) == 0 && (focus == ProbeFocus::automatic || m_start_diameter <= 0)) {
      // The data choose what the options leave open (core/probe_focus.hpp).
      auto const t0 = std::chrono::steady_clock::now();
      int const D = m_layout.info.ny;
      std::vector<double> const diameters =
          m_start_diameter > 0 ? std::vector<double>{m_start_diameter}
                               : probe_diameter_candidates(default_probe_diameter(m_step, D), D);
      ProbeStartTrial const trial =
          choose_probe_start<T, Exec>(m_space, m_data, *m_strategy, dec.tile_height, dec.tile_width, m_resolved,
                                      probe_starts(focus, diameters), m_positions, m_kept_file_positions,
                                      m_cfg.probe_focus_frames);
      focus = trial.start.focus;
      m_start_diameter = trial.start.diameter;
      m_log.info(probe_start_line(trial, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
    }
    State<T, Exec> state = initial_state<T, Exec>(m_space, m_data, *m_strategy, dec.tile_height, dec.tile_width,
                                                  m_guess, m_cfg.solver.modes, m_cfg.solver.seed, m_start_diameter,
                                                  focus == ProbeFocus::automatic ? ProbeFocus::upstream : focus);
    state.tile_y = dec.tile_y;
    state.tile_x = dec.tile_x;
    return state;
  }

  // What the trial chose and why, in one line: each side's costs after the
  // first epochs, one per diameter.
  std::string probe_start_line(ProbeStartTrial const& trial, double seconds) const {
    std::vector<double> diameters;
    for (ProbeStart const& s : trial.starts)
      if (std::find(diameters.begin(), diameters.end(), s.diameter) == diameters.end()) diameters.push_back(s.diameter);
    std::string costs;
    for (ProbeFocus side : {ProbeFocus::upstream, ProbeFocus::downstream}) {
      std::vector<std::string> side_costs;
      for (std::size_t k = 0; k < trial.starts.size(); ++k)
        if (trial.starts[k].focus == side) side_costs.push_back(fmt::format("{:.5g}", trial.costs[k]));
      if (!side_costs.empty())
        costs += fmt::format("{}{} {}", costs.empty() ? "" : ", ", to_string(side), fmt::join(side_costs, " / "));
    }
    std::vector<std::string> sizes;
    for (double d : diameters) sizes.push_back(fmt::format("{:.3g}", d));
    return fmt::format(
        "reconstruct: computed probe {} of the focus, {:.3g} px across ({} rPIE epochs from each start on {}{} "
        "frames in {:.2g} s{}: cost {} at {} px{}; --probe-focus and --probe-diameter set them)",
        to_string(trial.start.focus), trial.start.diameter, probe_focus_min_epochs, trial.frames,
        trial.frames < m_positions.size() ? fmt::format(" of {}", m_positions.size()) : "", seconds,
        trial.undecided_frames > 0 ? fmt::format(", after {} of them had not decided", trial.undecided_frames) : "",
        costs, fmt::join(sizes, " / "),
        trial.sides_ran_on ? fmt::format("; each side's best ran on for {} epochs: {:.5g} upstream, {:.5g} downstream",
                                         trial.epochs, trial.upstream_cost, trial.downstream_cost)
                           : "");
  }

  // What the run is about to do (collective: the isolated positions' sum).
  // False when a resumed run already holds its epochs.
  bool describe() {
    SolverOptions const& opts = m_rec->options();
    m_log.info(fmt::format("reconstruct: {} frames of {}x{} ({}) from {}, {} on {} rank(s) ({}), {} each, {} "
                           "precision, {} mode(s)",
                           m_kept.size(), m_layout.info.ny, m_layout.info.nx,
                           m_counts_held ? "uint16 counts" : "float32", m_input, opts.solver, m_comm.size(),
                           m_strategy->name(), execution_resources(), sizeof(T) == 4 ? "single" : "double",
                           m_rec->state().modes()));
    m_log.info(fmt::format("reconstruct: object {} x {} pixels of {:.4g} m, batch size {} ({}), noise {}",
                           m_layout.grid.height, m_layout.grid.width, m_layout.grid.pixel_size_x, opts.batch_size,
                           to_string(opts.batching), noise_name()));
    // Mini-batch solvers synchronise every batch; with fewer positions per
    // batch than ranks, some ranks hold none of a batch and only wait there
    // (DM and RAAR update from all positions at once).
    if (opts.solver != "dm" && opts.solver != "raar" && opts.batch_size < m_comm.size())
      m_log.warn(fmt::format("--batch-size {} is below the {} ranks: in each mini-batch some ranks hold no position "
                             "and only wait at its sums; --batch-size {} or more keeps every rank busy",
                             opts.batch_size, m_comm.size(), m_comm.size()));
    double isolated = double(m_rec->isolated_positions());  // summed over ranks: collective
    m_comm.allreduce(&isolated, 1, Datatype::float64, ReduceOp::sum);
    if (isolated > 0)
      m_log.info(fmt::format("reconstruct: {:.0f} of {} positions meet no other of their batch: "
                             "updated without object sums",
                             isolated, m_kept.size()));
    if (m_checkpoint) {
      m_log.info(fmt::format("reconstruct: resuming from {} after epoch {} (written by {} rank(s), {})", m_job.resume,
                             m_checkpoint->epoch, m_checkpoint->ranks, m_checkpoint->strategy));
      if (!m_cfg.resumed_solver.empty() && m_cfg.resumed_solver != opts.solver)
        m_log.info(fmt::format("reconstruct: the checkpoint ran {}; {} continues it, with its own defaults for the "
                               "options not given (batch size {}, momentum {})",
                               m_cfg.resumed_solver, opts.solver, opts.batch_size, opts.momentum));
      if (opts.solver == "dm" || opts.solver == "raar")
        m_log.info("reconstruct: " + opts.solver +
                   " restarts its exit waves from P S O (they are not checkpointed): expect a higher cost for a few "
                   "epochs (docs/usage.md)");
    }
    std::string text = to_toml(m_ran, false);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    m_log.info("reconstruct: configuration (TOML):\n" + text);
    if (m_rec->done() && m_checkpoint) {
      m_log.note(fmt::format("{} already holds {} epochs (>= --epochs {}): nothing to do; give a larger --epochs to "
                             "continue",
                             m_job.resume, m_checkpoint->epoch, opts.epochs));
      return false;
    }
    return true;
  }

  // What each rank runs on: "2 OpenMP thread(s)", "1 Serial thread(s)",
  // "one Cuda device".
  static std::string execution_resources() {
    Exec const exec;
    if (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible)
      return fmt::format("{} {} thread(s)", exec.concurrency(), Exec::name());
    return fmt::format("one {} device", Exec::name());
  }

  std::string noise_name() const {
    return m_rec->options().noise == NoiseModel::gaussian ? "gaussian" : "poisson";
  }

  // 4. The epochs, with a progress line each, scores against a truth and
  // checkpoints; the last checkpoint is written after them. Returns the
  // signal that stopped them (0 if none).
  int run_epochs() {
    SolverOptions const& opts = m_rec->options();
    if (m_checkpoint) {
      m_errors = m_checkpoint->result.object_error;
      m_fractions = m_checkpoint->result.mode_power_fractions;
    }
    m_errors.resize(std::size_t(m_rec->state().epoch), std::nan(""));
    int const first_epoch = m_rec->state().epoch;
    int stop = 0;
    bool object_gathered = false;  // the last epoch's score gathered the final object
    while (!m_rec->done()) {
      EpochReport const last = m_rec->step();
      m_elapsed += last.seconds;
      if (!last.mode_power_fractions.empty()) m_fractions = last.mode_power_fractions;
      double error = std::nan("");
      // Every rank must take the same decision: gather_object is collective.
      bool const final_epoch = m_rec->done();
      if (m_layout.info.has_truth &&
          (final_epoch || (m_cfg.error_every > 0 && last.epoch % m_cfg.error_every == 0))) {
        HostComplex2 gathered = m_strategy->gather_object(m_space, m_rec->state().object);  // collective
        if (m_truth->active()) error = m_truth->error(gathered);
        if (final_epoch) {  // what save would gather again
          m_object = gathered;
          object_gathered = true;
        }
      }
      m_errors.push_back(error);
      double const eta = m_elapsed / (last.epoch - first_epoch) * (opts.epochs - last.epoch);
      m_log.info(progress_line(last, error, eta));

      // Every rank stops after the same epoch: the largest flag wins.
      stop = int(m_strategy->max(double(requested_stop())));
      if (stop) break;
      if (m_cfg.checkpoint_every > 0 && last.epoch % m_cfg.checkpoint_every == 0 && !m_rec->done()) {
        save(false);
        m_log.info(fmt::format("reconstruct: checkpoint after epoch {} in {}", last.epoch, m_job.output));
      }
    }
    save(object_gathered);
    return stop;
  }

  std::string progress_line(EpochReport const& last, double error, double eta) const {
    // DM/RAAR with --cost-every K > 1 measure the cost only every K epochs.
    std::string const cost = std::isfinite(last.cost) ? fmt::format("{:.5g}", last.cost) : std::string("-");
    std::string line = fmt::format("epoch {:>4}/{}  cost {:<11} {:6.3f} s/epoch  ETA {}", last.epoch,
                                   m_rec->options().epochs, cost, last.seconds, format_duration(eta));
    if (m_comm.size() > 1) line += fmt::format("  moved {}", format_bytes(last.bytes));
    if (std::isfinite(last.position_rms_move_px))
      line += fmt::format("  positions {:.3f} px rms, {:.2f} max", last.position_rms_move_px,
                          last.position_max_move_px);
    if (std::isfinite(last.flux_rms_deviation))
      line += fmt::format("  flux {:.1f} % rms, {:.3f}-{:.3f}", 100 * last.flux_rms_deviation, last.flux_min,
                          last.flux_max);
    if (std::isfinite(last.background_fraction))
      line += fmt::format("  background {:.2f} % of counts", 100 * last.background_fraction);
    if (std::isfinite(error)) line += fmt::format("  error {:.4f}", error);
    return line;
  }

  // Every frame's position as the result keeps it: refined where refined,
  // the file's for skipped frames.
  Positions result_positions() const {
    Positions p = m_file_positions;
    for (std::size_t k = 0; k < m_kept.size(); ++k) p[m_kept[k]] = m_rec->positions()[k];
    return p;
  }

  // Every file frame's relative flux when intensities are refined (those
  // skipped for holding no counts had no beam: 0), else empty. Collective.
  std::vector<double> result_flux() const {
    std::vector<double> const kept_flux = m_rec->relative_flux();
    std::vector<double> flux;
    if (kept_flux.empty()) return flux;
    flux.assign(file_frames(), 0.0);
    for (std::size_t k = 0; k < m_kept.size(); ++k) flux[m_kept[k]] = kept_flux[k];
    return flux;
  }

  // Gathers the object (collective) unless m_object holds it already
  // (`gathered`), and writes the checkpoint on rank 0; there m_object and
  // m_probe become the result's (without the phase ramp unless
  // --keep-phase-ramp).
  void save(bool gathered) {
    SolverOptions const& opts = m_rec->options();
    auto const& state = m_rec->state();
    if (!gathered) m_object = m_strategy->gather_object(m_space, state.object);
    m_probe = m_strategy->probe_on_host(m_space, state.probe);
    std::vector<double> const flux = result_flux();  // collective
    HostComplex2 object_velocity;  // momentum's, for --resume
    if (state.object_velocity.extent(0) > 0)
      object_velocity = m_strategy->gather_object(m_space, state.object_velocity);  // collective
    if (!m_log.root()) return;
    Checkpoint c;
    if (object_velocity.extent(0) > 0) {
      c.object_velocity = object_velocity;
      c.probe_velocity = m_strategy->probe_on_host(m_space, state.probe_velocity);
    }
    ResultContents& r = c.result;
    r.object = m_object;
    r.probe = m_probe;
    r.positions_px = result_positions();
    if (m_cfg.remove_phase_ramp) {
      // The result takes the gauge without a mean phase gradient; the
      // checkpoint keeps the run's own state for --resume.
      c.state_object = m_object;
      c.state_probe = m_probe;
      r.object = HostComplex2(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::result_object"),
                              m_object.extent(0), m_object.extent(1));  // every pixel copied below
      r.probe = HostComplex3(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ptyko::result_probe"),
                             m_probe.extent(0), m_probe.extent(1), m_probe.extent(2));
      Kokkos::deep_copy(r.object, m_object);  // host -> host: the state's object, left as it is
      Kokkos::deep_copy(r.probe, m_probe);    // host -> host: the state's probe
      remove_object_phase_ramp(r.object, r.probe, m_rec->positions());  // where frames lit the object
    }
    if (opts.refine_positions) r.file_positions_px = m_file_positions;
    r.relative_flux = flux;
    r.background = background_on_host(m_space, state);
    r.object_pixel_size_m = {m_layout.grid.pixel_size_y, m_layout.grid.pixel_size_x};
    r.object_origin_px = {m_layout.grid.origin_y, m_layout.grid.origin_x};
    r.cost = state.cost;
    r.counting_noise_cost = m_rec->counting_noise_floor();
    r.noise_model = noise_name();
    r.epoch_seconds = state.epoch_seconds;
    r.bytes_moved = state.bytes_moved;
    r.mode_power_fractions = m_fractions;
    if (m_truth->active()) r.object_error = m_errors;
    r.config = to_toml(m_ran, false);
    r.provenance = provenance(m_comm.size());
    c.epoch = state.epoch;
    c.seed = opts.seed;
    c.rng_state = state.rng_state;
    c.ranks = m_comm.size();
    c.strategy = m_strategy->name();
    c.double_precision = sizeof(T) == 8;
    c.input = fs::absolute(m_input).lexically_normal().string();
    if (!m_job.single) fs::create_directories(fs::path(m_job.output).parent_path());
    write_checkpoint(m_job.output, c);
    m_object = r.object;  // the pictures show the result
    m_probe = r.probe;
  }

  [[noreturn]] void stopped(int stop) {
    m_log.note(fmt::format("stopped by {} after epoch {} of {}: checkpoint written to {}", signal_name(stop),
                           m_rec->state().epoch, m_rec->options().epochs, m_job.output));
    if (m_job.single) m_log.note("resume with: " + resume_command(m_comm.size(), {}, m_job.output));
    throw Exit{128 + stop};
  }

  // 5. The pictures and the closing lines.
  void finish() {
    SolverOptions const& opts = m_rec->options();
    auto const& state = m_rec->state();
    std::vector<double> const flux = result_flux();  // collective
    if (!m_log.root()) return;
    std::vector<std::string> pictures;
    if (m_cfg.images)
      pictures = write_result_pictures(m_job.output, m_object, m_probe, m_fractions, state.cost, noise_name(),
                                       opts.refine_positions ? m_file_positions : Positions(),
                                       opts.refine_positions ? result_positions() : Positions(), flux,
                                       background_on_host(m_space, state));
    std::string done = fmt::format("reconstruct: wrote {} after {} epochs in {}", m_job.output, state.epoch,
                                   format_duration(m_elapsed));
    auto const& costs = state.cost;
    auto const measured = std::find_if(costs.rbegin(), costs.rend(), [](double c) { return std::isfinite(c); });
    double const floor = m_rec->counting_noise_floor();
    if (measured != costs.rend()) {  // else: no epoch ran, or none measured its cost
      done += measured == costs.rbegin()
                  ? fmt::format(", final cost {:.5g}", *measured)
                  : fmt::format(", cost {:.5g} at epoch {}", *measured, costs.rend() - measured);  // a stop between DM's measurements
      if (floor > 0) done += fmt::format(" ({:.2g} x counting noise)", *measured / floor);
    }
    if (m_truth->active() && !m_errors.empty() && std::isfinite(m_errors.back()))
      done += fmt::format(", error against the truth {:.4f}", m_errors.back());
    m_log.info(done);
    if (measured != costs.rend() && floor > 0 && *measured > k_unexplained * floor &&
        state.epoch >= k_unexplained_epochs)
      m_log.warn(fmt::format(
          "the final cost is {:.2g} times what counting noise alone leaves ({:.5g} against {:.5g} per frame): the "
          "model does not explain much of the frames; a flux that varied between frames or a background: "
          "--refine-intensities, --refine-background; if the object looks wrong: the probe's size "
          "(--probe-diameter) or a probe (--probe), the geometry (ptyko info), --solver dm; frames in detector "
          "units, not photons: --adu-per-photon",
          *measured / floor, *measured, floor));
    for (auto const& p : pictures) m_log.info("reconstruct: wrote " + p);
    if (m_guess.extent(0) == 0 && m_probe.extent(0) > 0)
      warn_low_overlap(m_log, m_input, m_step, m_probe, "reconstructed probe", "the result may be unreliable");
  }

  // A final cost this many times the counting-noise floor, after this many
  // epochs, is worth a warning: converged runs end at 0.66-1.2 times it,
  // runs stuck with a wrong probe start at 5-13 times, a flux varying by
  // 10 % between frames left unrefined at 4.3 (docs/solvers.md).
  static constexpr double k_unexplained = 3;
  static constexpr int k_unexplained_epochs = 50;

  Communicator const& m_comm;
  RunConfig const& m_cfg;
  double m_start_diameter = 0;  // the computed probe's diameter, given or chosen by the trial (fresh_state)
  ViewJob const& m_job;
  std::string const& m_input;
  Exec m_space;
  Log m_log;

  // 1. open
  ScanLayout m_layout;
  SolverOptions m_resolved;  ///< the options with the solver's defaults for these frames
  std::optional<Checkpoint> m_checkpoint;
  std::unique_ptr<parallel::Strategy<T, Exec>> m_strategy;
  LocalData<T, Exec> m_data;  ///< moved into m_rec by make_reconstruction
  HostComplex3 m_guess;       ///< the probe guess (extent 0 when none)
  std::unique_ptr<TruthScore> m_truth;
  Positions m_file_positions;  ///< the file's (m_layout's may be a checkpoint's refined ones)

  // 2. survey_frames
  std::vector<std::size_t> m_kept, m_empty;  ///< file frames with counts, and without (both with a position)
  std::vector<std::size_t> m_invalid;        ///< file frames read as zeros: no intensity in most pixels
  Positions m_positions, m_kept_file_positions;  ///< the kept frames' current and file positions
  double m_step = 0;  ///< the scan's typical step, pixels

  // 3. make_reconstruction
  bool m_counts_held = false;  ///< every rank holds its frames as counts
  std::unique_ptr<Reconstruction<T, Exec>> m_rec;
  RunConfig m_ran;  ///< the configuration as run (the result's)

  // 4. run_epochs
  std::vector<double> m_errors, m_fractions;  ///< per epoch: error against the truth; last mode power fractions
  double m_elapsed = 0;                       ///< seconds in this run's epochs
  HostComplex2 m_object;                      ///< rank 0: the result's object and probe (after save)
  HostComplex3 m_probe;
};

}  // namespace

template <class T>
void run_view(Communicator const& comm, RunConfig const& cfg, ViewJob const& job) {
  ViewRun<T>(comm, cfg, job).run();
}

template void run_view<float>(Communicator const&, RunConfig const&, ViewJob const&);
template void run_view<double>(Communicator const&, RunConfig const&, ViewJob const&);

}  // namespace ptyko::drivers
