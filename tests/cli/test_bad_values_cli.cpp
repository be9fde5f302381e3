// Bad values found by trying tilepipe as a new user would (issue 16): each exits 2 with one line
// naming the value and the rule; control bytes in echoed values are escaped.
#include "cli_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_bad_values {

namespace {

namespace fs = std::filesystem;
using tp::test::cli::expect_refused;
using tp::test::cli::file_bytes;
using tp::test::cli::temp_path;
using tp::test::cli::tilepipe;

const std::string data_dir = std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/";

/// The seed 000 machine file with one piece of its text replaced.
std::string machine_with(const std::string& name, const std::string& from, const std::string& to) {
  std::string text = file_bytes(data_dir + "machines/seed000-sci-cluster.json");
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

tp::test::ProcessResult plan_with_machine(const std::string& machine) {
  return tilepipe({"plan", "--kernel", "wave3d", "--size", "16x16x1024", "--tile", "64", "--nodes",
                   "4", "--machine", machine});
}

TEST(BadValuesCli, machine_file_number_beyond_double_range_names_the_file) {
  const std::string path =
      machine_with("huge.json", "84120000", "1" + std::string(400, '0'));  // 10^400
  expect_refused(plan_with_machine(path), "machine file '" + path +
                                              "' has a number beyond the range of a double "
                                              "(about 1.8e308)");
  fs::remove(path);
}

TEST(BadValuesCli, machine_file_values_are_range_checked) {
  const struct {
    std::string from, to, message;
  } cases[] = {
      {"84120000", "5e-324", "'comm.bandwidth_bytes_per_s' is 5e-324: it must be >= 1"},
      {"84120000", "2e15", "'comm.bandwidth_bytes_per_s' is 2e+15: it must be <= 1e+15"},
      {"\"latency_us\": 0", "\"latency_us\": 1e308",
       "'comm.latency_us' is 1e+308: it must be <= 1e+07"},
      {"sci-dma", "carrier-pigeon",
       "'transport' is 'carrier-pigeon': not a transport (shm, mpi, or sci-dma for the seeds' "
       "reference files)"},
      {"\"element_bytes\": 4", "\"element_bytes\": 9223372036854775808",
       "'compute.element_bytes' is 9223372036854775808: it must be <= 1048576"},
      {"\"t_comp1_ns\": 39.6", "\"t_comp1_ns\": 1e-320",
       "'compute.t_comp1_ns' is 1e-320: it must be >= 1e-06"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.to);
    const std::string path = machine_with("range.json", c.from, c.to);
    expect_refused(plan_with_machine(path), "machine file '" + path + "': " + c.message);
    fs::remove(path);
  }
}

TEST(BadValuesCli, a_size_beyond_64_bits_of_array_is_refused_by_name) {
  // N_1 + 1 overflowed (a signed overflow under UBSan) before the check.
  expect_refused(tilepipe({"run", "--kernel", "wave2d", "--size", "9223372036854775807x1"}),
                 "--size 9223372036854775807x1: the array does not fit in 64-bit byte offsets");
}

TEST(BadValuesCli, peer_timeout_is_checked_alike_by_every_command) {
  const std::string fa = data_dir + "fasta/protein_query.fa";
  const std::string message = "--peer-timeout: 0.0001 must be in [0.001, 3600] seconds";
  expect_refused(
      tilepipe({"run", "--kernel", "wave2d", "--size", "64x64", "--peer-timeout", "0.0001"}),
      message);
  expect_refused(tilepipe({"align", fa, fa, "--peer-timeout", "0.0001"}), message);
  expect_refused(tilepipe({"align", fa, fa, "--nodes", "2", "--peer-timeout", "0.0001"}), message);
  expect_refused(tilepipe({"pingpong", "--peer-timeout", "0.0001"}), message);
}

TEST(BadValuesCli, control_bytes_in_echoed_values_are_escaped) {
  const std::string fa = temp_path("esc.fa");
  std::ofstream(fa) << ">x\x1b[2Jhello\nAC1\n";
  const std::string ok = data_dir + "fasta/protein_query.fa";
  expect_refused(tilepipe({"align", fa, ok}),
                 fa + " sequence 'x\\x1b[2Jhello' position 3: letter '1' is not in the BLOSUM62 "
                      "alphabet");
  fs::remove(fa);
  expect_refused(tilepipe({"run", "--kernel", "wave2d", "--size", "64\nx64\t\x7f"}),
                 "--size dimension 1: '64\\n' is not a whole number");
  expect_refused(tilepipe({"no\x1b[2Jcommand"}),
                 "unknown command 'no\\x1b[2Jcommand' (try: tilepipe --help)");
}

TEST(BadValuesCli, a_tile_longer_than_the_space_is_clamped_to_it) {
  auto r = tilepipe({"plan", "--kernel", "wave2d", "--size", "64x64", "--tile", "1000000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tile               64x64  (grain 4096 points)"), std::string::npos)
      << r.out;
  auto j = tilepipe({"plan", "--kernel", "wave3d", "--size", "64x64x64", "--tile", "1000000",
                     "--nodes", "4", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto plan = nlohmann::json::parse(j.out);
  // One tile along every dimension: the tie maps dimension 2, not the slab's contiguous 3 (ADR
  // 0032).
  EXPECT_EQ(plan["tile"], nlohmann::json::array({32, 64, 32}));
  EXPECT_EQ(plan["face_points"], 4096);  // a 32x64 face to each of two neighbours, not 64,000,000
  auto x =
      tilepipe({"plan", "--kernel", "wave2d", "--size", "64x64", "--tile", "1000000x9", "--json"});
  ASSERT_EQ(x.exit_code, 0) << x.err;
  EXPECT_EQ(nlohmann::json::parse(x.out)["tile"], nlohmann::json::array({64, 9}));
}

TEST(BadValuesCli, no_arguments_is_one_line_pointing_at_help) {
  expect_refused(tilepipe({}),
                 "no command given (usage: tilepipe <command> [options]; tilepipe --help lists "
                 "the commands)");
}

}  // namespace

}  // namespace cli_bad_values
