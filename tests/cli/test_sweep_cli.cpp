// `tilepipe sweep` end to end on tiny sizes: JSON and CSV fields, the model's choice, and every
// class of bad input (exit 2, one line).
#include "cli_test.hpp"
#include "json_preamble.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_sweep {

namespace {

using tp::test::cli::temp_path;
using tp::test::cli::tilepipe;

tp::test::ProcessResult sweep(std::vector<std::string> args) {
  return tilepipe("sweep", std::move(args), 60);
}

TEST(SweepCli, json_has_one_object_per_point_and_the_models_choice) {
  const auto csv = temp_path("sweep.csv");
  // Without --machine the sweep calibrates first (for these tile shapes).
  auto r = sweep({"--kernel", "wave3d", "--size", "4x4x256", "--nodes", "2", "--cpus", "1",
                  "--tile-heights", "16:64", "--schemes", "all", "--repeat", "1", "--sync", "block",
                  "--json", "--csv", csv});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("sweep ["), std::string::npos) << "progress on stderr";
  const auto top = tp::test::without_preamble(nlohmann::json::parse(r.out), "sweep");
  EXPECT_EQ(top["kernel"], "wave3d");
  EXPECT_EQ(top["size"], "4x4x256");
  EXPECT_EQ(top["nodes"], 2);
  EXPECT_EQ(top["cpus"], 1);
  EXPECT_EQ(top["repeat"], 1);
  EXPECT_TRUE(top["machine"].is_string());
  const auto& j = top["results"];
  ASSERT_TRUE(j.is_array());
  std::set<std::tuple<std::string, std::string, std::int64_t>> swept;
  int chosen = 0;
  for (const auto& o : j) {
    for (const char* k : {"schedule", "grouping", "tile_height", "measured_s", "predicted_s",
                          "measured_min_s", "measured_max_s", "error", "tile_work_s", "chosen"}) {
      ASSERT_TRUE(o.contains(k)) << k;
    }
    EXPECT_GT(o["measured_s"].get<double>(), 0);
    EXPECT_GT(o["predicted_s"].get<double>(), 0);
    EXPECT_LE(o["measured_min_s"].get<double>(), o["measured_s"].get<double>());
    EXPECT_GE(o["measured_max_s"].get<double>(), o["measured_s"].get<double>());
    chosen += o["chosen"].get<bool>() ? 1 : 0;
    if (o["swept"].get<bool>()) {
      swept.insert({o["schedule"], o["grouping"], o["tile_height"].get<std::int64_t>()});
    }
  }
  EXPECT_EQ(chosen, 1);
  EXPECT_EQ(swept.size(), 12u);  // 4 schemes x heights 16, 32, 64
  for (const char* s : {"blocking", "overlap"}) {
    for (const char* g : {"hyperplane", "vertical"}) {
      for (std::int64_t h : {16, 32, 64}) EXPECT_EQ(swept.count({s, g, h}), 1u) << s << g << h;
    }
  }
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("schedule,grouping,tile_height,measured_s,", 0), 0u) << header;
  int rows = 0;
  for (std::string line; std::getline(in, line);) ++rows;
  EXPECT_EQ(rows, static_cast<int>(j.size()));
  std::filesystem::remove(csv);
}

/// Seed 000's SCI machine file relabelled for shm at `path`: predictions without a calibration.
void write_seed_machine_for_shm(const std::string& path) {
  std::ifstream in(std::string(TILEPIPE_SOURCE_DIR) +
                   "/tests/data/machines/seed000-sci-cluster.json");
  auto m = nlohmann::json::parse(in);
  m["transport"] = "shm";
  std::ofstream(path) << m.dump();
}

TEST(SweepCli, cyclic_runs_and_predicts_every_point_with_the_factor) {
  // Seed 000's SCI machine file relabelled for shm, so that no calibration runs: each point's
  // run and prediction are `tilepipe plan --cyclic 2`'s (steps; the time, hops included).
  const auto machine = temp_path("sweep-cyclic-machine.json");
  write_seed_machine_for_shm(machine);
  auto r = sweep({"--kernel",       "wave2d",
                  "--size",         "32x256",
                  "--nodes",        "2",
                  "--tile-heights", "32:64",
                  "--schemes",      "overlap+hyperplane",
                  "--repeat",       "1",
                  "--sync",         "block",
                  "--cyclic",       "2",
                  "--machine",      machine,
                  "--json",         "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto top = tp::test::without_preamble(nlohmann::json::parse(r.out), "sweep");
  ASSERT_GE(top["results"].size(), 2u);
  for (const auto& o : top["results"]) {
    const std::string h = std::to_string(o["tile_height"].get<std::int64_t>());
    // The sweep maps every point along the dimension of its base plan (2 here); at height 256 the
    // two dimensions tie at one tile and plan alone would map the other (ADR 0032).
    const std::vector<std::string> plan_args = {
        "plan", "--kernel",  "wave2d", "--size",   "32x256", "--nodes",   "2",     "--tile",
        h,      "--map-dim", "2",      "--cyclic", "2",      "--machine", machine, "--json"};
    auto p = tilepipe(plan_args);
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const auto j = nlohmann::json::parse(p.out);
    EXPECT_EQ(j["cyclic"], nlohmann::json::array({2})) << h;
    EXPECT_EQ(o["steps"], j["steps"]) << h;
    // The sweep predicts with plan's default formula, the executed one (docs/model.md).
    EXPECT_NEAR(o["predicted_s"].get<double>(), j["predicted_s"].get<double>(), 1e-12) << h;
    // Which is the seeds' formula with the pipeline's end as the executor runs it: the corner
    // tile's start plus max(t_comp, step - hop) instead of a whole step (a cyclic plan's
    // hand-overs are hops in both).
    auto seeds_args = plan_args;
    seeds_args.insert(seeds_args.end() - 1, {"--formula", "seeds"});
    auto ps = tilepipe(seeds_args);
    ASSERT_EQ(ps.exit_code, 0) << ps.err;
    const auto js = nlohmann::json::parse(ps.out);
    const double step = js["step_s"].get<double>();
    const double edges = step - std::max(js["step_time"]["t_comp_s"].get<double>(),
                                         step - js["hop_s"].get<double>());
    EXPECT_NEAR(o["predicted_s"].get<double>(), js["predicted_s"].get<double>() - edges, 1e-12)
        << h;
  }
  std::filesystem::remove(machine);
}

TEST(SweepCli, cyclic_auto_runs_each_point_with_the_models_factors) {
  // The same relabelled seed machine; two tiles per row of tiles, where cycles pay: each point
  // runs the factor `tilepipe plan --cyclic auto` chooses at its height and scheme (reported as
  // "cyclic"), with that plan's steps.
  const auto machine = temp_path("sweep-cyclic-auto-machine.json");
  write_seed_machine_for_shm(machine);
  auto r = sweep({"--kernel",       "wave2d",
                  "--size",         "4096x64",
                  "--nodes",        "2",
                  "--tile-heights", "512:2048",
                  "--schemes",      "overlap+hyperplane",
                  "--repeat",       "1",
                  "--sync",         "block",
                  "--cyclic",       "auto",
                  "--machine",      machine,
                  "--json",         "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto top = tp::test::without_preamble(nlohmann::json::parse(r.out), "sweep");
  ASSERT_GE(top["results"].size(), 3u);
  bool cycles = false;
  for (const auto& o : top["results"]) {
    if (!o["swept"].get<bool>()) continue;  // the model's own choice, at a height of its own
    const std::string h = std::to_string(o["tile_height"].get<std::int64_t>());
    const std::string k = o["cyclic"].get<std::string>();
    cycles = cycles || k != "1";
    auto p = tilepipe({"plan", "--kernel", "wave2d", "--size", "4096x64", "--nodes", "2", "--tile",
                       h, "--cyclic", "auto", "--schedule", "overlap", "--grouping", "hyperplane",
                       "--machine", machine, "--json"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const auto j = nlohmann::json::parse(p.out);
    EXPECT_EQ(j["cyclic"], nlohmann::json::array({std::stoi(k)})) << h;
    EXPECT_EQ(o["steps"], j["steps"]) << h;
  }
  EXPECT_TRUE(cycles) << "the model chose the block plan everywhere: the test shows nothing";
  std::filesystem::remove(machine);
}

struct BadSweep {
  std::vector<std::string> args;
  std::string message;  ///< a trailing '*' matches any rest of the line
};

class SweepCliBadInput : public ::testing::TestWithParam<BadSweep> {};

TEST_P(SweepCliBadInput, exits_2_with_one_line) {
  const auto& given = GetParam().args;
  std::vector<std::string> args{"--size", "4x4x256"};
  if (std::find(given.begin(), given.end(), "--kernel") == given.end()) {
    args.insert(args.end(), {"--kernel", "wave3d"});
  }
  args.insert(args.end(), given.begin(), given.end());
  auto r = sweep(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  const std::string& m = GetParam().message;
  if (!m.empty() && m.back() == '*') {
    EXPECT_EQ(r.err.rfind("tilepipe: error: " + m.substr(0, m.size() - 1), 0), 0u) << r.err;
    EXPECT_EQ(tp::test::lines_of(r.err).size(), 1u) << r.err;
  } else {
    EXPECT_EQ(r.err, "tilepipe: error: " + m + "\n");
  }
}

const std::string malformed_machine = [] {
  const auto p =
      (std::filesystem::temp_directory_path() / "tilepipe-sweep-malformed.json").string();
  // Written by every test process at start-up: a private file renamed into place (atomic).
  const auto mine = p + "." + std::to_string(::getpid());
  std::ofstream(mine) << "{\"format\": \"tilepipe-machine\",\n";
  std::filesystem::rename(mine, p);
  return p;
}();

const std::string seed_machine =
    std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/machines/seed000-sci-cluster.json";

INSTANTIATE_TEST_SUITE_P(
    Cases, SweepCliBadInput,
    ::testing::Values(
        BadSweep{{"--tile-heights", "64:16"}, "--tile-heights: the range 64:16 is empty (64 > 16)"},
        BadSweep{{"--tile-heights", "0:64"}, "--tile-heights: tile height 0 must be >= 1"},
        BadSweep{{"--tile-heights", "16:100000"},
                 "--tile-heights: tile height 100000 exceeds the extent 256 of the mapping "
                 "dimension"},
        BadSweep{{"--tile-heights", "16:x"}, "--tile-heights: *"},
        BadSweep{{"--tile-heights",
                  "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,"
                  "24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,"
                  "44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,"
                  "64,65"},
                 "--tile-heights: more than 64 tile heights in *"},
        BadSweep{{"--tile-heights", "1:16"}, "--tile-heights: tile height 1 with *"},
        BadSweep{{"--tile-heights", "16:64", "--schemes", "overlap+diagonal"},
                 "--schemes: unknown scheme 'overlap+diagonal' (all, or a comma list of "
                 "blocking|overlap+hyperplane|vertical, e.g. overlap+hyperplane)"},
        BadSweep{{"--tile-heights", "16:64", "--repeat", "0"}, "--repeat 0: must be 1..50"},
        BadSweep{{"--tile-heights", "16:64", "--machine", "/nonexistent/m.json"},
                 "cannot open machine file '/nonexistent/m.json': No such file or directory"},
        BadSweep{{"--tile-heights", "16:64", "--machine", malformed_machine},
                 "machine file '" + malformed_machine + "' is not valid JSON: *"},
        BadSweep{{"--tile-heights", "16:64", "--machine", seed_machine},
                 "machine file '" + seed_machine +
                     "' is for transport 'sci-dma', not 'shm': run `tilepipe calibrate "
                     "--transport shm`"},
        BadSweep{
            {"--tile-heights", "16:64", "--kernel", "sw"},
            "--kernel: tilepipe sweep runs wave2d|wave3d|wave4d|sor2d|sor3d|sweep3d, not 'sw'"},
        BadSweep{{"--tile-heights", "16:64", "--cyclic", "0"},
                 "--cyclic dimension 1: 0 must be >= 1"}),
    [](const ::testing::TestParamInfo<BadSweep>& param) {
      return "case" + std::to_string(param.index);
    });

}  // namespace

}  // namespace cli_sweep
