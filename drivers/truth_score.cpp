#include "truth_score.hpp"

#include <ptyko/core/illumination.hpp>

#include <fmt/format.h>

namespace ptyko::drivers {

TruthScore::TruthScore(ScanLayout const& layout, Log& log) {
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

double TruthScore::error(HostComplex2 const& object) const {
  return object_error(object, m_truth->object, m_illumination).nrmse;
}

}  // namespace ptyko::drivers
