// `tilepipe calibrate` end to end: the file it writes loads and drives `plan` and `run`; bad
// output paths and transports are refused before any measurement.
#include "cli_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_calibrate {

namespace {

using tp::test::cli::read_json;
using tp::test::cli::temp_path;
using tp::test::cli::tilepipe;

TEST(CalibrateCli, writes_a_machine_file_that_plan_and_run_use) {
  const auto path = temp_path("machine.json");
  auto r = tilepipe("calibrate", {"--quick", "--quiet", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("tilepipe calibrate: wrote " + path + "\n", 0), 0u) << r.out;
  const auto m = read_json(path);
  EXPECT_EQ(m["format"], "tilepipe-machine");
  EXPECT_EQ(m["host_bound"], true);
  EXPECT_EQ(m["transport"], "shm");
  for (const char* k : {"wave2d", "wave3d", "wave4d"}) {
    ASSERT_TRUE(m["compute"]["kernels"].contains(k)) << k;
    EXPECT_NE(r.out.find("  t_comp1 (" + std::string(k) + ")"), std::string::npos) << r.out;
    const auto& s = m["compute"]["kernels"][k]["samples"];
    ASSERT_GE(s.size(), 2u) << k;
    for (std::size_t i = 1; i < s.size(); ++i) {  // tile time non-decreasing
      EXPECT_GE(s[i]["tile_points"].get<double>() * s[i]["t_comp1_ns"].get<double>(),
                s[i - 1]["tile_points"].get<double>() * s[i - 1]["t_comp1_ns"].get<double>());
    }
  }
  EXPECT_GT(m["comm"]["bandwidth_bytes_per_s"].get<double>(), 0);
  for (const char* mode : {"poll", "block", "hybrid"}) {
    EXPECT_GT(m["notes"]["notify_us"][mode].get<double>(), 0) << mode;
  }

  auto plan = tilepipe("plan", {"--kernel", "wave3d", "--size", "12x12x4096", "--nodes", "2",
                                "--tile", "auto", "--schedule", "auto", "--grouping", "auto",
                                "--machine", path, "--transport", "shm", "--json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto pj = nlohmann::json::parse(plan.out);
  EXPECT_GT(pj["predicted_s"].get<double>(), 0);
  EXPECT_EQ(pj["chosen_by"], "model");

  auto run = tilepipe("run", {"--kernel", "wave3d", "--size", "8x8x300", "--nodes", "2", "--cpus",
                              "1", "--sync", "block", "--machine", path, "--verify", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rj = nlohmann::json::parse(run.out);
  EXPECT_EQ(rj["verified"], true);
  EXPECT_EQ(rj["chosen_by"], "model");
  EXPECT_GT(rj["predicted_s"].get<double>(), 0);
  EXPECT_NE(rj["reason"].get<std::string>().find("minimizes the predicted time"),
            std::string::npos);

  // Text output names the choice and why; the default path is found through TILEPIPE_MACHINE.
  ::setenv("TILEPIPE_MACHINE", path.c_str(), 1);
  auto text = tilepipe("run", {"--kernel", "wave2d", "--size", "64x2000", "--nodes", "1", "--cpus",
                               "1", "--verify"});
  ::unsetenv("TILEPIPE_MACHINE");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  chosen by          model: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("verified           yes"), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

TEST(CalibrateCli, run_auto_without_a_machine_file_is_refused) {
  ::setenv("TILEPIPE_MACHINE", "/nonexistent/tilepipe-machine.json", 1);
  auto r = tilepipe("run", {"--kernel", "wave2d", "--size", "64x64", "--tile", "auto"});
  ::unsetenv("TILEPIPE_MACHINE");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "tilepipe: error: --tile auto needs --machine FILE or a machine file at the default "
            "path (write one with `tilepipe calibrate`)\n");
  auto bad = tilepipe(
      "run", {"--kernel", "wave2d", "--size", "64x64", "--machine", "/nonexistent/m.json"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "tilepipe: error: cannot open machine file '/nonexistent/m.json': No such file or "
            "directory\n");
}

struct BadCalibrate {
  std::vector<std::string> args;
  std::string message;
};

class CalibrateCliBadInput : public ::testing::TestWithParam<BadCalibrate> {};

TEST_P(CalibrateCliBadInput, exits_2_with_one_line_before_measuring) {
  auto r = tilepipe("calibrate", GetParam().args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "tilepipe: error: " + GetParam().message + "\n");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CalibrateCliBadInput,
    ::testing::Values(
        BadCalibrate{{"-o", "/nonexistent-dir/m.json"},
                     "-o: cannot write '/nonexistent-dir/m.json': directory "
                     "'/nonexistent-dir' does not exist"},
        BadCalibrate{{"-o", "/tmp"}, "-o: cannot write '/tmp': it is a directory"},
        BadCalibrate{{"--transport", "sci", "-o", "/tmp/x.json"},
                     "--transport: unknown transport 'sci' (choose shm|mpi)"},
        BadCalibrate{{"--transport", "mpi", "-o", "/tmp/x.json"},
                     "--transport mpi: run under mpirun with at least 2 ranks (mpirun -np 2 "
                     "tilepipe calibrate --transport mpi)"},
        BadCalibrate{{"--tile-heights", "16:64", "-o", "/tmp/x.json"},
                     "--tile-heights needs --kernel and --size"},
        BadCalibrate{{"--kernel", "wave3d", "-o", "/tmp/x.json"},
                     "--kernel and --size go together (the problem to calibrate for)"},
        BadCalibrate{{"--kernel", "wave3d", "--size", "8x8x100", "--tile-heights", "64:16", "-o",
                      "/tmp/x.json"},
                     "--tile-heights: the range 64:16 is empty (64 > 16)"}),
    [](const ::testing::TestParamInfo<BadCalibrate>& param) {
      return "case" + std::to_string(param.index);
    });

}  // namespace

}  // namespace cli_calibrate
