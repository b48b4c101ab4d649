#pragma once
// Helpers shared by the tests that write files or check user errors:
// temporary names and a fresh folder per test, and checks of the one-line
// UserError messages.

#include <ptyko/kernels/error.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace ptyko::test {

/// <temp>/ptyko-test-<pid>-<name>: a path of this process's own, for files
/// and folders shared by several tests (a dataset simulated once). With MPI,
/// one rank makes the name and broadcasts it.
inline std::filesystem::path temp_path(std::string const& name) {
  return std::filesystem::temp_directory_path() / ("ptyko-test-" + std::to_string(::getpid()) + "-" + name);
}

/// Removes `dir` and everything in it, first giving its owner back the
/// rights a test may have taken away (read-only folders).
inline void remove_folder(std::filesystem::path const& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_directory(ec)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  }
  fs::remove_all(dir, ec);
}

/// A fresh, empty folder per test, temp_path("<Suite>-<Test>") (`m_dir`),
/// removed after the test; kept after a failure, to be looked at.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto const* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "-" + info->name();
    std::replace(name.begin(), name.end(), '/', '_');  // typed and value-parameterised tests: "Suite/0"
    m_dir = temp_path(name);
    remove_folder(m_dir);
    std::filesystem::create_directories(m_dir);
  }
  void TearDown() override {
    if (!HasFailure()) remove_folder(m_dir);
  }
  /// `name` inside the test's folder.
  std::string file(std::string const& name) const { return (m_dir / name).string(); }
  /// Names of everything in the folder, sorted (to spot left-over temporaries).
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (auto const& e : std::filesystem::directory_iterator(m_dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::filesystem::path m_dir;
};

/// The message of the UserError `f` throws; a test failure if it throws
/// nothing or another exception.
template <class F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (UserError const& e) {
    return e.what();
  } catch (std::exception const& e) {
    ADD_FAILURE() << "expected UserError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected UserError, nothing thrown";
  return {};
}

/// `msg` is one line and contains every phrase.
inline void expect_one_line_with(std::string const& msg, std::vector<std::string> const& phrases) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  for (auto const& p : phrases) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

/// `f` throws a UserError whose message is one line containing every phrase.
template <class F>
void expect_user_error(F&& f, std::vector<std::string> const& phrases) {
  expect_one_line_with(user_error(f), phrases);
}

/// The same, and the message starts with `prefix` (the file's path).
template <class F>
void expect_user_error(F&& f, std::string const& prefix, std::vector<std::string> const& phrases) {
  std::string const msg = user_error(f);
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "does not start with " << prefix << ": " << msg;
  expect_one_line_with(msg, phrases);
}

}  // namespace ptyko::test
