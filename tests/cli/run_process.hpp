// Test helper: runs a command, captures its exit code, stdout and stderr (no shell involved).
#pragma once

#include <string>
#include <vector>

namespace tp::test {

struct ProcessResult {
  int exit_code = -1;  ///< exit status, or 128 + signal number
  std::string out;
  std::string err;
};

/// Runs argv[0] with the given arguments; kills it after timeout_s seconds (exit_code 137).
ProcessResult run_process(const std::vector<std::string>& argv, int timeout_s = 60);

/// Splits text into lines without their newlines.
std::vector<std::string> lines_of(const std::string& text);

}  // namespace tp::test
