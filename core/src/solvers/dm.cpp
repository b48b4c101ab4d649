// Difference map (Thibault et al. 2008/2009) and RAAR (Luke 2005), with one
// stored exit wave per position and mode. Per epoch:
//  1. overlap projection, alternating object and probe (overlap_passes
//     rounds when the probe is updated, one by default):
//       O   = (sum_j S_j^T sum_m conj(P_m) psi_jm + i_O O) / (sum_j S_j^T sum_m |P_m|^2 + i_O)
//       P_m = (sum_j conj(S_j O) psi_jm + i_P P_m)  / (sum_j |S_j O|^2 + i_P)
//     with small inertias i (1e-4 of the weights' maxima) for unlit pixels;
//  2. Fourier step, per position: po = P S_j O,
//       psi_j <- beta (psi_j + Pi_F(2 po - psi_j) - po) + (1 - beta) po
//     (beta = 1: DM; beta < 1: RAAR with A = Fourier and B = overlap
//     constraints in Luke's notation). Pi_F is the Gaussian modulus
//     projection, or with a power bound (fourier_relax > 0, DM's default;
//     PtyPy's fourier_relax_factor) its relaxed form: a frame whose mean
//     squared modulus deviation err = <(|Psi| - sqrt(d))^2> exceeds
//     pbound = relax^2 max_j(sum d_j) / (4 D^2) moves only onto the sphere of
//     radius sqrt(pbound) around the data, |Psi'| = sqrt(d) + (|Psi| - sqrt(d))
//     sqrt(pbound / err), and a frame within it is left as it is. This keeps
//     DM from chasing the photon noise. ptyko holds pbound between 0.1 and
//     1 times the counting noise per pixel and loosens it where DM drifts
//     (power_bound.hpp, docs/solvers.md).
// The exit waves stay on their rank; only the overlap sums are synchronised.
//
// The first object pass of an epoch reads the waves the last Fourier step
// wrote, with the probe that step used: its sums are formed in that step,
// chunk by chunk while the waves are still in cache, instead of in one more
// pass over every stored wave (from memory: docs/performance.md, section 5).

#include "pie_common.hpp"

#include <ptyko/core/power_bound.hpp>

#include <ptyko/kernels/frame_loop.hpp>
#include <ptyko/kernels/modes.hpp>
#include <ptyko/kernels/update.hpp>

#include <limits>

namespace ptyko::impl {

/// waves(b) <- scale (2 P S_b O - psi(b)): the reflected estimate fed to Pi_F
/// (scale = 1/D folds in the orthonormal factor of the FFT that follows).
template <class T, class ExecSpace>
void reflect_exit_waves(ExecSpace const& space, int B, ComplexView3<T, typename ExecSpace::memory_space> const& probe,
                        ComplexView3<T, typename ExecSpace::memory_space> const& patches,
                        ComplexView4<T, typename ExecSpace::memory_space> const& psi,
                        ComplexView4<T, typename ExecSpace::memory_space> const& waves, T scale) {
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  auto P = probe;
  auto S = patches;
  auto X = psi;
  auto W = waves;
  for_each_frame_span(space, "ptyko::DM::reflect", B, D, KOKKOS_LAMBDA(int b, int i, int j0, int j1) {
        // Over (re, im) pairs, iterations independent (update_exit_waves).
        T const* s = as_pairs(&S(b, i, 0));
        for (int m = 0; m < M; ++m) {
          T const* p = as_pairs(&P(m, i, 0));
          T const* x = as_pairs(&X(b, m, i, 0));
          T* w = as_pairs(&W(b, m, i, 0));
          PTYKO_INDEPENDENT_ITERATIONS
          for (int j = j0; j < j1; ++j) set_pair(w, j, scale * (T(2) * pair_product(p, s, j) - pair_at(x, j)));
        }
      });
}

/// psi(b) <- beta (psi + projected - po) + (1 - beta) po, po = P S_b O, and
/// products(b) = sum_m conj(P_m) psi(b, m) of the new waves: the object sums'
/// per-patch product (UpdateSums::product_slots), formed while the waves are
/// in registers instead of in one more pass over them.
template <class T, class ExecSpace>
void update_exit_waves(ExecSpace const& space, int B, ComplexView3<T, typename ExecSpace::memory_space> const& probe,
                       ComplexView3<T, typename ExecSpace::memory_space> const& patches,
                       ComplexView4<T, typename ExecSpace::memory_space> const& projected,
                       ComplexView4<T, typename ExecSpace::memory_space> const& psi, T beta,
                       ComplexView3<T, typename ExecSpace::memory_space> const& products) {
  int const M = int(probe.extent(0)), D = int(probe.extent(1));
  auto P = probe;
  auto S = patches;
  auto Y = projected;
  auto X = psi;
  auto G = products;
  for_each_frame_span(space, "ptyko::DM::update_exit_waves", B, D, KOKKOS_LAMBDA(int b, int i, int j0, int j1) {
        Complex<T> const* s = &S(b, i, 0);
        Complex<T>* g = &G(b, i, 0);
        for (int j = j0; j < j1; ++j) g[j] = Complex<T>(0);
        // Over the rows' (re, im) pairs, with the iterations declared
        // independent: Clang 14 vectorises the loop only in this form
        // (docs/performance.md, item 78); GCC vectorises either.
        T const* sp = as_pairs(s);
        T* gp = as_pairs(g);
        for (int m = 0; m < M; ++m) {
          T const* p = as_pairs(&P(m, i, 0));
          T const* y = as_pairs(&Y(b, m, i, 0));
          T* x = as_pairs(&X(b, m, i, 0));
          PTYKO_INDEPENDENT_ITERATIONS
          for (int j = j0; j < j1; ++j) {
            Complex<T> const pj = pair_at(p, j);
            Complex<T> const po = pair_product(p, sp, j);  // P S_b O
            Complex<T> const xj = beta * (pair_at(x, j) + pair_at(y, j) - po) + (T(1) - beta) * po;
            set_pair(x, j, xj);
            set_pair(gp, j, pair_at(gp, j) + math::conj_mul(pj, xj));  // conj(P) psi
          }
        }
      });
}

/// Per frame b: the frame's mean squared amplitude error against the data
/// and the factor that scales every mode of pixel (i, j).
template <class T>
struct PowerBound {
  T renorm, eps, out_scale;
  bool project;
  /// Error per measured pixel `err` -> whether to project and how far.
  KOKKOS_INLINE_FUNCTION PowerBound(double err, double pbound, T eps_, T out_scale_)
      : renorm(err > pbound ? T(math::sqrt(pbound / err)) : T(0)), eps(eps_), out_scale(out_scale_),
        project(err > pbound) {}
  /// A frame within the bound keeps its Psi; renorm = 0 would be the full
  /// modulus projection. I: model intensity, d: measured counts.
  KOKKOS_INLINE_FUNCTION T factor(T I, T d, bool measured) const {
    T const a = math::sqrt(I), fm = math::sqrt(d);
    return project && measured ? out_scale * ((fm + (a - fm) * renorm) / (a + eps)) : out_scale;
  }
};

/// What power_bound_projection works on (captured whole by its kernels).
template <class T, class Mem, class DataView>
struct PowerBoundInput {
  ComplexView4<T, Mem> F;    ///< far fields (B, M, D, D), changed in place
  DataView d;                ///< measured frames (uint16 counts or float)
  IndexView<Mem> idx;        ///< frame of each b
  MaskView<Mem> msk;         ///< empty: every pixel measured
  RealView2<T, Mem> bg;      ///< incoherent background (D, D) in the model's intensity; empty: none
  int measured;              ///< measured pixels per frame
  double pbound;             ///< power bound per pixel
  T eps, out_scale;
  KOKKOS_INLINE_FUNCTION bool is_measured(int i, int j) const { return msk.extent(0) == 0 || msk(i, j) != 0; }
  KOKKOS_INLINE_FUNCTION T background(int i, int j) const { return bg.extent(0) > 0 ? bg(i, j) : T(0); }
  /// Row i of the background, or null without one.
  KOKKOS_INLINE_FUNCTION T const* background_row(int i) const { return bg.extent(0) > 0 ? &bg(i, 0) : nullptr; }
  KOKKOS_INLINE_FUNCTION PowerBound<T> bound(double sum) const {
    return PowerBound<T>(measured > 0 ? sum / measured : 0, pbound, eps, out_scale);
  }
  /// The first `modes` modes of frame b times s: a frame within the bound
  /// keeps its Psi and takes only the output scale.
  KOKKOS_INLINE_FUNCTION void scale_frame(int b, int modes, T s) const {
    int const D = int(F.extent(2));
    for (int m = 0; m < modes; ++m)
      for (int i = 0; i < D; ++i) {
        Complex<T>* f = &F(b, m, i, 0);
        for (int j = 0; j < D; ++j) f[j] *= s;
      }
  }
};

/// power_bound_projection on host spaces: one frame per work item walking
/// its rows over row pointers, in chunks of columns with local arrays
/// (element-wise loops that vectorise). The error is summed in float lanes
/// along a row and in double over the rows (a fixed order).
template <class T, class ExecSpace, class DataView>
double power_bound_projection_rows(ExecSpace const& space, int B,
                                   PowerBoundInput<T, typename ExecSpace::memory_space, DataView> const& in) {
  int const M = int(in.F.extent(1)), D = int(in.F.extent(2));
  bool const has_mask = in.msk.extent(0) > 0;
  double cost = 0;
  Kokkos::parallel_reduce(
      "ptyko::DM::power_bound_projection", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, B),
      KOKKOS_LAMBDA(int b, double& acc) {
        constexpr int chunk = 16;
        int const frame = in.idx(b);
        double sum = 0;
        T I[chunk];
        for (int i = 0; i < D; ++i) {
          auto const* meas = &in.d(frame, i, 0);
          std::uint8_t const* measured = has_mask ? &in.msk(i, 0) : nullptr;
          T lane[chunk] = {};
          for (int c0 = 0; c0 < D; c0 += chunk) {
            int const n = D - c0 < chunk ? D - c0 : chunk;
            chunk_intensity(in.F, b, i, c0, n, M, I);
            if (T const* incoherent = in.background_row(i))
              for (int k = 0; k < n; ++k) I[k] += incoherent[c0 + k];
            T dev2[chunk];
            for (int k = 0; k < n; ++k) {
              T const dev = math::sqrt(I[k]) - math::sqrt(T(meas[c0 + k]));
              dev2[k] = dev * dev;
            }
            if (measured != nullptr)
              for (int k = 0; k < n; ++k) dev2[k] = measured[c0 + k] != 0 ? dev2[k] : T(0);
            for (int k = 0; k < n; ++k) lane[k] += dev2[k];
          }
          T row = 0;
          for (int k = 0; k < chunk; ++k) row += lane[k];
          sum += double(row);
        }
        PowerBound<T> const bound = in.bound(sum);
        if (!bound.project) {
          in.scale_frame(b, M, bound.out_scale);  // within the bound
        } else {
          for (int i = 0; i < D; ++i) {
            auto const* meas = &in.d(frame, i, 0);
            std::uint8_t const* measured = has_mask ? &in.msk(i, 0) : nullptr;
            for (int c0 = 0; c0 < D; c0 += chunk) {
              int const n = D - c0 < chunk ? D - c0 : chunk;
              T factor[chunk];
              chunk_intensity(in.F, b, i, c0, n, M, I);
              if (T const* incoherent = in.background_row(i))
                for (int k = 0; k < n; ++k) I[k] += incoherent[c0 + k];
              for (int k = 0; k < n; ++k) factor[k] = bound.factor(I[k], T(meas[c0 + k]), true);
              if (measured != nullptr)
                for (int k = 0; k < n; ++k) factor[k] = measured[c0 + k] != 0 ? factor[k] : bound.out_scale;
              for (int m = 0; m < M; ++m) {
                Complex<T>* f = &in.F(b, m, i, c0);
                for (int k = 0; k < n; ++k) f[k] *= factor[k];
              }
            }
          }
        }
        acc += sum;
      },
      cost);
  return cost;
}

/// The projection onto the power bound's sphere as a Fourier op (see
/// impl::fourier_row): |Psi'| = sqrt(d) + (|Psi| - sqrt(d)) renorm; masked
/// pixels keep Psi.
template <class T>
struct PowerBoundOp {
  static constexpr bool modifies = true;
  static constexpr int masked_factor = 1;
  T renorm, eps;
  KOKKOS_INLINE_FUNCTION T factor(T I, T d) const {
    T const a = math::sqrt(I), fm = math::sqrt(d);
    return (fm + (a - fm) * renorm) / (a + eps);
  }
  KOKKOS_INLINE_FUNCTION T cost(T, T) const { return T(0); }
};

/// power_bound_projection_rows for a compiled mode count MC: both passes
/// over a frame's rows are impl::fourier_row (every mode of a pixel in
/// registers); first the frame's error (the Gaussian cost's terms), then the
/// projection.
template <int MC, class T, class ExecSpace, class DataView>
double power_bound_projection_compiled(ExecSpace const& space, int B,
                                       PowerBoundInput<T, typename ExecSpace::memory_space, DataView> const& in) {
  int const D = int(in.F.extent(2));
  bool const has_mask = in.msk.extent(0) > 0;
  double cost = 0;
  Kokkos::parallel_reduce(
      "ptyko::DM::power_bound_projection", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(space, 0, B),
      KOKKOS_LAMBDA(int b, double& acc) {
        constexpr int N = span_chunk_v<ExecSpace>;
        int const frame = in.idx(b);
        Complex<T>* rows[MC];
        double sum = 0;
        impl::MeasureOnly<impl::GaussianCost<T>> const error{{in.eps}};
        for (int i = 0; i < D; ++i) {
          for (int m = 0; m < MC; ++m) rows[m] = &in.F(b, m, i, 0);
          sum += double(impl::fourier_row<MC, N>(rows, &in.d(frame, i, 0), has_mask ? &in.msk(i, 0) : nullptr,
                                                 in.background_row(i), 0, D, error, T(1)));
        }
        PowerBound<T> const bound = in.bound(sum);
        if (!bound.project) {
          in.scale_frame(b, MC, bound.out_scale);  // within the bound
        } else {
          PowerBoundOp<T> const op{bound.renorm, in.eps};
          for (int i = 0; i < D; ++i) {
            for (int m = 0; m < MC; ++m) rows[m] = &in.F(b, m, i, 0);
            impl::fourier_row<MC, N>(rows, &in.d(frame, i, 0), has_mask ? &in.msk(i, 0) : nullptr,
                                     in.background_row(i), 0, D, op, bound.out_scale);
          }
        }
        acc += sum;
      },
      cost);
  return cost;
}

/// power_bound_projection on device spaces: one team per frame.
template <class T, class ExecSpace, class DataView>
double power_bound_projection_teams(ExecSpace const& space, int B,
                                    PowerBoundInput<T, typename ExecSpace::memory_space, DataView> const& in) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  int const M = int(in.F.extent(1)), D = int(in.F.extent(2));
  int const pixels = D * D;
  double cost = 0;
  Kokkos::parallel_reduce(
      "ptyko::DM::power_bound_projection", Policy(space, B, Kokkos::AUTO),
      KOKKOS_LAMBDA(Member const& team, double& acc) {
        int const b = team.league_rank();
        int const frame = in.idx(b);
        double sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, pixels),
            [&](int k, double& s) {
              int const i = k / D, j = k % D;
              if (!in.is_measured(i, j)) return;
              T I = in.background(i, j);
              for (int m = 0; m < M; ++m) I += math::norm2(in.F(b, m, i, j));
              T const dev = math::sqrt(I) - math::sqrt(T(in.d(frame, i, j)));
              s += double(dev * dev);
            },
            sum);
        team.team_barrier();  // every thread has read Psi before it changes
        PowerBound<T> const bound = in.bound(sum);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, pixels), [&](int k) {
          int const i = k / D, j = k % D;
          T I = in.background(i, j);
          for (int m = 0; m < M; ++m) I += math::norm2(in.F(b, m, i, j));
          T const factor = bound.factor(I, T(in.d(frame, i, j)), in.is_measured(i, j));
          for (int m = 0; m < M; ++m) in.F(b, m, i, j) *= factor;
        });
        Kokkos::single(Kokkos::PerTeam(team), [&]() { acc += sum; });
      },
      cost);
  return cost;
}

/// The power-bounded modulus projection (see the file comment), in place on
/// the far fields Psi (B, M, D, D) of frames data(indices(b)); every value is
/// also multiplied by `out_scale` (the orthonormal factor of the inverse FFT
/// that follows, as in modulus_projection). Masked pixels keep the model
/// value; `measured` is the number of unmasked pixels; the model's
/// intensity includes `background` (empty: none). Returns the Gaussian cost
/// of the Psi it received (blocking).
template <class T, class ExecSpace, class DataView>
double power_bound_projection(ExecSpace const& space, int B,
                              ComplexView4<T, typename ExecSpace::memory_space> const& Psi, DataView const& data,
                              IndexView<typename ExecSpace::memory_space> const& indices,
                              MaskView<typename ExecSpace::memory_space> const& mask,
                              RealView2<T, typename ExecSpace::memory_space> const& background, int measured,
                              double pbound, T eps, T out_scale) {
  PowerBoundInput<T, typename ExecSpace::memory_space, DataView> const in{
      Psi, data, indices, mask, background, measured, pbound, eps, out_scale};
  if constexpr (is_host_space_v<ExecSpace>)
    return with_compiled_modes(int(Psi.extent(1)), [&](auto mc) {
      constexpr int MC = decltype(mc)::value;
      if constexpr (MC > 0)
        return power_bound_projection_compiled<MC, T>(space, B, in);
      else
        return power_bound_projection_rows<T>(space, B, in);
    });
  else
    return power_bound_projection_teams<T>(space, B, in);
}

/// Number of measured pixels of a D x D detector (all when the mask is empty). Blocking.
template <class ExecSpace>
int measured_pixels(ExecSpace const& space, MaskView<typename ExecSpace::memory_space> const& mask, int D) {
  if (mask.extent(0) == 0) return D * D;
  auto msk = mask;
  int n = 0;
  Kokkos::parallel_reduce(
      "ptyko::DM::measured_pixels", Kokkos::RangePolicy<ExecSpace>(space, 0, D * D),
      KOKKOS_LAMBDA(int k, int& acc) { acc += msk(k / D, k % D) != 0; }, n);
  return n;
}

/// The largest total of measured counts in one frame of `data`. Blocking.
template <class ExecSpace, class DataView>
double max_frame_counts(ExecSpace const& space, DataView const& data, MaskView<typename ExecSpace::memory_space> const& mask) {
  int const n = int(data.extent(0)), D = int(data.extent(1));
  bool const has_mask = mask.extent(0) > 0;
  auto d = data;
  auto msk = mask;
  double result = 0;
  Kokkos::parallel_reduce(
      "ptyko::DM::max_frame_counts", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(int f, double& mx) {
        double s = 0;
        for (int i = 0; i < D; ++i)
          for (int j = 0; j < D; ++j)
            if (!has_mask || msk(i, j)) s += double(d(f, i, j));
        if (s > mx) mx = s;
      },
      Kokkos::Max<double>(result));
  return result;
}

template <class T, class ExecSpace>
class DifferenceMap final : public Solver<T, ExecSpace> {
 public:
  using Base = Solver<T, ExecSpace>;
  using Mem = typename ExecSpace::memory_space;
  using Waves = ComplexView4<T, Mem>;

  explicit DifferenceMap(std::string name) : m_name(std::move(name)) {}
  std::string name() const override { return m_name; }

  void setup(ExecSpace const& space, typename Base::Data const& data, typename Base::St const& state,
             SolverOptions const& options, int max_local_batch) override {
    m_options = options;
    int const M = state.modes(), D = data.detector(), n = data.local_frames();
    // Chunks of the pipeline's size: the sums and the Fourier step run chunk
    // by chunk and keep a chunk's buffers in cache (pipeline_chunk).
    int const chunk = std::min(std::max(1, std::min(std::max(1, n), max_local_batch)),
                               pipeline_chunk<T>(space, D, M, std::max(1, max_local_batch), options.pipeline_chunk));
    int const H = int(state.object.extent(0)), W = int(state.object.extent(1));
    m_model = std::make_unique<ForwardModel<T, ExecSpace>>(space, chunk, M, D, plan_effort(options.fft_planner, D));
    m_waves = Waves(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::DM::waves"), chunk, M, D, D);
    m_psi = Waves(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::DM::exit_waves"), n, M, D, D);
    m_sums = UpdateSums<T, ExecSpace>(space, H, W, M, D, chunk);
    m_mix_dev = decltype(m_mix_dev)(Kokkos::view_alloc(space, "ptyko::DM::mix"), M, M);
    m_mix_adj_dev = decltype(m_mix_adj_dev)(Kokkos::view_alloc(space, "ptyko::DM::mix_adjoint"), M, M);
    m_mix_host = Kokkos::create_mirror_view(m_mix_dev);
    m_mix_adj_host = Kokkos::create_mirror_view(m_mix_adj_dev);
    m_mix_pending = false;
    m_mix_uploaded = false;
    m_probe_at_sums = ComplexView3<T, Mem>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "ptyko::DM::probe_at_sums"), M, D, D);
    m_sums_carried = false;
    m_all_tiles = all_tiles<Mem>(H, W);
    m_chunks = walking_chunks<Mem>(data.positions, D, chunk);
    m_first.clear();
    for (int first = 0; first < n; first += chunk) m_first.push_back(first);
    // psi_j = P S_j O to start.
    for (std::size_t c = 0; c < m_chunks.size(); ++c) {
      int const B = int(m_chunks[c].extent(0));
      extract_patches(space, state.object, data.positions, m_chunks[c], m_model->patches());
      exit_waves(space, B, state.probe, m_model->patches(), psi_of(c));
    }
  }

  /// The stored exit waves are per mode: they must follow the probe modes,
  /// psi'_k = sum_m V(m, k) psi_m, or they would no longer match. They are
  /// never recombined: the true waves are psi A, with A the product of every
  /// V so far, and each epoch runs in the stored waves' basis instead, with
  /// the probe's modes mixed by A^H at its start and by A at its end (DM and
  /// RAAR do not depend on the basis of the modes). That mixes the probe
  /// twice per epoch instead of every stored wave once (docs/performance.md,
  /// item 57).
  void counting_noise_floor(double cost_per_frame) override { m_noise_floor = cost_per_frame; }

  void modes_recombined(ExecSpace const&, std::vector<std::complex<double>> const& V) override {
    int const M = int(m_psi.extent(1));
    if (M < 2) return;
    if (!m_mix_pending) {
      m_mix = V;
    } else {  // A <- A V
      std::vector<std::complex<double>> AV(std::size_t(M) * M, 0.0);
      for (int a = 0; a < M; ++a)
        for (int c = 0; c < M; ++c)
          for (int b = 0; b < M; ++b) AV[a * M + b] += m_mix[a * M + c] * V[c * M + b];
      m_mix = std::move(AV);
    }
    m_mix_pending = true;
    m_mix_uploaded = false;
  }

  double epoch(ExecSpace const& space, typename Base::Data const& data, typename Base::St& state,
               std::vector<typename Base::Batch const*> const&, typename Base::SyncT& sync,
               bool update_probe) override {
    // Without a probe update one object pass is the exact overlap projection.
    int const passes = update_probe ? m_options.overlap_passes : 1;
    if (m_mix_pending && !m_mix_uploaded) upload_mix(space);
    // The probe in the stored waves' basis (modes_recombined) for the whole
    // epoch: Q_m = sum_k conj(A(m, k)) P_k, i.e. P mixed by A^H.
    if (m_mix_pending) mix_modes<T>(space, as_one_frame(state.probe), m_mix_adj_dev);
    bool const carried = carried_sums_still_valid(space, state.probe);
    for (int pass = 0; pass < passes; ++pass) {
      overlap_object(space, data, state, sync, carried && pass == 0);
      if (update_probe) overlap_probe(space, data, state, sync);
    }
    if (m_options.object_clip) clip_amplitude(space, m_all_tiles, state.object, T(1));

    if (m_ptypy_bound < 0) {  // first epoch: PtyPy's bound, from the brightest frame of all ranks
      double const relax = std::max(0.0, m_options.fourier_relax);
      double const D = data.detector();
      double const brightest =
          sync.max(data.frames.visit([&](auto const& frames) { return max_frame_counts(space, frames, data.mask); }));
      m_ptypy_bound = 0.25 * relax * relax * brightest / (D * D);
      m_measured = measured_pixels(space, data.mask, data.detector());
    }
    // Held to the counting noise, and loosened where the cost drifts up
    // (power_bound.hpp); the history is global, so every rank agrees.
    double const pbound = power_bound(m_ptypy_bound, m_noise_floor, m_measured, state.cost);
    // Every cost_every epochs, and at the run's last, so that it ends with the model's cost.
    bool const measure = m_options.cost_every > 0 &&
                         (state.epoch % m_options.cost_every == 0 || state.epoch + 1 >= m_options.epochs);
    double cost = 0;
    T const beta = T(m_options.beta);
    // The next epoch's first object sums: the waves this step writes, with
    // this probe (carried_sums_still_valid).
    m_sums.zero(space, false);
    m_sums.set_probe(space, state.probe);
    for (std::size_t c = 0; c < m_chunks.size(); ++c) {
      auto const& idx = m_chunks[c];
      int const B = int(idx.extent(0));
      auto waves = Kokkos::subview(m_waves, std::make_pair(0, B), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
      if (measure) {  // the model's own cost: one extra FFT per frame
        m_model->far_field(space, state.object, state.probe, data.positions, idx, m_waves);
        cost += data.frames.visit([&](auto const& frames) {
          return data_cost(space, NoiseModel::gaussian, B, m_waves, frames, idx, data.mask, state.background,
                           T(1e-6));
        });
      } else {
        extract_patches(space, state.object, data.positions, idx, m_model->patches());
      }
      // Both orthonormal 1/D factors ride on kernels that run anyway.
      T const inv_d = T(1) / T(data.detector());
      reflect_exit_waves<T>(space, B, state.probe, m_model->patches(), psi_of(c), m_waves, inv_d);
      m_model->fft().forward(space, waves, waves, FFTNorm::none);
      double const fourier_error = data.frames.visit([&](auto const& frames) {
        return pbound > 0 ? power_bound_projection<T>(space, B, m_waves, frames, idx, data.mask, state.background,
                                                      m_measured, pbound, T(1e-6), inv_d)
                          : modulus_projection(space, B, m_waves, frames, idx, data.mask, state.background,
                                               T(1e-6), inv_d);
      });
      if (!m_options.cost_every) cost += fourier_error;
      m_model->fft().inverse(space, waves, waves, FFTNorm::none);
      update_exit_waves<T>(space, B, state.probe, m_model->patches(), m_waves, psi_of(c), beta,
                           m_sums.product_slots(B));
      m_sums.add_products(space, data.positions, idx);
    }
    Kokkos::deep_copy(space, m_probe_at_sums, state.probe);  // device -> device: probe-sized
    m_sums_carried = true;
    // Back to the true basis: P_k = sum_m A(m, k) Q_m.
    if (m_mix_pending) mix_modes<T>(space, as_one_frame(state.probe), m_mix_dev);
    return measure || !m_options.cost_every ? cost : std::nan("");
  }

 private:
  Waves psi_of(std::size_t c) const {
    int const first = m_first[c], B = int(m_chunks[c].extent(0));
    return Kokkos::subview(m_psi, std::make_pair(first, first + B), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
  }

  /// m_mix (A) and its adjoint to the device.
  void upload_mix(ExecSpace const& space) {
    int const M = int(m_psi.extent(1));
    auto const& h = m_mix_host;
    auto const& h_adj = m_mix_adj_host;
    for (int a = 0; a < M; ++a)
      for (int b = 0; b < M; ++b) {
        auto const v = m_mix[std::size_t(a) * M + b];
        h(a, b) = Complex<T>(T(v.real()), T(v.imag()));
        h_adj(b, a) = Complex<T>(T(v.real()), T(-v.imag()));
      }
    Kokkos::deep_copy(space, m_mix_dev, h);          // host -> device: M x M recombination A
    Kokkos::deep_copy(space, m_mix_adj_dev, h_adj);  // host -> device: its adjoint A^H
    m_mix_uploaded = true;
  }

  /// Whether the object sums the last Fourier step formed still hold for
  /// `probe` (in the stored waves' basis): it must be the probe they were
  /// formed with. A recombination of the modes since then leaves it so, up
  /// to rounding; anything else done to the probe between epochs (a
  /// support, a rescaling, a new probe) shows as a difference beyond
  /// rounding, and the sums are formed again. Blocking.
  bool carried_sums_still_valid(ExecSpace const& space, ComplexView3<T, Mem> const& probe) {
    if (!m_sums_carried) return false;
    m_sums_carried = false;
    double const tolerance = 64 * double(std::numeric_limits<T>::epsilon());
    return relative_squared_distance(space, probe, m_probe_at_sums) <= tolerance * tolerance;
  }

  /// The object update from the stored waves; `carried`: the sums are
  /// those the last Fourier step formed (carried_sums_still_valid).
  void overlap_object(ExecSpace const& space, typename Base::Data const& data, typename Base::St& state,
                      typename Base::SyncT& sync, bool carried) {
    if (!carried) {
      m_sums.zero(space, false);
      m_sums.set_probe(space, state.probe);
      for (std::size_t c = 0; c < m_chunks.size(); ++c)
        m_sums.accumulate(space, state.probe, m_model->patches(), data.positions, m_chunks[c], psi_of(c), false);
    }
    sync.sum_object(space, m_sums.obj_num, m_sums.obj_w);
    double const w_max = sync.max(max_value(space, m_sums.obj_w));
    apply_weighted_average(space, state.object, m_sums.obj_num, m_sums.obj_w, 1e-4 * w_max);
  }

  void overlap_probe(ExecSpace const& space, typename Base::Data const& data, typename Base::St& state,
                     typename Base::SyncT& sync) {
    Kokkos::deep_copy(space, m_sums.probe_num, Complex<T>(0));
    Kokkos::deep_copy(space, m_sums.probe_w, T(0));
    for (std::size_t c = 0; c < m_chunks.size(); ++c) {
      int const B = int(m_chunks[c].extent(0));
      extract_patches(space, state.object, data.positions, m_chunks[c], m_model->patches());
      add_probe_sums(space, B, m_model->patches(), psi_of(c), m_sums.probe_num, m_sums.probe_w);
    }
    sync.sum_probe(space, m_sums.probe_num, m_sums.probe_w);
    double const w_max = sync.max(max_value(space, m_sums.probe_w));
    apply_weighted_average(space, state.probe, m_sums.probe_num, m_sums.probe_w, 1e-4 * w_max);
  }

  std::string m_name;
  SolverOptions m_options;
  std::unique_ptr<ForwardModel<T, ExecSpace>> m_model;
  Waves m_waves, m_psi;
  UpdateSums<T, ExecSpace> m_sums;
  TileList<Mem> m_all_tiles;
  std::vector<IndexView<Mem>> m_chunks;
  std::vector<int> m_first;
  std::vector<std::complex<double>> m_mix;  ///< A (M x M, row-major): true waves = stored waves A
  bool m_mix_pending = false;                 ///< A is not the identity
  bool m_mix_uploaded = false;                ///< m_mix_dev and m_mix_adj_dev hold A
  ModeMix<T, Mem> m_mix_dev, m_mix_adj_dev;  ///< A and A^H
  typename ModeMix<T, Mem>::HostMirror m_mix_host, m_mix_adj_host;  ///< their host mirrors (made once)
  ComplexView3<T, Mem> m_probe_at_sums;  ///< the probe the last Fourier step formed m_sums' object sums with
  bool m_sums_carried = false;           ///< m_sums holds those sums
  double m_ptypy_bound = -1;  ///< PtyPy's bound per pixel (0: plain projection); set in the first epoch
  double m_noise_floor = 0;   ///< counting_noise_floor: the cost per frame of counting noise alone
  int m_measured = 0;    ///< unmasked detector pixels
};

template <class T, class ExecSpace>
std::unique_ptr<Solver<T, ExecSpace>> make_dm(std::string const& name) {
  return std::make_unique<DifferenceMap<T, ExecSpace>>(name);
}

template std::unique_ptr<Solver<float, Kokkos::DefaultExecutionSpace>>
make_dm<float, Kokkos::DefaultExecutionSpace>(std::string const&);
template std::unique_ptr<Solver<double, Kokkos::DefaultExecutionSpace>>
make_dm<double, Kokkos::DefaultExecutionSpace>(std::string const&);

}  // namespace ptyko::impl
