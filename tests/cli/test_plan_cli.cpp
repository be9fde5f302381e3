// `tilepipe plan` end to end: golden JSON for the seeds' configurations, exact bad-input errors.
#include "cli_test.hpp"
#include "json_preamble.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_plan {

namespace {

using tp::test::run_process;
using tp::test::cli::expect_refused;
using tp::test::cli::plan;
using tp::test::cli::read_json;

nlohmann::json golden(const std::string& name) {
  return read_json(std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/golden/" + name);
}

TEST(PlanCli, seed_000_configuration_matches_golden_json) {
  auto r = plan({"--kernel", "wave3d", "--size", "12x12x524288", "--nodes", "9", "--cpus", "1",
                 "--schedule", "overlap", "--tile", "1024", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["steps"], 520);
  EXPECT_EQ(j["mesh"], nlohmann::json::array({3, 3}));
  EXPECT_EQ(tp::test::without_preamble(j, "plan"), golden("plan_seed000_12x12x524288.json"));
}

TEST(PlanCli, seed_002_configuration_matches_golden_json) {
  auto r = plan({"--kernel", "wave3d", "--size", "16x16x65536", "--nodes", "8", "--cpus", "2",
                 "--schedule", "overlap", "--grouping", "hyperplane", "--tile", "1024", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["steps"], 74);
  for (const char* key : {"dims", "size", "tile", "tile_space", "map_dim", "mesh", "cpu_grid",
                          "schedule", "grouping", "schedule_vector", "steps", "legal"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(tp::test::without_preamble(j, "plan"), golden("plan_seed002_16x16x65536.json"));
}

TEST(PlanCli, human_output_is_a_table_with_the_steps) {
  auto r = plan({"--kernel", "wave3d", "--size", "12x12x524288", "--nodes", "9", "--tile", "1024"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("time steps         520"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("9 as mesh 3x3"), std::string::npos) << r.out;
}

TEST(PlanCli, more_cpus_than_rows_reports_the_idle_ones) {
  // A 2x2 cross-section on 9 nodes: unit dependences need tiles 2 wide, so there is one row of
  // tiles and 8 nodes run none.
  auto r = plan({"--kernel", "wave3d", "--size", "2x2x64", "--tile", "8", "--nodes", "9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  idle               8 of 9 nodes and 8 of 9 CPUs have no row of tiles "
                       "and run none\n"),
            std::string::npos)
      << r.out;
  auto j = plan({"--kernel", "wave3d", "--size", "2x2x64", "--tile", "8", "--nodes", "9", "--cpus",
                 "2", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto json = nlohmann::json::parse(j.out);
  EXPECT_EQ(json["tile_space"], nlohmann::json::array({1, 1, 8}));
  EXPECT_EQ(json["idle_nodes"], 8);
  EXPECT_EQ(json["idle_cpus"], 17);
}

TEST(PlanCli, deps_and_explicit_tile_and_mesh) {
  auto r = plan({"--deps", "1,0;0,1;1,1", "--size", "100x40", "--tile", "10x10", "--nodes", "2",
                 "--cpus", "2", "--mesh", "2", "--map-dim", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tile_deps"], nlohmann::json::parse("[[0,1],[1,0],[1,1]]"));
  EXPECT_EQ(j["cpu_grid"], nlohmann::json::array({2}));
  EXPECT_EQ(j["map_dim"], 1);
}

struct BadInput {
  std::vector<std::string> args;
  std::string message;
};

class PlanCliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(PlanCliBadInput, exits_2_with_one_line_naming_the_problem) {
  const auto& p = GetParam();
  expect_refused(plan(p.args), p.message);
}

std::vector<std::string> with(std::vector<std::string> extra,
                              std::vector<std::string> b = {"--kernel", "wave3d"}) {
  b.insert(b.end(), extra.begin(), extra.end());
  return b;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlanCliBadInput,
    ::testing::Values(
        BadInput{with({"--size", "12x0x64", "--tile", "8"}), "--size dimension 2: 0 must be >= 1"},
        BadInput{with({"--size", "12x-3x64", "--tile", "8"}),
                 "--size dimension 2: -3 must be >= 1"},
        BadInput{with({"--size", "12x12", "--tile", "8"}),
                 "--kernel wave3d is 3-dimensional but --size 12x12 has 2 dimensions"},
        BadInput{with({"--size", "12xtwelvex64", "--tile", "8"}),
                 "--size dimension 2: 'twelve' is not a whole number"},
        BadInput{with({"--size", "99999999999999999999x2x2", "--tile", "8"}),
                 "--size dimension 1: '99999999999999999999' does not fit in 64 bits"},
        BadInput{with({"--size", "4294967296x4294967296x2", "--tile", "8"}),
                 "iteration space (4294967296, 4294967296, 2) has more than 2^63 points: it "
                 "overflows 64 bits"},
        BadInput{with({"--size", "12x12x64", "--tile", "0"}), "--tile: tile height 0 must be >= 1"},
        BadInput{with({"--size", "12x12x64", "--tile", "4x4"}),
                 "the tile 4x4 has 2 dimensions but the iteration space 12x12x64 has 3"},
        BadInput{with({"--size", "12x12x64", "--tile", "8", "--nodes", "0"}),
                 "--nodes: 0 must be >= 1"},
        BadInput{with({"--size", "12x12x64", "--tile", "8", "--cpus", "0"}),
                 "--cpus: 0 must be >= 1"},
        BadInput{with({"--size", "12x12x64", "--tile", "8", "--nodes", "abc"}),
                 "--nodes: 'abc' is not a whole number"},
        BadInput{with({"--size", "12x12x64", "--tile", "8", "--nodes", "9", "--mesh", "2x2"}),
                 "--mesh 2x2 does not have 9 nodes"},
        BadInput{with({"--size", "12x12x64", "--tile", "8", "--nodes", "4", "--mesh", "4"}),
                 "--mesh 4 has 1 factors but a 3-dimensional space needs 2 (one per "
                 "non-mapping dimension)"},
        BadInput{with({"--size", "12x12x64", "--tile", "8", "--map-dim", "4"}),
                 "--map-dim 4: the space has dimensions 1 to 3"},
        BadInput{with({"--size", "12x12x64", "--tile", "8", "--schedule", "eager"}),
                 "--schedule: unknown schedule 'eager' (choose blocking|overlap)"},
        BadInput{with({"--size", "12x12x64", "--tile", "8", "--grouping", "diagonal"}),
                 "--grouping: unknown grouping 'diagonal' (choose hyperplane|vertical)"},
        BadInput{
            {"--kernel", "heat", "--size", "8x8", "--tile", "4"},
            "--kernel: unknown kernel 'heat' (choose wave2d|wave3d|wave4d|sw|sor2d|sor3d|sweep3d)"},
        BadInput{{"--size", "8x8", "--tile", "4"},
                 "give --kernel (wave2d|wave3d|wave4d|sw|sor2d|sor3d|sweep3d) or --deps"},
        BadInput{{"--deps", "1,0;0,1,0", "--size", "8x8", "--tile", "4"},
                 "--deps: vector 2 has 3 entries but vector 1 has 2"},
        BadInput{{"--deps", "0,0", "--size", "8x8", "--tile", "4"},
                 "dependence vector (0, 0) is zero: not a dependence"},
        BadInput{{"--deps", "1,-1;0,1", "--size", "8x8", "--tiling-matrix", "1/4,0;0,1/4"},
                 "illegal tiling: dependence (1, -1) has (H d)_2 = -1/4 < 0 (HD >= 0 fails, "
                 "tiles would not be atomic): the space must be skewed first"},
        BadInput{{"--deps", "1,0;0,3", "--size", "8x9", "--tile", "4x3"},
                 "illegal tiling: dependence (0, 3) is not shorter than the tile side in "
                 "dimension 2 (tile size 3; |HD| < 1 fails)"},
        BadInput{{"--deps", "1,0;0,1", "--size", "8x8", "--tiling-matrix", "1/4,1/4;1/2,1/2"},
                 "tiling matrix [[1/4, 1/4], [1/2, 1/2]] is singular (det = 0): its rows must "
                 "be linearly independent"},
        BadInput{{"--deps", "1,0;0,11", "--size", "64x64", "--tiling-matrix",
                  "1/4,0;0,1520991301842736.5408", "--nodes", "2", "--cpus", "2"},
                 "tiling matrix: H d overflows 64 bits for dependence (0, 11) (entries of H too "
                 "large)"},
        BadInput{{"--deps", "1,0;0,1", "--size", "8x8", "--tiling-matrix", "1/4,x;0,1/4"},
                 "--tiling-matrix entry (1,2): 'x' is not a number (e.g. 1/4)"},
        BadInput{with({"--size", "12x12x64"}),
                 "--tile is required: the tile extents (e.g. 4x4x1024) or the tile height (e.g. "
                 "1024)"},
        BadInput{with({"--size", "12x12x64", "--tile", "8", "--bogus"}),
                 "The following argument was not expected: --bogus"}),
    [](const ::testing::TestParamInfo<BadInput>& param) {
      return "case" + std::to_string(param.index);
    });

TEST(PlanCli, unknown_command_and_missing_size) {
  auto r = run_process({TILEPIPE_EXE, "frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tilepipe: error: unknown command 'frobnicate' (try: tilepipe --help)\n");
  auto m = plan({"--kernel", "wave3d", "--tile", "8"});
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_EQ(tp::test::lines_of(m.err).size(), 1u) << m.err;
}

}  // namespace

}  // namespace cli_plan
