#include "run_log.hpp"

#include "commands.hpp"

#include <ptyko/kernels/error.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

namespace ptyko::drivers {

std::string format_duration(double s) {
  if (!std::isfinite(s)) return "?";
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{:.0f} min {:02.0f} s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f} h {:02.0f} min", std::floor(s / 3600), std::fmod(s / 60, 60));
}

std::string format_bytes(double b) {
  if (b < 1024) return fmt::format("{:.0f} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
  if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / 1024 / 1024);
  return fmt::format("{:.2f} GiB", b / 1024 / 1024 / 1024);
}

std::string shell_quote(std::string const& s) {
  bool safe = !s.empty();
  for (char c : s) safe = safe && (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=:,+@%", c));
  if (safe) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string resume_command(int ranks, std::vector<std::string> const& args, std::string const& resume) {
  auto const& argv = invocation();
  std::string cmd = ranks > 1 ? fmt::format("mpiexec -n {} ", ranks) : "";
  cmd += shell_quote(argv.empty() ? std::string("ptyko") : argv[0]) + " reconstruct";
  for (auto const& a : args) cmd += " " + shell_quote(a);
  return cmd + " --resume " + shell_quote(resume);
}

Log::Log(bool root, RunConfig const& cfg, std::string const& label)
    : m_root(root), m_quiet(cfg.quiet), m_prefix(label.empty() ? "" : "[" + label + "] ") {}

Log::~Log() {
  if (m_file) std::fclose(m_file);
}

void Log::open(std::string const& path) {
  if (!m_root || path.empty()) return;
  m_file = std::fopen(path.c_str(), "a");
  PTYKO_REQUIRE(m_file != nullptr, "--log-file ", path, ": cannot open it for writing (", std::strerror(errno), ")");
  std::time_t const now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  std::string cmd;
  for (auto const& a : invocation()) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
  to_file(fmt::format("# {} {}", when, cmd));
}

void Log::info(std::string const& line) {
  if (!m_root) return;
  if (!m_quiet) {
    fmt::print("{}{}\n", m_prefix, line);
    std::fflush(stdout);
  }
  to_file(line);
}

void Log::warn(std::string const& line) {
  if (!m_root) return;
  fmt::print(stderr, "ptyko: warning: {}{}\n", m_prefix, line);
  std::fflush(stderr);
  to_file("warning: " + line);
}

void Log::note(std::string const& line) {
  if (!m_root) return;
  fmt::print(stderr, "ptyko: {}{}\n", m_prefix, line);
  std::fflush(stderr);
  to_file(line);
}

void Log::to_file(std::string const& line) {
  if (!m_file) return;
  std::fprintf(m_file, "%s%s\n", m_prefix.c_str(), line.c_str());
  std::fflush(m_file);
}

}  // namespace ptyko::drivers
