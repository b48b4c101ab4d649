#pragma once
// The error of a reconstructed object against the truth a simulated file
// carries (`ptyko reconstruct` reports it per epoch and in the result).

#include "run_log.hpp"

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/metrics.hpp>
#include <ptyko/core/dataset.hpp>

#include <optional>

namespace ptyko::drivers {

/// Reads the file's truth on rank 0 (`log.root()`), when it is on the
/// reconstruction's grid; else warns and stays inactive.
class TruthScore {
 public:
  TruthScore(ScanLayout const& layout, Log& log);
  bool active() const { return m_truth.has_value(); }
  /// The illumination-weighted error of the gathered `object` (rank 0, active).
  double error(HostComplex2 const& object) const;

 private:
  std::optional<CxiTruth> m_truth;
  HostRealImage m_illumination;
};

}  // namespace ptyko::drivers
