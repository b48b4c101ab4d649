#pragma once
// TOML parsing behind a plain C++ interface. toml++ 3.3's headers do not
// compile with nvcc (toml++ issue #213), so only toml_io.cpp includes them;
// it includes no Kokkos header either, so that a CUDA build can compile it
// with the host compiler alone (nvcc_wrapper --host-only, drivers/CMakeLists.txt).
// Keep this header and toml_io.cpp free of Kokkos and of ptyko headers that
// include Kokkos.

#include <cstdint>
#include <string>
#include <vector>

namespace ptyko::drivers {

/// One value of a parsed TOML document.
struct TomlNode {
  enum class Kind { integer, floating, boolean, string, array, table, other };
  Kind kind = Kind::other;  ///< other: dates and times
  std::int64_t integer = 0;
  double floating = 0;
  bool boolean = false;
  std::string string;
  std::vector<TomlNode> items;    ///< elements of an array, values of a table
  std::vector<std::string> keys;  ///< keys of a table, one per item
  int line = 0;                   ///< line in the source (1-based; 0: unknown)
};

/// Parses the TOML document `text` into its root table. `source` names it in
/// messages. Throws UserError "source:line:column: not valid TOML: ..." on a
/// syntax error.
TomlNode parse_toml(std::string const& text, std::string const& source);

}  // namespace ptyko::drivers
