#pragma once
// Shared pieces of ptyko's benchmark programs (bench/):
//  * context for Google Benchmark (Kokkos version and execution space, FFT
//    backend, git revision, build type) via benchmark::AddCustomContext;
//  * a fenced stopwatch for manual timing;
//  * a markdown reporter (--markdown) that prints one table of the median
//    (or single) runs with their rate counters, for scripts/bench;
//  * small statistics and peak-resident-memory helpers.

#include <ptyko/kernels/compat.hpp>

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <ptyko_bench_revision.hpp>  // PTYKO_BENCH_GIT_REVISION, written at build time
#ifndef PTYKO_BENCH_BUILD_TYPE
#define PTYKO_BENCH_BUILD_TYPE "unknown"
#endif

namespace ptyko::bench {

using Exec = Kokkos::DefaultExecutionSpace;
using Clock = std::chrono::steady_clock;

inline std::string exec_space_name() { return Exec::name(); }

inline std::string fft_backend_name() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same_v<Exec, Kokkos::Cuda>) return "cuFFT";
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if (std::is_same_v<Exec, Kokkos::Experimental::HIP>) return "hipFFT";
#endif
  return "FFTW3";
}

/// The default execution space runs on a device: a launch returns before its
/// work is done, and only a fence says when it is.
inline constexpr bool device_launches_v =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible;

/// What the benchmarks time. Wall time is the standard; on a host backend
/// whose default execution space is Serial one thread does all the work, so
/// the process CPU time measures the same work without the time slices that
/// other processes on a shared machine take from it (much less noisy there).
enum class TimerKind { wall, cpu };

inline TimerKind& timer_kind() {
  static TimerKind k = TimerKind::wall;
  return k;
}

inline char const* timer_name() { return timer_kind() == TimerKind::cpu ? "process CPU time" : "wall time"; }

/// Parses --timer=auto|wall|cpu ("auto": cpu when the default execution
/// space is Kokkos::Serial, else wall).
inline void set_timer(std::string const& name) {
  bool serial = false;
#if defined(KOKKOS_ENABLE_SERIAL)
  serial = std::is_same_v<Exec, Kokkos::Serial>;
#endif
  if (name == "cpu")
    timer_kind() = TimerKind::cpu;
  else if (name == "wall")
    timer_kind() = TimerKind::wall;
  else
    timer_kind() = serial ? TimerKind::cpu : TimerKind::wall;
}

inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

inline double clock_seconds() {
  if (timer_kind() == TimerKind::cpu) return process_cpu_seconds();
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

/// Seconds (of timer_kind()) between construction and stop(), with the
/// execution space fenced at both ends, so that asynchronous (device) work
/// is inside the interval.
class FencedTimer {
 public:
  explicit FencedTimer(Exec const& space) : m_space(space) {
    fence(m_space, "ptyko::bench::timer_start");
    m_t0 = clock_seconds();
  }
  double stop() {
    fence(m_space, "ptyko::bench::timer_stop");
    return clock_seconds() - m_t0;
  }

 private:
  Exec m_space;
  double m_t0;
};

/// Kokkos and build facts in the benchmark context (printed in the header of
/// every report, and stored in JSON output).
inline void add_context() {
  benchmark::AddCustomContext("kokkos_version", std::to_string(KOKKOS_VERSION / 10000) + "." +
                                                    std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
                                                    std::to_string(KOKKOS_VERSION % 100));
  benchmark::AddCustomContext("kokkos_exec_space", exec_space_name());
  benchmark::AddCustomContext("kokkos_concurrency", std::to_string(Exec().concurrency()));
  benchmark::AddCustomContext("fft_backend", fft_backend_name());
  benchmark::AddCustomContext("ptyko_git_revision", PTYKO_BENCH_GIT_REVISION);
  benchmark::AddCustomContext("ptyko_build_type", PTYKO_BENCH_BUILD_TYPE);
  benchmark::AddCustomContext("ptyko_timer", timer_name());
}

inline double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Peak resident set size of this process so far, bytes (getrusage ru_maxrss).
inline double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024.0;  // Linux reports KiB
}

/// Current resident set size, bytes (from /proc/self/statm; 0 elsewhere).
inline double current_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long pages = 0, resident = 0;
  int const got = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return got == 2 ? double(resident) * 4096.0 : 0;
}

/// "1.23 GB/s"-style value with an SI prefix (n, u, m, k, M, G, T, P).
inline std::string si(double v, char const* unit, int digits = 3) {
  if (!std::isfinite(v)) return "-";
  static char const* prefixes[] = {"n", "u", "m", "", "k", "M", "G", "T", "P"};
  int p = 3;
  double const a = std::fabs(v);
  if (a > 0) {
    while (std::fabs(v) >= 1000 && p < 8) {
      v /= 1000;
      ++p;
    }
    while (std::fabs(v) < 1 && p > 0 && *unit) {  // no sub-unit prefixes on plain numbers
      v *= 1000;
      --p;
    }
  }
  char buf[64];
  if (!*prefixes[p] && !*unit) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.*g %s%s", digits, v, prefixes[p], unit);
  }
  return buf;
}

inline std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

/// Removes `--name`, `--name value` and `--name=value` arguments this program understands
/// from argv before Google Benchmark sees them; returns the value ("" for a
/// bare flag) or `fallback` when absent.
inline std::string take_flag(int& argc, char** argv, std::string const& name, std::string const& fallback) {
  std::string value = fallback;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    std::string const key = "--" + name;
    if (a == key) {
      // "--name value" (a value never starts with "--"), or a bare "--name"
      bool const has_value = i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0;
      value = has_value ? argv[++i] : "";
    } else if (a.rfind(key + "=", 0) == 0) {
      value = a.substr(key.size() + 1);
    } else {
      argv[out++] = argv[i];
      continue;
    }
  }
  argc = out;
  return value;
}

/// Google Benchmark display reporter that prints one markdown table at the
/// end: the median aggregate of each benchmark when it was repeated, else its
/// single run; time per iteration and every user counter (rates as x/s).
class MarkdownReporter : public benchmark::BenchmarkReporter {
 public:
  /// \param reference [in] when not empty, the benchmark whose bytes/s every
  ///   row of the same arguments ("name/D:128/B:16") is divided by, in an
  ///   extra column "of <reference>" (e.g. the device copy bandwidth)
  explicit MarkdownReporter(std::string title, std::string reference = {})
      : m_title(std::move(title)), m_reference(std::move(reference)) {}

  bool ReportContext(Context const& context) override {
    m_context = context.cpu_info.num_cpus;
    return true;
  }

  void ReportRuns(std::vector<Run> const& runs) override {
    for (auto const& r : runs) {
      if (r.error_occurred) {
        m_rows.push_back({r.benchmark_name(), "error: " + r.error_message, {}});
        continue;
      }
      bool const repeated = r.repetitions > 1;
      if (repeated && !(r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")) continue;
      Row row;
      row.name = r.run_name.str();
      for (std::string const suffix : {"/manual_time", "/real_time"}) {
        auto const at = row.name.find(suffix);
        if (at != std::string::npos) row.name.erase(at, suffix.size());
      }
      auto const it = row.name.find("/iterations:");
      if (it != std::string::npos) row.name.erase(it, row.name.find('/', it + 1) - it);
      double const seconds = r.GetAdjustedRealTime() * seconds_per_unit(r.time_unit);
      row.time = si(seconds, "s", 4);
      for (auto const& [key, c] : r.counters) {
        row.counters[key] = c.value;
        if (std::find(m_columns.begin(), m_columns.end(), key) == m_columns.end()) m_columns.push_back(key);
      }
      m_rows.push_back(std::move(row));
    }
  }

  void Finalize() override {
    auto& out = GetOutputStream();
    if (!m_title.empty()) out << "\n### " << m_title << "\n\n";
    out << "ptyko " << PTYKO_BENCH_GIT_REVISION << " (" << PTYKO_BENCH_BUILD_TYPE << "), Kokkos "
        << KOKKOS_VERSION / 10000 << "." << KOKKOS_VERSION / 100 % 100 << "." << KOKKOS_VERSION % 100 << " "
        << exec_space_name() << ", " << fft_backend_name() << ", timer: " << timer_name() << "\n\n";
    auto const reference_rates = reference_bytes_per_second();
    bool const fractions = !reference_rates.empty();
    out << "| benchmark | time |";
    for (auto const& c : m_columns) out << " " << c << " |";
    if (fractions) out << " of " << m_reference << " |";
    out << "\n|---|---:|";
    for (std::size_t i = 0; i < m_columns.size() + (fractions ? 1 : 0); ++i) out << "---:|";
    out << "\n";
    for (auto const& row : m_rows) {
      out << "| " << row.name << " | " << row.time << " |";
      for (auto const& c : m_columns) {
        auto it = row.counters.find(c);
        out << " " << (it == row.counters.end() ? std::string() : format_counter(c, it->second)) << " |";
      }
      if (fractions) {
        auto const ref = reference_rates.find(arguments_of(row.name));
        auto const bw = row.counters.find("bytes/s");
        out << " "
            << (ref == reference_rates.end() || bw == row.counters.end() || ref->second <= 0
                    ? std::string()
                    : fixed(100 * bw->second / ref->second, 0) + " %")
            << " |";
      }
      out << "\n";
    }
    out << std::flush;
  }

 private:
  struct Row {
    std::string name, time;
    std::map<std::string, double> counters;
  };

  /// "kernel/D:128/B:16" -> "/D:128/B:16"
  static std::string arguments_of(std::string const& name) {
    auto const slash = name.find('/');
    return slash == std::string::npos ? std::string() : name.substr(slash);
  }
  /// bytes/s of the reference benchmark, by arguments.
  std::map<std::string, double> reference_bytes_per_second() const {
    std::map<std::string, double> rates;
    if (m_reference.empty()) return rates;
    for (auto const& row : m_rows) {
      auto const bw = row.counters.find("bytes/s");
      if (row.name.compare(0, m_reference.size() + 1, m_reference + "/") == 0 && bw != row.counters.end())
        rates[arguments_of(row.name)] = bw->second;
    }
    return rates;
  }

  static double seconds_per_unit(benchmark::TimeUnit u) {
    switch (u) {
      case benchmark::kNanosecond: return 1e-9;
      case benchmark::kMicrosecond: return 1e-6;
      case benchmark::kMillisecond: return 1e-3;
      default: return 1;
    }
  }
  static std::string format_counter(std::string const& name, double v) {
    auto ends_with = [&](char const* suffix) {
      std::string const s = suffix;
      return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    if (name == "bytes/s") return si(v, "B/s");
    if (name == "flop/s") return si(v, "flop/s");
    if (ends_with("/s")) return si(v, "/s");
    if (ends_with("_s")) return si(v, "s", 4);
    if (name.find("ratio") != std::string::npos) return fixed(v, 2);
    if (name.find("bytes") != std::string::npos) return si(v, "B");
    if (std::fabs(v) >= 100) return fixed(v, 0);
    return si(v, "", 4);
  }

  std::string m_title, m_reference;
  int m_context = 0;
  std::vector<std::string> m_columns;
  std::vector<Row> m_rows;
};

}  // namespace ptyko::bench
