// `tilepipe align` end to end: results checked against EMBOSS water, exact bad-input errors.
#include "align_reference.hpp"
#include "cli_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_align {

namespace {

using tp::test::align;
using tp::test::cli::expect_refused;

const std::string data = std::string(TILEPIPE_SOURCE_DIR) + "/tests/data";
const std::string fa = data + "/fasta";

// Expected scores and end positions: EMBOSS water 6.6 on the same files (-aformat markx10).
TEST(AlignCli, protein_blosum62_text_output) {
  auto r = align({fa + "/protein_query.fa", fa + "/protein_target.fa", "--matrix", "blosum62",
                  "--gap-open", "10", "--gap-extend", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto lines = tp::test::lines_of(r.out);
  ASSERT_EQ(lines.size(), 15u) << r.out;
  EXPECT_EQ(lines[0], "score: 526");
  EXPECT_EQ(lines[1], "end_query: 110");
  EXPECT_EQ(lines[2], "end_target: 103");
  EXPECT_EQ(lines[3], "cells: 120 x 103");
  EXPECT_EQ(lines[4].rfind("seconds: ", 0), 0u);
  EXPECT_EQ(lines[5].rfind("gcups: ", 0), 0u);
  EXPECT_EQ(lines[6].rfind("simd: ", 0), 0u);
  // The alignment: water prints 11-110 and 1-103, length 103, 96 identities, 97 similar, 3 gaps.
  EXPECT_EQ(lines[7], "query: query 11-110");
  EXPECT_EQ(lines[8], "target: target 1-103");
  EXPECT_EQ(lines[9].rfind("cigar: 30M1D16M", 0), 0u) << lines[9];
  EXPECT_EQ(lines[10], "length: 103");
  EXPECT_EQ(lines[11], "identity: 96");
  EXPECT_EQ(lines[12], "similarity: 97");
  EXPECT_EQ(lines[13], "gaps: 3");
  EXPECT_EQ(lines[14].rfind("traceback_seconds: ", 0), 0u);
  // --score-only: the score pass alone, the lines of before.
  r = align({fa + "/protein_query.fa", fa + "/protein_target.fa", "--score-only"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto fast = tp::test::lines_of(r.out);
  ASSERT_EQ(fast.size(), 7u) << r.out;
  EXPECT_EQ(fast[0], "score: 526");
  EXPECT_EQ(fast[2], "end_target: 103");
}

// Every tile function gives water's score and end; an ISA the CPU lacks or a typo is refused.
TEST(AlignCli, simd_paths_agree_and_bad_choices_exit_2) {
  for (const std::string simd : {"scalar", "sse41", "avx2", "avx512"}) {
    for (const std::string bits : {"8", "16", "32"}) {
      auto r = align({fa + "/protein_query.fa", fa + "/protein_target.fa", "--json", "--tile",
                      "40x30", "--simd", simd, "--simd-bits", bits});
      if (r.exit_code == 2) {
        EXPECT_NE(r.err.find("cannot run the " + simd), std::string::npos) << r.err;
        continue;
      }
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["score"], 526) << simd << "/" << bits;
      EXPECT_EQ(j["end_query"], 110);
      EXPECT_EQ(j["end_target"], 103);
      EXPECT_EQ(j["simd"], simd);
    }
  }
  auto r = align({fa + "/protein_query.fa", fa + "/protein_target.fa", "--simd", "avx1024"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--simd: unknown instruction set 'avx1024'"), std::string::npos) << r.err;
  r = align({fa + "/protein_query.fa", fa + "/protein_target.fa", "--simd-bits", "12"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(AlignCli, dna_ednafull_json_tiled_on_two_threads) {
  auto r = align({fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", "EDNAFULL", "--json",
                  "--tile", "7x9", "--cpus", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["score"], 360);
  EXPECT_EQ(j["end_query"], 80);
  EXPECT_EQ(j["end_target"], 81);
  EXPECT_EQ(j["query_length"], 90);
  EXPECT_EQ(j["target_length"], 81);
  EXPECT_TRUE(j["seconds"].is_number() && j["seconds"].get<double>() >= 0);
  EXPECT_TRUE(j["gcups"].is_number());
}

TEST(AlignCli, matrix_file_in_emboss_format) {
  auto r = align({fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", data + "/simple_dna.mat",
                  "--gap-open", "5", "--gap-extend", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["score"], 135);
  EXPECT_EQ(j["end_query"], 80);
  EXPECT_EQ(j["end_target"], 81);
}

struct BadCase {
  std::vector<std::string> args;
  std::string message;
};

TEST(AlignCli, ranks_and_schedules_agree_with_one_process) {
  const std::vector<std::string> files = {data + "/fasta/protein_query.fa",
                                          data + "/fasta/protein_target.fa"};
  auto one = align({files[0], files[1], "--json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto expected = nlohmann::json::parse(one.out);
  for (const char* nodes : {"2", "3"}) {
    for (const char* schedule : {"blocking", "overlap"}) {
      auto r = align({files[0], files[1], "--json", "--nodes", nodes, "--cpus", "2", "--tile", "9",
                      "--schedule", schedule, "--sync", "block"});
      ASSERT_EQ(r.exit_code, 0) << nodes << " " << schedule << ": " << r.err;
      const auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["score"], expected["score"]);
      EXPECT_EQ(j["end_query"], expected["end_query"]);
      EXPECT_EQ(j["end_target"], expected["end_target"]);
      EXPECT_EQ(j["nodes"].get<int>(), std::stoi(nodes));
    }
  }
}

// Fewer rows than CPUs (issue 15): a one-residue query has one row of tiles, so on 2 or 3 ranks
// all but rank 0 idle (they were refused before); the alignment is the one-process one. A
// sequence of 0 residues aligns too (score 0, every CPU idle), on any number of ranks.
TEST(AlignCli, one_residue_query_on_several_ranks_and_an_empty_one_aligned) {
  const std::string one = fa + "/one_residue.fa";
  const std::string target = fa + "/dna_query.fa";
  auto single = align({one, target, "--matrix", "ednafull", "--json"});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const auto expected = nlohmann::json::parse(single.out);
  EXPECT_EQ(expected["score"], 5);  // A/A in EDNAFULL, at the target's first A
  EXPECT_EQ(expected["end_query"], 1);
  EXPECT_EQ(expected["end_target"], 3);
  for (const char* nodes : {"2", "3"}) {
    for (const char* cpus : {"1", "2"}) {
      auto r = align({one, target, "--matrix", "ednafull", "--json", "--nodes", nodes, "--cpus",
                      cpus, "--tile", "16", "--sync", "block"});
      ASSERT_EQ(r.exit_code, 0) << nodes << "x" << cpus << ": " << r.err;
      const auto j = nlohmann::json::parse(r.out);
      for (const char* key : {"score", "end_query", "end_target"}) {
        EXPECT_EQ(j[key], expected[key]) << key;
      }
      EXPECT_EQ(j["idle_nodes"], std::stoi(nodes) - 1);
      EXPECT_EQ(j["idle_cpus"], std::stoi(nodes) * std::stoi(cpus) - 1);
    }
    auto text = align({one, target, "--matrix", "ednafull", "--nodes", nodes, "--sync", "block"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("idle: " + std::to_string(std::stoi(nodes) - 1) + " nodes and " +
                            std::to_string(std::stoi(nodes) - 1) +
                            " CPUs have no row of tiles and run none\n"),
              std::string::npos)
        << text.out;
    // One residue against one (the default tile): a space of one point, where no dependence
    // binds (it exited 2: "dependence (1, 0) is not shorter than the tile side").
    auto point = align({one, one, "--matrix", "ednafull", "--json", "--nodes", nodes, "--cpus", "2",
                        "--sync", "block"});
    ASSERT_EQ(point.exit_code, 0) << point.err;
    const auto p = nlohmann::json::parse(point.out);
    EXPECT_EQ(p["score"], 5);
    EXPECT_EQ(p["cigar"], "1M");
    EXPECT_EQ(p["idle_cpus"], std::stoi(nodes) * 2 - 1);
    // A sequence of length 0, either side: score 0 and an empty alignment, nothing to run.
    for (const auto& [q, t] : {std::pair{fa + "/empty_sequence.fa", target},
                               std::pair{target, fa + "/empty_sequence.fa"}}) {
      auto empty = align({q, t, "--matrix", "ednafull", "--json", "--nodes", nodes, "--cpus", "2",
                          "--sync", "block"});
      ASSERT_EQ(empty.exit_code, 0) << empty.err;
      const auto e = nlohmann::json::parse(empty.out);
      EXPECT_EQ(e["score"], 0);
      EXPECT_EQ(e["cigar"], "");
      EXPECT_EQ(e["length"], 0);
      EXPECT_EQ(e["query_start"], 0);
      EXPECT_EQ(e["nodes"], std::stoi(nodes));
      EXPECT_EQ(e["query_length"].get<int>() * e["target_length"].get<int>(), 0);
      auto shown = align({q, t, "--matrix", "ednafull", "--nodes", nodes, "--sync", "block"});
      ASSERT_EQ(shown.exit_code, 0) << shown.err;
      EXPECT_NE(shown.out.find("score: 0\n"), std::string::npos) << shown.out;
      EXPECT_NE(shown.out.find("idle: " + std::string(nodes) + " nodes and " + nodes +
                               " CPUs have no row of tiles and run none\n"),
                std::string::npos)
          << shown.out;
    }
  }
  // Nothing runs for an empty sequence, but its flags are checked as for any pair.
  const std::string empty = fa + "/empty_sequence.fa";
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--schedule", "bogus"},
        {"--tile", "1x2x3"},
        {"--nodes", "2", "--tile", "0"},
        {"--nodes", "2", "--tile", "auto", "--machine", "/nonexistent/m.json"}}) {
    std::vector<std::string> args = {empty, target, "--matrix", "ednafull"};
    args.insert(args.end(), bad.begin(), bad.end());
    auto r = align(args);
    EXPECT_EQ(r.exit_code, 2) << bad[1] << ": " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(AlignCli, vertical_grouping_agrees_with_hyperplane) {
  const std::vector<std::string> files = {data + "/fasta/protein_query.fa",
                                          data + "/fasta/protein_target.fa"};
  auto flat = align({files[0], files[1], "--json", "--nodes", "2", "--cpus", "2", "--tile", "9",
                     "--sync", "block", "--grouping", "hyperplane"});
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  const auto expected = nlohmann::json::parse(flat.out);
  EXPECT_EQ(expected["grouping"], "hyperplane");
  EXPECT_EQ(expected["subtiles"], 1);
  for (const char* schedule : {"blocking", "overlap"}) {
    auto r =
        align({files[0], files[1], "--json", "--nodes", "2", "--cpus", "2", "--tile", "9", "--sync",
               "block", "--schedule", schedule, "--grouping", "vertical", "--subtiles", "3"});
    ASSERT_EQ(r.exit_code, 0) << schedule << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["score"], expected["score"]);
    EXPECT_EQ(j["end_query"], expected["end_query"]);
    EXPECT_EQ(j["end_target"], expected["end_target"]);
    EXPECT_EQ(j["grouping"], "vertical");
    EXPECT_EQ(j["subtiles"], 3);
  }
  // One process: vertical grouping runs the pipelined executor too; text output names it.
  auto one = align({files[0], files[1], "--cpus", "3", "--tile", "9", "--sync", "block",
                    "--grouping", "vertical", "--subtiles", "2"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.rfind("score: " + std::to_string(expected["score"].get<int>()) + "\n", 0), 0u)
      << one.out;
  EXPECT_NE(one.out.find("\ngrouping: vertical (2 subtiles)\n"), std::string::npos) << one.out;
}

TEST(AlignCli, bad_input_exits_2_with_one_line) {
  const std::vector<BadCase> cases = {
      {{"/nonexistent.fa", fa + "/dna_query.fa"},
       "cannot read '/nonexistent.fa': No such file or directory"},
      {{fa + "/dna_query.fa", fa}, "cannot read '" + fa + "': Is a directory"},
      {{fa + "/empty.fa", fa + "/dna_query.fa"}, fa + "/empty.fa: no FASTA record (empty file?)"},
      {{fa + "/dna_query.fa", fa + "/no_header.fa"},
       fa + "/no_header.fa line 1: not FASTA (expected a '>' header line first)"},
      {{fa + "/protein_query.fa", fa + "/bad_letter.fa"},
       fa + "/bad_letter.fa sequence 'bad' position 5: letter 'J' is not in the BLOSUM62 alphabet"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", data + "/bad.mat"},
       "matrix " + data + "/bad.mat line 2: row 'A' has 3 scores, expected 4"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", "blosum99"},
       "cannot read matrix file 'blosum99': No such file or directory, and no EMBOSS matrix of "
       "that name in " +
           tp::test::emboss_dirs()},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--gap-open", "-1"},
       "--gap-open: Value -1 not in range 0 to 10000"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--gap-extend", "x"},
       "--gap-extend: Value x not in range 0 to 10000"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--gap-extend", "0.0001"},
       "gap penalties 10 and 0.0001 are not multiples of 0.001"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--gap-open", "10.001"},
       "gap penalties 10.001 and 1 are scored in steps of 1/1000: above 10000 there (use coarser "
       "fractions)"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", "ednafull", "--tile", "8x8x8"},
       "--tile: '8x8x8' has 3 dimensions, expected 2 (QUERYxTARGET)"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", "ednafull", "--tile", "0x8"},
       "--tile dimension 1: 0 must be >= 1"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--cpus", "0"},
       "--cpus: Value 0 not in range 1 to 1024"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--subtiles", "0"},
       "--subtiles: 0 must be >= 1"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--grouping", "diagonal"},
       "--grouping: unknown grouping 'diagonal' (choose hyperplane|vertical)"},
      {{fa + "/dna_query.fa"}, "TARGET is required"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--format", "fasta"},
       "--format: unknown format 'fasta' (choose text|pair|sam|blast)"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--format", "sam", "--json"},
       "--json and --format sam print different things: choose one"},
      {{fa + "/dna_query.fa", fa + "/dna_target.fa", "--format", "pair", "--score-only"},
       "--format pair shows the alignment: drop --score-only"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    expect_refused(align(c.args), c.message);
  }
}

}  // namespace

}  // namespace cli_align
