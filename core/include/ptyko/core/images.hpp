#pragma once
// Pictures people look at next to a result: object amplitude and phase,
// probe modes with their power fractions, and the convergence curve. PNG
// files (8-bit RGB) written with libpng to a temporary name in the same
// folder, then renamed, so a viewer never sees half a picture. Host only;
// nothing here touches a device or needs Kokkos to be initialised beyond
// the host Views passed in.

#include <ptyko/core/cxi.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ptyko {

/// A row-major 8-bit RGB picture, (0, 0) at the top left.
struct Picture {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  ///< 3 bytes per pixel, rows top to bottom
  Picture() = default;
  /// A `w` x `h` picture filled with the gray level `fill` (white by default).
  Picture(int w, int h, std::uint8_t fill = 255) : width(w), height(h), rgb(std::size_t(w) * h * 3, fill) {}
  /// Sets pixel (x, y); pixels outside the picture are ignored (clipping).
  void set(int x, int y, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    auto* p = &rgb[(std::size_t(y) * width + x) * 3];
    p[0] = r;
    p[1] = g;
    p[2] = b;
  }
  /// Pointer to the 3 bytes of pixel (x, y), which must be inside.
  std::uint8_t const* at(int x, int y) const { return &rgb[(std::size_t(y) * width + x) * 3]; }
};

/// Writes `pic` as an 8-bit RGB PNG file, atomically (temporary file in the
/// same folder, then rename; the temporary is removed on failure).
/// \param path [in] file to write (its folder must exist)
/// \param pic [in] picture, at least 1 x 1
/// Throws UserError with a one-line message starting with `path`.
void write_png(std::string const& path, Picture const& pic);

/// Height in pixels of one text line drawn by draw_text at `scale`.
int text_height(int scale = 1);
/// Width in pixels of `text` drawn by draw_text at `scale` (no trailing gap).
int text_width(std::string const& text, int scale = 1);
/// Draws `text` with the built-in 5x7 bitmap font, top-left corner at
/// (x, y), each font pixel a `scale` x `scale` square in colour (r, g, b).
/// The font has digits, a-z, A-Z, space and ` % . : - + ( ) , / _ = ' ? [ ] * `;
/// other characters are drawn as '?'. Pixels outside `pic` are clipped.
void draw_text(Picture& pic, int x, int y, std::string const& text, int scale = 1, std::uint8_t r = 0,
               std::uint8_t g = 0, std::uint8_t b = 0);

/// |object| in gray (black = weak), scaled between the 0.5 and 99.5
/// percentiles so that a few wild pixels outside the scanned area do not
/// wash the picture out. Non-finite pixels are drawn black.
Picture object_amplitude_picture(HostComplex2 const& object);
/// arg(object) in gray, after removing the amplitude-weighted mean phase
/// (arg of the sum of the object), so a global phase offset neither changes
/// the picture nor wraps it; percentile-scaled like the amplitude.
Picture object_phase_picture(HostComplex2 const& object);
/// The probe modes side by side, each as a colour-wheel picture (hue =
/// phase, brightness = amplitude over that mode's maximum), small probes
/// enlarged (nearest neighbour) to at least 128 pixels wide, with
/// "mode k: 81.3 %" printed under each mode. `power_fractions` (fractions,
/// not per cent) may be empty; then only "mode k" is printed.
Picture probe_picture(HostComplex3 const& probe, std::vector<double> const& power_fractions);
/// Cost per epoch (cost[0] is epoch 1) as a line on a log10 axis with
/// decade ticks, epoch ticks and `title` on top; 640 x 400 pixels. NaN,
/// infinite and non-positive entries (epochs without a measurement) are
/// skipped and the line joins the measured neighbours.
Picture convergence_picture(std::vector<double> const& cost, std::string const& title);

/// Refined positions against the file's (position refinement), y down as
/// the object's rows: each file position a gray dot, a line from it along
/// its move drawn `exaggeration` times longer (chosen so that the rms move
/// shows at about 2 % of the scan's extent), a red dot at the line's end.
/// The title gives the exaggeration, the rms and the largest move in
/// pixels; 640 pixels on the scan's longer side.
Picture positions_picture(std::vector<std::array<double, 2>> const& file_positions,
                          std::vector<std::array<double, 2>> const& refined);

/// Each frame's relative incident flux (intensity refinement) against its
/// frame number, a dot per frame on a linear axis with the mean (1) marked;
/// frames without a flux (0: skipped, no counts) are left out. The title
/// gives the rms deviation; 640 x 400 pixels.
Picture flux_picture(std::vector<double> const& flux);

/// The incoherent background (background refinement; centred D x D
/// counts) as a gray picture of log10(1 + b), enlarged (nearest neighbour)
/// to at least 256 pixels, with its counts per frame in the title.
Picture background_picture(HostReal2 const& background);

/// What the files written next to a result are named after: `result_path`
/// without a trailing .h5, .hdf5 or .cxi (any case; other extensions are
/// kept), folder included ("runs/out.h5" gives "runs/out").
std::string result_output_stem(std::string const& result_path);

/// The four picture paths for result file `result_path`, in the order
/// object phase, object amplitude, probe, convergence: OUT.h5 gives
/// OUT_object_phase.png, OUT_object_amplitude.png, OUT_probe.png and
/// OUT_convergence.png in the same folder (see result_output_stem).
std::vector<std::string> result_picture_paths(std::string const& result_path);

/// Writes the four pictures of result_picture_paths(result_path) and
/// returns their paths. The convergence title is "cost (<noise_model>)".
/// With refined positions (and the file's, as many), also
/// OUT_positions.png (positions_picture); with fluxes (intensity
/// refinement), OUT_flux.png (flux_picture); with a background (background
/// refinement), OUT_background.png (background_picture). Throws UserError
/// (naming the file) when one cannot be written.
std::vector<std::string> write_result_pictures(std::string const& result_path, HostComplex2 const& object,
                                               HostComplex3 const& probe,
                                               std::vector<double> const& power_fractions,
                                               std::vector<double> const& cost, std::string const& noise_model,
                                               std::vector<std::array<double, 2>> const& file_positions = {},
                                               std::vector<std::array<double, 2>> const& refined_positions = {},
                                               std::vector<double> const& relative_flux = {},
                                               HostReal2 const& background = {});

}  // namespace ptyko
