#pragma once
// Arrays for other programs: NumPy .npy (numpy.load, any language with an
// .npy reader) and 32-bit float TIFF (ImageJ/Fiji, napari, tifffile). Both
// formats are written here byte by byte, little-endian whatever the host,
// to a temporary name in the same folder and then renamed, like every
// ptyko output. Host only.

#include <ptyko/core/cxi.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace ptyko {

/// Writes a C-order complex array as NumPy .npy version 1.0, dtype '<c8'
/// (complex64: the values are rounded to float). The header is padded
/// with spaces so the data starts at a multiple of 64 bytes.
/// \param path [in] file to write (its folder must exist)
/// \param shape [in] extents, slowest first; their product is the element count
/// \param data [in] shape-product values, row-major
/// Throws UserError (one line starting with `path`) when it cannot write.
void write_npy(std::string const& path, std::vector<std::size_t> const& shape, Complex<double> const* data);
/// Same for real data, dtype '<f4' (float32).
void write_npy(std::string const& path, std::vector<std::size_t> const& shape, float const* data);
/// An (H, W) complex View as .npy (H, W) complex64.
void write_npy(std::string const& path, HostComplex2 const& a);
/// An (M, D, D) complex View as .npy (M, D, D) complex64.
void write_npy(std::string const& path, HostComplex3 const& a);

/// Writes a row-major (height, width) float image as a single-image
/// baseline TIFF: little-endian ("II"), uncompressed, one strip,
/// BitsPerSample 32, SampleFormat 3 (IEEE float), BlackIsZero.
/// Throws UserError (starting with `path`) when it cannot write or the
/// image is empty or larger than classic TIFF's 4 GiB.
void write_tiff(std::string const& path, int height, int width, float const* data);

/// |a| as a row-major float image (what write_tiff takes).
std::vector<float> amplitude_of(HostComplex2 const& a);
/// arg(a) in (-pi, pi] as a row-major float image (no offset removed:
/// the exported numbers are the reconstruction's own).
std::vector<float> phase_of(HostComplex2 const& a);

}  // namespace ptyko
