// `ptyko info FILE`: what a CXI file holds (any program's).

#include "commands.hpp"

#include <ptyko/core/summary.hpp>
#include <ptyko/parallel/environment.hpp>

#include <fmt/format.h>

#include <memory>

namespace ptyko::drivers {

void add_info(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("info", "Describe a CXI file: frames, counts, geometry, scan, overlap");
  cmd->footer("Example:\n  ptyko info data.cxi");
  auto path = std::make_shared<std::string>();
  auto conv = std::make_shared<PositionConvention>();
  cmd->add_option("file", *path, "CXI file")->required();
  cmd->add_flag("--flip-x", conv->flip_x, "Negate x translations (files with the opposite sign)");
  cmd->add_flag("--flip-y", conv->flip_y, "Negate y translations");
  cmd->add_flag("--swap-xy", conv->swap_xy, "Exchange x and y translations");
  cmd->callback([&action, path, conv] {
    action = [path, conv](parallel::Environment& env) {
      if (env.rank() == 0) fmt::print("{}", format_summary(summarize_cxi(*path, *conv)));
      return 0;
    };
  });
}

}  // namespace ptyko::drivers
