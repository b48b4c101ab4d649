#pragma once
// What the measured counts miss of the beam. The probe's power is held at
// the measured counts per frame (|O| ~ 1 where the sample is transparent,
// by Parseval), but masked detector pixels (a beam stop, a saturated or
// blocked direct beam, dead pixels, module gaps) measure nothing: where the
// mask covers the direct beam the counts hold a small part of the probe's
// power (1.8 % behind a beam stop over a compact beam in docs/solvers.md),
// and a probe scaled to them is that much too weak. The probe's power is
// therefore the measured counts over the share of its far field that falls
// on measured pixels.

#include <ptyko/kernels/fft.hpp>
#include <ptyko/kernels/types.hpp>

#include <vector>

namespace ptyko {

template <class T, class ExecSpace>
class MaskedPower {
 public:
  using Mem = typename ExecSpace::memory_space;

  /// Plans the transforms of `modes` D x D probe modes; allocates once.
  MaskedPower(ExecSpace const& space, int modes, int D);

  /// sum over unmeasured pixels of sum_m |F P_m|^2, over the same sum on
  /// all pixels. `mask`: corner-centred, 1 = measured (LocalData::mask);
  /// extent 0, every pixel measured: 0. Blocking.
  double fraction(ExecSpace const& space, ComplexView3<T, Mem> const& probe, MaskView<Mem> const& mask);

 private:
  BatchedFFT2D<T, ExecSpace> m_fft;
  ComplexView3<T, Mem> m_far;
};

/// The probe power that gives `measured_counts` on the measured pixels:
/// measured_counts / (1 - masked fraction), the fraction capped at 0.999.
double probe_power_for_counts(double measured_counts, double masked_fraction);

/// Fills the unmeasured pixels of a corner-centred D x D pattern (mask 1 =
/// measured, row-major; empty: all measured) with the harmonic interpolation
/// of the measured ones around them (each the mean of its four periodic
/// neighbours), so that a probe computed from the mean pattern keeps the
/// beam that a beam stop or a masked, saturated centre hid.
void fill_unmeasured(std::vector<double>& pattern, std::vector<std::uint8_t> const& mask, int D);

}  // namespace ptyko
