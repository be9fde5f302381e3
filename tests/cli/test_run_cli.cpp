// `tilepipe run` end to end: verified checksums for every scheme, JSON fields, traces, bad input,
// and a rank that dies.
#include "cli_test.hpp"
#include "json_preamble.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_run {

namespace {

using tp::test::cli::file_bytes;
using tp::test::cli::read_json;
using tp::test::cli::run;
using tp::test::cli::temp_path;

TEST(RunCli, every_scheme_verifies_bit_for_bit) {
  std::string checksum;
  for (const char* schedule : {"blocking", "overlap"}) {
    for (const char* grouping : {"hyperplane", "vertical"}) {
      for (const char* faces : {"copy", "direct"}) {
        auto r =
            run({"--kernel", "wave3d", "--size",  "9x10x301",   "--tile",   "16",         "--nodes",
                 "2",        "--cpus", "2",       "--schedule", schedule,   "--grouping", grouping,
                 "--sync",   "block",  "--faces", faces,        "--verify", "--json"});
        ASSERT_EQ(r.exit_code, 0) << schedule << " " << grouping << " " << faces << ": " << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["verified"], true);
        EXPECT_EQ(j["faces"], faces);
        EXPECT_EQ(j["schedule"], schedule);
        EXPECT_EQ(j["grouping"], grouping);
        for (const char* key : {"checksum", "seconds", "points_per_s", "phases", "steps"}) {
          EXPECT_TRUE(j.contains(key)) << key;
        }
        EXPECT_EQ(j["checksum"].get<std::string>().size(), 16u);
        if (checksum.empty()) checksum = j["checksum"];
        EXPECT_EQ(j["checksum"], checksum);
        EXPECT_EQ(j["ranks"].size(), 2u);
      }
    }
  }
}

TEST(RunCli, comm_thread_verifies_and_reports_its_share) {
  for (const char* cpus : {"1", "2"}) {
    auto r = run({"--kernel", "wave3d", "--size", "9x10x301", "--tile", "16", "--nodes", "2",
                  "--cpus", cpus, "--schedule", "overlap", "--sync", "block", "--comm-thread",
                  "--verify", "--json"});
    ASSERT_EQ(r.exit_code, 0) << cpus << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["verified"], true);
    EXPECT_EQ(j["comm_thread"], true);
    const double share = j["comm_thread_share"].get<double>();
    EXPECT_GE(share, 0.0);
    EXPECT_LE(share, 1.0);
    if (std::string(cpus) == "1") {
      EXPECT_EQ(share, 0.0);  // an extra thread that only communicates
    }
    for (const auto& rank : j["ranks"]) {
      EXPECT_EQ(rank["comm_thread"]["share"], share);
      for (const char* key : {"split_dim", "alpha_s", "comm_round_s", "compute_s", "comm_s"}) {
        EXPECT_TRUE(rank["comm_thread"].contains(key)) << key;
      }
      EXPECT_GT(rank["comm_thread"]["comm_s"].get<double>(), 0.0);
    }
  }
  auto human = run({"--kernel", "wave2d", "--size", "64x3000", "--nodes", "2", "--cpus", "2",
                    "--sync", "block", "--comm-thread", "--verify"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("comm thread        share "), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("verified           yes (bit for bit)"), std::string::npos);
}

TEST(RunCli, defaults_need_only_kernel_and_size) {
  auto r = run({"--kernel", "wave2d", "--size", "100x2000", "--verify"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("verified           yes (bit for bit)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checksum"), std::string::npos);
}

TEST(RunCli, trace_is_chrome_trace_json_with_a_track_per_rank_and_thread) {
  const auto path = temp_path("trace.json");
  auto r = run({"--kernel", "wave3d", "--size", "8x8x200", "--tile", "20", "--nodes", "2", "--cpus",
                "2", "--sync", "block", "--trace", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = read_json(path);
  std::set<std::pair<int, int>> tracks;
  int computes = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    tracks.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    if (e["name"] == "compute") ++computes;
    EXPECT_GE(e["dur"].get<double>(), 0);
  }
  EXPECT_EQ(tracks.size(), 4u);
  EXPECT_GE(computes, 2 * 10);  // 200 / 20 tiles along the mapping dimension per CPU row
  std::filesystem::remove(path);
}

TEST(RunCli, a_rank_that_dies_ends_the_run_with_an_error_in_bounded_time) {
  for (const char* faces : {"copy", "direct"}) {
    SCOPED_TRACE(faces);
    ::setenv("TILEPIPE_FAULT_KILL_RANK", "1", 1);
    const auto start = std::chrono::steady_clock::now();
    auto r = run({"--kernel", "wave2d", "--size", "64x4000", "--nodes", "3", "--cpus", "1",
                  "--sync", "block", "--peer-timeout", "2", "--faces", faces},
                 60);
    ::unsetenv("TILEPIPE_FAULT_KILL_RANK");
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.exit_code, 137) << "the launcher itself must not be killed";
    EXPECT_EQ(r.out.find("checksum"), std::string::npos) << "no partial result: " << r.out;
    EXPECT_NE(r.err.find("rank 1"), std::string::npos) << r.err;
    EXPECT_LT(elapsed, 30.0);
  }
}

TEST(RunCli, faces_auto_is_direct_on_shared_memory_and_human_output_says_so) {
  auto r = run({"--kernel", "wave2d", "--size", "64x3000", "--nodes", "2", "--cpus", "1", "--sync",
                "block", "--verify"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("faces              direct (one copy into the neighbour's slab)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("verified           yes (bit for bit)"), std::string::npos);
  for (const char* faces : {"copy", "direct"}) {
    auto ct = run({"--kernel", "wave2d", "--size", "64x3000", "--nodes", "2", "--cpus", "2",
                   "--sync", "block", "--comm-thread", "--faces", faces, "--verify", "--json"});
    ASSERT_EQ(ct.exit_code, 0) << ct.err;
    const auto j = nlohmann::json::parse(ct.out);
    EXPECT_EQ(j["faces"], faces);
    EXPECT_EQ(j["verified"], true);
  }
}

struct BadRun {
  std::vector<std::string> args;
  std::string message;
};

class RunCliBadInput : public ::testing::TestWithParam<BadRun> {};

TEST_P(RunCliBadInput, exits_2_with_one_line) {
  auto r = run(GetParam().args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  const std::string& m = GetParam().message;
  if (!m.empty() && m.back() == '*') {  // the rest of the line depends on the machine
    EXPECT_EQ(r.err.rfind("tilepipe: error: " + m.substr(0, m.size() - 1), 0), 0u) << r.err;
    EXPECT_EQ(tp::test::lines_of(r.err).size(), 1u);
  } else {
    EXPECT_EQ(r.err, "tilepipe: error: " + m + "\n");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RunCliBadInput,
    ::testing::Values(
        BadRun{{"--size", "8x8"},
               "--kernel is required (tilepipe run runs wave2d|wave3d|wave4d|sor2d|sor3d|sweep3d; "
               "Smith-Waterman runs with tilepipe align)"},
        BadRun{{"--kernel", "sw", "--size", "8x8"},
               "--kernel: tilepipe run runs wave2d|wave3d|wave4d|sor2d|sor3d|sweep3d, not 'sw' "
               "(Smith-Waterman: tilepipe align)"},
        BadRun{{"--kernel", "wave2d", "--size", "8x0"}, "--size dimension 2: 0 must be >= 1"},
        BadRun{{"--kernel", "wave2d", "--size", "8x8", "--sync", "spin"},
               "--sync: 'spin' is not a sync mode (poll, block, hybrid)"},
        BadRun{{"--kernel", "wave2d", "--size", "8x8", "--transport", "mpi"},
               "--transport mpi needs the ranks started by mpirun or srun (e.g. mpirun -np 2 "
               "...); forked ranks use shared memory"},
        BadRun{{"--kernel", "wave2d", "--size", "8x8", "--tile", "4", "--cpus", "0"},
               "--cpus: 0 must be >= 1"},
        BadRun{{"--kernel", "wave3d", "--size", "9x10x301", "--tile", "16", "--cpus", "2",
                "--grouping", "vertical", "--comm-thread"},
               "--comm-thread runs with hyperplane grouping only (vertical grouping splits every "
               "tile among the CPUs with a barrier per subtile)"},
        BadRun{{"--kernel", "wave2d", "--size", "8x8", "--faces", "zero"},
               "--faces: 'zero' is not one of auto|copy|direct"},
        BadRun{{"--kernel", "wave2d", "--size", "8x8", "--faces", "direct", "--transport", "mpi"},
               "--faces direct needs shared memory between the ranks (not --transport mpi); use "
               "--faces copy or auto"},
        BadRun{{"--kernel", "wave3d", "--size", "3000000x3000000x3000", "--tile", "1024"},
               "the run needs about 100616432.7 GiB but this machine has *"},
        // Each rank's slab holds its own rows only (ADR 0028): 2 ranks x 3 cycles of 500000 rows,
        // 2 x (1500000 + 3 halo rows) x 3000001 x 3001 x 4 bytes (a bounding box of the rows
        // 0, 2, 4 of rank 0 would make it 184463465.6 GiB).
        BadRun{{"--kernel", "wave3d", "--size", "3000000x3000000x3000", "--tile", "1024", "--nodes",
                "2", "--cyclic", "3"},
               "the run needs about 100616600.4 GiB but this machine has *"}),
    [](const ::testing::TestParamInfo<BadRun>& param) {
      return "case" + std::to_string(param.index);
    });

}  // namespace

namespace {

TEST(RunCli, output_writes_the_array_and_names_it_in_the_json) {
  const std::string dir = "/tmp/tp_run_output_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/u.npy";
  auto r = run({"--kernel", "wave2d", "--size", "40x33", "--nodes", "2", "--cpus", "1", "--tile",
                "8", "--sync", "block", "--output", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = tp::test::without_preamble(nlohmann::json::parse(r.out), "run");
  EXPECT_EQ(j["output"], path);
  // 10 + header + 40 x 33 float32 values, the header padded to 64 bytes.
  EXPECT_EQ(std::filesystem::file_size(path), 128u + 40u * 33u * 4u);
  std::filesystem::remove_all(dir);
}

TEST(RunCli, an_output_that_cannot_be_written_is_refused_before_the_run) {
  for (const std::string& bad :
       {std::string("/nonexistent-dir/u.npy"), std::string("/tmp"), std::string("")}) {
    auto r = run({"--kernel", "wave2d", "--size", "64x64", "--output", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err.rfind("tilepipe: error: --output: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists("/nonexistent-dir"));
}

}  // namespace

namespace {

TEST(RunCli, sweeps_repeat_the_run_and_count_every_sweep) {
  auto one = run({"--kernel", "wave2d", "--size", "300x200", "--nodes", "2", "--tile", "16",
                  "--sync", "block", "--json"});
  auto three = run({"--kernel", "wave2d", "--size", "300x200", "--nodes", "2", "--tile", "16",
                    "--sync", "block", "--sweeps", "3", "--verify", "--json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(three.exit_code, 0) << three.err;
  const auto a = nlohmann::json::parse(one.out);
  const auto b = nlohmann::json::parse(three.out);
  EXPECT_EQ(a["sweeps"], 1);
  EXPECT_EQ(b["sweeps"], 3);
  EXPECT_EQ(b["points"], 3 * 300 * 200);
  EXPECT_EQ(b["verified"], true);
  EXPECT_EQ(b["checksum"], a["checksum"]);  // wave's sweeps recompute the same array
  EXPECT_NEAR(b["seconds_per_sweep"].get<double>() * 3, b["seconds"].get<double>(), 1e-12);
  auto zero = run({"--kernel", "wave2d", "--size", "64x64", "--sweeps", "0"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("--sweeps"), std::string::npos) << zero.err;
}

// Fewer rows of tiles than CPUs (issue 15): 4x2 points across the mapping dimension give at most
// 2 rows (unit dependences need tiles 2 wide), so on 1-3 ranks x 1-2 CPUs some CPUs, and on 3
// ranks with 1 CPU or 2-3 ranks with 2 CPUs whole ranks, have no tile. They still join the run:
// the result, its verification against the plain loop and the array written are bit for bit.
TEST(RunCli, fewer_rows_than_cpus_run_on_the_cpus_with_work) {
  const std::string dir = "/tmp/tp_run_idle_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::string checksum;
  std::string array;
  int idle_ranks_seen = 0;
  for (const char* nodes : {"1", "2", "3"}) {
    for (const char* cpus : {"1", "2"}) {
      const std::string path = dir + "/u" + nodes + cpus + ".npy";
      auto r = run({"--kernel", "wave3d", "--size", "4x2x200", "--tile", "16", "--nodes", nodes,
                    "--cpus", cpus, "--sync", "block", "--verify", "--output", path, "--json"});
      ASSERT_EQ(r.exit_code, 0) << nodes << "x" << cpus << ": " << r.err;
      const auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["verified"], true);
      const auto tile = j["tile"].get<std::vector<int>>();
      const int rows = (4 / tile[0]) * (2 / tile[1]);
      const int p = std::stoi(nodes);
      const int m = std::stoi(cpus);
      EXPECT_EQ(j["idle_cpus"], p * m - rows) << r.out;
      int empty = 0;
      for (const auto& rank : j["ranks"]) empty += rank["tiles"] == 0 ? 1 : 0;
      EXPECT_EQ(j["idle_nodes"], empty);
      EXPECT_EQ(j["ranks"].size(), static_cast<std::size_t>(p));
      idle_ranks_seen += empty;
      if (checksum.empty()) checksum = j["checksum"];
      EXPECT_EQ(j["checksum"], checksum);
      if (array.empty()) array = file_bytes(path);
      EXPECT_EQ(file_bytes(path), array) << nodes << "x" << cpus;
    }
  }
  EXPECT_GE(idle_ranks_seen, 3);
  std::filesystem::remove_all(dir);
}

// Every schedule, grouping and face mode, and the communication thread, with an idle rank and
// idle CPUs (3 ranks x 2 CPUs over 3 rows: rank 0 sends faces to rank 1, rank 2 is idle), and
// the report's line.
TEST(RunCli, idle_ranks_under_every_scheme) {
  std::string checksum;
  for (const char* schedule : {"blocking", "overlap"}) {
    for (const char* grouping : {"hyperplane", "vertical"}) {
      for (const char* faces : {"copy", "direct"}) {
        auto r =
            run({"--kernel", "wave3d", "--size", "6x2x120",    "--tile",   "8",          "--nodes",
                 "3",        "--cpus", "2",      "--schedule", schedule,   "--grouping", grouping,
                 "--faces",  faces,    "--sync", "block",      "--verify", "--json"});
        ASSERT_EQ(r.exit_code, 0) << schedule << " " << grouping << " " << faces << ": " << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["verified"], true);
        EXPECT_GE(j["idle_nodes"].get<int>(), 1);
        if (checksum.empty()) checksum = j["checksum"];
        EXPECT_EQ(j["checksum"], checksum);
      }
    }
  }
  auto ct = run({"--kernel", "wave3d", "--size", "6x2x120", "--tile", "8", "--nodes", "3", "--cpus",
                 "2", "--sync", "block", "--comm-thread", "--verify"});
  ASSERT_EQ(ct.exit_code, 0) << ct.err;
  EXPECT_NE(ct.out.find("verified           yes"), std::string::npos) << ct.out;
  EXPECT_NE(ct.out.find("  idle               "), std::string::npos) << ct.out;
}

}  // namespace

}  // namespace cli_run
