#include "cxi_units.hpp"

#include <ptyko/core/geometry.hpp>
#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace ptyko::impl {

namespace {

// Lengths are matched without case ("MM", "Angstrom"); energies keep their
// case where it decides the prefix (meV against MeV).
double length_factor(std::string const& unit) {
  std::string u;
  for (char c : unit) u += char(std::tolower(static_cast<unsigned char>(c)));
  static std::vector<std::pair<std::vector<std::string>, double>> const table = {
      {{"m", "meter", "meters", "metre", "metres"}, 1.0},
      {{"cm", "centimeter", "centimeters", "centimetre", "centimetres"}, 1e-2},
      {{"mm", "millimeter", "millimeters", "millimetre", "millimetres"}, 1e-3},
      {{"um", "\xc2\xb5m", "\xce\xbcm", "micron", "microns", "micrometer", "micrometers", "micrometre", "micrometres"}, 1e-6},
      {{"nm", "nanometer", "nanometers", "nanometre", "nanometres"}, 1e-9},
      {{"pm", "picometer", "picometers", "picometre", "picometres"}, 1e-12},
      {{"angstrom", "angstroms", "\xc3\xa5", "\xe2\x84\xab", "a"}, 1e-10},
  };
  for (auto const& [names, factor] : table)
    if (std::find(names.begin(), names.end(), u) != names.end()) return factor;
  return 0;
}

double energy_factor(std::string const& unit) {
  static std::vector<std::pair<std::vector<std::string>, double>> const table = {
      {{"J", "j", "joule", "joules", "Joule", "Joules"}, 1.0},
      {{"eV", "ev", "EV", "electronvolt", "electronvolts"}, electron_volt},
      {{"keV", "kev", "KeV", "KEV"}, 1e3 * electron_volt},
      {{"MeV"}, 1e6 * electron_volt},
      {{"GeV", "gev", "GEV"}, 1e9 * electron_volt},
  };
  for (auto const& [names, factor] : table)
    if (std::find(names.begin(), names.end(), unit) != names.end()) return factor;
  return 0;
}

}  // namespace

double unit_factor(h5::File const& f, std::string const& path, Quantity q) {
  if (!h5::attribute_exists(f, path, "units")) return 1.0;
  std::string unit;
  try {
    unit = h5::read_string_attribute(f, path, "units");
  } catch (UserError const&) {
    return 1.0;  // not a string (some writers store numbers or arrays there): no unit given
  }
  auto const first = unit.find_first_not_of(" \t"), last = unit.find_last_not_of(" \t");
  unit = first == std::string::npos ? std::string() : unit.substr(first, last - first + 1);
  if (unit.empty()) return 1.0;
  double const factor = q == Quantity::length ? length_factor(unit) : energy_factor(unit);
  PTYKO_REQUIRE(factor > 0, f.name(), ": ", path, " has units \"", unit, "\", which ptyko does not know as ",
                q == Quantity::length ? "a length: use m, mm, um, nm or angstrom"
                                      : "an energy: use J, eV or keV",
                " (or remove the attribute and store SI values)");
  return factor;
}

}  // namespace ptyko::impl
