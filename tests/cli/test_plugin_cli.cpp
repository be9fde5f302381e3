// Kernels as plugins: `tilepipe run|plan --plugin LIB --kernel NAME`, bit for bit against the
// kernels' plain loops on 2 forked ranks and on 1 rank x 2 CPUs, the kernel's parameters and help,
// and one line, exit 2, for each plugin that cannot be used.
#include "03_lcs/lcs.hpp"
#include "cli_test.hpp"

#include <tilepipe/support/npy.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_plugin {

namespace {

using tp::test::cli::read_json;
using tp::test::cli::temp_path;
using tp::test::cli::tilepipe;

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// examples/02_recurrence's plain loop: the (n+1) x (n+1) array, A = ((7i + 13j) mod 101) / 101 on
/// the border.
std::vector<double> recurrence_array(std::int64_t n1, std::int64_t n2) {
  const auto w = static_cast<std::size_t>(n2 + 1);
  std::vector<double> a(static_cast<std::size_t>(n1 + 1) * w);
  const auto border = [](std::int64_t i, std::int64_t j) {
    return static_cast<double>((7 * i + 13 * j) % 101) / 101.0;
  };
  for (std::size_t i = 0; i <= static_cast<std::size_t>(n1); ++i)
    a[i * w] = border(static_cast<std::int64_t>(i), 0);
  for (std::size_t j = 0; j < w; ++j) a[j] = border(0, static_cast<std::int64_t>(j));
  for (std::size_t i = 1; i <= static_cast<std::size_t>(n1); ++i) {
    for (std::size_t j = 1; j < w; ++j)
      a[i * w + j] = a[(i - 1) * w + j] + a[i * w + j - 1] - a[(i - 1) * w + j - 1];
  }
  return a;
}

std::string one_line_error(const tp::test::ProcessResult& r) {
  const auto lines = tp::test::lines_of(r.err);
  EXPECT_EQ(lines.size(), 1u) << r.err;
  return lines.empty() ? std::string() : lines.front();
}

TEST(PluginCli, recurrence_matches_its_plain_loop_on_ranks_and_threads) {
  const std::int64_t n1 = 97, n2 = 83;
  const auto a = recurrence_array(n1, n2);
  const auto w = static_cast<std::size_t>(n2 + 1);
  std::uint64_t sum = 0;
  std::vector<double> interior;
  for (std::size_t i = 1; i <= static_cast<std::size_t>(n1); ++i) {
    for (std::size_t j = 1; j < w; ++j) {
      sum += std::bit_cast<std::uint64_t>(a[i * w + j]);
      interior.push_back(a[i * w + j]);
    }
  }
  const std::string npy = temp_path("plugin.npy");
  for (const auto& [nodes, cpus, sweeps] : {std::tuple{"2", "1", "1"}, std::tuple{"1", "2", "2"}}) {
    std::filesystem::remove(npy);
    auto r = tilepipe({"run",      "--plugin",   TP_PLUGIN_RECURRENCE,
                       "--kernel", "recurrence", "--size",
                       "97x83",    "--nodes",    nodes,
                       "--cpus",   cpus,         "--tile",
                       "16",       "--sweeps",   sweeps,
                       "--sync",   "block",      "--verify",
                       "--json",   "--output",   npy});
    ASSERT_EQ(r.exit_code, 0) << nodes << "x" << cpus << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["kernel"], "recurrence");
    EXPECT_EQ(j["nodes"], std::stoi(nodes));
    EXPECT_EQ(j["cpus"], std::stoi(cpus));
    EXPECT_EQ(j["verified"], true);
    EXPECT_EQ(j["checksum"], hex(sum));
    auto array = tp::read_npy(npy);
    ASSERT_TRUE(array) << array.error().message;
    EXPECT_EQ(array->dtype, "<f8");
    EXPECT_EQ(array->shape, (std::vector<std::int64_t>{n1, n2}));
    ASSERT_EQ(array->data.size(), interior.size() * sizeof(double));
    EXPECT_EQ(std::memcmp(array->data.data(), interior.data(), array->data.size()), 0);
  }
  std::filesystem::remove(npy);
}

TEST(PluginCli, frontier_lcs_matches_its_plain_loop_on_ranks_and_threads) {
  const auto expected = lcs::Lcs::format_result(lcs::plain_loop(211, 173, 5, 3));
  for (const auto& [nodes, cpus] : {std::pair{"2", "1"}, std::pair{"1", "2"}}) {
    // Two plugins loaded side by side, each with its own table.
    auto r = tilepipe({"run",        "--plugin",    TP_PLUGIN_RECURRENCE,
                       "--plugin",   TP_PLUGIN_LCS, "--kernel",
                       "lcs",        "--size",      "211x173",
                       "--param",    "seed=5",      "--param",
                       "alphabet=3", "--nodes",     nodes,
                       "--cpus",     cpus,          "--tile",
                       "32",         "--sync",      "block",
                       "--verify",   "--json"});
    ASSERT_EQ(r.exit_code, 0) << nodes << "x" << cpus << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["result"], expected);
    EXPECT_EQ(j["params"], "seed=5, alphabet=3");
    EXPECT_EQ(j["verified"], true);
    EXPECT_FALSE(j.contains("checksum"));
  }
}

TEST(PluginCli, parameters_reach_the_kernel_and_help_lists_them) {
  // The scaled kernel's plain loop: A[i][j] = scale * A[i-1][j] + A[i][j-1] + offset, int64
  // wrapping, A = i + 2j on the border.
  const std::int64_t n = 40, scale = 2, offset = 5;
  std::vector<std::uint64_t> a(static_cast<std::size_t>((n + 1) * (n + 1)));
  const auto at = [&](std::int64_t i, std::int64_t j) -> std::uint64_t& {
    return a[static_cast<std::size_t>(i * (n + 1) + j)];
  };
  std::uint64_t sum = 0;
  for (std::int64_t i = 0; i <= n; ++i) {
    for (std::int64_t j = 0; j <= n; ++j) {
      if (i == 0 || j == 0) {
        at(i, j) = static_cast<std::uint64_t>(i + 2 * j);
        continue;
      }
      at(i, j) = static_cast<std::uint64_t>(scale) * at(i - 1, j) + at(i, j - 1) +
                 static_cast<std::uint64_t>(offset);
      sum += at(i, j);
    }
  }
  auto r =
      tilepipe({"run",      "--plugin", TP_PLUGIN_TEST, "--kernel", "scaled", "--size",  "40x40",
                "--nodes",  "2",        "--cpus",       "1",        "--tile", "8",       "--param",
                "offset=5", "--param",  "scale=2",      "--sync",   "block",  "--verify"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  parameters         scale=2, offset=5, throw_row=0, own=0\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("  parameters "), r.out.rfind("  parameters ")) << r.out;  // once
  EXPECT_NE(r.out.find("  checksum           " + hex(sum) + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verified           yes (bit for bit)"), std::string::npos);

  auto help = tilepipe({"run", "--plugin", TP_PLUGIN_TEST, "--kernel", "scaled", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("Kernel 'scaled' (resident, 2 dimensions) parameters, --param "
                          "NAME=VALUE:\n  scale (an integer, default 3): the factor of the point "
                          "above\n  offset (an integer, default 1): added at every point\n"),
            std::string::npos)
      << help.out;
  auto kernels = tilepipe({"plan", "--plugin", TP_PLUGIN_TEST, "--help"});
  ASSERT_EQ(kernels.exit_code, 0) << kernels.err;
  EXPECT_NE(kernels.out.find("Kernels of the plugin(s): scaled|recurrence_b"), std::string::npos)
      << kernels.out;
}

TEST(PluginCli, plan_takes_a_plugins_kernel) {
  auto r = tilepipe({"plan", "--plugin", TP_PLUGIN_RECURRENCE, "--kernel", "recurrence", "--size",
                     "100x60", "--nodes", "2", "--cpus", "1", "--tile", "10", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel"], "recurrence");
  EXPECT_EQ(j["tile_space"], (std::vector<int>{10, 2}));
  EXPECT_EQ(j["steps"], 12);
  EXPECT_EQ(j["legal"], true);
}

TEST(PluginCli, calibrate_measures_a_plugins_kernel_and_run_and_sweep_use_it) {
  const auto path = temp_path("plugin_machine.json");
  auto c = tilepipe({"calibrate", "--quick", "--quiet", "-o", path, "--plugin", TP_PLUGIN_TEST,
                     "--kernel", "scaled", "--param", "scale=2", "--size", "256x256", "--nodes",
                     "2", "--tile-heights", "16:64"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto m = read_json(path);
  ASSERT_TRUE(m["compute"]["kernels"].contains("scaled")) << m["compute"].dump();
  EXPECT_GE(m["compute"]["kernels"]["scaled"]["samples"].size(), 2u);
  auto r = tilepipe({"run", "--plugin", TP_PLUGIN_TEST, "--kernel", "scaled", "--param", "scale=2",
                     "--size", "256x256", "--nodes", "2", "--cpus", "1", "--machine", path,
                     "--sync", "block", "--verify", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["chosen_by"], "model");
  EXPECT_EQ(j["verified"], true);

  auto sweep = tilepipe({"sweep",    "--plugin",  TP_PLUGIN_TEST,
                         "--kernel", "scaled",    "--param",
                         "scale=2",  "--size",    "64x256",
                         "--nodes",  "2",         "--tile-heights",
                         "16:32",    "--schemes", "overlap+hyperplane",
                         "--repeat", "1",         "--sync",
                         "block",    "--machine", path,
                         "--quiet",  "--json"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const auto points = nlohmann::json::parse(sweep.out)["results"];
  ASSERT_TRUE(points.is_array());
  std::set<std::int64_t> heights;
  for (const auto& o : points) {
    if (!o["swept"].get<bool>()) continue;
    heights.insert(o["tile_height"].get<std::int64_t>());
    EXPECT_GT(o["measured_s"].get<double>(), 0);
  }
  EXPECT_EQ(heights, (std::set<std::int64_t>{16, 32}));
  std::filesystem::remove(path);
  // A kernel that passes only faces between its tiles has its probe too (a row of tiles).
  auto lcs =
      tilepipe({"calibrate", "--quick", "--quiet", "-o", path, "--plugin", TP_PLUGIN_LCS,
                "--kernel", "lcs", "--size", "256x256", "--nodes", "2", "--tile-heights", "16,64"});
  ASSERT_EQ(lcs.exit_code, 0) << lcs.err;
  std::ifstream lcs_in(path);
  const auto lm = nlohmann::json::parse(lcs_in);
  ASSERT_TRUE(lm["compute"]["kernels"].contains("lcs")) << lm["compute"].dump();
  EXPECT_EQ(lm["compute"]["kernels"]["lcs"]["samples"].size(), 2u);
  std::filesystem::remove(path);
}

TEST(PluginCli, each_unusable_plugin_is_one_line_and_exit_2) {
  const std::string test = TP_PLUGIN_TEST;
  const std::string rec = TP_PLUGIN_RECURRENCE;
  const auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    for (const char* a : {"--size", "40x40", "--nodes", "2", "--cpus", "1"}) args.push_back(a);
    return tilepipe(args);
  };
  struct Case {
    std::vector<std::string> args;
    std::string line;
  };
  const std::string missing = "/nonexistent/libmine.so";
  const std::vector<Case> cases{
      {{"--plugin", missing, "--kernel", "k"},
       "tilepipe: error: --plugin " + missing + ": does not load: " + missing +
           ": cannot open shared object file: No such file or directory"},
      {{"--plugin", TP_PLUGIN_NO_SYMBOL, "--kernel", "k"},
       std::string("tilepipe: error: --plugin ") + TP_PLUGIN_NO_SYMBOL +
           ": is not a tilepipe plugin: it lacks the symbol tilepipe_plugin_table (built with "
           "TILEPIPE_PLUGIN_KERNEL from tilepipe/plugin.hpp?)"},
      {{"--plugin", TP_PLUGIN_WRONG_ABI, "--kernel", "k"},
       std::string("tilepipe: error: --plugin ") + TP_PLUGIN_WRONG_ABI +
           ": was built for plugin ABI version 1005, this tilepipe has version 5 (rebuild the "
           "plugin against this tilepipe)"},
      {{"--plugin", test, "--kernel", "nope"},
       "tilepipe: error: --kernel 'nope' is not a kernel of " + test +
           " (it has scaled|recurrence_b)"},
      {{"--plugin", test},
       "tilepipe: error: --kernel is required with --plugin (it has "
       "scaled|recurrence_b)"},
      {{"--plugin", rec, "--plugin", rec, "--kernel", "recurrence"},
       "tilepipe: error: --plugin " + rec + ": kernel 'recurrence' is registered already (from " +
           rec + ")"},
      {{"--plugin", test, "--kernel", "scaled", "--param", "bogus=1"},
       "tilepipe: error: --param bogus: unknown parameter (choose scale, offset, throw_row, own)"},
      {{"--plugin", test, "--kernel", "scaled", "--param", "scale=x"}, ""},
      {{"--plugin", test, "--kernel", "scaled", "--param", "scale=-1"},
       "tilepipe: error: scale must be >= 0"},
      {{"--plugin", TP_PLUGIN_LCS, "--kernel", "lcs", "--output", "x.npy"},
       "tilepipe: error: --output needs a kernel that keeps its array (this one passes only "
       "faces between its tiles)"},
  };
  for (const auto& c : cases) {
    auto r = run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[1] << ": " << r.err;
    const std::string line = one_line_error(r);
    if (!c.line.empty()) {
      EXPECT_EQ(line, c.line);
    }
    EXPECT_EQ(line.rfind("tilepipe: error: ", 0), 0u) << line;
  }
  EXPECT_FALSE(std::filesystem::exists("x.npy"));
}

TEST(PluginCli, a_kernel_that_throws_exits_1_naming_rank_and_tile) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tp_plugin_throw_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto npy = dir / "a.npy";
  auto r = tilepipe({"run", "--plugin", TP_PLUGIN_TEST, "--kernel", "scaled", "--size", "40x40",
                     "--nodes", "2", "--cpus", "1", "--tile", "8", "--param", "throw_row=40",
                     "--sync", "block", "--output", npy.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string line = one_line_error(r);
  EXPECT_TRUE(std::regex_match(
      line,
      std::regex(R"(tilepipe: error: \[rank [01]\] tile at \(\d+, \d+\): .*row 40 is cursed)")))
      << line;
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "no output file, no temporary left behind";
  std::filesystem::remove_all(dir);
}

}  // namespace

}  // namespace cli_plugin
