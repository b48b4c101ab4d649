#pragma once
// A binary output file that appears under its final name only when complete:
// bytes go to "<path>.tmp-<pid>" in the same folder (so the rename stays on
// one file system and is atomic), commit() flushes, syncs and renames, and
// the destructor removes the temporary when commit() was not reached. A
// reader (a viewer polling the folder, a second run) thus never sees a
// half-written picture or array. Private to core/src (PNG, .npy, TIFF).

#include <ptyko/kernels/error.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

namespace ptyko::impl {

class AtomicOutput {
 public:
  /// Opens the temporary file next to `path`. Throws UserError naming
  /// `path` when its folder is missing or not writable.
  explicit AtomicOutput(std::string path) : m_path(std::move(path)) {
    namespace fs = std::filesystem;
    PTYKO_REQUIRE(!m_path.empty(), "an output file name is empty");
    fs::path const p(m_path);
    fs::path const folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    auto const st = fs::status(folder, ec);
    PTYKO_REQUIRE(fs::exists(st), m_path, ": cannot write: folder ", folder.string(),
                  " does not exist (create it first)");
    PTYKO_REQUIRE(fs::is_directory(st), m_path, ": cannot write: ", folder.string(), " is not a folder");
    PTYKO_REQUIRE(!fs::is_directory(fs::status(p, ec)), m_path, ": is a folder; give a file name");
    m_tmp = m_path + ".tmp-" + std::to_string(::getpid());
    m_file = std::fopen(m_tmp.c_str(), "wb");
    PTYKO_REQUIRE(m_file != nullptr, m_path, ": cannot write ", m_tmp, " (", std::strerror(errno), ")");
  }

  ~AtomicOutput() {
    if (m_committed) return;
    if (m_file) std::fclose(m_file);
    std::error_code ec;
    std::filesystem::remove(m_tmp, ec);
  }

  AtomicOutput(AtomicOutput const&) = delete;
  AtomicOutput& operator=(AtomicOutput const&) = delete;

  /// The open temporary file (for libraries that write through a FILE*).
  std::FILE* file() const { return m_file; }
  /// Final path.
  std::string const& path() const { return m_path; }
  /// Temporary path (where the bytes are until commit()).
  std::string const& temporary_path() const { return m_tmp; }

  /// Appends `n` bytes; throws UserError on a short write (disk full, ...).
  void write(void const* data, std::size_t n) {
    if (n == 0) return;
    PTYKO_REQUIRE(std::fwrite(data, 1, n, m_file) == n, m_path, ": write failed (", std::strerror(errno), ")");
  }

  /// Flushes, syncs and renames the temporary to the final path.
  void commit() {
    PTYKO_ASSERT(!m_committed && m_file, "AtomicOutput::commit called twice for ", m_path);
    // The data must be on disk before the rename makes it visible, or a
    // crash could leave an empty file under the final name.
    bool ok = std::fflush(m_file) == 0 && std::ferror(m_file) == 0;
    int err = ok ? 0 : errno;
    if (ok) ::fsync(::fileno(m_file));
    if (std::fclose(m_file) != 0 && ok) {
      ok = false;
      err = errno;
    }
    m_file = nullptr;
    PTYKO_REQUIRE(ok, m_path, ": write failed (", std::strerror(err), ")");
    std::error_code ec;
    std::filesystem::rename(m_tmp, m_path, ec);
    PTYKO_REQUIRE(!ec, m_path, ": cannot rename the finished ", m_tmp, " to it (", ec.message(), ")");
    m_committed = true;
  }

 private:
  std::string m_path, m_tmp;
  std::FILE* m_file = nullptr;
  bool m_committed = false;
};

}  // namespace ptyko::impl
