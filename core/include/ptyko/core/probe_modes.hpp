#pragma once
// Probe initialisation and the operations on incoherent probe modes that the
// solvers share: orthogonalisation (Gram-matrix eigen-decomposition, sorted
// by power), power measurement and normalisation, support constraint.

#include <ptyko/core/cxi.hpp>
#include <ptyko/kernels/types.hpp>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace ptyko {

/// Which side of the probe's focus the sample sits on, for a probe computed
/// from the data. The two sides' probes are twins (each the other's complex
/// conjugate, mirrored through the centre) with the same mean pattern, so
/// the pattern cannot tell them apart, and a start on the wrong side is not
/// left by the solvers (docs/solvers.md). `automatic`: tried both ways
/// (core/probe_focus.hpp).
enum class ProbeFocus {
  automatic,
  upstream,   ///< the beam converges at the sample
  downstream  ///< the beam diverges at the sample
};

/// "auto", "upstream" or "downstream"; UserError naming --probe-focus otherwise.
ProbeFocus parse_probe_focus(std::string const& name);
std::string to_string(ProbeFocus focus);

/// Initial probe from data alone: the back-propagated square root of the
/// mean diffraction pattern (corner-centred, D x D), with a defocus phase
/// that spreads it to `diameter` pixels (90 % power), to the side of the
/// focus `focus` names (not automatic), and a smooth random phase of about
/// 1 rad that breaks the symmetry of a flat phase; centred in real space. The
/// size matters: a probe far smaller than the real one can keep rPIE/LSQML
/// from ever finding it (docs/solvers.md). Extra modes are mode 0 times
/// smooth random fields, at 5 % of its power, then orthogonalised. Scaled so
/// that the summed power of all modes is `power`.
HostComplex3 initial_probe_from_pattern(std::vector<double> const& mean_pattern_corner, int D,
                                        int modes, std::uint64_t seed, double power, double diameter,
                                        ProbeFocus focus);

/// Probe diameter to start from when the user gives none: the scan's typical
/// step over (1 - 0.7), i.e. the probe of a 70 % overlap scan, the usual design.
double default_probe_diameter(double typical_step_px, int D);

/// Uses a given probe (e.g. the file's illumination), adding modes as above
/// when it has fewer than `modes` and dropping the weakest when it has more;
/// scaled to `power`.
HostComplex3 initial_probe_from_guess(HostComplex3 const& guess, int modes, std::uint64_t seed,
                                      double power);

/// Makes the modes orthogonal and sorts them by decreasing power, without
/// changing the incoherent sum sum_m |P_m|^2 of the model they describe
/// (a unitary recombination: new mode k = sum_m V(m, k) old mode m). Returns
/// each mode's power; `recombination` (if given) receives V, M x M row-major.
/// `mix`: an M x M View (kernels' ModeMix) that receives V on the device;
/// a caller that orthogonalises every epoch keeps one, so that no epoch
/// allocates (empty: one is allocated for the call). Blocking.
template <class T, class ExecSpace>
std::vector<double> orthogonalize_modes(ExecSpace const& space,
                                        ComplexView3<T, typename ExecSpace::memory_space> const& probe,
                                        std::vector<std::complex<double>>* recombination = nullptr,
                                        ComplexView2<T, typename ExecSpace::memory_space> mix = {});

/// Power sum_{i,j} |P_m(i, j)|^2 of each mode. Blocking.
template <class T, class ExecSpace>
std::vector<double> mode_powers(ExecSpace const& space,
                                ComplexView3<T, typename ExecSpace::memory_space> const& probe);

/// Multiplies every mode by a soft-edged disc of `radius` pixels around the
/// probe centre (D/2, D/2): the optional probe support constraint. Non-blocking.
template <class T, class ExecSpace>
void apply_probe_support(ExecSpace const& space,
                         ComplexView3<T, typename ExecSpace::memory_space> const& probe, double radius);

}  // namespace ptyko
