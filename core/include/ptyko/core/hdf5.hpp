#pragma once
// Thin RAII layer over the HDF5 C API used by ptyko's CXI and result files.
// Complex arrays are stored as the compound {r, i} (the h5py convention),
// so Python users open them directly. All errors become one-line UserErrors
// naming the file and the object; HDF5's own error printing is switched off
// when a File is opened or created. Like most HDF5 builds, not thread-safe:
// use from one thread per process.

#include <ptyko/kernels/types.hpp>

#include <hdf5.h>

#include <cstddef>
#include <complex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ptyko::h5 {

/// Owns one hid_t and closes it with the matching H5?close.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : m_id(id) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : m_id(std::exchange(o.m_id, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      m_id = std::exchange(o.m_id, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(Handle const&) = delete;
  Handle& operator=(Handle const&) = delete;
  hid_t get() const { return m_id; }
  operator hid_t() const { return m_id; }
  bool valid() const { return m_id >= 0; }
  /// Closes the id now (errors ignored: use File::close to see them).
  void reset();
  /// Gives up ownership without closing.
  hid_t release() { return std::exchange(m_id, H5I_INVALID_HID); }

 private:
  hid_t m_id = H5I_INVALID_HID;
};

/// An open HDF5 file; `name()` is used in error messages.
class File {
 public:
  /// Opens read-only. UserError if missing, unreadable, not HDF5 or truncated.
  static File open_read(std::string const& path);
  /// Creates/truncates for writing.
  static File create(std::string const& path);
  hid_t id() const { return m_handle.get(); }
  std::string const& name() const { return m_name; }
  /// Flushes and closes now (errors surface here, not in a destructor).
  void close();

 private:
  friend class AtomicFile;  // names the file by its final path, not the temporary
  Handle m_handle;
  std::string m_name;
};

/// True if `path` resolves to an object (soft links followed; a dangling
/// link or any missing component gives false).
bool exists(File const& f, std::string const& path);
/// True if the last link of `path` exists, even when it is a dangling soft
/// link (its parents must exist).
bool link_exists(File const& f, std::string const& path);
/// Extents of a dataset.
std::vector<std::size_t> shape(File const& f, std::string const& path);
/// Short type name: "uint8".."uint64", "int8".."int64", "float32",
/// "float64", "complex64", "complex128" (a compound of two floats), "enum"
/// (h5py stores bool as an int8 enum; read<integer or float> reads it),
/// "string", or "other".
std::string type_name(File const& f, std::string const& path);
/// Path of the dataset a (possibly soft-linked) path leads to. UserError
/// naming the missing link target when a link dangles.
std::string resolve(File const& f, std::string const& path);

/// Throws UserError when reading `bytes` from `path` would not fit in this
/// machine's physical memory; `hint` (optional) says what to do instead.
/// Called before allocating, so a corrupt or huge file fails cleanly.
void check_fits_in_memory(File const& f, std::string const& path, double bytes,
                          std::string const& hint = "");

/// Reads a whole numeric dataset converted to T (double, float, int64_t,
/// uint8_t, ...); complex T reads {r,i} compounds (and real data as real).
template <class T>
std::vector<T> read(File const& f, std::string const& path, std::vector<std::size_t>* dims = nullptr);
/// Reads a scalar (shape () or (1,)) converted to double.
double read_scalar(File const& f, std::string const& path);
/// Reads a scalar string dataset (fixed or variable length).
std::string read_string(File const& f, std::string const& path);
/// True if the object at `object_path` (which must exist) has an attribute `name`.
bool attribute_exists(File const& f, std::string const& object_path, std::string const& name);
/// Reads a string attribute `name` of the object at `object_path`.
std::string read_string_attribute(File const& f, std::string const& object_path,
                                  std::string const& name);
/// Reads a numeric scalar attribute converted to double.
double read_scalar_attribute(File const& f, std::string const& object_path,
                             std::string const& name);
/// Reads rows `rows` (indices along dimension 0, any order) of a dataset of
/// rank >= 1, converted to float, into `out` (rows.size() * row size values),
/// in the order given. Consecutive indices are read as one hyperslab block
/// (one H5Dread per run: faster in HDF5 1.10 than a union of hyperslabs).
/// A rank-4 dataset (n1, n2, y, x), a raster scan as NeXus stores it, is
/// read as n1 n2 rows of (y, x) images in row-major order. With a `window`
/// (rank 3 or 4), only that part of each image is read.
struct RowWindow {
  std::size_t y = 0, x = 0;           ///< first index along dimensions 1 and 2
  std::size_t height = 0, width = 0;  ///< 0: the whole row
};
void read_rows(File const& f, std::string const& path, std::vector<std::size_t> const& rows,
               float* out, RowWindow const& window = {});

struct WriteOptions {
  bool compress = true;  ///< deflate level 4 + shuffle on chunked datasets
};
/// Writes a dataset (creating parent groups, replacing an existing one;
/// empty `dims` writes a scalar). T: arithmetic or
/// Kokkos::complex / std::complex of float/double (stored as {r, i}).
/// `stored_as` optionally names a narrower file type for real data:
/// "uint8".."uint64", "int8".."int64", "float32", "float64"; for complex T
/// "complex64" or "complex128". Chunks are whole
/// trailing (y, x) planes (one frame per chunk for a frame stack), or bands
/// of rows of a plane above 4 MiB. A compressed dataset of 1 MiB or more
/// stored in its memory type is shuffled and deflated on the threads this
/// process may run on, chunk by chunk, with the same bytes as HDF5's
/// filters would store.
template <class T>
void write(File const& f, std::string const& path, T const* data,
           std::vector<std::size_t> const& dims, WriteOptions const& opts = {},
           std::string const& stored_as = "");
void write_scalar(File const& f, std::string const& path, double value);
void write_scalar_int(File const& f, std::string const& path, long long value);
void write_string(File const& f, std::string const& path, std::string const& value);
void write_attribute(File const& f, std::string const& object_path, std::string const& name,
                     std::string const& value);
void write_attribute(File const& f, std::string const& object_path, std::string const& name,
                     double value);
/// Soft link `link_path` -> `target_path` (creating parent groups).
void soft_link(File const& f, std::string const& target_path, std::string const& link_path);

/// Writing a file safely: content goes to "<path>.tmp-<pid>" in the same
/// folder; commit() closes and renames it over `path`. Destroyed without
/// commit() (an exception, a signal handler's exit path) it removes the
/// temporary, leaving any previous `path` untouched.
/// Throws UserError (naming the folder) when it is not writable.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(AtomicFile const&) = delete;
  AtomicFile& operator=(AtomicFile const&) = delete;
  File& file() { return m_file; }
  std::string const& path() const { return m_path; }
  void commit();

 private:
  std::string m_path, m_tmp;
  File m_file;
  bool m_committed = false;
};

}  // namespace ptyko::h5
