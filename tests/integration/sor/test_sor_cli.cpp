// `tilepipe run --kernel sor2d|sor3d` and `tilepipe plan` for loop nests with negative
// dependences: checksums against the plain loop, the transformation printed, bad input (exit 2).
#include "cli_test.hpp"

#include <tilepipe/kernels/sor.hpp>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>

namespace {

using tp::test::cli::tilepipe;

TEST(SorCli, run_sor2d_on_ranks_equals_the_plain_loop) {
  for (const char* schedule : {"blocking", "overlap"}) {
    auto r = tilepipe({"run",     "--kernel",     "sor2d",      "--size",    "19x7",
                       "--param", "iterations=6", "--param",    "omega=1.7", "--tile",
                       "2",       "--nodes",      "2",          "--cpus",    "2",
                       "--sync",  "block",        "--schedule", schedule,    "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto ref = tp::kernels::sor2d_reference(19, 7, 6, 1.7);
    EXPECT_EQ(j["checksum"],
              tp::kernels::format_checksum(tp::kernels::sor_reference_checksum(ref, {19, 7})));
    EXPECT_EQ(j["size"], nlohmann::json::parse("[19, 7]"));
    EXPECT_EQ(j["space"], nlohmann::json::parse("[6, 24, 12]"));
    EXPECT_EQ(j["points"], 6 * 19 * 7);
    EXPECT_EQ(j["params"], "iterations=6, omega=1.7");
    EXPECT_EQ(j["transformation"], "(x1, x2, x3) -> (x1, x1 + x2, x1 + x3)");
  }
}

TEST(SorCli, run_sor3d_verifies_and_equals_the_plain_loop) {
  auto r = tilepipe({"run", "--kernel", "sor3d", "--size", "5x4x9", "--param", "iterations=3",
                     "--nodes", "3", "--cpus", "1", "--sync", "block", "--verify", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verified"], true);
  const auto ref = tp::kernels::sor3d_reference(5, 4, 9, 3, 1.0);
  EXPECT_EQ(j["checksum"],
            tp::kernels::format_checksum(tp::kernels::sor_reference_checksum(ref, {5, 4, 9})));
}

TEST(SorCli, plan_prints_the_transformation_and_tile_dependences) {
  auto r = tilepipe({"plan", "--kernel", "sor2d", "--size", "10x7", "--param", "iterations=4",
                     "--tile", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["size"], nlohmann::json::parse("[4, 13, 10]"));
  EXPECT_EQ(j["loop_nest"]["size"], nlohmann::json::parse("[4, 10, 7]"));
  EXPECT_EQ(j["loop_nest"]["points"], 280);
  EXPECT_EQ(j["loop_nest"]["transformation"], nlohmann::json::parse("[[1,0,0],[1,1,0],[1,0,1]]"));
  EXPECT_EQ(j["loop_nest"]["lower_corner"], nlohmann::json::parse("[1, 2, 2]"));
  for (const auto& d : j["tile_deps"]) {
    for (const auto& c : d) EXPECT_GE(c.get<int>(), 0);
  }
  EXPECT_GT(j["steps"].get<int>(), 0);
  auto text = tilepipe({"plan", "--deps", "1,-1;0,1", "--size", "6x6", "--tile", "2"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("transformation T   (x1, x2) -> (x1, x1 + x2)"), std::string::npos)
      << text.out;
}

// The model predicts the skewed space's plan: sor2d 6x6, T = 4 runs in the 4 x 9 x 9 box; tiles
// 4 x 3 x 9 on 3 nodes along i, one tile each, so the last node starts 2 x 2 steps after the
// first: 5 steps. Faces across i carry the low halo: (4 + 1) x (9 + 1) doubles.
TEST(SorCli, plan_predicts_the_skewed_space) {
  const std::vector<std::string> args = {
      "plan",
      "--kernel",
      "sor2d",
      "--size",
      "6x6",
      "--param",
      "iterations=4",
      "--nodes",
      "3",
      "--mesh",
      "1x3",
      "--map-dim",
      "3",
      "--tile",
      "4x3x9",
      "--machine",
      std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/machines/seed000-sci-cluster.json",
      "--json"};
  auto seeds_args = args;
  seeds_args.insert(seeds_args.end(), {"--formula", "seeds"});
  auto r = tilepipe(seeds_args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["size"], nlohmann::json::parse("[4, 9, 9]"));
  EXPECT_EQ(j["steps"], 5);
  EXPECT_EQ(j["step_time"]["face_bytes"], 5 * 10 * 8);
  EXPECT_FALSE(j.contains("sweeps"));
  const double alpha = 4 * 3 * 9 * 39.6e-9;
  const double step = 49.2e-6 + std::max(alpha, 400 / 84.12e6) + 75.2e-6;
  EXPECT_NEAR(j["predicted_s"].get<double>(), 5 * step, 1e-12);
  // The executed formula: the one tile of the first node hands over to the second and the
  // third in a hop each (t_start + latency + bytes / bandwidth + t_comp); the run ends when the
  // third has computed its tile or the second has sent its face and synchronized (its step
  // began a hop before the third's tile), whichever is later.
  auto e = tilepipe(args);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const auto je = nlohmann::json::parse(e.out);
  const double hop = 49.2e-6 + 400 / 84.12e6 + alpha;
  EXPECT_EQ(je["edge_steps"], 0);
  EXPECT_NEAR(je["hop_s"].get<double>(), hop, 1e-12);
  EXPECT_NEAR(je["predicted_s"].get<double>(), 2 * hop + std::max(alpha, step - hop), 1e-12);
}

TEST(SorCli, bad_input_is_one_line_and_exit_2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"run", "--kernel", "sor2d", "--size", "8x8", "--param", "iterations=0"},
       "tilepipe: error: iterations 0: must be >= 1"},
      {{"run", "--kernel", "sor2d", "--size", "8x8", "--param", "iterations=-4"},
       "tilepipe: error: iterations -4: must be >= 1"},
      {{"run", "--kernel", "sor2d", "--size", "8x8", "--param", "omega=0"},
       "tilepipe: error: omega 0: must lie in (0, 2) for SOR to converge"},
      {{"run", "--kernel", "sor3d", "--size", "8x8x8", "--param", "omega=2.5"},
       "tilepipe: error: omega 2.5: must lie in (0, 2) for SOR to converge"},
      {{"run", "--kernel", "sor2d", "--size", "8x8", "--param", "omega=fast"},
       "tilepipe: error: --param omega=fast: the value must be a finite number"},
      {{"run", "--kernel", "sor2d", "--size", "8x8", "--param", "sweeps=3"},
       "tilepipe: error: --param sweeps: unknown parameter (choose iterations, omega)"},
      {{"run", "--kernel", "sor2d", "--size", "8x8", "--param", "iterations"},
       "tilepipe: error: --param 'iterations': expected name=value"},
      {{"run", "--kernel", "wave2d", "--size", "8x8", "--param", "omega=1"},
       "tilepipe: error: --param omega: unknown parameter (the kernel takes none)"},
      {{"run", "--kernel", "sor2d", "--size", "8x8x8"},
       "tilepipe: error: --kernel sor2d is 2-dimensional (the time loop comes from --param "
       "iterations) but --size 8x8x8 has 3 dimensions"},
      {{"plan", "--deps", "1,-1;-1,1", "--size", "5x5", "--tile", "2"},
       "tilepipe: error: the dependences (1, -1) and (-1, 1) admit no legal schedule: a "
       "non-negative combination of them is zero"},
  };
  for (const auto& [args, message] : cases) {
    auto r = tilepipe(args);
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_EQ(r.err, message + "\n");
    EXPECT_EQ(r.out, "");
  }
}

// A grid whose faces do not fit in this machine's memory is refused before any allocation (two
// layers of (10^8 + 4)^2 doubles and the 10^16 of the output: about 2.2e8 GiB); one too large for
// 64-bit offsets earlier.
TEST(SorCli, a_grid_too_large_is_refused_before_allocating) {
  auto r = tilepipe({"run", "--kernel", "sor2d", "--size", "100000000x100000000", "--param",
                     "iterations=3", "--output", "/tmp/tp_sor_never_written.npy"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.err.starts_with("tilepipe: error: the run needs about 2235174")) << r.err;
  EXPECT_NE(r.err.find(" GiB but this machine has "), std::string::npos) << r.err;
  EXPECT_TRUE(r.err.ends_with(" GiB of memory\n")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists("/tmp/tp_sor_never_written.npy"));
  r = tilepipe({"run", "--kernel", "sor3d", "--size", "4000000x4000000x4000000"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "tilepipe: error: the grid and its sweeps do not fit in 64-bit offsets\n");
}

// --output: the interior after the last sweep, float64, C order, bit for bit the plain loop's;
// the checksum is the one a run without --output prints.
TEST(SorCli, output_writes_the_interior_after_the_last_sweep) {
  const std::string path = "/tmp/tp_sor_cli_" + std::to_string(::getpid()) + ".npy";
  const std::vector<std::string> args{"run",     "--kernel",     "sor3d",   "--size",    "6x1x5",
                                      "--param", "iterations=5", "--param", "omega=1.5", "--tile",
                                      "2",       "--nodes",      "2",       "--cpus",    "2",
                                      "--sync",  "block",        "--json"};
  auto plain = tilepipe(args);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto with = args;
  with.insert(with.end(), {"--output", path});
  auto r = tilepipe(with);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["checksum"], nlohmann::json::parse(plain.out)["checksum"]);
  EXPECT_EQ(j["output"], path);
  const std::string bytes = tp::test::cli::file_bytes(path);
  std::filesystem::remove(path);
  ASSERT_GE(bytes.size(), 10U);
  const std::size_t header = static_cast<unsigned char>(bytes[8]) +
                             256 * static_cast<std::size_t>(static_cast<unsigned char>(bytes[9]));
  EXPECT_NE(bytes.find("'descr': '<f8', 'fortran_order': False, 'shape': (6, 1, 5), }"),
            std::string::npos);
  const auto ref = tp::kernels::sor3d_reference(6, 1, 5, 5, 1.5);
  std::vector<double> expected;
  for (std::size_t i = 1; i <= 6; ++i) {
    for (std::size_t k = 1; k <= 5; ++k) expected.push_back(ref[(i * 3 + 1) * 7 + k]);
  }
  ASSERT_EQ(bytes.size() - 10 - header, expected.size() * sizeof(double));
  EXPECT_EQ(
      std::memcmp(bytes.data() + 10 + header, expected.data(), expected.size() * sizeof(double)),
      0);
}

}  // namespace
