// Thin RAII layer over the HDF5 C API (1.10 and later). Every failure is
// turned into a one-line UserError naming the file and the object, with the
// innermost HDF5 reason appended; HDF5's own error-stack printing is off.
#include <ptyko/core/hdf5.hpp>
#include <ptyko/kernels/error.hpp>

#include "chunk_deflate.hpp"
#include "chunk_inflate.hpp"
#include "host_threads.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <numeric>
#include <sstream>

namespace ptyko::h5 {

namespace {

namespace fs = std::filesystem;

// Compressed datasets: shuffle, then deflate at this level (zlib's speed on
// floats hardly depends on it: the mantissas are close to random).
constexpr int deflate_level = 4;
// From this size on, a dataset stored as it is in memory is deflated on
// several threads (chunk_deflate.hpp).
constexpr std::size_t threaded_deflate_bytes = std::size_t(1) << 20;

// HDF5 prints its whole error stack to stderr on every failed call by
// default, also for the probing calls we expect to fail. We report one line
// instead. The setting is per thread in thread-safe builds, hence
// thread_local; it is done before the first call of each public entry that
// opens a file.
void silence_hdf5_errors() {
  thread_local bool done = false;
  if (!done) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    done = true;
  }
}

// Compression filters of other programs' files (Eiger data: Bitshuffle/LZ4)
// are HDF5 plugins. Debian installs some only for the serial HDF5
// (hdf5-filter-plugin: LZ4, BZip2 in hdf5/serial/plugins), while ptyko
// links the MPI flavour, which searches hdf5/openmpi/plugins. A filter is a
// codec that does not depend on the flavour, so the serial folder next to
// each default one is searched too, after it. A user's HDF5_PLUGIN_PATH
// replaces the defaults and is left alone.
void add_sibling_plugin_folders() {
#if H5_VERSION_GE(1, 10, 1)
  static bool done = false;
  if (done) return;
  done = true;
  char const* env = std::getenv("HDF5_PLUGIN_PATH");
  if (env != nullptr && *env != '\0') return;
  unsigned n = 0;
  if (H5PLsize(&n) < 0) return;
  std::vector<std::string> folders;
  for (unsigned i = 0; i < n; ++i) {
    ssize_t const len = H5PLget(i, nullptr, 0);
    if (len <= 0) continue;
    std::string folder(std::size_t(len) + 1, '\0');
    H5PLget(i, folder.data(), folder.size());
    folder.resize(std::size_t(len));
    folders.push_back(folder);
  }
  for (auto const& folder : folders) {
    fs::path const p(folder);
    if (p.filename() != "plugins" || p.parent_path().filename() == "serial") continue;
    std::string const serial = (p.parent_path().parent_path() / "serial" / "plugins").string();
    std::error_code ec;
    if (std::find(folders.begin(), folders.end(), serial) == folders.end() && fs::is_directory(serial, ec))
      H5PLappend(serial.c_str());
  }
#endif
}

// Names of the registered HDF5 filters that scientific files use most.
std::string filter_name(H5Z_filter_t id) {
  switch (id) {
    case H5Z_FILTER_DEFLATE: return "gzip/deflate";
    case H5Z_FILTER_SHUFFLE: return "shuffle";
    case H5Z_FILTER_FLETCHER32: return "Fletcher32 checksum";
    case H5Z_FILTER_SZIP: return "SZIP";
    case H5Z_FILTER_NBIT: return "N-bit";
    case H5Z_FILTER_SCALEOFFSET: return "scale-offset";
    case 307: return "BZip2";
    case 32000: return "LZF";
    case 32001: return "Blosc";
    case 32004: return "LZ4";
    case 32008: return "Bitshuffle";
    case 32013: return "ZFP";
    case 32015: return "Zstandard";
    case 32026: return "Blosc2";
    default: return "";
  }
}

// Why a dataset's data cannot be decoded, when it is a compression filter
// that this HDF5 cannot load: one sentence naming the filter and the fix;
// empty when every filter of `ds` is available.
std::string missing_filter(hid_t ds) {
  hid_t const dcpl = H5Dget_create_plist(ds);
  if (dcpl < 0) return {};
  std::string why;
  int const n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n && why.empty(); ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nelmts = 0;
    char name[64] = {0};
    H5Z_filter_t const id = H5Pget_filter2(dcpl, unsigned(i), &flags, &nelmts, nullptr, sizeof(name), name, &config);
    if (id < 0 || H5Zfilter_avail(id) > 0) continue;
    std::string known = filter_name(id);
    if (known.empty()) known = name[0] != '\0' ? name : "unknown";
    why = "it is compressed with the HDF5 filter " + std::to_string(id) + " (" + known +
          "), which this HDF5 cannot load: install the filter plugins (Debian: apt-get install bitshuffle "
          "hdf5-filter-plugin, as scripts/install-deps does; elsewhere the hdf5plugin package) or set "
          "HDF5_PLUGIN_PATH to the folder holding it";
  }
  H5Pclose(dcpl);
  return why;
}

// The innermost (most specific) message on HDF5's error stack, e.g.
// "truncated file: eof = 1024, ...". Empty if the stack is empty.
std::string hdf5_reason() {
  std::string reason;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, H5E_error2_t const* e, void* data) -> herr_t {
        if (n == 0 && e->desc != nullptr) *static_cast<std::string*>(data) = e->desc;
        return 0;
      },
      &reason);
  return reason.empty() ? std::string("unknown HDF5 error") : reason;
}

std::vector<std::string> split_path(std::string const& path) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : path) {
    if (c == '/') {
      if (!part.empty()) parts.push_back(std::move(part));
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(std::move(part));
  return parts;
}

std::string join_path(std::vector<std::string> const& parts, std::size_t count) {
  if (count == 0) return "/";
  std::string out;
  for (std::size_t k = 0; k < count; ++k) out += "/" + parts[k];
  return out;
}

// Product of extents, saturating instead of overflowing (corrupt files can
// declare absurd extents).
double product(std::vector<std::size_t> const& dims, std::size_t first = 0) {
  double p = 1;
  for (std::size_t k = first; k < dims.size(); ++k) p *= double(dims[k]);
  return p;
}

std::size_t count(std::vector<std::size_t> const& dims, std::size_t first = 0) {
  std::size_t p = 1;
  for (std::size_t k = first; k < dims.size(); ++k) p *= dims[k];
  return p;
}

std::string shape_string(std::vector<std::size_t> const& dims) {
  std::string s = "(";
  for (std::size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + std::to_string(dims[k]);
  return s + ")";
}

std::vector<std::size_t> extents(hid_t space) {
  int const rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> d(std::max(rank, 0));
  if (rank > 0) H5Sget_simple_extent_dims(space, d.data(), nullptr);
  return {d.begin(), d.end()};
}

std::vector<hsize_t> to_hsize(std::vector<std::size_t> const& dims) { return {dims.begin(), dims.end()}; }

Handle open_object(File const& f, std::string const& path) {
  PTYKO_REQUIRE(exists(f, path), f.name(), ": ", path,
                link_exists(f, path) ? " is a dangling soft link" : " is missing");
  Handle obj(H5Oopen(f.id(), path.c_str(), H5P_DEFAULT));
  PTYKO_REQUIRE(obj.valid(), f.name(), ": cannot open ", path, " (", hdf5_reason(), ")");
  return obj;
}

Handle open_dataset(File const& f, std::string const& path) {
  Handle obj = open_object(f, path);
  PTYKO_REQUIRE(H5Iget_type(obj) == H5I_DATASET, f.name(), ": ", path,
                " is a group, expected a dataset");
  return obj;
}

// Type properties used by the readers.
bool is_complex_compound(hid_t t) {
  if (H5Tget_class(t) != H5T_COMPOUND || H5Tget_nmembers(t) != 2) return false;
  Handle a(H5Tget_member_type(t, 0)), b(H5Tget_member_type(t, 1));
  return H5Tget_class(a) == H5T_FLOAT && H5Tget_class(b) == H5T_FLOAT &&
         H5Tget_size(a) == H5Tget_size(b);
}

std::string classify(hid_t t) {
  switch (H5Tget_class(t)) {
    case H5T_INTEGER: {
      bool const is_signed = H5Tget_sign(t) == H5T_SGN_2;
      return (is_signed ? "int" : "uint") + std::to_string(8 * H5Tget_size(t));
    }
    case H5T_FLOAT:
      if (H5Tget_size(t) == 4) return "float32";
      if (H5Tget_size(t) == 8) return "float64";
      return "other";
    case H5T_COMPOUND:
      if (is_complex_compound(t)) {
        Handle m(H5Tget_member_type(t, 0));
        if (H5Tget_size(m) == 4) return "complex64";
        if (H5Tget_size(m) == 8) return "complex128";
      }
      return "other";
    case H5T_ENUM: return "enum";
    case H5T_STRING: return "string";
    default: return "other";
  }
}

template <class T>
struct ComplexTraits {
  static constexpr bool value = false;
  using real = T;
};
template <class R>
struct ComplexTraits<Kokkos::complex<R>> {
  static constexpr bool value = true;
  using real = R;
};
template <class R>
struct ComplexTraits<std::complex<R>> {
  static constexpr bool value = true;
  using real = R;
};

template <class R>
hid_t native_type() {
  if constexpr (std::is_same_v<R, float>) return H5T_NATIVE_FLOAT;
  else if constexpr (std::is_same_v<R, double>) return H5T_NATIVE_DOUBLE;
  else if constexpr (std::is_same_v<R, std::int8_t>) return H5T_NATIVE_INT8;
  else if constexpr (std::is_same_v<R, std::uint8_t>) return H5T_NATIVE_UINT8;
  else if constexpr (std::is_same_v<R, std::int16_t>) return H5T_NATIVE_INT16;
  else if constexpr (std::is_same_v<R, std::uint16_t>) return H5T_NATIVE_UINT16;
  else if constexpr (std::is_same_v<R, std::int32_t>) return H5T_NATIVE_INT32;
  else if constexpr (std::is_same_v<R, std::uint32_t>) return H5T_NATIVE_UINT32;
  else if constexpr (std::is_same_v<R, std::int64_t>) return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<R, std::uint64_t>) return H5T_NATIVE_UINT64;
  else static_assert(sizeof(R) == 0, "unsupported element type");
}

// The {r, i} compound h5py writes for complex numbers, with `real` members.
Handle complex_type(hid_t real) {
  std::size_t const size = H5Tget_size(real);
  Handle t(H5Tcreate(H5T_COMPOUND, 2 * size));
  H5Tinsert(t, "r", 0, real);
  H5Tinsert(t, "i", size, real);
  return t;
}

template <class T>
Handle memory_type() {
  using Tr = ComplexTraits<T>;
  if constexpr (Tr::value) return complex_type(native_type<typename Tr::real>());
  else return Handle(H5Tcopy(native_type<T>()));
}

// Standard little-endian file types (portable, what h5py writes on x86/ARM).
Handle file_type_named(std::string const& name) {
  hid_t t = H5I_INVALID_HID;
  if (name == "uint8") t = H5T_STD_U8LE;
  else if (name == "uint16") t = H5T_STD_U16LE;
  else if (name == "uint32") t = H5T_STD_U32LE;
  else if (name == "uint64") t = H5T_STD_U64LE;
  else if (name == "int8") t = H5T_STD_I8LE;
  else if (name == "int16") t = H5T_STD_I16LE;
  else if (name == "int32") t = H5T_STD_I32LE;
  else if (name == "int64") t = H5T_STD_I64LE;
  else if (name == "float32") t = H5T_IEEE_F32LE;
  else if (name == "float64") t = H5T_IEEE_F64LE;
  else if (name == "complex64") return complex_type(H5T_IEEE_F32LE);
  else if (name == "complex128") return complex_type(H5T_IEEE_F64LE);
  PTYKO_ASSERT(t != H5I_INVALID_HID, "unknown stored_as type ", name);
  return Handle(H5Tcopy(t));
}

template <class T>
std::string default_type_name() {
  using Tr = ComplexTraits<T>;
  using R = typename Tr::real;
  std::string base = std::is_floating_point_v<R> ? "float" : (std::is_signed_v<R> ? "int" : "uint");
  if (Tr::value) return sizeof(R) == 4 ? "complex64" : "complex128";
  return base + std::to_string(8 * sizeof(R));
}

// Reads the selection (file_space -> mem_space) of dataset `ds` as T, with
// HDF5 converting between numeric types. Real data read as complex gets a
// zero imaginary part; an enum (h5py's bool) is read through its integer base.
template <class T>
void read_selection(File const& f, std::string const& path, hid_t ds, hid_t mem_space, hid_t file_space,
                    T* out, std::size_t n) {
  using Tr = ComplexTraits<T>;
  if (n == 0) return;
  Handle ftype(H5Dget_type(ds));
  H5T_class_t const cls = H5Tget_class(ftype);
  auto fail = [&] {
    std::string const reason = hdf5_reason(), filter = missing_filter(ds);
    if (!filter.empty()) PTYKO_FAIL(f.name(), ": cannot read ", path, ": ", filter);
    PTYKO_FAIL(f.name(), ": cannot read ", path, " (", reason, ")");
  };
  if constexpr (Tr::value) {
    using R = typename Tr::real;
    if (cls == H5T_COMPOUND && is_complex_compound(ftype)) {
      // Members are matched by name: take the file's names, so {real, imag}
      // files read as well as h5py's {r, i}.
      Handle mtype(H5Tcreate(H5T_COMPOUND, 2 * sizeof(R)));
      char* n0 = H5Tget_member_name(ftype, 0);
      char* n1 = H5Tget_member_name(ftype, 1);
      H5Tinsert(mtype, n0, 0, native_type<R>());
      H5Tinsert(mtype, n1, sizeof(R), native_type<R>());
      H5free_memory(n0);
      H5free_memory(n1);
      if (H5Dread(ds, mtype, mem_space, file_space, H5P_DEFAULT, out) < 0) fail();
      return;
    }
    if (cls == H5T_INTEGER || cls == H5T_FLOAT || cls == H5T_ENUM) {
      std::vector<R> re(n);
      read_selection<R>(f, path, ds, mem_space, file_space, re.data(), n);
      for (std::size_t k = 0; k < n; ++k) out[k] = T(re[k], R(0));
      return;
    }
  } else {
    if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
      if (H5Dread(ds, native_type<T>(), mem_space, file_space, H5P_DEFAULT, out) < 0) fail();
      return;
    }
    if (cls == H5T_ENUM) {
      // HDF5 does not convert enum to numbers: read the raw native enum, then
      // convert its integer base.
      Handle mtype(H5Tget_native_type(ftype, H5T_DIR_ASCEND));
      Handle base(H5Tget_super(mtype));
      std::size_t const width = std::max(H5Tget_size(mtype), sizeof(T));
      std::vector<unsigned char> buf(n * width);
      if (H5Dread(ds, mtype, mem_space, file_space, H5P_DEFAULT, buf.data()) < 0) fail();
      if (H5Tconvert(base, native_type<T>(), n, buf.data(), nullptr, H5P_DEFAULT) < 0) fail();
      std::memcpy(out, buf.data(), n * sizeof(T));
      return;
    }
    PTYKO_REQUIRE(!is_complex_compound(ftype), f.name(), ": ", path,
                  " holds complex values; expected real numbers");
  }
  PTYKO_FAIL(f.name(), ": ", path, " holds ", classify(ftype), " values; expected numbers");
}

Handle link_create_plist() {
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl, 1);
  // Names are UTF-8, as h5py writes them.
  H5Pset_char_encoding(lcpl, H5T_CSET_UTF8);
  return lcpl;
}

// Removes an existing link at `path` so that writers replace rather than fail.
void remove_existing(File const& f, std::string const& path) {
  if (link_exists(f, path)) {
    PTYKO_REQUIRE(H5Ldelete(f.id(), path.c_str(), H5P_DEFAULT) >= 0, f.name(), ": cannot replace ",
                  path, " (", hdf5_reason(), ")");
  }
}

Handle file_access_plist() {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  // Closing the file closes everything still open in it, so that after
  // close() the bytes are on disk and the file can be renamed.
  H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
#if H5_VERSION_GE(1, 10, 7)
  // Lustre/NFS mounts without flock() make HDF5 >= 1.10 refuse every file
  // ("unable to lock file, errno = 38"); lock where possible, else go on.
  H5Pset_file_locking(fapl, true, true);
#endif
  return fapl;
}

// Chunk shape for a dataset: one trailing 2-D plane (a frame) per chunk,
// halving the leading non-unit extent while a chunk exceeds 4 MiB (bands of
// rows of a large object), so that a large dataset is deflated on several
// threads (chunk_deflate.hpp).
std::vector<hsize_t> chunk_shape(std::vector<std::size_t> const& dims, std::size_t element_size) {
  std::vector<hsize_t> chunk(dims.begin(), dims.end());
  for (std::size_t k = 0; k + 2 < chunk.size(); ++k) chunk[k] = 1;
  auto bytes = [&] {
    double b = double(element_size);
    for (auto c : chunk) b *= double(c);
    return b;
  };
  std::size_t const limit = std::size_t(4) << 20;
  while (bytes() > double(limit)) {
    auto it = std::find_if(chunk.begin(), chunk.end(), [](hsize_t c) { return c > 1; });
    if (it == chunk.end()) break;
    *it = (*it + 1) / 2;
  }
  return chunk;
}

template <class T>
void write_attribute_impl(File const& f, std::string const& object_path, std::string const& name,
                          hid_t file_type, hid_t mem_type, T const* value) {
  Handle obj = open_object(f, object_path);
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  Handle space(H5Screate(H5S_SCALAR));
  Handle attr(H5Acreate2(obj, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT));
  PTYKO_REQUIRE(attr.valid() && H5Awrite(attr, mem_type, value) >= 0, f.name(), ": cannot write attribute ",
                name, " of ", object_path, " (", hdf5_reason(), ")");
}

}  // namespace

bool attribute_exists(File const& f, std::string const& object_path, std::string const& name) {
  Handle obj = open_object(f, object_path);
  return H5Aexists(obj, name.c_str()) > 0;
}

namespace {

Handle open_attribute(File const& f, std::string const& object_path, std::string const& name) {
  Handle obj = open_object(f, object_path);
  PTYKO_REQUIRE(H5Aexists(obj, name.c_str()) > 0, f.name(), ": ", object_path, " has no attribute ",
                name);
  Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
  PTYKO_REQUIRE(attr.valid(), f.name(), ": cannot open attribute ", name, " of ", object_path, " (",
                hdf5_reason(), ")");
  return attr;
}

// A string from a dataset or attribute of `type`, one element, read by `read`.
template <class ReadFn>
std::string read_one_string(hid_t type, hid_t space, std::string const& what, ReadFn read) {
  PTYKO_REQUIRE(H5Tget_class(type) == H5T_STRING, what, " is not a string");
  PTYKO_REQUIRE(H5Sget_simple_extent_npoints(space) == 1, what,
                " holds several strings; expected one");
  if (H5Tis_variable_str(type) > 0) {
    Handle mtype(H5Tcopy(H5T_C_S1));
    H5Tset_size(mtype, H5T_VARIABLE);
    H5Tset_cset(mtype, H5Tget_cset(type));
    char* p = nullptr;
    PTYKO_REQUIRE(read(mtype.get(), &p) >= 0, what, " cannot be read (", hdf5_reason(), ")");
    std::string s = p ? p : "";
    Handle scalar(H5Screate(H5S_SCALAR));
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(mtype, scalar, H5P_DEFAULT, &p);
#else
    H5Dvlen_reclaim(mtype, scalar, H5P_DEFAULT, &p);
#endif
    return s;
  }
  std::size_t const size = H5Tget_size(type);
  Handle mtype(H5Tcopy(type));
  std::string s(size, '\0');
  PTYKO_REQUIRE(read(mtype.get(), s.data()) >= 0, what, " cannot be read (", hdf5_reason(), ")");
  s.resize(std::strlen(s.c_str()));
  if (H5Tget_strpad(type) == H5T_STR_SPACEPAD) s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

}  // namespace

// ---------------------------------------------------------------- Handle, File

void Handle::reset() {
  if (m_id < 0) return;
  hid_t const id = std::exchange(m_id, H5I_INVALID_HID);
  // An id may already be gone (closed with its file under H5F_CLOSE_STRONG).
  switch (H5Iget_type(id)) {
    case H5I_FILE: H5Fclose(id); break;
    case H5I_GROUP: H5Gclose(id); break;
    case H5I_DATASET: H5Dclose(id); break;
    case H5I_DATASPACE: H5Sclose(id); break;
    case H5I_DATATYPE: H5Tclose(id); break;
    case H5I_ATTR: H5Aclose(id); break;
    case H5I_GENPROP_LST: H5Pclose(id); break;
    case H5I_BADID: break;
    default: H5Idec_ref(id); break;
  }
}

File File::open_read(std::string const& path) {
  silence_hdf5_errors();
  add_sibling_plugin_folders();
  std::error_code ec;
  auto const st = fs::status(path, ec);
  PTYKO_REQUIRE(fs::exists(st), path, ": no such file");
  PTYKO_REQUIRE(!fs::is_directory(st), path, ": is a folder, not an HDF5 file");
  PTYKO_REQUIRE(::access(path.c_str(), R_OK) == 0, path, ": cannot be read (", std::strerror(errno), ")");
  PTYKO_REQUIRE(fs::file_size(path, ec) > 0, path, ": is empty (0 bytes), not an HDF5 file");
#if H5_VERSION_GE(1, 12, 0)
  htri_t const is_hdf5 = H5Fis_accessible(path.c_str(), H5P_DEFAULT);
#else
  htri_t const is_hdf5 = H5Fis_hdf5(path.c_str());
#endif
  PTYKO_REQUIRE(is_hdf5 > 0, path, ": is not an HDF5 file (no HDF5 signature); CXI files are HDF5");
  Handle fapl = file_access_plist();
  hid_t const id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  if (id < 0) {
    std::string const reason = hdf5_reason();
    PTYKO_REQUIRE(reason.find("truncated") == std::string::npos, path,
                  ": HDF5 file is truncated (", reason, "): it was not completely written or copied");
    PTYKO_FAIL(path, ": cannot open as HDF5 (", reason, ")");
  }
  File f;
  f.m_handle = Handle(id);
  f.m_name = path;
  return f;
}

File File::create(std::string const& path) {
  silence_hdf5_errors();
  add_sibling_plugin_folders();
  Handle fapl = file_access_plist();
  hid_t const id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  PTYKO_REQUIRE(id >= 0, path, ": cannot create (", hdf5_reason(), ")");
  File f;
  f.m_handle = Handle(id);
  f.m_name = path;
  return f;
}

void File::close() {
  if (!m_handle.valid()) return;
  hid_t const id = m_handle.release();
  herr_t const flushed = H5Fflush(id, H5F_SCOPE_LOCAL);
  std::string const reason = flushed < 0 ? hdf5_reason() : "";
  herr_t const closed = H5Fclose(id);
  PTYKO_REQUIRE(flushed >= 0 && closed >= 0, m_name, ": cannot finish writing (",
                flushed < 0 ? reason : hdf5_reason(), "): is the disk full?");
}

// ------------------------------------------------------------------ queries

bool link_exists(File const& f, std::string const& path) {
  auto const parts = split_path(path);
  if (parts.empty()) return true;
  for (std::size_t k = 1; k < parts.size(); ++k) {
    std::string const prefix = join_path(parts, k);
    if (H5Lexists(f.id(), prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (H5Oexists_by_name(f.id(), prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return H5Lexists(f.id(), join_path(parts, parts.size()).c_str(), H5P_DEFAULT) > 0;
}

bool exists(File const& f, std::string const& path) {
  if (split_path(path).empty()) return true;
  if (!link_exists(f, path)) return false;
  // Follows soft links: false for a dangling one.
  return H5Oexists_by_name(f.id(), path.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::size_t> shape(File const& f, std::string const& path) {
  Handle ds = open_dataset(f, path);
  Handle space(H5Dget_space(ds));
  return extents(space);
}

std::string type_name(File const& f, std::string const& path) {
  Handle ds = open_dataset(f, path);
  Handle t(H5Dget_type(ds));
  return classify(t);
}

std::string resolve(File const& f, std::string const& path) {
  std::vector<std::string> todo = split_path(path), done;
  std::reverse(todo.begin(), todo.end());  // a stack: next component at the back
  int hops = 0;
  bool followed = false;
  while (!todo.empty()) {
    std::string c = std::move(todo.back());
    todo.pop_back();
    if (c == ".") continue;
    if (c == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(c);
    std::string const here = join_path(done, done.size());
    H5L_info_t info;
    if (H5Lget_info(f.id(), here.c_str(), &info, H5P_DEFAULT) < 0) {
      if (followed) PTYKO_FAIL(f.name(), ": ", path, " leads to ", here, ", which does not exist");
      PTYKO_FAIL(f.name(), ": ", path, " does not exist (", here, " is missing)");
    }
    if (info.type != H5L_TYPE_SOFT) continue;
    PTYKO_REQUIRE(++hops <= 40, f.name(), ": ", path, ": too many soft links (a cycle?)");
    std::string target(info.u.val_size, '\0');
    H5Lget_val(f.id(), here.c_str(), target.data(), target.size(), H5P_DEFAULT);
    target.resize(std::strlen(target.c_str()));
    done.pop_back();
    if (!target.empty() && target[0] == '/') done.clear();  // else relative to the link's group
    auto parts = split_path(target);
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
    followed = true;
  }
  return join_path(done, done.size());
}

void check_fits_in_memory(File const& f, std::string const& path, double bytes, std::string const& hint) {
  long const pages = ::sysconf(_SC_PHYS_PAGES);
  long const page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return;  // unknown: let the allocation decide
  double const memory = double(pages) * double(page_size);
  if (bytes <= memory) return;
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  std::ostringstream msg;
  msg << std::fixed << std::setprecision(1) << f.name() << ": reading " << path << " needs "
      << bytes / gib << " GiB but this machine has " << memory / gib << " GiB of memory";
  if (!hint.empty()) msg << ": " << hint;
  throw UserError(msg.str());
}

// ------------------------------------------------------------------ readers

template <class T>
std::vector<T> read(File const& f, std::string const& path, std::vector<std::size_t>* dims) {
  Handle ds = open_dataset(f, path);
  Handle space(H5Dget_space(ds));
  auto const d = extents(space);
  check_fits_in_memory(f, path, product(d) * double(sizeof(T)));
  std::size_t const n = H5Sget_simple_extent_npoints(space);
  std::vector<T> out(n);
  read_selection<T>(f, path, ds, H5S_ALL, H5S_ALL, out.data(), n);
  if (dims) *dims = d;
  return out;
}

double read_scalar(File const& f, std::string const& path) {
  std::vector<std::size_t> dims;
  auto const v = read<double>(f, path, &dims);
  PTYKO_REQUIRE(v.size() == 1, f.name(), ": ", path, " has shape ", shape_string(dims),
                ", expected a single value");
  return v[0];
}

std::string read_string(File const& f, std::string const& path) {
  Handle ds = open_dataset(f, path);
  Handle type(H5Dget_type(ds));
  Handle space(H5Dget_space(ds));
  return read_one_string(type, space, f.name() + ": " + path, [&](hid_t mtype, void* buf) {
    return H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  });
}

std::string read_string_attribute(File const& f, std::string const& object_path, std::string const& name) {
  Handle attr = open_attribute(f, object_path, name);
  Handle type(H5Aget_type(attr));
  Handle space(H5Aget_space(attr));
  return read_one_string(type, space, f.name() + ": attribute " + name + " of " + object_path,
                         [&](hid_t mtype, void* buf) { return H5Aread(attr, mtype, buf); });
}

double read_scalar_attribute(File const& f, std::string const& object_path, std::string const& name) {
  Handle attr = open_attribute(f, object_path, name);
  Handle type(H5Aget_type(attr));
  Handle space(H5Aget_space(attr));
  H5T_class_t const cls = H5Tget_class(type);
  PTYKO_REQUIRE((cls == H5T_INTEGER || cls == H5T_FLOAT) && H5Sget_simple_extent_npoints(space) == 1,
                f.name(), ": attribute ", name, " of ", object_path, " is not a single number");
  double v = 0;
  PTYKO_REQUIRE(H5Aread(attr, H5T_NATIVE_DOUBLE, &v) >= 0, f.name(), ": cannot read attribute ", name,
                " of ", object_path, " (", hdf5_reason(), ")");
  return v;
}

void read_rows(File const& f, std::string const& path, std::vector<std::size_t> const& rows, float* out,
               RowWindow const& window) {
  Handle ds = open_dataset(f, path);
  Handle fspace(H5Dget_space(ds));
  auto const d = extents(fspace);
  PTYKO_REQUIRE(!d.empty(), f.name(), ": ", path, " is a single value; expected an array of rows");
  // Rank 4 (a raster scan's (n1, n2, y, x), NeXus style): rows are the
  // n1 x n2 images in row-major order; a run of rows never crosses n1.
  bool const raster = d.size() == 4;
  std::size_t const per_line = raster ? d[1] : std::numeric_limits<std::size_t>::max();
  std::size_t const frames = raster ? d[0] * d[1] : d[0];
  std::size_t const fy = raster ? 2 : 1;  // the first image dimension
  bool const windowed = window.height > 0;
  PTYKO_ASSERT(!windowed || (d.size() == fy + 2 && window.y + window.height <= d[fy] && window.x + window.width <= d[fy + 1]),
               "read_rows: window outside the rows of ", path);
  std::size_t const row = windowed ? window.height * window.width : count(d, fy);
  for (auto r : rows) {
    PTYKO_REQUIRE(r < frames, f.name(), ": ", path, ": row ", r, " is out of range (", frames, " rows)");
  }
  if (rows.empty() || row == 0) return;

  // The distinct rows in file order, and for each the places they go in `out`.
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return rows[a] < rows[b]; });
  std::vector<std::size_t> unique;  // sorted distinct rows
  std::vector<std::size_t> first;   // unique[k]'s destinations: order[first[k] .. first[k+1])
  for (std::size_t q = 0; q < order.size(); ++q) {
    if (unique.empty() || rows[order[q]] != unique.back()) {
      unique.push_back(rows[order[q]]);
      first.push_back(q);
    }
  }
  first.push_back(order.size());
  // Strictly increasing requests (the usual contiguous block per MPI rank)
  // are read straight into `out`; others through a bounded buffer.
  bool const direct = unique.size() == rows.size() && std::is_sorted(rows.begin(), rows.end());

  // One H5Dread per run of consecutive rows. HDF5 1.10 reads a union of
  // hyperslabs (H5S_SELECT_OR) from a chunked dataset about 5x slower than
  // the same runs read one by one (measured: 1000 random frames of 256x256,
  // 3.2 s vs 0.67 s), as it maps the irregular selection onto every chunk.
  // Runs are split so that the staging buffer stays below 64 MiB.
  std::size_t const max_rows = std::max<std::size_t>(1, (std::size_t(64) << 20) / (row * sizeof(float)));
  std::vector<float> staging;
  std::vector<hsize_t> start(d.size(), 0), block = to_hsize(d);
  if (windowed) {
    start[fy] = window.y;
    start[fy + 1] = window.x;
    block[fy] = window.height;
    block[fy + 1] = window.width;
  }
  auto const inflatable = impl::inflate_plan(ds);
  int const threads = ptyko::impl::host_threads();
  std::size_t b = 0;
  while (b < unique.size()) {
    std::size_t e = b + 1;
    while (e < unique.size() && e - b < max_rows && unique[e] == unique[e - 1] + 1 &&
           unique[e] / per_line == unique[b] / per_line)
      ++e;
    std::size_t const n_rows = e - b;
    if (raster) {
      start[0] = unique[b] / per_line;
      block[0] = 1;
      start[1] = unique[b] % per_line;
      block[1] = n_rows;
    } else {
      start[0] = unique[b];
      block[0] = n_rows;
    }
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start.data(), nullptr, block.data(), nullptr);
    Handle mspace(H5Screate_simple(int(block.size()), block.data(), nullptr));
    float* dst = out + b * row;
    if (!direct) {
      staging.resize(n_rows * row);
      dst = staging.data();
    }
    // Deflated chunks inflate on several threads (chunk_inflate.hpp);
    // anything else, or a chunk that is not as its filters make it, through HDF5.
    if (!inflatable || !impl::read_inflated_box(ds, *inflatable, start, block, dst, threads))
      read_selection<float>(f, path, ds, mspace, fspace, dst, n_rows * row);
    if (!direct) {
      for (std::size_t k = b; k < e; ++k) {
        for (std::size_t q = first[k]; q < first[k + 1]; ++q) {
          std::copy_n(dst + (k - b) * row, row, out + order[q] * row);
        }
      }
    }
    b = e;
  }
}

// ------------------------------------------------------------------ writers

template <class T>
void write(File const& f, std::string const& path, T const* data, std::vector<std::size_t> const& dims,
           WriteOptions const& opts, std::string const& stored_as) {
  using Tr = ComplexTraits<T>;
  std::string const stored = stored_as.empty() ? default_type_name<T>() : stored_as;
  PTYKO_ASSERT(Tr::value == (stored.rfind("complex", 0) == 0), "cannot store ", default_type_name<T>(),
               " as ", stored);
  Handle ftype = file_type_named(stored);
  Handle mtype = memory_type<T>();
  remove_existing(f, path);
  auto const hdims = to_hsize(dims);
  Handle space(dims.empty() ? H5Screate(H5S_SCALAR)
                            : H5Screate_simple(int(hdims.size()), hdims.data(), nullptr));
  std::size_t const n = count(dims);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  std::vector<hsize_t> chunk;
  bool deflated = false;
  if (opts.compress && !dims.empty() && n > 0) {
    chunk = chunk_shape(dims, H5Tget_size(ftype));
    H5Pset_chunk(dcpl, int(chunk.size()), chunk.data());
    // Shuffle groups the bytes of equal significance: integer counts with
    // small values then compress several times better.
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
      H5Pset_shuffle(dcpl);
      H5Pset_deflate(dcpl, deflate_level);
      deflated = true;
    }
  }
  Handle lcpl = link_create_plist();
  Handle ds(H5Dcreate2(f.id(), path.c_str(), ftype, space, lcpl, dcpl, H5P_DEFAULT));
  PTYKO_REQUIRE(ds.valid(), f.name(), ": cannot create ", path, " (", hdf5_reason(), ")");
  // Large datasets stored as they are in memory, or doubles stored as
  // floats (a result's object), deflate on several threads
  // (chunk_deflate.hpp); the file is the same.
  std::size_t const element = H5Tget_size(ftype);
  auto const narrowing = [&] {
    if (H5Tequal(ftype, mtype) > 0) return impl::Narrowing::none;
    if constexpr (std::is_same_v<typename Tr::real, double>) {
      using Narrow = std::conditional_t<Tr::value, Kokkos::complex<float>, float>;
      Handle const narrow = memory_type<Narrow>();
      if (H5Tequal(ftype, narrow) > 0) return impl::Narrowing::double_to_float;
    }
    return impl::Narrowing::other;
  }();
  if (deflated && n * element >= threaded_deflate_bytes && narrowing != impl::Narrowing::other) {
    auto const done = impl::write_deflated_chunks(ds, data, hdims, chunk, element, narrowing, deflate_level,
                                                  ptyko::impl::host_threads());
    PTYKO_REQUIRE(done.written == done.total || done.written == 0, f.name(), ": cannot write chunk ", done.written,
                  " of ", done.total, " of ", path, " (", hdf5_reason(), ")");
    if (done.written == done.total) return;
  }
  if (n > 0) {
    PTYKO_REQUIRE(H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, f.name(),
                  ": cannot write ", path, " (", hdf5_reason(), ")");
  }
}

void write_scalar(File const& f, std::string const& path, double value) {
  write<double>(f, path, &value, {}, WriteOptions{false});
}

void write_scalar_int(File const& f, std::string const& path, long long value) {
  std::int64_t const v = value;
  write<std::int64_t>(f, path, &v, {}, WriteOptions{false});
}

void write_string(File const& f, std::string const& path, std::string const& value) {
  // Variable-length UTF-8: what h5py writes for a Python str.
  Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  remove_existing(f, path);
  Handle space(H5Screate(H5S_SCALAR));
  Handle lcpl = link_create_plist();
  Handle ds(H5Dcreate2(f.id(), path.c_str(), type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT));
  char const* p = value.c_str();
  PTYKO_REQUIRE(ds.valid() && H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p) >= 0, f.name(),
                ": cannot write ", path, " (", hdf5_reason(), ")");
}

void write_attribute(File const& f, std::string const& object_path, std::string const& name,
                     std::string const& value) {
  Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  char const* p = value.c_str();
  write_attribute_impl(f, object_path, name, type, type, &p);
}

void write_attribute(File const& f, std::string const& object_path, std::string const& name,
                     double value) {
  write_attribute_impl(f, object_path, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void soft_link(File const& f, std::string const& target_path, std::string const& link_path) {
  remove_existing(f, link_path);
  Handle lcpl = link_create_plist();
  PTYKO_REQUIRE(H5Lcreate_soft(target_path.c_str(), f.id(), link_path.c_str(), lcpl, H5P_DEFAULT) >= 0,
                f.name(), ": cannot link ", link_path, " to ", target_path, " (", hdf5_reason(), ")");
}

// ------------------------------------------------------------------ AtomicFile

AtomicFile::AtomicFile(std::string path) : m_path(std::move(path)) {
  PTYKO_REQUIRE(!m_path.empty(), "the output file name is empty");
  fs::path const p(m_path);
  fs::path const folder = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  auto const st = fs::status(folder, ec);
  PTYKO_REQUIRE(fs::exists(st), m_path, ": folder ", folder.string(), " does not exist: create it first");
  PTYKO_REQUIRE(fs::is_directory(st), m_path, ": ", folder.string(), " is not a folder");
  PTYKO_REQUIRE(!fs::is_directory(fs::status(p, ec)), m_path, ": is a folder; give a file name");
  PTYKO_REQUIRE(::access(folder.c_str(), W_OK | X_OK) == 0, m_path, ": cannot write in folder ",
                folder.string(), " (", std::strerror(errno), ")");
  m_tmp = m_path + ".tmp-" + std::to_string(::getpid());
  m_file = File::create(m_tmp);
  m_file.m_name = m_path;
}

AtomicFile::~AtomicFile() {
  if (m_committed) return;
  m_file = File();  // closes, ignoring errors
  std::error_code ec;
  fs::remove(m_tmp, ec);
}

void AtomicFile::commit() {
  PTYKO_ASSERT(!m_committed, "AtomicFile::commit called twice for ", m_path);
  m_file.close();
  // The data must be on disk before the rename makes it visible, or a crash
  // could leave an empty file under the final name.
  int const fd = ::open(m_tmp.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  std::error_code ec;
  fs::rename(m_tmp, m_path, ec);
  PTYKO_REQUIRE(!ec, m_path, ": cannot rename the finished ", m_tmp, " to it (", ec.message(), ")");
  m_committed = true;
}

// ------------------------------------------------------------------ instantiations

#define PTYKO_H5_INSTANTIATE(T)                                                                    \
  template std::vector<T> read<T>(File const&, std::string const&, std::vector<std::size_t>*);     \
  template void write<T>(File const&, std::string const&, T const*, std::vector<std::size_t> const&, \
                         WriteOptions const&, std::string const&);

PTYKO_H5_INSTANTIATE(float)
PTYKO_H5_INSTANTIATE(double)
PTYKO_H5_INSTANTIATE(std::int8_t)
PTYKO_H5_INSTANTIATE(std::uint8_t)
PTYKO_H5_INSTANTIATE(std::int16_t)
PTYKO_H5_INSTANTIATE(std::uint16_t)
PTYKO_H5_INSTANTIATE(std::int32_t)
PTYKO_H5_INSTANTIATE(std::uint32_t)
PTYKO_H5_INSTANTIATE(std::int64_t)
PTYKO_H5_INSTANTIATE(std::uint64_t)
PTYKO_H5_INSTANTIATE(Kokkos::complex<float>)
PTYKO_H5_INSTANTIATE(Kokkos::complex<double>)
PTYKO_H5_INSTANTIATE(std::complex<float>)
PTYKO_H5_INSTANTIATE(std::complex<double>)

#undef PTYKO_H5_INSTANTIATE

}  // namespace ptyko::h5
