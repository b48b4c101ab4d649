#pragma once
// Solvers: one interface (an epoch over global mini-batches), a registry from
// names to solvers, and the options they share. Solvers are MPI-free: every
// sum that spans positions of several ranks goes through Sync.

#include <ptyko/core/batching.hpp>
#include <ptyko/core/state.hpp>
#include <ptyko/core/sync.hpp>
#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/fourier.hpp>
#include <ptyko/kernels/position_gradient.hpp>
#include <ptyko/kernels/tiles.hpp>
#include <ptyko/kernels/types.hpp>

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ptyko {

/// Which positions the object/probe preconditioners sum over.
enum class IlluminationNorm {
  batch,  ///< the current mini-batch (converges best; the default)
  all     ///< all positions, recomputed once per epoch (tike's choice)
};

/// How the host FFT (FFTW) plans its transforms. estimate: quick to plan and
/// the same plan every run; measure: times candidate plans once per shape
/// (seconds) and may pick another plan on another run, so results can differ
/// at float rounding between runs — FFTW's estimate is 6-10x slower than
/// measure at D = 256 (docs/performance.md); automatic: measure for
/// D >= 256, estimate below. Device FFTs (cuFFT, hipFFT) ignore it.
enum class FFTPlanner { automatic, estimate, measure };

/// "auto", "estimate", "measure"; throws UserError naming --fft-planner.
FFTPlanner parse_fft_planner(std::string const& name);
std::string to_string(FFTPlanner p);
/// The planning effort for frames of D x D.
FFTPlanEffort plan_effort(FFTPlanner p, int D);

struct SolverOptions {
  std::string solver = "lsqml";
  int epochs = 100;
  int batch_size = 0;       ///< 0: the solver's default
  BatchingScheme batching = BatchingScheme::sparse;
  NoiseModel noise = NoiseModel::gaussian;
  double alpha = -1;        ///< object regularisation (rPIE/LSQML); < 0: default
  double beta = -1;         ///< probe regularisation (rPIE/LSQML) or RAAR relaxation; < 0: default
  int probe_update_start = -1;  ///< first epoch that updates the probe; < 0: default
  bool update_probe = true;
  int modes = 0;            ///< probe modes; 0: the file's guess's count, else 1
  std::uint64_t seed = 1;
  double probe_support = 0; ///< support radius in pixels (0: none)
  bool object_clip = false; ///< clip |O| <= 1 after each update
  int rescale_every = 10;   ///< epochs between object/probe scale normalisations (0: never)
  /// Momentum across epochs (core/momentum.hpp): the share of the last
  /// velocity each epoch keeps, in [0, 1) (0: none); < 0: default (0.9 for
  /// rPIE, ePIE and LSQML; DM and RAAR, not descent methods, take none).
  double momentum = -1;

  int cost_every = 1;       ///< DM/RAAR: epochs between true model-cost evaluations (and the last epoch)
  /// DM/RAAR: power bound of the Fourier projection as PtyPy's
  /// fourier_relax_factor (0: the plain modulus projection); < 0: default
  double fourier_relax = -1;
  /// DM/RAAR: rounds of object-then-probe updates from the stored exit
  /// waves per epoch that updates the probe (PtyPy's overlap loop of up to
  /// overlap_max_iterations; PyNX makes one). One round converges as well
  /// per epoch on ptyko's test scans and costs one read of every stored
  /// wave less than two (docs/solvers.md, docs/performance.md item 56).
  int overlap_passes = 1;
  IlluminationNorm illumination = IlluminationNorm::batch;
  FFTPlanner fft_planner = FFTPlanner::automatic;
  /// Positions per pass of the per-position pipeline (0: automatic, sized
  /// for the cache on host spaces, the whole batch on devices). A tuning and
  /// testing knob: it changes the speed, not the result (up to rounding).
  int pipeline_chunk = 0;
  /// Whether solvers that can (rPIE/ePIE, LSQML) take the isolated
  /// positions of a batch, those whose footprints meet no other's (on
  /// pixels of one rank, Sync::footprint_private, unless the strategy moves
  /// their products to the other holders, Sync::held_boxes), straight from their patches
  /// instead of through object-shaped sums (kernels/isolated_update.hpp). A
  /// testing knob like pipeline_chunk: the same result up to rounding.
  bool isolated_updates = true;
  /// Position refinement (core/position_refinement.hpp): after the epochs
  /// from positions_start on, every positions_every epochs, each position
  /// moves by at most positions_step pixels towards where its exit-wave
  /// update says the object lies, and never more than positions_max_shift
  /// pixels from the file's position.
  bool refine_positions = false;
  int positions_start = -1;          ///< first epoch (0-based) that refines; < 0: default (epochs / 5)
  int positions_every = 1;           ///< epochs between refinements
  double positions_step = 0.5;       ///< largest move of one refinement, pixels
  double positions_max_shift = -1;   ///< largest move from the file's position, pixels; < 0: D / 4
  /// Intensity refinement (core/intensity_refinement.hpp): after the
  /// epochs from intensities_start on, every intensities_every epochs,
  /// each frame's data are scaled to its model's counts (the frame's
  /// relative incident flux).
  bool refine_intensities = false;
  int intensities_start = -1;  ///< first epoch (0-based) that refines; < 0: default
  int intensities_every = 5;   ///< epochs between refinements
  /// Background refinement (core/background_refinement.hpp): after the
  /// epochs from background_start on, every background_every epochs, the
  /// incoherent background common to all frames takes one EM step.
  bool refine_background = false;
  int background_start = -1;  ///< first epoch (0-based) that refines; < 0: default
  int background_every = 2;   ///< epochs between refinements
};

/// Fills the "< 0 / 0 means default" fields of `o` for its solver and
/// checks ranges; throws UserError naming the option.
void resolve_solver_defaults(SolverOptions& o, std::size_t frames);

/// LSQML on several ranks: global batches of up to this many positions
/// bring every position's step sums to every rank as rows (48 bytes each,
/// one all-reduce); larger ones their two sums twice (two all-reduces of
/// 16 bytes), where the rows' bytes would outweigh a collective's latency:
/// 4 x 48 G bytes at 25 GB/s take as long as log2 P rounds of 5 us for
/// G ~ 650 log2 P, 3900-6500 positions at P = 64-1024 (docs/performance.md,
/// item 54).
inline constexpr int lsqml_step_rows_limit = 4096;

/// One global mini-batch as seen by one rank.
template <class ExecSpace>
struct LocalBatch {
  IndexView<typename ExecSpace::memory_space> local;  ///< this rank's frames in it
  int global_size = 0;                                ///< positions over all ranks
  /// Each of `local`'s positions' place among the batch's global_size (the
  /// same on every rank): per-position values summed over ranks in these
  /// rows arrive in one order whatever the rank count.
  std::vector<int> global_rows;
  /// Tiles of this rank's object touched by the footprints of all positions
  /// of the batch (every rank's): the only pixels its object sums reach.
  /// With their host copy, for the strategies' message plans.
  MirroredTileList<typename ExecSpace::memory_space> tiles;
  /// The last `isolated` positions of `local` are isolated: their
  /// footprints meet no other position's of the batch, so the solver
  /// updates them directly and `tiles` covers only the others. 0 unless
  /// the solver asked for isolated positions
  /// (Solver::updates_isolated_positions).
  int isolated = 0;
  /// Where isolated positions' pixels are held by several ranks
  /// (Sync::held_boxes): the parts of their products this rank sends and
  /// receives, and the other ranks' positions it updates too. Null when
  /// there are none.
  std::shared_ptr<SharedIsolated<typename ExecSpace::memory_space> const> shared;
  int foreign() const { return shared ? shared->foreign() : 0; }
};

template <class T, class ExecSpace>
class Solver {
 public:
  using Data = LocalData<T, ExecSpace>;
  using St = State<T, ExecSpace>;
  using SyncT = Sync<T, ExecSpace>;
  using Batch = LocalBatch<ExecSpace>;

  virtual ~Solver() = default;
  virtual std::string name() const = 0;
  /// Allocates work buffers once for the run. `max_local_batch` is the most
  /// frames of one batch this rank holds.
  virtual void setup(ExecSpace const& space, Data const& data, St const& state,
                     SolverOptions const& options, int max_local_batch) = 0;
  /// Runs one epoch over `batches` in the given order, updating the object
  /// and (if `update_probe`) the probe. Returns the cost summed over this
  /// rank's frames. Collective over the ranks behind `sync`.
  virtual double epoch(ExecSpace const& space, Data const& data, St& state,
                       std::vector<Batch const*> const& batches, SyncT& sync, bool update_probe) = 0;
  /// Whether this solver, with `options` and `sync`, updates the isolated
  /// positions of a batch itself (LocalBatch::isolated): then the
  /// batches put them last and leave them out of their tiles.
  virtual bool updates_isolated_positions(SolverOptions const& /*options*/, SyncT const& /*sync*/) const {
    return false;
  }
  /// Whether epoch() forms every position's exit-wave update from the
  /// current object and probe, and can then collect the sums of position
  /// refinement as it goes (collect_position_sums): rPIE/ePIE and LSQML.
  virtual bool collects_position_sums() const { return false; }
  /// The View (one row per local frame) that the following epochs fill with
  /// the sums of position refinement (kernels/position_gradient.hpp); an
  /// empty View stops it. Only for solvers that collects_position_sums().
  void collect_position_sums(PositionSumsView<typename ExecSpace::memory_space> const& sums) {
    m_position_sums = sums;
  }
  /// The cost per frame that counting noise alone would leave
  /// (noise_floor.hpp, under the run's noise model), given once after
  /// setup: a solver that relaxes its projection to the noise (DM's power
  /// bound, power_bound.hpp) keeps it.
  virtual void counting_noise_floor(double /*cost_per_frame*/) {}
  /// The probe modes were recombined, new mode k = sum_m V(m, k) old mode m
  /// (V is M x M, row-major): solvers that keep per-mode state follow suit.
  virtual void modes_recombined(ExecSpace const&, std::vector<std::complex<double>> const& /*V*/) {}

 protected:
  PositionSumsView<typename ExecSpace::memory_space> m_position_sums;  ///< collect_position_sums
};

/// Names accepted by make_solver, in the order shown to users.
std::vector<std::string> solver_names();
/// A new solver by name; throws UserError listing the valid names.
template <class T, class ExecSpace>
std::unique_ptr<Solver<T, ExecSpace>> make_solver(std::string const& name);

}  // namespace ptyko
