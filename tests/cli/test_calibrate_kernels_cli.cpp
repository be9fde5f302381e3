// `tilepipe calibrate --kernel K --size ...` for every built-in kernel: the machine file holds K's
// cost per point at the problem's tile shapes, and `plan` predicts K's tiles with it; `tilepipe
// sweep` of the kernels with a time loop or several sweeps (sor2d, sweep3d); `tilepipe align --tile
// auto`, whose tile the model chooses from the sw cost.
#include "cli_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_calibrate_kernels {
namespace {

using tp::test::cli::read_json;
using tp::test::cli::temp_path;
using tp::test::cli::tilepipe;

struct Problem {
  std::vector<std::string> args;  // --kernel ... --size ... [--param ...] --nodes ...
  std::string kernel;
  std::string heights;  // two tile heights, a comma list
  std::string tile;     // one of them, for plan
};

TEST(CalibrateKernelsCli, every_builtin_kernel_is_measured_at_its_plans_tiles_and_predicted) {
  const std::vector<Problem> problems{
      {{"--kernel", "sw", "--size", "2000x2000", "--nodes", "2"}, "sw", "256,512", "512"},
      {{"--kernel", "sor2d", "--size", "64x64", "--param", "iterations=8", "--nodes", "2"},
       "sor2d",
       "8,16",
       "16"},
      {{"--kernel", "sweep3d", "--size", "8x8x64", "--param", "angles=3", "--nodes", "2"},
       "sweep3d",
       "16,32",
       "32"},
      {{"--kernel", "wave2d", "--size", "64x1024", "--nodes", "1", "--cpus", "2"},
       "wave2d",
       "64,128",
       "128"},
      // --map-dim: the probes time the tiles of the runs' mapping dimension (here 4 x 16 x 55
      // points, where the planner's own, dimension 3, has 4 x 71 x 16).
      {{"--kernel", "sor2d", "--size", "64x48", "--param", "iterations=8", "--nodes", "1", "--cpus",
        "2", "--map-dim", "2"},
       "sor2d",
       "8,16",
       "16"},
  };
  const auto path = temp_path("kernels-machine.json");
  for (const auto& p : problems) {
    SCOPED_TRACE(p.kernel);
    std::vector<std::string> calibrate{"calibrate", "--quick",        "--quiet", "-o",
                                       path,        "--tile-heights", p.heights};
    calibrate.insert(calibrate.end(), p.args.begin(), p.args.end());
    auto c = tilepipe(calibrate);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_NE(c.out.find("  t_comp1 (" + p.kernel + ")"), std::string::npos) << c.out;
    const auto m = read_json(path);
    ASSERT_TRUE(m["compute"]["kernels"].contains(p.kernel)) << m["compute"].dump();
    const auto& samples = m["compute"]["kernels"][p.kernel]["samples"];
    ASSERT_EQ(samples.size(), 2u) << samples.dump();  // the two heights' tile shapes

    std::vector<std::string> plan{"plan", "--tile", p.tile, "--machine", path, "--json"};
    plan.insert(plan.end(), p.args.begin(), p.args.end());
    auto r = tilepipe(plan);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    double points = 1;
    for (const auto& e : j["tile"]) points *= e.get<double>();
    // The prediction's tile time is the measured cost per point at this very tile shape.
    const auto& step = j["step_time"];
    EXPECT_EQ(step["tile_points"].get<double>(), points);
    bool measured = false;
    for (const auto& s : samples) {
      if (s["tile_points"].get<double>() != points) continue;
      measured = true;
      // (alpha: t_comp adds the node's step barrier on several CPUs, node.tile_spread)
      EXPECT_NEAR(step["alpha_s"].get<double>(), points * s["t_comp1_ns"].get<double>() * 1e-9,
                  1e-6 * step["alpha_s"].get<double>());
      EXPECT_GE(step["t_comp_s"].get<double>(), step["alpha_s"].get<double>());
    }
    EXPECT_TRUE(measured) << "no sample of " << points << " points: " << samples.dump();
  }
  std::filesystem::remove(path);
}

// Without --tile-heights the calibration measures 16:extent and, below 16, the smallest legal
// height 2 and 8 (ADR 0031's heights for the choice): 5 tile shapes of one cross-section for
// wave2d 64x64, the smallest 2/64 of the largest, so the model never extends a sample below 16.
TEST(CalibrateKernelsCli, default_heights_reach_down_to_the_smallest_legal_height) {
  const auto path = temp_path("default-heights-machine.json");
  auto c = tilepipe({"calibrate", "--quick", "--quiet", "-o", path, "--kernel", "wave2d", "--size",
                     "64x64", "--nodes", "1", "--cpus", "1"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto m = read_json(path);
  std::filesystem::remove(path);
  const auto& samples = m["compute"]["kernels"]["wave2d"]["samples"];
  ASSERT_EQ(samples.size(), 5u) << samples.dump();  // heights 2, 8, 16, 32, 64
  std::set<double> points;
  for (const auto& s : samples) points.insert(s["tile_points"].get<double>());
  ASSERT_EQ(points.size(), 5u);
  EXPECT_EQ(*points.begin() * 32, *points.rbegin());
  EXPECT_EQ(*std::next(points.begin()) * 8, *points.rbegin());
}

TEST(CalibrateKernelsCli, sweep_runs_and_predicts_sor_and_sweep3d) {
  const std::vector<std::vector<std::string>> problems{
      {"--kernel", "sor2d", "--size", "48x48", "--param", "iterations=4", "--tile-heights", "8,16"},
      {"--kernel", "sweep3d", "--size", "6x6x32", "--param", "angles=3", "--tile-heights", "8,16"}};
  for (const auto& p : problems) {
    SCOPED_TRACE(p[1]);
    std::vector<std::string> args{
        "sweep",  "--nodes", "2",         "--repeat",          "1", "--sync", "block",
        "--json", "--quiet", "--schemes", "overlap+hyperplane"};
    args.insert(args.end(), p.begin(), p.end());
    auto r = tilepipe(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    std::set<std::int64_t> heights;
    for (const auto& o : j["results"]) {
      EXPECT_GT(o["predicted_s"].get<double>(), 0);
      if (!o["swept"].get<bool>()) continue;
      heights.insert(o["tile_height"].get<std::int64_t>());
      EXPECT_GT(o["measured_s"].get<double>(), 0);
    }
    EXPECT_EQ(heights, (std::set<std::int64_t>{8, 16}));
  }
}

TEST(CalibrateKernelsCli, simulate_counts_sweep3ds_sweeps_as_plan_does) {
  const std::vector<std::string> problem{
      "--kernel", "sweep3d",   "--size",
      "8x8x64",   "--param",   "angles=3",
      "--nodes",  "2",         "--tile",
      "16",       "--machine", TILEPIPE_SOURCE_DIR "/tests/data/machines/seed000-sci-cluster.json",
      "--json"};
  std::vector<std::string> plan{"plan"}, sim{"simulate"};
  plan.insert(plan.end(), problem.begin(), problem.end());
  sim.insert(sim.end(), problem.begin(), problem.end());
  auto p = tilepipe(plan);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto s = tilepipe(sim);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto pj = nlohmann::json::parse(p.out);
  const auto sj = nlohmann::json::parse(s.out);
  EXPECT_EQ(sj["sweeps"], 5);  // 4 pairs of octants (paired, the default) and the final copy
  EXPECT_DOUBLE_EQ(sj["predicted_s"].get<double>(), pj["predicted_s"].get<double>());
  EXPECT_GT(sj["simulated_s"].get<double>(), 4 * sj["simulated_sweep_s"].get<double>());
}

void write_fasta(const std::string& path, const std::string& name, std::size_t length,
                 unsigned seed) {
  static constexpr std::string_view amino = "ACDEFGHIKLMNPQRSTVWY";
  std::ofstream out(path);
  out << '>' << name << '\n';
  for (std::size_t i = 0; i < length; ++i) {
    seed = seed * 1103515245u + 12345u;
    out << amino[(seed >> 16) % amino.size()];
  }
  out << '\n';
}

TEST(CalibrateKernelsCli, align_tile_auto_runs_the_models_tile_with_the_same_result) {
  const auto machine = temp_path("sw-machine.json");
  const auto query = temp_path("q.fa");
  const auto target = temp_path("t.fa");
  write_fasta(query, "q", 900, 1);
  write_fasta(target, "t", 700, 2);
  auto c = tilepipe({"calibrate", "--quick", "--quiet", "-o", machine, "--kernel", "sw", "--size",
                     "900x700", "--nodes", "2"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  // align maps the target (dimension 2) to the pipeline, whichever extent is larger.
  auto plan = tilepipe({"plan", "--kernel", "sw", "--size", "900x700", "--nodes", "2", "--tile",
                        "auto", "--map-dim", "2", "--schedule", "overlap", "--grouping",
                        "hyperplane", "--machine", machine, "--json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto p = nlohmann::json::parse(plan.out);
  auto a = tilepipe({"align", query, target, "--nodes", "2", "--tile", "auto", "--machine", machine,
                     "--sync", "block", "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["chosen_by"], "model");
  EXPECT_EQ(j["tile"], p["tile"]);
  EXPECT_DOUBLE_EQ(j["predicted_s"].get<double>(), p["predicted_s"].get<double>());
  auto d = tilepipe({"align", query, target, "--nodes", "2", "--sync", "block", "--json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const auto k = nlohmann::json::parse(d.out);
  EXPECT_EQ(k["chosen_by"], "default");
  for (const char* field : {"score", "end_query", "end_target", "cigar", "query_start"}) {
    EXPECT_EQ(j[field], k[field]) << field;
  }
  // --cyclic auto: the factor `plan --cyclic auto` chooses (jointly with the tile), the same
  // alignment; with a given tile height, the factor plan chooses for that height.
  for (const char* tile : {"auto", "64"}) {
    auto pc = tilepipe({"plan",     "--kernel",   "sw",        "--size",     "900x700",
                        "--nodes",  "2",          "--tile",    tile,         "--map-dim",
                        "2",        "--schedule", "overlap",   "--grouping", "hyperplane",
                        "--cyclic", "auto",       "--machine", machine,      "--json"});
    ASSERT_EQ(pc.exit_code, 0) << pc.err;
    const auto pcj = nlohmann::json::parse(pc.out);
    auto ac = tilepipe({"align", query, target, "--nodes", "2", "--tile", tile, "--cyclic", "auto",
                        "--machine", machine, "--sync", "block", "--json"});
    ASSERT_EQ(ac.exit_code, 0) << ac.err;
    const auto acj = nlohmann::json::parse(ac.out);
    EXPECT_EQ(acj["chosen_by"], "model") << tile;
    EXPECT_EQ(acj["cyclic"], pcj["cyclic"]) << tile;
    EXPECT_EQ(acj["tile"], pcj["tile"]) << tile;
    EXPECT_DOUBLE_EQ(acj["predicted_s"].get<double>(), pcj["predicted_s"].get<double>()) << tile;
    for (const char* field : {"score", "end_query", "end_target", "cigar", "query_start"}) {
      EXPECT_EQ(acj[field], k[field]) << tile << ": " << field;
    }
  }
  // Either auto without the machine, or the machine without an auto, is refused before any work.
  auto no_machine_cyclic = tilepipe({"align", query, target, "--cyclic", "auto"});
  EXPECT_EQ(no_machine_cyclic.exit_code, 2);
  EXPECT_EQ(no_machine_cyclic.err,
            "tilepipe: error: --cyclic auto needs --machine FILE: the cost model chooses the "
            "factor from it (tilepipe calibrate --kernel sw --size QxT ...)\n");
  auto no_machine = tilepipe({"align", query, target, "--tile", "auto"});
  EXPECT_EQ(no_machine.exit_code, 2);
  EXPECT_EQ(no_machine.err,
            "tilepipe: error: --tile auto needs --machine FILE: the cost model chooses the tile "
            "from it (tilepipe calibrate --kernel sw --size QxT ...)\n");
  auto no_auto = tilepipe({"align", query, target, "--machine", machine});
  EXPECT_EQ(no_auto.exit_code, 2);
  EXPECT_EQ(no_auto.err,
            "tilepipe: error: --machine is for --tile auto or --cyclic auto (the model's choice): "
            "give one\n");
  for (const auto& f : {machine, query, target}) std::filesystem::remove(f);
}

}  // namespace
}  // namespace cli_calibrate_kernels
