// `tilepipe run --kernel sweep3d` and `tilepipe plan`: the checksum and the .npy of phi against
// the plain loop, --verify, the KBA mapping, bad input (one line, exit 2).
#include "cli_test.hpp"

#include <tilepipe/kernels/sweep3d.hpp>
#include <tilepipe/model/machine_file.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

namespace {

using tp::test::cli::tilepipe;

TEST(Sweep3dCli, run_verifies_and_writes_phi_on_ranks_x_cpus) {
  const auto npy = std::filesystem::temp_directory_path() /
                   ("tp_sweep3d_cli_" + std::to_string(::getpid()) + ".npy");
  for (const char* schedule : {"blocking", "overlap"}) {
    auto r = tilepipe(
        {"run",        "--kernel",     "sweep3d",  "--size", "6x4x9",    "--param",     "angles=3",
         "--param",    "iterations=2", "--param",  "c=0.5",  "--param",  "sigma_t=0.8", "--tile",
         "3x2x4",      "--nodes",      "2",        "--cpus", "2",        "--sync",      "block",
         "--schedule", schedule,       "--verify", "--json", "--output", npy.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    tp::kernels::Sweep3dParams p;
    p.angles = 3;
    p.iterations = 2;
    p.c = 0.5;
    p.sigma_t = 0.8;
    const auto phi = tp::kernels::sweep3d_reference({6, 4, 9}, p);
    EXPECT_EQ(j["checksum"], tp::kernels::format_checksum(tp::kernels::sweep3d_checksum(phi)));
    EXPECT_EQ(j["verified"], true);
    EXPECT_EQ(j["params"],
              "sigma_t=0.8, source=1.0, angles=3, iterations=2, c=0.5, paired=1, mirror_from=1");
    EXPECT_EQ(j["size"], nlohmann::json::parse("[6, 4, 9]"));
    EXPECT_EQ(j["space"], nlohmann::json::parse("[6, 4, 18]"));  // octants o and o | 4
    EXPECT_EQ(j["points"], 8 * 2 * 6 * 4 * 9);
    std::ifstream in(npy, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), phi.size() * sizeof(double));
    EXPECT_NE(bytes.find("'descr': '<f8', 'fortran_order': False, 'shape': (6, 4, 9)"),
              std::string::npos);
    EXPECT_EQ(std::memcmp(bytes.data() + bytes.size() - phi.size() * sizeof(double), phi.data(),
                          phi.size() * sizeof(double)),
              0);
  }
  std::filesystem::remove(npy);
}

// A 2 x 2 mesh: a rank's cells in one octant are other ranks' in others, in both mesh
// dimensions (p_o travel to the cells' homes, sources from them).
TEST(Sweep3dCli, run_on_a_2x2_mesh_equals_the_plain_loop) {
  tp::kernels::Sweep3dParams p;
  p.angles = 3;
  p.iterations = 3;
  p.c = 0.7;
  p.source = 0.3;
  const auto phi = tp::kernels::sweep3d_reference({9, 8, 13}, p);
  for (const char* variant : {"--schedule=blocking", "--comm-thread"}) {
    auto r = tilepipe(
        {"run",     "--kernel",     "sweep3d",  "--size", "9x8x13",  "--param",    "angles=3",
         "--param", "iterations=3", "--param",  "c=0.7",  "--param", "source=0.3", "--tile",
         "3",       "--nodes",      "4",        "--cpus", "1",       "--sync",     "block",
         "--mesh",  "2x2",          "--verify", variant,  "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["mesh"], nlohmann::json::parse("[2, 2]"));
    EXPECT_EQ(j["verified"], true);
    EXPECT_EQ(j["checksum"], tp::kernels::format_checksum(tp::kernels::sweep3d_checksum(phi)));
  }
}

// Extents of 1: a tile longer than the grid is clamped to the shortest legal side (2), not to 1
// (paired: along k the space is 2K, so K = 1 is a side of 2).
TEST(Sweep3dCli, run_on_extents_of_1_equals_the_plain_loop) {
  for (const char* size : {"1x1x1", "1x6x1", "3x1x5"}) {
    auto r = tilepipe({"run", "--kernel", "sweep3d", "--size", size, "--param", "angles=3",
                       "--param", "iterations=2", "--param", "c=0.5", "--tile", "8x8x8", "--cpus",
                       "1", "--verify", "--json"});
    ASSERT_EQ(r.exit_code, 0) << size << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["verified"], true) << size;
    const auto n = j["size"].get<std::vector<tp::exec::Index>>();
    const auto space = j["space"].get<std::vector<tp::exec::Index>>();
    EXPECT_EQ(space, (std::vector<tp::exec::Index>{n[0], n[1], 2 * n[2]})) << size;
    tp::kernels::Sweep3dParams p;
    p.angles = 3;
    p.iterations = 2;
    p.c = 0.5;
    const auto phi = tp::kernels::sweep3d_reference({n[0], n[1], n[2]}, p);
    EXPECT_EQ(j["checksum"], tp::kernels::format_checksum(tp::kernels::sweep3d_checksum(phi)));
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_EQ(j["tile"][d], std::min<tp::exec::Index>(8, std::max<tp::exec::Index>(space[d], 2)))
          << size;
    }
  }
}

// KBA: a 2-D mesh of ranks over i and j, pipelined along k with the tile height as block.
TEST(Sweep3dCli, plan_is_the_kba_decomposition) {
  auto r = tilepipe({"plan", "--kernel", "sweep3d", "--size", "16x16x64", "--param", "angles=3",
                     "--nodes", "4", "--tile", "16", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["map_dim"], 3);
  EXPECT_EQ(j["mesh"], nlohmann::json::parse("[2, 2]"));
  EXPECT_EQ(j["tile"], nlohmann::json::parse("[8, 8, 16]"));
}

// The model: 8 T + 1 executor sweeps, each a whole pipeline of the plan's steps with its fill and
// drain, the last one copying phi, barriers between them; faces of 80-byte cells. 4x4x32 on 2
// nodes at tile height 8: mesh 2x1, tiles 2x4x8, 4 tiles per node along k, the second node two
// steps behind (overlap): 6 steps per sweep. The rows 2 + 2 along i are mirror-symmetric: the
// mirrored sweeps (ADR 0024; mirror_from=1, the default, mirrors from the first iteration) move
// no value between sweeps, so only the two barriers remain.
constexpr double us = 1e-6;
constexpr double seed000_sweep = 6 * (49.2 * us + 4 * 8 * 80 / 84.12e6 + 75.2 * us);
constexpr double seed000_copy = seed000_sweep;  // communication-bound: the faces set the step
constexpr double seed000_between = 2 * 75.2 * us;

TEST(Sweep3dCli, plan_predicts_8t_plus_1_pipelined_sweeps) {
  const std::string seed000 =
      std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/machines/seed000-sci-cluster.json";
  const std::vector<std::string> args{
      "plan",    "--kernel", "sweep3d",       "--size",    "4x4x32", "--param", "iterations=2",
      "--param", "paired=0", "--nodes",       "2",         "--tile", "8",       "--machine",
      seed000,   "--param",  "mirror_from=1", "--formula", "seeds"};
  auto r = tilepipe(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("predicted time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" (17 sweeps, "), std::string::npos) << r.out;
  auto with_json = args;
  with_json.emplace_back("--json");
  r = tilepipe(with_json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["steps"], 6);
  EXPECT_EQ(j["sweeps"], 17);
  EXPECT_EQ(j["copy_sweeps"], 1);
  EXPECT_EQ(j["step_time"]["face_bytes"], 4 * 8 * 80);
  EXPECT_NEAR(j["sweep_s"].get<double>(), seed000_sweep, 1e-12);
  EXPECT_NEAR(j["copy_sweep_s"].get<double>(), seed000_copy, 1e-12);
  EXPECT_NEAR(j["between_sweeps_s"].get<double>(), seed000_between, 1e-12);
  EXPECT_NEAR(j["predicted_s"].get<double>(),
              16 * seed000_sweep + seed000_copy + 16 * seed000_between, 1e-12);
  // The default formula follows the executor: each sweep is a pipeline whose hand-over between
  // the two nodes is one hop, not the schedule's two steps (ADR 0034), so a sweep and the copying
  // sweep take less than the seeds' 6 full steps; the exchange between sweeps is the seeds'.
  with_json.erase(with_json.end() - 3, with_json.end() - 1);  // --formula seeds
  r = tilepipe(with_json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = nlohmann::json::parse(r.out);
  EXPECT_EQ(e["formula"], "executed");
  EXPECT_EQ(e["edge_steps"], 0);  // with hops the pipeline's ends are the hops'
  ASSERT_TRUE(e["hop_s"].is_number()) << r.out;
  const double t_comp = e["step_time"]["t_comp_s"].get<double>();
  EXPECT_NEAR(t_comp, 2 * 4 * 8 * 39.6e-9, 1e-15);  // a tile of 2 x 4 x 8 cells
  EXPECT_GT(e["hop_s"].get<double>(), t_comp);
  const double executed_sweep = e["sweep_s"].get<double>();
  const double executed_copy = e["copy_sweep_s"].get<double>();
  EXPECT_LT(executed_sweep, seed000_sweep);
  EXPECT_GT(executed_sweep, 4 * t_comp);
  EXPECT_LT(executed_copy, seed000_copy);
  EXPECT_NEAR(e["between_sweeps_s"].get<double>(), seed000_between, 1e-12);
  EXPECT_NEAR(e["predicted_s"].get<double>(),
              16 * executed_sweep + executed_copy + 16 * seed000_between, 1e-12);
}

// Paired (the default): 4 T + 1 sweeps over 4x4x64, 8 tiles per node along k: 10 steps per sweep
// (the fill and drain of each pair of octants paid once); still nothing moves between sweeps.
// 8 sweeps and 8 pairs of barriers replace 16 of each.
constexpr double paired_sweep = 10 * (49.2 * us + 4 * 8 * 80 / 84.12e6 + 75.2 * us);
constexpr double paired_between = 2 * 75.2 * us;

TEST(Sweep3dCli, plan_predicts_4t_plus_1_sweeps_of_paired_octants) {
  const std::string seed000 =
      std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/machines/seed000-sci-cluster.json";
  auto r = tilepipe({"plan", "--kernel", "sweep3d", "--size", "4x4x32", "--param", "iterations=2",
                     "--param", "mirror_from=1", "--nodes", "2", "--tile", "8", "--machine",
                     seed000, "--formula", "seeds", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["size"], nlohmann::json::parse("[4, 4, 64]"));  // the executor's space
  EXPECT_EQ(j["steps"], 10);
  EXPECT_EQ(j["sweeps"], 9);
  EXPECT_EQ(j["copy_sweeps"], 1);
  EXPECT_NEAR(j["sweep_s"].get<double>(), paired_sweep, 1e-12);
  EXPECT_NEAR(j["between_sweeps_s"].get<double>(), paired_between, 1e-12);
  EXPECT_NEAR(j["predicted_s"].get<double>(), 8 * paired_sweep + paired_sweep + 8 * paired_between,
              1e-12);
}

// `run` predicts the same with a machine file of this host (seed 000's parameters) and the
// seeds' formula.
TEST(Sweep3dCli, run_predicts_its_sweeps) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tp_sweep3d_machine_" + std::to_string(::getpid()) + ".json");
  auto m = *tp::model::load_machine(
      std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/machines/seed000-sci-cluster.json", {});
  const auto host = tp::model::this_host();
  m.host_bound = true;
  m.hostname = host.hostname;
  m.cpu_model = host.cpu_model;
  m.cores = host.cores;
  m.transport = "shm";
  ASSERT_TRUE(tp::model::save_machine(m, path.string()));
  for (const char* paired : {"paired=0", "paired=1"}) {
    auto r = tilepipe({"run",         "--kernel",     "sweep3d", "--size",     "4x4x32",
                       "--param",     "iterations=2", "--nodes", "2",          "--cpus",
                       "1",           "--tile",       "8",       "--schedule", "overlap",
                       "--grouping",  "hyperplane",   "--sync",  "block",      "--machine",
                       path.string(), "--param",      paired,    "--param",    "mirror_from=1",
                       "--formula",   "seeds",        "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["sweeps"], 1);  // --sweeps; the kernel's own 8 T + 1 are inside one run
    EXPECT_NEAR(j["predicted_s"].get<double>(),
                std::string(paired) == "paired=0"
                    ? 16 * seed000_sweep + seed000_copy + 16 * seed000_between
                    : 9 * paired_sweep + 8 * paired_between,
                1e-12)
        << paired;
  }
  // By default `run` predicts with the executed formula, as `tilepipe plan` does by default.
  const std::vector<std::string> shape = {
      "--kernel",   "sweep3d",    "--size",    "4x4x32",      "--param", "iterations=2", "--nodes",
      "2",          "--cpus",     "1",         "--tile",      "8",       "--schedule",   "overlap",
      "--grouping", "hyperplane", "--machine", path.string(), "--json"};
  auto run_args = shape;
  run_args.insert(run_args.begin(), "run");
  run_args.insert(run_args.end(), {"--sync", "block"});
  auto r = tilepipe(run_args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  auto plan_args = shape;
  plan_args.insert(plan_args.begin(), "plan");
  auto p = tilepipe(plan_args);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto pj = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["formula"], "executed");
  EXPECT_EQ(pj["formula"], "executed");
  EXPECT_NEAR(j["predicted_s"].get<double>(), pj["predicted_s"].get<double>(), 1e-12);
  EXPECT_LT(j["predicted_s"].get<double>(), 9 * paired_sweep + 8 * paired_between);
  std::filesystem::remove(path);
}

// `run --kernel sweep3d --help` lists the kernel's parameters, paired among them.
TEST(Sweep3dCli, help_lists_the_parameters) {
  auto r = tilepipe({"run", "--kernel", "sweep3d", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Kernel 'sweep3d' parameters, --param NAME=VALUE:\n"), std::string::npos);
  EXPECT_NE(r.out.find("\n  paired (an integer, default 1): 1: octants o and o | 4 as one sweep"),
            std::string::npos)
      << r.out;
}

TEST(Sweep3dCli, bad_input_is_one_line_and_exit_2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--size", "4x4x4", "--param", "angles=2"},
       "tilepipe: error: angles 2: must be 1 (S2) or 3 (S4)"},
      {{"--size", "4x4x4", "--param", "iterations=0"},
       "tilepipe: error: iterations 0: must be between 1 and 268435455"},
      {{"--size", "4x4x4", "--param", "iterations=-2"},
       "tilepipe: error: iterations -2: must be between 1 and 268435455"},
      {{"--size", "4x4x4", "--param", "sigma_t=0"},
       "tilepipe: error: sigma_t 0: must be a finite number > 0"},
      {{"--size", "4x4x4", "--param", "sigma_t=-1.5"},
       "tilepipe: error: sigma_t -1.5: must be a finite number > 0"},
      {{"--size", "4x4x4", "--param", "sigma_t=inf"},
       "tilepipe: error: --param sigma_t=inf: the value must be a finite number"},
      {{"--size", "4x4x4", "--param", "source=-1"},
       "tilepipe: error: source -1: must be a finite number >= 0"},
      {{"--size", "4x4x4", "--param", "source=nan"},
       "tilepipe: error: --param source=nan: the value must be a finite number"},
      {{"--size", "4x4x4", "--param", "c=-0.5"},
       "tilepipe: error: c -0.5: must be a finite number >= 0"},
      {{"--size", "4x0x4"}, "tilepipe: error: --size dimension 2: 0 must be >= 1"},
      {{"--size", "4x4"},
       "tilepipe: error: --kernel sweep3d is 3-dimensional but --size 4x4 has 2 dimensions"},
      {{"--size", "10000000x10000000x10000000"},
       "tilepipe: error: the grid does not fit in 64-bit offsets"},
      {{"--size", "4x4x4", "--sweeps", "2"},
       "tilepipe: error: --sweeps: sweep3d sets its own sweeps (8 per source iteration, 4 paired); "
       "use --param iterations=T"},
      {{"--size", "4x4x4", "--param", "paired=2"},
       "tilepipe: error: paired 2: must be 1 (octants o and o | 4 in one sweep) or 0 (one after "
       "another)"},
  };
  for (auto [args, message] : cases) {
    args.insert(args.begin(), {"run", "--kernel", "sweep3d"});
    auto r = tilepipe(args);
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_EQ(r.err, message + "\n");
    EXPECT_EQ(r.out, "");
  }
  // A grid whose arrays fit in 64-bit offsets but not in this machine's memory: refused before
  // anything is allocated.
  auto r = tilepipe({"run", "--kernel", "sweep3d", "--size", "100000x100000x100000"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("tilepipe: error: the run needs about ", 0), 0U) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
