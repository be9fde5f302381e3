// `tilepipe plan --machine`: predicted times, automatic choice (golden JSON), exact bad-input
// errors.
#include "cli_test.hpp"
#include "json_preamble.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_plan_model {

namespace {

using tp::test::cli::expect_refused;
using tp::test::cli::file_bytes;
using tp::test::cli::plan;
using tp::test::cli::read_json;
using tp::test::cli::tilepipe;
using tp::test::cli::with;

const std::string data_dir = std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/";
const std::string seed000 = data_dir + "machines/seed000-sci-cluster.json";
const std::string seed002 = data_dir + "machines/seed002-sci-smp-cluster.json";

/// Equal JSON, except that floating-point numbers may differ in the last bits (relative 1e-12).
void expect_json_near(const nlohmann::json& got, const nlohmann::json& want,
                      const std::string& at = "") {
  if (want.is_number_float() || got.is_number_float()) {
    ASSERT_TRUE(got.is_number()) << at;
    const double a = got.get<double>();
    const double b = want.get<double>();
    EXPECT_NEAR(a, b, 1e-12 * std::max(std::abs(a), std::abs(b))) << at;
    return;
  }
  ASSERT_EQ(got.type(), want.type()) << at;
  if (want.is_object()) {
    ASSERT_EQ(got.size(), want.size()) << at << ": " << got.dump();
    for (const auto& item : want.items()) {
      ASSERT_TRUE(got.contains(item.key())) << at << "." << item.key();
      expect_json_near(got[item.key()], item.value(), at + "." + item.key());
    }
  } else if (want.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << at;
    for (std::size_t i = 0; i < want.size(); ++i) {
      expect_json_near(got[i], want[i], at + "[" + std::to_string(i) + "]");
    }
  } else {
    EXPECT_EQ(got, want) << at;
  }
}

const std::vector<std::string> seed000_args = {"--kernel", "wave3d", "--size", "12x12x524288",
                                               "--nodes",  "9",      "--cpus", "1"};

TEST(PlanModelCli, machine_adds_the_prediction_and_keeps_the_plan_fields) {
  auto r = plan(
      with(seed000_args, {"--tile", "1024", "--machine", seed000, "--formula", "seeds", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = nlohmann::json::parse(r.out);
  // Every field of the plain plan is there with the same value.
  const auto plain = read_json(data_dir + "golden/plan_seed000_12x12x524288.json");
  for (const auto& item : plain.items()) EXPECT_EQ(j[item.key()], item.value()) << item.key();
  // Seed 000 formula (3) at z = 1024: 520 x (49.2 us + 16384 x 39.6 ns + 4 x 18.8 us).
  EXPECT_NEAR(j["predicted_s"].get<double>(), 520 * (49.2e-6 + 16384 * 39.6e-9 + 75.2e-6), 1e-12);
  EXPECT_EQ(j["chosen_by"], "user");
  EXPECT_EQ(j["machine"], "seed000-sci-cluster");
  EXPECT_EQ(j["step_time"]["face_bytes"], 2 * 4 * 1024 * 4);
  EXPECT_EQ(j["step_time"]["bound"], "compute");
  EXPECT_EQ(j["formula"], "seeds");
  EXPECT_EQ(j["edge_steps"], 0);
  EXPECT_TRUE(j["hop_s"].is_null());
}

TEST(PlanModelCli, the_default_formula_follows_the_executor) {
  const auto seeds = plan(
      with(seed000_args, {"--tile", "1024", "--machine", seed000, "--formula", "seeds", "--json"}));
  const auto executed =
      plan(with(seed000_args, {"--tile", "1024", "--machine", seed000, "--json"}));
  ASSERT_EQ(seeds.exit_code, 0) << seeds.err;
  ASSERT_EQ(executed.exit_code, 0) << executed.err;
  const auto s = nlohmann::json::parse(seeds.out);
  const auto e = nlohmann::json::parse(executed.out);
  EXPECT_EQ(e["formula"], "executed");
  // A hand-over between nodes is one hop: t_start + t_comm + t_comp (t_comm holds the bytes'
  // occupancy, the latency is the hop's); with hops the ends are the hops' (no edge steps).
  EXPECT_EQ(e["edge_steps"], 0);
  const auto& st = e["step_time"];
  const double t_comp = st["t_comp_s"].get<double>();
  const double step = e["step_s"].get<double>();
  ASSERT_FALSE(e["hop_s"].is_null());
  const double hop = e["hop_s"].get<double>();
  EXPECT_NEAR(hop, st["t_start_s"].get<double>() + st["t_comm_s"].get<double>() + t_comp, 1e-15);
  // The same step. On the 3 x 3 mesh the corner tile (2, 2, 511) is 511 steps along the
  // mapping dimension and 2 + 2 hand-overs between nodes after the first tile, then computes
  // (or its predecessor ends its step, step - hop after the corner's start).
  EXPECT_NEAR(step, s["step_s"].get<double>(), 1e-15);
  EXPECT_NEAR(e["predicted_s"].get<double>(), 511 * step + 4 * hop + std::max(t_comp, step - hop),
              1e-12);
  EXPECT_LT(e["predicted_s"].get<double>(), s["predicted_s"].get<double>());
  // The tables say which formula.
  const auto text = plan(with(seed000_args, {"--tile", "1024", "--machine", seed000}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(520 steps x 773.2 us, hand-overs between nodes as hops of"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("; executed formula)"), std::string::npos) << text.out;
}

TEST(PlanModelCli, sweeps_predict_the_repeated_sweeps_of_tilepipe_run) {
  // --sweeps T: T whole sweeps, every rank finishing one before any starts the next: T times one
  // sweep plus T - 1 times two barriers of ceil(log2 9) = 4 rounds of t_sync (75.2 us).
  auto one = plan(with(seed000_args, {"--tile", "1024", "--machine", seed000, "--json"}));
  auto four =
      plan(with(seed000_args, {"--tile", "1024", "--machine", seed000, "--sweeps", "4", "--json"}));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(four.exit_code, 0) << four.err;
  const auto j1 = nlohmann::json::parse(one.out);
  const auto j4 = nlohmann::json::parse(four.out);
  EXPECT_EQ(j4["sweeps"], 4);
  EXPECT_NEAR(j4["sweep_s"].get<double>(), j1["predicted_s"].get<double>(), 1e-12);
  EXPECT_NEAR(j4["between_sweeps_s"].get<double>(), 2 * 4 * 75.2e-6, 1e-12);
  EXPECT_NEAR(j4["predicted_s"].get<double>(),
              4 * j1["predicted_s"].get<double>() + 3 * 2 * 4 * 75.2e-6, 1e-12);
  // The simulation counts them the same way.
  auto sim = tilepipe({"simulate", "--kernel", "wave3d", "--size", "12x12x524288", "--nodes", "9",
                       "--tile", "1024", "--machine", seed000, "--sweeps", "4", "--json"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto js = nlohmann::json::parse(sim.out);
  EXPECT_NEAR(js["simulated_s"].get<double>(),
              4 * js["simulated_sweep_s"].get<double>() + 3 * 2 * 4 * 75.2e-6, 1e-9);
}

TEST(PlanModelCli, seed_000_auto_tile_matches_golden_json) {
  auto r = plan(
      with(seed000_args, {"--tile", "auto", "--machine", seed000, "--formula", "seeds", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["chosen_by"], "model");
  EXPECT_EQ(j["tile"], nlohmann::json::array({4, 4, 3641}));
  expect_json_near(tp::test::without_preamble(j, "plan"),
                   read_json(data_dir + "golden/plan_model_seed000_auto.json"));
}

TEST(PlanModelCli, seed_002_everything_auto_matches_golden_json) {
  auto r = plan({"--kernel", "wave3d", "--size", "16x16x65536", "--nodes", "8", "--cpus", "2",
                 "--tile", "auto", "--schedule", "auto", "--grouping", "auto", "--machine", seed002,
                 "--formula", "seeds", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schedule"], "overlap");
  EXPECT_EQ(j["grouping"], "hyperplane");
  for (const char* key : {"tile", "schedule", "grouping", "steps", "predicted_s", "reason"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  expect_json_near(tp::test::without_preamble(j, "plan"),
                   read_json(data_dir + "golden/plan_model_seed002_auto.json"));
}

TEST(PlanModelCli, table_shows_the_step_formula_and_the_prediction) {
  auto r = plan(with(seed000_args, {"--tile", "1024", "--machine", seed000, "--formula", "seeds"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("time steps         520"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step time          t_start + max(t_comp, t_comm) + t_sync = 773.2 us "
                       "(compute-bound)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("predicted time     402.1 ms (520 steps x 773.2 us; seeds formula)"),
            std::string::npos)
      << r.out;
}

TEST(PlanModelCli, comm_thread_and_subtiles) {
  auto r = plan({"--kernel", "wave3d", "--size", "16x16x65536", "--nodes", "8", "--cpus", "2",
                 "--tile", "1024", "--machine", seed002, "--comm-thread", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const double alpha = 16 * 1024 * 39.6e-9;
  EXPECT_NEAR(j["step_s"].get<double>(), (2 * alpha + 100e-6) / 2, 1e-15);
  EXPECT_TRUE(j["step_time"]["comm_thread"].get<bool>());
  r = plan({"--kernel", "wave3d", "--size", "16x16x65536", "--nodes", "8", "--cpus", "2", "--tile",
            "1024", "--grouping", "vertical", "--subtiles", "8", "--machine", seed002, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["step_time"]["subtiles"], 8);
  EXPECT_NEAR(j["step_time"]["t_comp_s"].get<double>(), alpha * 9 / 8 + 8 * 11e-6, 1e-15);
}

struct BadInput {
  std::vector<std::string> args;
  std::string message;
};

class PlanModelCliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(PlanModelCliBadInput, exits_2_with_one_line_naming_the_problem) {
  const auto& p = GetParam();
  expect_refused(plan(p.args), p.message);
}

/// A file under the temporary directory with the given text; returns its path.
std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = (std::filesystem::temp_directory_path() / ("tp_model_cli_" + name)).string();
  // Every test process writes it at start-up while others may read it: write a private file and
  // rename it into place (atomic), so that a reader never sees a truncated file.
  const auto mine = path + "." + std::to_string(::getpid());
  std::ofstream(mine) << text;
  std::filesystem::rename(mine, path);
  return path;
}

std::string seed002_without(const std::string& text_to_drop) {
  std::string s = file_bytes(seed002);
  s.erase(s.find(text_to_drop), text_to_drop.size());
  return s;
}

const std::string host_bound = data_dir + "machines/example-host-bound.json";
const std::string tmp = std::filesystem::temp_directory_path().string();

INSTANTIATE_TEST_SUITE_P(
    Cases, PlanModelCliBadInput,
    ::testing::Values(
        BadInput{with(seed000_args, {"--tile", "auto"}),
                 "--tile auto needs --machine FILE: the cost model chooses it from the machine's "
                 "parameters (write a machine file with `tilepipe calibrate`)"},
        BadInput{with(seed000_args, {"--tile", "64", "--schedule", "auto"}),
                 "--schedule auto needs --machine FILE: the cost model chooses it from the "
                 "machine's parameters (write a machine file with `tilepipe calibrate`)"},
        BadInput{with(seed000_args, {"--tile", "64", "--grouping", "auto"}),
                 "--grouping auto needs --machine FILE: the cost model chooses it from the "
                 "machine's parameters (write a machine file with `tilepipe calibrate`)"},
        BadInput{with(seed000_args, {"--tile", "64", "--comm-thread"}),
                 "--comm-thread needs --machine FILE: it only affects the predicted time"},
        BadInput{with(seed000_args, {"--tile", "64", "--formula", "seeds"}),
                 "--formula needs --machine FILE: it only affects the predicted time"},
        BadInput{with(seed000_args, {"--tile", "64", "--sweeps", "3"}),
                 "--sweeps needs --machine FILE: it only affects the predicted time"},
        BadInput{with(seed000_args, {"--tile", "64", "--machine", seed000, "--sweeps", "0"}),
                 "--sweeps: 0 must be >= 1"},
        BadInput{{"--kernel", "sweep3d", "--size", "4x4x32", "--nodes", "2", "--tile", "8",
                  "--machine", seed000, "--sweeps", "2"},
                 "--sweeps: sweep3d sets its own sweeps (tilepipe run refuses --sweeps for it "
                 "too)"},
        BadInput{with(seed000_args, {"--tile", "64", "--machine", seed000, "--formula", "papers"}),
                 "--formula: unknown formula 'papers' (choose executed|seeds)"},
        BadInput{with(seed000_args, {"--tile", "auto", "--machine", "/nonexistent/m.json"}),
                 "cannot open machine file '/nonexistent/m.json': No such file or directory"},
        BadInput{with(seed000_args, {"--tile", "auto", "--machine", tmp}),
                 "cannot read machine file '" + tmp + "': Is a directory"},
        BadInput{with(seed000_args, {"--tile", "auto", "--machine",
                                     temp_file("malformed.json", "{\"format\": \n")}),
                 "machine file '" + tmp +
                     "/tp_model_cli_malformed.json' is not valid JSON: parse error at line 2, "
                     "column 1: syntax error while parsing value - unexpected end of input; "
                     "expected '[', '{', or a literal"},
        BadInput{with(seed000_args,
                      {"--tile", "auto", "--machine",
                       temp_file("missing.json", seed002_without("\"t_sync_in_us\": 11"))}),
                 "machine file '" + tmp +
                     "/tp_model_cli_missing.json': missing field 'node.t_sync_in_us'"},
        BadInput{with(seed000_args, {"--tile", "auto", "--machine", host_bound}),
                 "machine file '" + host_bound +
                     "' was measured on a node of another type (CPU 'Example CPU @ 3.0GHz', 64 "
                     "cores, host 'example-host-that-is-not-this-one') than this one (CPU '" +
                     [] {
                       std::ifstream in("/proc/cpuinfo");
                       std::string line;
                       while (std::getline(in, line)) {
                         if (line.rfind("model name", 0) == 0) {
                           auto v = line.substr(line.find(':') + 1);
                           return v.substr(v.find_first_not_of(" \t"));
                         }
                       }
                       return std::string();
                     }() +
                     "', " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " cores, host '" +
                     [] {
                       char buf[256] = {};
                       gethostname(buf, sizeof buf - 1);
                       return std::string(buf);
                     }() +
                     "'): run `tilepipe calibrate` on a node of this type"},
        BadInput{with(seed000_args, {"--tile", "auto", "--machine", seed000, "--transport", "shm"}),
                 "machine file '" + seed000 +
                     "' is for transport 'sci-dma', not 'shm': run `tilepipe calibrate "
                     "--transport shm`"},
        BadInput{with(seed000_args, {"--tile", "1024", "--machine", seed000, "--comm-thread",
                                     "--schedule", "blocking"}),
                 "the communication thread (seed 002 5.4) is modelled for the overlap schedule "
                 "with hyperplane grouping only, not blocking + hyperplane"},
        BadInput{with(seed000_args, {"--tile", "1024", "--machine", seed000, "--subtiles", "0"}),
                 "--subtiles: 0 must be >= 1"},
        BadInput{with(seed000_args, {"--tile", "1024", "--machine", seed000, "--transport", "tcp"}),
                 "--transport: unknown transport 'tcp' (choose shm|mpi)"},
        BadInput{with(seed000_args, {"--tile", "auto", "--machine",
                                     temp_file("negative.json",
                                               [] {
                                                 std::string s = file_bytes(seed002);
                                                 s.replace(s.find("\"t_start_us\": 49.2"), 18,
                                                           "\"t_start_us\": -49.2");
                                                 return s;
                                               }())}),
                 "machine file '" + tmp +
                     "/tp_model_cli_negative.json': 'comm.t_start_us' is -49.2: it must be >= 0"}),
    [](const ::testing::TestParamInfo<BadInput>& param) {
      return "case" + std::to_string(param.index);
    });

}  // namespace

}  // namespace cli_plan_model
