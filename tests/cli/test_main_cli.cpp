// `tilepipe --version`, `tilepipe` without a command, and the preamble of every command's --json.
#include "cli_test.hpp"
#include "json_preamble.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_main {

namespace {

using tp::test::cli::tilepipe;

TEST(MainCli, version_names_the_release_and_the_git_revision) {
  for (const char* flag : {"--version", "-V"}) {
    const auto r = tilepipe({flag});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(std::regex_match(
        r.out, std::regex(R"(tilepipe \d+\.\d+\.\d+ \(git ([0-9a-f]{7,40}(-dirty)?|unknown)\)\n)")))
        << r.out;
    EXPECT_EQ(r.err, "");
  }
}

TEST(MainCli, help_lists_the_commands_on_stdout) {
  const auto r = tilepipe({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* command : {"plan", "run", "align", "calibrate", "sweep", "pingpong"}) {
    EXPECT_NE(r.out.find(std::string("  ") + command + " "), std::string::npos) << command;
  }
}

// Every command's --json starts with the same preamble (docs/cli.md, "JSON"); sweep's, which
// calibrates first, is checked by SweepCli.json_has_one_object_per_point_and_the_models_choice.
TEST(MainCli, every_json_output_starts_with_the_preamble) {
  const std::string src = TILEPIPE_SOURCE_DIR;
  const std::vector<std::vector<std::string>> commands{
      {"plan", "--kernel", "wave2d", "--size", "64x64", "--nodes", "2", "--tile", "8"},
      {"run", "--kernel", "wave2d", "--size", "64x64", "--sync", "block"},
      {"simulate", "--kernel", "wave3d", "--size", "12x12x4096", "--nodes", "2", "--tile", "1024",
       "--machine", src + "/tests/data/machines/seed000-sci-cluster.json"},
      {"align", src + "/tests/data/fasta/dna_query.fa", src + "/tests/data/fasta/dna_target.fa",
       "--matrix", "EDNAFULL"},
      {"pingpong", "--ranks", "2", "--sync", "block", "--sizes", "8:16", "--iters", "10"},
  };
  for (auto args : commands) {
    const std::string command = args.front();
    args.push_back("--json");
    const auto r = tilepipe(args);
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    const auto j = tp::test::without_preamble(nlohmann::json::parse(r.out), command);
    EXPECT_FALSE(j.empty()) << command;
    if (command == "pingpong") {
      ASSERT_EQ(j["results"].size(), 2u) << r.out;
      EXPECT_EQ(j["results"][0]["bytes"], 8);
      EXPECT_EQ(j["results"][1]["bytes"], 16);
    }
  }
}

}  // namespace

}  // namespace cli_main
