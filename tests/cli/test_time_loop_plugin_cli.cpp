// One path for every kernel (docs/adr/0025): a plugin's kernel with a time loop and a negative
// dependence (tests/cli/plugins/relax.hpp) runs through `tilepipe run --plugin` bit for bit
// against its plain loop and `plan` shows its transformation; built-in kernels built as a
// plugin's report exactly what the built-in ones do.
#include "cli_test.hpp"
#include "plugins/relax.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_time_loop_plugin {

namespace {

using tp::test::cli::tilepipe;

std::string hex16(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

const char* const kTransformation = "(x1, x2) -> (x1, x1 + x2)";

TEST(TimeLoopPluginCli, relax1d_matches_its_plain_loop_on_ranks_and_threads) {
  const std::int64_t n = 61, sweeps = 9;
  const std::string expected = hex16(relax::checksum(relax::plain_loop(n, sweeps)));
  // Tiles 4 wide along the space, or 2 sweeps tall with the ranks across the space.
  for (const auto& [nodes, cpus, map_dim, tile] :
       {std::tuple{"1", "1", "2", "4"}, std::tuple{"2", "1", "2", "4"},
        std::tuple{"1", "2", "2", "4"}, std::tuple{"2", "2", "1", "2"}}) {
    auto r = tilepipe({"run",      "--plugin",  TP_PLUGIN_TIME_LOOP,
                       "--kernel", "relax1d",   "--size",
                       "61",       "--param",   "iterations=9",
                       "--nodes",  nodes,       "--cpus",
                       cpus,       "--map-dim", map_dim,
                       "--tile",   tile,        "--sync",
                       "block",    "--verify",  "--json"});
    ASSERT_EQ(r.exit_code, 0) << nodes << "x" << cpus << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["checksum"], expected) << nodes << "x" << cpus;
    EXPECT_EQ(j["verified"], true);
    EXPECT_EQ(j["size"], (std::vector<std::int64_t>{n}));
    EXPECT_EQ(j["space"], (std::vector<std::int64_t>{sweeps, n + sweeps - 1}));
    EXPECT_EQ(j["transformation"], kTransformation);
    EXPECT_EQ(j["params"], "iterations=9");
    EXPECT_EQ(j["points"], n * sweeps);
  }
  auto text =
      tilepipe({"run", "--plugin", TP_PLUGIN_TIME_LOOP, "--kernel", "relax1d", "--size", "61",
                "--param", "iterations=9", "--nodes", "2", "--tile", "3", "--sync", "block"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(std::string("  loop nest          9x61 (iterations=9), run as ") +
                          kTransformation + "\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  checksum           " + expected + "\n"), std::string::npos);
}

TEST(TimeLoopPluginCli, plan_shows_the_plugin_kernels_transformation) {
  auto r = tilepipe({"plan", "--plugin", TP_PLUGIN_TIME_LOOP, "--kernel", "relax1d", "--size", "61",
                     "--param", "iterations=9", "--nodes", "2", "--tile", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  loop nest          9x61\n  its dependences    0,1;1,-1;1,0\n"
                       "  transformation T   " +
                       std::string(kTransformation) + "  (rows 1,0;1,1)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  iteration space    9x69  (621 points)\n"), std::string::npos) << r.out;
  auto bad = tilepipe({"run", "--plugin", TP_PLUGIN_TIME_LOOP, "--kernel", "relax1d", "--size",
                       "61x3", "--param", "iterations=9"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "tilepipe: error: --kernel relax1d is 1-dimensional (the time loop comes from --param "
            "iterations) but --size 61x3 has 2 dimensions\n");
}

// calibrate measures a time-loop kernel's tiles (in its transformed space) and run --tile auto
// chooses a tile with them.
TEST(TimeLoopPluginCli, calibrate_measures_a_time_loop_kernel_and_tile_auto_uses_it) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tp_time_loop_machine_" + std::to_string(::getpid()) + ".json");
  auto c = tilepipe({"calibrate", "--quick", "--quiet", "-o", path.string(), "--plugin",
                     TP_PLUGIN_TIME_LOOP, "--kernel", "relax1d", "--size", "4000", "--param",
                     "iterations=16", "--nodes", "2", "--tile-heights", "16,64"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::ifstream in(path);
  const auto m = nlohmann::json::parse(in);
  ASSERT_TRUE(m["compute"]["kernels"].contains("relax1d")) << m["compute"].dump();
  EXPECT_EQ(m["compute"]["kernels"]["relax1d"]["samples"].size(), 2u);
  auto r = tilepipe({"run", "--plugin", TP_PLUGIN_TIME_LOOP, "--kernel", "relax1d", "--size",
                     "4000", "--param", "iterations=16", "--nodes", "2", "--machine", path.string(),
                     "--sync", "block", "--verify", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["chosen_by"], "model");
  EXPECT_EQ(j["verified"], true);
  EXPECT_EQ(j["checksum"], hex16(relax::checksum(relax::plain_loop(4000, 16))));
  std::filesystem::remove(path);
}

// Everything but times: the JSON of a built-in kernel and of the same type built as a plugin.
void expect_same_report(const std::vector<std::string>& args) {
  std::vector<std::string> builtin{"run"};
  builtin.insert(builtin.end(), args.begin(), args.end());
  std::vector<std::string> plugin = builtin;
  plugin.insert(plugin.begin() + 1, {"--plugin", TP_PLUGIN_TIME_LOOP});
  auto a = tilepipe(builtin);
  auto b = tilepipe(plugin);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto ja = nlohmann::ordered_json::parse(a.out);
  const auto jb = nlohmann::ordered_json::parse(b.out);
  std::vector<std::string> keys_a, keys_b;
  for (const auto& [k, v] : ja.items()) keys_a.push_back(k);
  for (const auto& [k, v] : jb.items()) keys_b.push_back(k);
  EXPECT_EQ(keys_a, keys_b);
  const std::set<std::string> timed{"date",   "seconds",      "seconds_per_sweep", "setup_s",
                                    "phases", "points_per_s", "hidden_share"};
  for (const auto& key : keys_a) {
    if (timed.count(key) > 0 || !jb.contains(key)) continue;
    if (key == "ranks") {
      ASSERT_EQ(ja[key].size(), jb[key].size());
      for (std::size_t r = 0; r < ja[key].size(); ++r) {
        for (const char* f : {"rank", "tiles", "points", "messages_sent", "bytes_sent"}) {
          EXPECT_EQ(ja[key][r][f], jb[key][r][f]) << f;
        }
      }
      continue;
    }
    EXPECT_EQ(ja[key], jb[key]) << key;
  }
}

TEST(TimeLoopPluginCli, builtin_kernels_built_as_a_plugin_report_the_same) {
  expect_same_report({"--kernel", "sor2d", "--size", "23x17", "--param", "iterations=4", "--param",
                      "omega=1.3", "--nodes", "2", "--tile", "3", "--sync", "block", "--verify",
                      "--json"});
  expect_same_report({"--kernel", "wave2d", "--size", "40x33", "--cpus", "2", "--tile", "8",
                      "--sweeps", "2", "--verify", "--json"});
}

}  // namespace

}  // namespace cli_time_loop_plugin
