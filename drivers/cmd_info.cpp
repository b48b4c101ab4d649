// `ptyko info FILE`: what a CXI file holds (any program's).

#include "commands.hpp"

#include <ptyko/core/summary.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/parallel/environment.hpp>

#include <fmt/format.h>

#include <memory>

namespace ptyko::drivers {

void add_info(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("info", "Describe a CXI file: frames, counts, geometry, scan, overlap");
  cmd->footer("Example:\n  ptyko info data.cxi");
  auto path = std::make_shared<std::string>();
  auto conv = std::make_shared<PositionConvention>();
  auto crop = std::make_shared<FrameCrop>();
  auto mask = std::make_shared<MaskFile>();
  auto geometry = std::make_shared<GeometryOverride>();
  cmd->add_option("file", *path, "CXI file")->required();
  cmd->add_flag("--flip-x", conv->flip_x, "Negate x translations (files with the opposite sign)");
  cmd->add_flag("--flip-y", conv->flip_y, "Negate y translations");
  cmd->add_flag("--swap-xy", conv->swap_xy, "Exchange x and y translations");
  cmd->add_option("--crop", crop->size, "Describe the N x N window of the frames around the beam")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--crop-centre-y", crop->centre_y, "With --crop: row of the beam in the stored frames");
  cmd->add_option("--crop-centre-x", crop->centre_x, "With --crop: column of the beam in the stored frames");
  cmd->add_flag("--find-beam", crop->find_beam,
                "Centre the window on the direct beam found in the frames (with or without --crop)");
  cmd->add_option("--bin", crop->bin, "Describe the frames with B x B pixels summed into one")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--mask", mask->spec, "Add the detector mask of FILE[:DATASET] (HDF5; nonzero = bad pixel)");
  cmd->add_flag("--mask-invert", mask->invert, "The --mask file marks measured pixels nonzero");
  cmd->add_option("--energy-kev", geometry->energy_kev, "Photon energy in keV instead of the file's");
  cmd->add_option("--distance", geometry->distance_m, "Sample-detector distance in metres instead of the file's");
  cmd->add_option("--pixel-size", geometry->pixel_size_m, "Detector pixel size in metres instead of the file's");
  cmd->callback([&action, path, conv, crop, mask, geometry] {
    PTYKO_REQUIRE(crop->size > 0 || (!crop->centre_y && !crop->centre_x),
                  "--crop-centre-y/-x place the --crop window: give --crop N too");
    PTYKO_REQUIRE(!crop->find_beam || (!crop->centre_y && !crop->centre_x),
                  "--find-beam and --crop-centre-y/-x both place the window: give one of them");
    action = [path, conv, crop, mask, geometry](parallel::Environment& env) {
      if (env.rank() == 0) fmt::print("{}", format_summary(summarize_cxi(*path, *conv, *crop, *mask, *geometry)));
      return 0;
    };
  });
}

}  // namespace ptyko::drivers
