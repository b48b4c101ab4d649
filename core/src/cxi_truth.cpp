// The ground truth a simulated CXI file carries (/entry_1/ptyko_truth).
#include "cxi_datasets.hpp"

#include <ptyko/core/cxi.hpp>
#include <ptyko/core/hdf5.hpp>
#include <ptyko/kernels/error.hpp>

#include <algorithm>

namespace ptyko {

using namespace impl;  // the datasets' names and shared checks (cxi_datasets.hpp)

std::optional<CxiTruth> cxi_read_truth(CxiInfo const& info) {
  auto f = h5::File::open_read(info.path);
  if (!h5::exists(f, k_truth)) return std::nullopt;
  CxiTruth truth;
  for (char const* p : {k_truth_object, k_truth_probe, k_truth_positions}) {
    PTYKO_REQUIRE(h5::exists(f, p), info.path, ": ", k_truth, " lacks ", p);
    require_numeric(f, p, std::string(p) != k_truth_positions);
  }
  auto const odims = h5::shape(f, k_truth_object);
  PTYKO_REQUIRE(odims.size() == 2, info.path, ": ", k_truth_object, " has shape ", shape_string(odims),
                "; expected (H, W)");
  auto const obj = h5::read<Complex<double>>(f, k_truth_object);
  truth.object = HostComplex2(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ptyko::cxi::truth_object")),
                              odims[0], odims[1]);
  std::copy(obj.begin(), obj.end(), truth.object.data());
  truth.probe = read_complex_stack(f, k_truth_probe, "true probe", "ptyko::cxi::truth_probe");
  std::vector<std::size_t> pdims;
  auto const pos = h5::read<double>(f, k_truth_positions, &pdims);
  PTYKO_REQUIRE(pdims.size() == 2 && pdims[1] == 2, info.path, ": ", k_truth_positions, " has shape ",
                shape_string(pdims), "; expected (N, 2) pixel positions (y, x)");
  truth.positions_px.resize(pdims[0]);
  for (std::size_t n = 0; n < pdims[0]; ++n) truth.positions_px[n] = {pos[2 * n], pos[2 * n + 1]};
  if (h5::exists(f, k_truth_flux)) truth.relative_flux = h5::read<double>(f, k_truth_flux);
  if (h5::exists(f, k_truth_background)) {
    std::vector<std::size_t> bdims;
    auto const b = h5::read<double>(f, k_truth_background, &bdims);
    PTYKO_REQUIRE(bdims.size() == 2, info.path, ": ", k_truth_background, " has shape ", shape_string(bdims),
                  "; expected (D, D)");
    truth.background = HostReal2("ptyko::cxi::truth_background", bdims[0], bdims[1]);
    std::copy(b.begin(), b.end(), truth.background.data());
  }
  return truth;
}
}  // namespace ptyko
