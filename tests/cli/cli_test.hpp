// What the tests that drive the tilepipe executable share: the command as a process, argument
// lists, temporary paths and directories, files read back, and the check of a refusal.
#pragma once

#include "run_process.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

// Not tp::test, the namespace of ProcessResult: a file's own helper of the same name taking a
// ProcessResult would otherwise meet these through argument-dependent lookup (unity builds,
// docs/adr/0019). A file takes what it uses with `using`.
namespace tp::test::cli {

/// `tilepipe ARGS...` (TILEPIPE_EXE, defined by the test target), killed after timeout_s seconds.
inline ProcessResult tilepipe(std::vector<std::string> args, int timeout_s = 120) {
  args.insert(args.begin(), TILEPIPE_EXE);
  return run_process(args, timeout_s);
}

/// `tilepipe COMMAND ARGS...`.
inline ProcessResult tilepipe(const std::string& command, std::vector<std::string> args,
                              int timeout_s = 120) {
  args.insert(args.begin(), command);
  return tilepipe(std::move(args), timeout_s);
}

/// `tilepipe plan ARGS...`.
inline ProcessResult plan(std::vector<std::string> args) {
  return tilepipe("plan", std::move(args), 60);
}

/// `tilepipe run ARGS...`.
inline ProcessResult run(std::vector<std::string> args, int timeout_s = 120) {
  return tilepipe("run", std::move(args), timeout_s);
}

/// `base` followed by `more`.
inline std::vector<std::string> with(std::vector<std::string> base,
                                     const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

/// A path in the temporary directory, private to this test process.
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tilepipe-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

/// The bytes of a file ("" when it cannot be read).
inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A JSON file, parsed (a file that cannot be read fails the test).
inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

/// Asserts exit 2, nothing on stdout and exactly the line "tilepipe: error: MESSAGE" on stderr.
inline void expect_refused(const ProcessResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "tilepipe: error: " + message + "\n");
}

/// A fixture with a fresh directory per test (named after the test), removed afterwards.
class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tilepipe-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// The path of `name` in the directory.
  [[nodiscard]] std::string at(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

}  // namespace tp::test::cli
