// `tilepipe --version` and `tilepipe` without a command.
#include "run_process.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace {

using tp::test::run_process;

TEST(MainCli, version_names_the_release_and_the_git_revision) {
  for (const char* flag : {"--version", "-V"}) {
    const auto r = run_process({TILEPIPE_EXE, flag});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(std::regex_match(
        r.out, std::regex(R"(tilepipe \d+\.\d+\.\d+ \(git ([0-9a-f]{7,40}|unknown)\)\n)")))
        << r.out;
    EXPECT_EQ(r.err, "");
  }
}

TEST(MainCli, help_lists_the_commands_on_stdout) {
  const auto r = run_process({TILEPIPE_EXE, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* command : {"plan", "run", "align", "calibrate", "sweep", "pingpong"}) {
    EXPECT_NE(r.out.find(std::string("  ") + command + " "), std::string::npos) << command;
  }
}

}  // namespace
