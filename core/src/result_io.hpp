#pragma once
// The datasets of a result file, written into / read from an open HDF5 file,
// for files that hold a result plus more (checkpoints). Private to core/src.

#include <ptyko/core/hdf5.hpp>
#include <ptyko/core/result_file.hpp>

#include <string>

namespace ptyko::impl {

/// Writes /reconstruction/* of `r` into `f`.
void write_result_datasets(h5::File const& f, ResultContents const& r);
/// Writes the CXI face of `r` into `f` (after write_result_datasets):
/// /cxi_version and /entry_1's images, linked to /reconstruction/*.
void write_result_cxi(h5::File const& f, ResultContents const& r);
/// Reads /reconstruction/* of `f`; `path` names the file in messages.
ResultContents read_result_datasets(h5::File const& f, std::string const& path);

}  // namespace ptyko::impl
