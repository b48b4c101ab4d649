// The only file that includes toml++: see toml_io.hpp. No Kokkos header may
// be included here, directly or indirectly (error.hpp includes none).
#include "toml_io.hpp"

#include <ptyko/kernels/error.hpp>

#include <toml++/toml.h>

namespace ptyko::drivers {
namespace {

TomlNode convert(toml::node const& n) {
  TomlNode out;
  out.line = int(n.source().begin.line);
  if (auto const* v = n.as_integer()) {
    out.kind = TomlNode::Kind::integer;
    out.integer = v->get();
  } else if (auto const* v = n.as_floating_point()) {
    out.kind = TomlNode::Kind::floating;
    out.floating = v->get();
  } else if (auto const* v = n.as_boolean()) {
    out.kind = TomlNode::Kind::boolean;
    out.boolean = v->get();
  } else if (auto const* v = n.as_string()) {
    out.kind = TomlNode::Kind::string;
    out.string = v->get();
  } else if (auto const* a = n.as_array()) {
    out.kind = TomlNode::Kind::array;
    for (auto const& e : *a) out.items.push_back(convert(e));
  } else if (auto const* t = n.as_table()) {
    out.kind = TomlNode::Kind::table;
    for (auto&& [k, v] : *t) {
      out.keys.emplace_back(k.str());
      out.items.push_back(convert(v));
    }
  }
  return out;
}

}  // namespace

TomlNode parse_toml(std::string const& text, std::string const& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (toml::parse_error const& e) {
    PTYKO_FAIL(source, ":", e.source().begin.line, ":", e.source().begin.column, ": not valid TOML: ",
               e.description());
  }
  return convert(root);
}

}  // namespace ptyko::drivers
