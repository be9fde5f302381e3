// The block-cyclic mapping end to end (ADR 0018): `tilepipe run --cyclic` bit for bit against the
// plain loop on the executor's matrix (wave2d/wave3d, both schedules and groupings, copied and
// direct faces, 1-3 ranks x 1-2 CPUs, factors 1-3), the plan's factor and the refusals; --output
// and --input with cyclic plans against the block plan's files, byte for byte.
#include "cli_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_cyclic {

namespace {

using tp::test::cli::tilepipe;

/// `run` followed by `args`.
std::vector<std::string> with_run(const std::vector<std::string>& args) {
  return tp::test::cli::with({"run"}, args);
}

struct Case {
  const char* kernel;
  const char* size;
  const char* tile;
};

TEST(CyclicCli, runs_bit_for_bit_on_the_executor_matrix) {
  const char* schedules[] = {"overlap", "blocking"};
  const char* groupings[] = {"hyperplane", "vertical"};
  const char* faces[] = {"direct", "copy"};
  int variant = 0;
  for (const Case& c : {Case{"wave2d", "40x48", "6"}, Case{"wave3d", "20x14x24", "6"}}) {
    std::string checksum;
    for (const char* factor : {"1", "2", "3"}) {
      for (const char* nodes : {"1", "2", "3"}) {
        for (const char* cpus : {"1", "2"}) {
          // The scheme and face mode rotate over the 8 combinations, so each factor meets all.
          const int v = variant++;
          const std::string cyclic = std::string(c.kernel) == "wave3d" && std::string(factor) == "3"
                                         ? "3x1"
                                         : std::string(factor);
          auto r = tilepipe({"run",
                             "--kernel",
                             c.kernel,
                             "--size",
                             c.size,
                             "--tile",
                             c.tile,
                             "--nodes",
                             nodes,
                             "--cpus",
                             cpus,
                             "--cyclic",
                             cyclic,
                             "--schedule",
                             schedules[v % 2],
                             "--grouping",
                             groupings[(v / 2) % 2],
                             "--faces",
                             faces[(v / 4) % 2],
                             "--sync",
                             "block",
                             "--verify",
                             "--json"});
          const std::string what = std::string(c.kernel) + " cyclic " + cyclic + " on " + nodes +
                                   "x" + cpus + " " + schedules[v % 2] + " " +
                                   groupings[(v / 2) % 2] + " " + faces[(v / 4) % 2];
          ASSERT_EQ(r.exit_code, 0) << what << ": " << r.err;
          const auto j = nlohmann::json::parse(r.out);
          EXPECT_EQ(j["verified"], true) << what;
          const auto factors = j["cyclic"].get<std::vector<int>>();
          EXPECT_EQ(factors.front(), std::stoi(factor)) << what;
          if (checksum.empty()) checksum = j["checksum"];
          EXPECT_EQ(j["checksum"], checksum) << what;
          // The plan's step count is what the run reports.
          auto p = tilepipe({"plan", "--kernel", c.kernel, "--size", c.size, "--tile", c.tile,
                             "--nodes", nodes, "--cpus", cpus, "--cyclic", cyclic, "--schedule",
                             schedules[v % 2], "--grouping", groupings[(v / 2) % 2], "--json"});
          ASSERT_EQ(p.exit_code, 0) << what << ": " << p.err;
          EXPECT_EQ(nlohmann::json::parse(p.out)["steps"], j["steps"]) << what;
        }
      }
    }
  }
}

// The communication thread's pipeline on a rank slab of one part per cycle (ADR 0028): factors
// 1-3 on 2 ranks x 2 CPUs, copied and direct faces, verified and the block plan's checksum.
TEST(CyclicCli, the_comm_thread_runs_on_the_slabs_parts) {
  std::string checksum;
  for (const char* factor : {"1", "2", "3"}) {
    for (const char* faces : {"copy", "direct"}) {
      auto r = tilepipe({"run",      "--kernel",      "wave2d",  "--size", "60x48",  "--tile",
                         "6",        "--nodes",       "2",       "--cpus", "2",      "--cyclic",
                         factor,     "--comm-thread", "--faces", faces,    "--sync", "block",
                         "--verify", "--json"});
      const std::string what = std::string("cyclic ") + factor + " " + faces;
      ASSERT_EQ(r.exit_code, 0) << what << ": " << r.err;
      const auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["verified"], true) << what;
      if (checksum.empty()) checksum = j["checksum"];
      EXPECT_EQ(j["checksum"], checksum) << what;
    }
  }
}

TEST(CyclicCli, the_wrap_from_the_last_rank_to_the_first_is_a_message) {
  // 2 ranks x 1 CPU, 2 cycles: rank 0 receives the faces of rank 1's first cycle.
  auto r = tilepipe({"run", "--kernel", "wave2d", "--size", "16x64", "--tile", "8", "--nodes", "2",
                     "--cyclic", "2", "--faces", "copy", "--sync", "block", "--verify", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verified"], true);
  EXPECT_EQ(j["steps"], 18);
  EXPECT_EQ(j["cyclic"], nlohmann::json::array({2}));
  auto p = tilepipe({"plan", "--kernel", "wave2d", "--size", "16x64", "--tile", "8", "--nodes", "2",
                     "--cyclic", "2"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("  cyclic             2 (rows of tiles per CPU, block-cyclic)\n"),
            std::string::npos)
      << p.out;
}

TEST(CyclicCli, simulate_runs_the_cyclic_schedule_with_the_wrap) {
  // 4 rows of 8 tiles on 2 ranks, 2 cycles: rank 0 sends both its rows' faces (16), rank 1 its
  // first row's over the wrap to rank 0 (8); every rank runs its 16 tiles in 16 steps.
  auto r = tilepipe(
      {"simulate", "--kernel", "wave2d", "--size", "16x64", "--tile", "8", "--nodes", "2",
       "--cyclic", "2", "--json", "--machine",
       std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/machines/seed000-sci-cluster.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cyclic"], nlohmann::json::array({2}));
  EXPECT_EQ(j["steps"], 18);
  ASSERT_EQ(j["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"][0]["messages_sent"], 16);
  EXPECT_EQ(j["ranks"][1]["messages_sent"], 8);
  EXPECT_EQ(j["ranks"][0]["steps"], 16);
  EXPECT_EQ(j["ranks"][1]["steps"], 16);
  EXPECT_GT(j["simulated_s"].get<double>(), 0);
}

TEST(CyclicCli, auto_chooses_the_factor_with_the_model_and_reports_it) {
  // 8192 x 1024 mapped along 1024 on 16 nodes, tile 128: 8 tiles per row against a fill of 30
  // steps; the model's choice is the JSON's cyclic field and the factors of the reason.
  const std::string machine =
      std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/machines/seed000-sci-cluster.json";
  const std::vector<std::string> args = {"--kernel",  "wave2d",    "--size", "8192x1024", "--tile",
                                         "128",       "--map-dim", "2",      "--nodes",   "16",
                                         "--machine", machine,     "--json"};
  std::vector<std::string> autos = {"plan", "--cyclic", "auto"};
  autos.insert(autos.end(), args.begin(), args.end());
  auto r = tilepipe(autos);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto chosen = j["cyclic"].get<std::vector<int>>();
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_NE(j["reason"].get<std::string>().find("with cyclic factors " + std::to_string(chosen[0])),
            std::string::npos)
      << j["reason"];
  // No factor 1..8 is predicted faster than the one chosen.
  for (int c = 1; c <= 8; ++c) {
    std::vector<std::string> given = {"plan", "--cyclic", std::to_string(c)};
    given.insert(given.end(), args.begin(), args.end());
    auto g = tilepipe(given);
    ASSERT_EQ(g.exit_code, 0) << g.err;
    EXPECT_GE(nlohmann::json::parse(g.out)["predicted_s"].get<double>(),
              j["predicted_s"].get<double>())
        << c;
  }
}

TEST(CyclicCli, bad_factors_are_one_line_and_exit_2) {
  const std::vector<std::string> base = {"--kernel", "wave2d", "--size",  "4x64",
                                         "--tile",   "8",      "--nodes", "2"};
  const auto with = [&](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.end(), base.begin(), base.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return tilepipe(head);
  };
  struct Bad {
    std::vector<std::string> cmd;
    std::vector<std::string> extra;
    std::string line;
  };
  const std::vector<Bad> cases = {
      {{"plan"}, {"--cyclic", "0"}, "tilepipe: error: --cyclic dimension 1: 0 must be >= 1\n"},
      {{"run"},
       {"--cyclic", "3"},
       "tilepipe: error: --cyclic factor 3 along dimension 1 is larger than the rows allow: 2 "
       "rows of tiles over 2 CPUs fill at most 1 cycles\n"},
      {{"plan"},
       {"--cyclic", "2x2"},
       "tilepipe: error: --cyclic 2x2 has 2 factors; give one, or one per non-mapping dimension "
       "(1 for a 2-dimensional space)\n"},
      {{"plan"},
       {"--cyclic", "auto"},
       "tilepipe: error: --cyclic auto needs --machine FILE: the cost model chooses it from the "
       "machine's parameters (write a machine file with `tilepipe calibrate`)\n"},
      {{"plan"}, {"--cyclic", "3x0"}, "tilepipe: error: --cyclic dimension 2: 0 must be >= 1\n"},
  };
  for (const auto& b : cases) {
    auto r = with(b.cmd, b.extra);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, b.line);
  }
  // align: the same rules along the query (60 rows of 9 over 2 ranks x 1 CPU).
  const std::string fa = std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/fasta";
  const std::vector<std::string> pair = {fa + "/protein_query.fa", fa + "/protein_target.fa"};
  auto zero = tilepipe("align", tp::test::cli::with(pair, {"--nodes", "2", "--cyclic", "0"}));
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.err, "tilepipe: error: --cyclic dimension 1: 0 must be >= 1\n");
  auto many = tilepipe(
      "align", tp::test::cli::with(pair, {"--nodes", "2", "--tile", "9", "--cyclic", "100"}));
  EXPECT_EQ(many.exit_code, 2);
  EXPECT_EQ(many.err,
            "tilepipe: error: --cyclic factor 100 along dimension 1 is larger than the rows allow: "
            "60 rows of tiles over 2 CPUs fill at most 30 cycles\n");
}

// Frontier kernels (only faces travel): a rank's cycles change which tiles it runs, and its result
// is the merge over all of them. Smith-Waterman on 1-3 ranks x 1-2 CPUs with factors 2-3: the
// score, its end (the tie rule's) and the traceback's CIGAR are the one-process alignment's.
TEST(CyclicCli, align_with_cycles_equals_one_process) {
  const std::string fa = std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/fasta";
  const std::vector<std::string> pair = {fa + "/protein_query.fa", fa + "/protein_target.fa"};
  auto one = tilepipe("align", tp::test::cli::with(pair, {"--json"}));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto expected = nlohmann::json::parse(one.out);
  int variant = 0;
  for (const char* factor : {"2", "3"}) {
    for (const char* nodes : {"1", "2", "3"}) {
      for (const char* cpus : {"1", "2"}) {
        const int v = variant++;
        const char* schedule = v % 2 ? "blocking" : "overlap";
        const char* grouping = (v / 2) % 2 ? "vertical" : "hyperplane";
        const std::string what = std::string("cyclic ") + factor + " on " + nodes + "x" + cpus +
                                 " " + schedule + " " + grouping;
        auto r = tilepipe("align", tp::test::cli::with(
                                       pair, {"--json", "--nodes", nodes, "--cpus", cpus, "--tile",
                                              "9", "--cyclic", factor, "--schedule", schedule,
                                              "--grouping", grouping, "--sync", "block"}));
        ASSERT_EQ(r.exit_code, 0) << what << ": " << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["cyclic"], nlohmann::json::array({std::stoi(factor)})) << what;
        for (const char* key : {"score", "end_query", "end_target", "query_start", "target_start",
                                "cigar", "identity"}) {
          EXPECT_EQ(j[key], expected[key]) << what << ": " << key;
        }
      }
    }
  }
  // The text output names the factor; a search (several records, --top) refuses it.
  auto text = tilepipe("align", tp::test::cli::with(pair, {"--nodes", "2", "--cyclic", "2",
                                                           "--tile", "9", "--sync", "block"}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\ncyclic: 2 (rows of tiles per CPU, block-cyclic)\n"), std::string::npos)
      << text.out;
  auto search = tilepipe("align", tp::test::cli::with(pair, {"--top", "1", "--cyclic", "2"}));
  EXPECT_EQ(search.exit_code, 2);
  EXPECT_EQ(search.err,
            "tilepipe: error: --cyclic shapes one pair's run: a search (--top, or files of "
            "several records) chooses its own\n");
}

/// A fresh directory per test.
class CyclicArrays : public tp::test::cli::ScratchDir {};

// A frontier kernel of the user's (examples/03_lcs) and one with output values (sor2d, whose
// --output is the last sweep's plane: one box per cycle of a rank's tiles): bit for bit the plain
// loop (--verify) and the block plan's file on 1-3 ranks x 1-2 CPUs with factors 2-3.
TEST_F(CyclicArrays, frontier_kernels_equal_the_plain_loop_and_the_block_file) {
  const std::vector<std::string> lcs = {"--plugin", TP_PLUGIN_LCS, "--kernel", "lcs",    "--size",
                                        "61x53",    "--param",     "seed=5",   "--tile", "4"};
  const std::vector<std::string> sor = {"--kernel", "sor2d",        "--size", "13x11",
                                        "--param",  "iterations=5", "--tile", "2"};
  const std::string ref = at("sor_ref.npy");
  auto b = tilepipe(tp::test::cli::with(with_run(sor), {"--sync", "block", "--output", ref}));
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto l = tilepipe(tp::test::cli::with(with_run(lcs), {"--sync", "block", "--json"}));
  ASSERT_EQ(l.exit_code, 0) << l.err;
  const auto lcs_result = nlohmann::json::parse(l.out)["result"];
  int variant = 0;
  int ran = 0;
  for (const char* factor : {"2", "3"}) {
    for (const char* nodes : {"1", "2", "3"}) {
      for (const char* cpus : {"1", "2"}) {
        const int v = variant++;
        const std::vector<std::string> mesh = {
            "--nodes",  nodes,   "--cpus",     cpus,
            "--sync",   "block", "--schedule", v % 2 ? "blocking" : "overlap",
            "--verify", "--json"};
        const std::string what = std::string("cyclic ") + factor + " on " + nodes + "x" + cpus;
        auto r = tilepipe(
            tp::test::cli::with(with_run(lcs), tp::test::cli::with(mesh, {"--cyclic", factor})));
        if (r.exit_code == 2 && r.err.find("larger than the rows allow") != std::string::npos) {
          continue;
        }
        ++ran;
        ASSERT_EQ(r.exit_code, 0) << "lcs " << what << ": " << r.err;
        auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["verified"], true) << "lcs " << what;
        EXPECT_EQ(j["result"], lcs_result) << "lcs " << what;
        const std::string out = at("sor.npy");
        auto s = tilepipe(tp::test::cli::with(
            with_run(sor), tp::test::cli::with(mesh, {"--cyclic", factor, "--output", out})));
        if (s.exit_code == 2 && s.err.find("larger than the rows allow") != std::string::npos) {
          continue;
        }
        ASSERT_EQ(s.exit_code, 0) << "sor2d " << what << ": " << s.err;
        j = nlohmann::json::parse(s.out);
        EXPECT_EQ(j["verified"], true) << "sor2d " << what;
        EXPECT_EQ(tp::test::cli::file_bytes(out), tp::test::cli::file_bytes(ref))
            << "sor2d " << what;
      }
    }
  }
  EXPECT_GE(ran, 8);
}

// --output with a cyclic plan: each rank's rows of tiles are one box per cycle, written at their
// offsets; the file equals, byte for byte, the block plan's on one rank (factors 2-3, 1-3 ranks x
// 1-2 CPUs, both copy and direct faces, the communication thread on some).
TEST_F(CyclicArrays, output_equals_the_block_plans_bit_for_bit) {
  int variant = 0;
  int ran = 0;
  for (const Case& c : {Case{"wave2d", "23x40", "5"}, Case{"wave3d", "9x7x40", "3"}}) {
    const std::string ref = at(std::string(c.kernel) + "_ref.npy");
    auto r = tilepipe({"run", "--kernel", c.kernel, "--size", c.size, "--tile", c.tile, "--sync",
                       "block", "--output", ref});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* factor : {"2", "3"}) {
      for (const char* nodes : {"1", "2", "3"}) {
        for (const char* cpus : {"1", "2"}) {
          const int v = variant++;
          const bool three_d = std::string(c.kernel) == "wave3d";
          const std::string cyclic = three_d ? std::string(factor) + (v % 2 ? "x1" : "x2") : factor;
          const std::string out = at("out.npy");
          std::vector<std::string> args = {"run",
                                           "--kernel",
                                           c.kernel,
                                           "--size",
                                           c.size,
                                           "--tile",
                                           c.tile,
                                           "--nodes",
                                           nodes,
                                           "--cpus",
                                           cpus,
                                           "--cyclic",
                                           cyclic,
                                           "--sync",
                                           "block",
                                           "--faces",
                                           v % 2 ? "direct" : "copy",
                                           "--output",
                                           out};
          if (v % 3 == 0 && std::string(cpus) == "2") args.push_back("--comm-thread");
          const std::string what = std::string(c.kernel) + " cyclic " + cyclic + " on " + nodes +
                                   "x" + cpus + (args.back() == "--comm-thread" ? " comm" : "");
          auto o = tilepipe(args);
          // A factor the rows cannot fill is refused (tested above); every other case writes.
          if (o.exit_code == 2 && o.err.find("larger than the rows allow") != std::string::npos) {
            continue;
          }
          ASSERT_EQ(o.exit_code, 0) << what << ": " << o.err;
          ++ran;
          EXPECT_EQ(tp::test::cli::file_bytes(out), tp::test::cli::file_bytes(ref)) << what;
        }
      }
    }
  }
  EXPECT_GE(ran, 20);
}

// --input with a cyclic plan: each rank reads the rows of its boxes. The test plugin's scaled
// kernel with own=1 adds each point's initial value, so the result depends on every point read:
// started from one file, cyclic runs write what the block plan writes (and verify against the
// reference started from the file).
TEST_F(CyclicArrays, input_round_trip_equals_the_block_plans) {
  const std::vector<std::string> kernel = {
      "--plugin", TP_PLUGIN_TEST, "--kernel", "scaled", "--param", "own=1",
      "--size",   "23x31",        "--tile",   "4",      "--sync",  "block"};
  const std::string start = at("start.npy");
  const std::string ref = at("ref.npy");
  auto s = tilepipe(tp::test::cli::with(with_run(kernel), {"--output", start}));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto r = tilepipe(tp::test::cli::with(with_run(kernel), {"--input", start, "--output", ref}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(tp::test::cli::file_bytes(ref), tp::test::cli::file_bytes(start));
  int ran = 0;
  for (const char* factor : {"2", "3"}) {
    for (const char* nodes : {"1", "2", "3"}) {
      for (const char* cpus : {"1", "2"}) {
        const std::string what = std::string("cyclic ") + factor + " on " + nodes + "x" + cpus;
        const std::string out = at("out.npy");
        auto o = tilepipe(tp::test::cli::with(
            with_run(kernel), {"--nodes", nodes, "--cpus", cpus, "--cyclic", factor, "--input",
                               start, "--output", out, "--verify", "--json"}));
        if (o.exit_code == 2 && o.err.find("larger than the rows allow") != std::string::npos) {
          continue;
        }
        ++ran;
        ASSERT_EQ(o.exit_code, 0) << what << ": " << o.err;
        EXPECT_EQ(nlohmann::json::parse(o.out)["verified"], true) << what;
        EXPECT_EQ(tp::test::cli::file_bytes(out), tp::test::cli::file_bytes(ref)) << what;
      }
    }
  }
  EXPECT_GE(ran, 8);  // the others: a factor the rows cannot fill on that many CPUs (refused)
}

}  // namespace

}  // namespace cli_cyclic
