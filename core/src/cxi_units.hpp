#pragma once
// Units of CXI datasets. CXI's defaults are SI with no exceptions (metres,
// joules); "non default units are defined using the units attribute of the
// relevant dataset, just like in NeXus" (CXI 1.6, section "CXI"). Files
// written by NeXus tools (NXcxi_ptycho) use that: distances in mm,
// translations in um, energies in eV or keV.

#include <ptyko/core/hdf5.hpp>

#include <string>

namespace ptyko::impl {

enum class Quantity { length, energy };

/// The factor that turns the values of dataset `path` into SI (metres,
/// joules): 1 without a units attribute. UserError naming the file, the
/// dataset and the unit when the attribute is not a unit of `q` that ptyko
/// knows (m, cm, mm, um, nm, pm, angstrom; J, eV, keV, MeV, GeV).
double unit_factor(h5::File const& f, std::string const& path, Quantity q);

}  // namespace ptyko::impl
