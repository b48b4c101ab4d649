#pragma once
// What `ptyko reconstruct` tells its user: the per-view log on rank 0, the
// numbers in its lines, and the command line that resumes a run.

#include "run_config.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace ptyko::drivers {

/// "42 s", "3 min 07 s", "2 h 05 min"; "?" when not finite.
std::string format_duration(double seconds);
/// "512 B", "3.4 KiB", "1.2 MiB", "2.05 GiB".
std::string format_bytes(double bytes);
/// `s` as one shell word (quoted where it holds anything but safe characters).
std::string shell_quote(std::string const& s);
/// The command that resumes: `[mpiexec -n P] ptyko reconstruct ARGS --resume PATH`.
std::string resume_command(int ranks, std::vector<std::string> const& args, std::string const& resume);

/// Progress, notes and warnings of one view, on its rank 0: the terminal
/// (progress on stdout unless --quiet; warnings and stop notes on stderr)
/// and the --log-file (everything, appended). Other ranks say nothing.
class Log {
 public:
  /// `label` prefixes every line ("[label] ") when several views run.
  Log(bool root, RunConfig const& cfg, std::string const& label);
  ~Log();
  Log(Log const&) = delete;
  Log& operator=(Log const&) = delete;

  bool root() const { return m_root; }
  /// Appends to the --log-file `path` ("" for none), starting with the date
  /// and the command line. Throws UserError when it cannot be opened.
  void open(std::string const& path);
  /// A progress or information line.
  void info(std::string const& line);
  /// A warning, always shown.
  void warn(std::string const& line);
  /// A note that must be seen even with --quiet (stop, resume command).
  void note(std::string const& line);

 private:
  void to_file(std::string const& line);
  bool m_root, m_quiet;
  std::string m_prefix;
  std::FILE* m_file = nullptr;
};

}  // namespace ptyko::drivers
