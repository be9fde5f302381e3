// `tilepipe simulate`: the JSON fields and their consistency, progress on stderr, and one exact
// line with exit code 2 for each class of bad input.
#include "cli_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_simulate {

namespace {

using tp::test::cli::expect_refused;
using tp::test::cli::file_bytes;
using tp::test::cli::read_json;
using tp::test::cli::temp_path;
using tp::test::cli::tilepipe;
using tp::test::cli::with;

const std::string machines = std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/machines/";
const std::string seed000 = machines + "seed000-sci-cluster.json";

tp::test::ProcessResult simulate(std::vector<std::string> args) {
  return tilepipe("simulate", std::move(args), 60);
}

/// A copy of the seed 000 file with `network` added, in a temporary file removed on scope exit.
struct NetworkFile {
  std::string path;
  explicit NetworkFile(const std::string& network) {
    path = temp_path("sim-" + std::to_string(counter++) + ".json");
    std::string text = file_bytes(seed000);
    text.insert(text.rfind('}'), ", \"network\": " + network + "\n");
    std::ofstream(path) << text;
  }
  ~NetworkFile() { std::filesystem::remove(path); }
  static inline int counter = 0;
};

const std::vector<std::string> seed000_plan = {"--kernel", "wave3d", "--size", "12x12x65536",
                                               "--nodes",  "9",      "--tile", "1024"};

TEST(SimulateCli, json_has_the_simulated_and_predicted_time_and_per_rank_figures) {
  auto r = simulate(with(seed000_plan, {"--machine", seed000, "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no progress display: stderr is not a terminal here
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("steps"), 72);
  EXPECT_EQ(j.at("machine"), "seed000-sci-cluster");
  EXPECT_EQ(j.at("network"), "full-bisection");
  const double sim = j.at("simulated_s").get<double>();
  const double pred = j.at("predicted_s").get<double>();
  // Compute-bound: within the fill and drain of the closed formula's 72 steps.
  EXPECT_GT(sim, 0.9 * pred);
  EXPECT_LT(sim, 1.05 * pred);
  const auto& cp = j.at("critical_path");
  EXPECT_NEAR(cp.at("compute_s").get<double>() + cp.at("overhead_s").get<double>() +
                  cp.at("network_s").get<double>(),
              sim, 1e-12);
  EXPECT_EQ(cp.at("end_rank"), 8);
  // The chain's ranks and steps: from rank 0 at time 0 to rank 8 at the end, through successors.
  const auto& seg = cp.at("segments");
  ASSERT_GE(seg.size(), 2u);
  EXPECT_EQ(seg.front().at("rank"), 0);
  EXPECT_EQ(seg.front().at("first_step"), 0);
  EXPECT_EQ(seg.front().at("begin_s"), 0.0);
  EXPECT_EQ(seg.back().at("rank"), 8);
  EXPECT_EQ(seg.back().at("last_step"), 63);
  EXPECT_EQ(seg.back().at("end_s"), j.at("simulated_s"));
  for (std::size_t k = 1; k < seg.size(); ++k) {
    EXPECT_GT(seg[k].at("rank").get<int>(), seg[k - 1].at("rank").get<int>());
    EXPECT_GE(seg[k].at("begin_s").get<double>(), seg[k - 1].at("end_s").get<double>());
    EXPECT_LE(seg[k].at("first_step").get<int>(), seg[k].at("last_step").get<int>());
  }
  ASSERT_EQ(j.at("ranks").size(), 9u);
  for (const auto& x : j.at("ranks")) {
    EXPECT_NEAR(x.at("busy_s").get<double>() + x.at("idle_s").get<double>(), sim, 1e-12);
    EXPECT_EQ(x.at("steps"), 64);
  }
  EXPECT_EQ(j.at("ranks")[0].at("messages_sent"), 128);  // two neighbours, 64 steps
  EXPECT_EQ(j.at("ranks")[8].at("messages_sent"), 0);
}

TEST(SimulateCli, text_and_progress) {
  auto r = simulate(with(seed000_plan, {"--machine", seed000, "--progress"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  simulated time     "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  predicted time     "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  critical path      "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  critical ranks     rank 0 steps 0-"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("simulating: 100%"), std::string::npos) << r.err;
}

TEST(SimulateCli, a_slow_node_a_torus_and_shared_hosts_change_the_time) {
  auto base = simulate(with(seed000_plan, {"--machine", seed000, "--json"}));
  ASSERT_EQ(base.exit_code, 0) << base.err;
  NetworkFile slow(R"({"nodes": [{"node": 4, "compute_scale": 2}]})");
  auto s = simulate(with(seed000_plan, {"--machine", slow.path, "--json"}));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const double t0 = nlohmann::json::parse(base.out).at("simulated_s").get<double>();
  const auto js = nlohmann::json::parse(s.out);
  EXPECT_GT(js.at("simulated_s").get<double>(), 1.5 * t0);
  EXPECT_EQ(js.at("predicted_s"), nlohmann::json::parse(base.out).at("predicted_s"));
  NetworkFile torus(R"({"topology": "torus", "torus": [9], "link_bandwidth_bytes_per_s": 1e6})");
  auto t = simulate(with(seed000_plan, {"--machine", torus.path, "--json"}));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto jt = nlohmann::json::parse(t.out);
  EXPECT_EQ(jt.at("network"), "torus 9, links 1e+06 B/s");
  EXPECT_GT(jt.at("simulated_s").get<double>(), t0);
  // The 9 nodes three to a host of one core: every step's tiles share it, so slower; a core per
  // rank: the base time again.
  NetworkFile shared(R"({"hosts": {"ranks_per_host": 3, "cores": 1, "wake_us": 20}})");
  auto h = simulate(with(seed000_plan, {"--machine", shared.path, "--json"}));
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const auto jh = nlohmann::json::parse(h.out);
  EXPECT_EQ(jh.at("network"), "full-bisection, 3 rank(s) per host of 1 core(s) (wake-up 20 us)");
  EXPECT_GT(jh.at("simulated_s").get<double>(), 1.5 * t0);
  EXPECT_EQ(jh.at("predicted_s"), nlohmann::json::parse(base.out).at("predicted_s"));
  NetworkFile enough(R"({"hosts": {"ranks_per_host": 3, "cores": 3}})");
  auto e = simulate(with(seed000_plan, {"--machine", enough.path, "--json"}));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(nlohmann::json::parse(e.out).at("simulated_s"),
            nlohmann::json::parse(base.out).at("simulated_s"));
  // Bad input: one line naming the field, exit 2.
  NetworkFile bad(R"({"hosts": {"ranks_per_host": 3}})");
  auto b = simulate(with(seed000_plan, {"--machine", bad.path}));
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("missing field 'network.hosts.cores'"), std::string::npos) << b.err;
}

TEST(SimulateCli, trace_is_the_simulated_schedule_in_run_trace_format) {
  const auto path = temp_path("sim-trace.json");
  auto r = simulate(with(seed000_plan, {"--machine", seed000, "--trace", path, "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto trace = read_json(path);
  std::filesystem::remove(path);
  std::map<std::string, int> spans;
  std::set<int> ranks;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++spans[e.at("name").get<std::string>()];
    ranks.insert(e.at("pid").get<int>());
    EXPECT_EQ(e.at("tid"), 0);
  }
  EXPECT_EQ(ranks.size(), 9u);
  EXPECT_EQ(spans["compute"], 9 * 64);  // every rank step's tiles
  EXPECT_EQ(spans["send"], 8 * 64);     // every rank but the last, once per step (queued)
  EXPECT_EQ(spans.size(), 4u);          // compute, send, sync, wait
}

void expect_bad(const std::vector<std::string>& args, const std::string& line) {
  expect_refused(simulate(args), line);
}

TEST(SimulateCli, bad_input_is_one_line_and_exit_2) {
  expect_bad(seed000_plan,
             "--machine FILE is required: the simulation needs the machine's costs "
             "(tests/data/machines/ or tilepipe calibrate)");
  expect_bad(with(seed000_plan, {"--machine", "/nonexistent/m.json"}),
             "cannot open machine file '/nonexistent/m.json': No such file or directory");
  NetworkFile small(R"({"topology": "torus", "torus": [2, 2], "link_bandwidth_bytes_per_s": 1e9})");
  expect_bad(with(seed000_plan, {"--machine", small.path}),
             "the machine file's torus 2x2 has 4 nodes, fewer than the plan's 9");
  NetworkFile missing(R"({"topology": "torus", "link_bandwidth_bytes_per_s": 1e9})");
  expect_bad(with(seed000_plan, {"--machine", missing.path}),
             "machine file '" + missing.path +
                 "': missing field 'network.torus' (the torus extents, e.g. [8, 8, 8])");
  NetworkFile far(R"({"nodes": [{"node": 9, "compute_scale": 2}]})");
  expect_bad(with(seed000_plan, {"--machine", far.path}),
             "the machine file's network.nodes names node 9 but the plan has 9 nodes (0..8)");
  expect_bad({"--kernel", "wave3d", "--size", "128x128x100000000", "--nodes", "4096", "--cpus", "1",
              "--tile", "2", "--machine", seed000},
             "the plan is beyond the simulator's limits: more than 200000000 rank steps (nodes x "
             "time steps); use taller tiles or fewer nodes");
  expect_bad({"--kernel", "wave3d", "--size", "12x12x65536", "--nodes", "9", "--tile", "4",
              "--machine", seed000, "--trace", "/tmp/t.json"},
             "the schedule's spans are kept for at most 100000 rank steps; this plan has 147456 "
             "(fewer nodes or taller tiles)");
  expect_bad(with(seed000_plan, {"--machine", seed000, "--comm-thread", "--schedule", "blocking"}),
             "the communication thread (seed 002 5.4) is modelled for the overlap schedule with "
             "hyperplane grouping only, not blocking + hyperplane");
}

}  // namespace

}  // namespace cli_simulate
