// `tilepipe align` alignments: water's pair display, JSON fields, SAM and BLAST lines, the CIGAR's
// own score, and the same alignment on threads and ranks.
#include <tilepipe/kernels/fasta.hpp>
#include <tilepipe/kernels/score_matrix.hpp>

#include "align_reference.hpp"
#include "cli_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_align_traceback {

namespace {

const std::string fa = std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/fasta";

using tp::test::align;
using tp::test::cigar_score;
using tp::test::run_process;
using tp::test::cli::temp_path;

std::string residues(const std::string& path) {
  auto r = tp::kernels::read_fasta(path);
  EXPECT_TRUE(r.has_value());
  return r.has_value() ? r->front().residues : std::string();
}

// water's pair display of files a and b (gap open 10) from its "#=====" line on, or "" (a failure
// reported) when water fails or prints no alignment.
std::string water_display(const std::string& a, const std::string& b, const std::string& matrix,
                          const std::string& extend) {
  const std::string cmd = std::string(TP_WATER_PROGRAM) + " -asequence " + a + " -bsequence " + b +
                          " -gapopen 10 -gapextend " + extend + " -datafile " + matrix +
                          " -outfile stdout -auto";
  std::string water;
  FILE* p = ::popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr) << cmd;
  if (p == nullptr) return "";
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) water += buf;
  EXPECT_EQ(::pclose(p), 0) << cmd;
  const auto from = water.find("#=======================================\n#\n# Aligned");
  EXPECT_NE(from, std::string::npos) << water;
  return from == std::string::npos ? "" : water.substr(from);
}

// The DNA files: water -gapopen 10 -gapextend 1 (and 0.5, water's fractional DNA default) prints
// this display (no tie in the gap's place), byte for byte from its "#=====" line on.
TEST(AlignTracebackCli, pair_format_is_waters_display) {
  ASSERT_STRNE(TP_WATER_PROGRAM, "")
      << "EMBOSS water not found: `make deps` installs it (Debian package emboss)";
  const std::string a = fa + "/dna_query.fa", b = fa + "/dna_target.fa";
  for (const std::string extend : {"1", "0.5"}) {
    const std::string water = water_display(a, b, "EDNAFULL", extend);
    auto r = align(
        {a, b, "--matrix", "ednafull", "--gap-extend", extend, "--format", "pair", "--cpus", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, water);
  }
}

// EMBOSS matrices by their names, and U (selenocysteine) in a protein: water scores a U against
// a matrix without U 0 with every letter, itself included, and counts no identity for it (20 of
// 22 here: U against C and U against U); the display byte for byte as water prints it.
TEST(AlignTracebackCli, emboss_matrices_by_name_and_u_as_water_scores_them) {
  ASSERT_STRNE(TP_WATER_PROGRAM, "")
      << "EMBOSS water not found: `make deps` installs it (Debian package emboss)";
  const std::string a = temp_path("sel_a.fa"), b = temp_path("sel_b.fa");
  std::ofstream(a) << ">sel1 selenoprotein\nGGMKVLUAGWHEQPTRUNDCYKLMPP\n";
  std::ofstream(b) << ">sel2\nWWMKVLCAGWHEQPTRUNDCYKLMFF\n";
  for (const std::string matrix : {"EBLOSUM50", "EPAM250", "EBLOSUM62"}) {
    const std::string water = water_display(a, b, matrix, "0.5");
    auto r = align({a, b, "--matrix", matrix, "--gap-extend", "0.5", "--format", "pair"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, water) << matrix;
    EXPECT_NE(r.out.find("# Identity:      20/22 (90.9%)\n"), std::string::npos) << r.out;
  }
  std::remove(a.c_str());
  std::remove(b.c_str());
}

// Fractional penalties (scored in halves here): the score as water reports it, 360 + 6 * 0.5.
TEST(AlignTracebackCli, fractional_gap_penalties_score_as_water) {
  auto r = align({fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", "ednafull",
                  "--gap-extend", "0.5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["score"].get<double>(), 362.5);
  EXPECT_EQ(j["cigar"], "35M6D40M");
  r = align({fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", "ednafull", "--gap-open",
             "10.25", "--gap-extend", "0.5", "--format", "blast"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "dna_query\tdna_target\t92.593\t81\t0\t1\t6\t80\t1\t81\t*\t362.25\n");
  r = align({fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", "ednafull", "--gap-extend",
             "0.5", "--score-only"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("score: 362.5\n", 0), 0u) << r.out;
}

TEST(AlignTracebackCli, json_fields_and_the_cigars_own_score) {
  struct Case {
    std::string q, t, matrix;
    int open, extend;
  };
  const std::vector<Case> cases = {{"protein_query.fa", "protein_target.fa", "blosum62", 10, 1},
                                   {"protein_query.fa", "protein_target.fa", "blosum62", 3, 1},
                                   {"dna_query.fa", "dna_target.fa", "ednafull", 10, 1},
                                   {"dna_query.fa", "dna_target.fa", "ednafull", 4, 2}};
  for (const auto& c : cases) {
    auto r = align({fa + "/" + c.q, fa + "/" + c.t, "--matrix", c.matrix, "--gap-open",
                    std::to_string(c.open), "--gap-extend", std::to_string(c.extend), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto m = tp::kernels::ScoreMatrix::by_name_or_file(c.matrix);
    ASSERT_TRUE(m.has_value());
    const std::string q = residues(fa + "/" + c.q), t = residues(fa + "/" + c.t);
    const auto cigar = j["cigar"].get<std::string>();
    EXPECT_EQ(cigar_score(*m, q, t, j["query_start"], j["target_start"], cigar, c.open, c.extend),
              j["score"].get<long>())
        << c.q << " " << c.open << "/" << c.extend << " " << cigar;
    EXPECT_EQ(j["query_end"], j["end_query"]);
    EXPECT_EQ(j["target_end"], j["end_target"]);
    // length, identity, similarity and gaps from the columns, counted here.
    long length = 0, ident = 0, gaps = 0, n = 0;
    auto i = j["query_start"].get<std::size_t>() - 1, k = j["target_start"].get<std::size_t>() - 1;
    for (const char ch : cigar) {
      if (ch >= '0' && ch <= '9') {
        n = n * 10 + (ch - '0');
        continue;
      }
      length += n;
      if (ch == 'M') {
        for (long x = 0; x < n; ++x) ident += q[i++] == t[k++] ? 1 : 0;
      } else {
        gaps += n;
        (ch == 'I' ? i : k) += static_cast<std::size_t>(n);
      }
      n = 0;
    }
    EXPECT_EQ(i, j["query_end"].get<std::size_t>());
    EXPECT_EQ(k, j["target_end"].get<std::size_t>());
    EXPECT_EQ(j["length"], length);
    EXPECT_EQ(j["identity"], ident);
    EXPECT_EQ(j["gaps"], gaps);
    EXPECT_GE(j["similarity"].get<long>(), j["identity"].get<long>() - 2);
    EXPECT_EQ(j["query_name"], tp::kernels::read_fasta(fa + "/" + c.q)->front().name);
    EXPECT_EQ(j["target_name"], tp::kernels::read_fasta(fa + "/" + c.t)->front().name);
  }
  // --score-only: no alignment fields.
  auto r = align({fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", "ednafull", "--json",
                  "--score-only"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["score"], 360);
  EXPECT_FALSE(j.contains("cigar"));
  EXPECT_FALSE(j.contains("query_start"));
}

// FASTA as people have it: CRLF line ends, lower case, blank lines, the gap characters of aligned
// FASTA ('-', '.'), gzip, standard input: the same alignment as the plain file.
TEST(AlignTracebackCli, fasta_as_people_have_it) {
  const std::string q = fa + "/dna_query.fa", t = fa + "/dna_target.fa";
  auto plain = align({q, t, "--matrix", "ednafull", "--json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto expected = nlohmann::json::parse(plain.out);
  const std::string messy = temp_path("messy.fa");
  {
    const std::string r = residues(t);
    std::ofstream out(messy, std::ios::binary);
    out << "\r\n>dna_target some description\r\n";
    for (std::size_t i = 0; i < r.size(); i += 7) {
      std::string piece = r.substr(i, 7);
      for (char& c : piece) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out << piece << (i % 2 == 0 ? "-" : ".") << "\r\n" << (i % 3 == 0 ? "\r\n" : "");
    }
  }
  const std::string sh = std::string("'") + TILEPIPE_EXE + "' align '" + q +
                         "' - --matrix ednafull --json < '" + t + "'";
  const std::vector<tp::test::ProcessResult> runs = {
      align({q, messy, "--matrix", "ednafull", "--json"}),
      align({q, t + ".gz", "--matrix", "ednafull", "--json"}), run_process({"/bin/sh", "-c", sh})};
  std::remove(messy.c_str());
  for (const auto& r : runs) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"score", "query_start", "query_end", "target_start", "target_end",
                            "cigar", "identity", "target_name", "target_length"}) {
      EXPECT_EQ(j[key], expected[key]) << key;
    }
  }
  auto r = align({"-", "-"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tilepipe: error: QUERY and TARGET cannot both be standard input ('-')\n");
}

// Values as water prints them for the DNA files (6-80 against 1-81, 75 identities, one gap of 6).
TEST(AlignTracebackCli, sam_and_blast_lines) {
  const std::string a = fa + "/dna_query.fa", b = fa + "/dna_target.fa";
  auto r = align({a, b, "--matrix", "ednafull", "--format", "sam"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = tp::test::lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0], "@HD\tVN:1.6\tSO:unsorted");
  EXPECT_EQ(lines[1], "@SQ\tSN:dna_target\tLN:81");
  EXPECT_EQ(lines[2], "@PG\tID:tilepipe\tPN:tilepipe");
  const std::string q = residues(a);
  EXPECT_EQ(lines[3], "dna_query\t0\tdna_target\t1\t255\t5S35M6D40M10S\t*\t0\t0\t" + q +
                          "\t*\tAS:i:360\tNM:i:6");
  r = align({a, b, "--matrix", "ednafull", "--format", "blast"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "dna_query\tdna_target\t92.593\t81\t0\t1\t6\t80\t1\t81\t*\t360\n");
}

// Threads and ranks change nothing in the alignment (the score pass on all ranks, the traceback
// on the root's threads).
TEST(AlignTracebackCli, threads_and_ranks_give_the_same_alignment) {
  const std::vector<std::string> files = {fa + "/protein_query.fa", fa + "/protein_target.fa"};
  auto one = align({files[0], files[1], "--json", "--gap-open", "4", "--gap-extend", "1"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto expected = nlohmann::json::parse(one.out);
  const std::vector<std::vector<std::string>> runs = {
      {"--cpus", "2", "--tile", "17x11"},
      {"--nodes", "2", "--cpus", "1", "--tile", "9", "--sync", "block"},
      {"--nodes", "3", "--cpus", "2", "--tile", "9", "--sync", "block"}};
  for (const auto& extra : runs) {
    std::vector<std::string> args = {files[0], files[1],       "--json", "--gap-open",
                                     "4",      "--gap-extend", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = align(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"score", "query_start", "query_end", "target_start", "target_end",
                            "cigar", "length", "identity", "similarity", "gaps"}) {
      EXPECT_EQ(j[key], expected[key]) << key << " with " << extra[1];
    }
  }
}

// --progress: each phase of one pair ends on its own line at 100% on stderr, stdout as without it;
// not asked and stderr not a terminal (here): nothing. With ranks, only the traceback shows.
TEST(AlignTracebackCli, progress_on_stderr) {
  const std::vector<std::string> pair = {
      fa + "/dna_query.fa", fa + "/dna_target.fa", "--matrix", "ednafull", "--format", "pair"};
  auto quiet = align(pair);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  const auto has_line = [](const std::string& err, const std::string& line) {
    return err.find("\r" + line + "\n") != std::string::npos;
  };
  auto shown = align(tp::test::cli::with(pair, {"--progress", "--cpus", "2"}));
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out, quiet.out);
  EXPECT_TRUE(has_line(shown.err, "aligning: score pass 100%")) << shown.err;
  EXPECT_TRUE(has_line(shown.err, "aligning: traceback 100%")) << shown.err;
  EXPECT_LT(shown.err.find("score pass"), shown.err.find("traceback"));
  auto ranks = align(tp::test::cli::with(pair, {"--progress", "--nodes", "2", "--sync", "block"}));
  ASSERT_EQ(ranks.exit_code, 0) << ranks.err;
  EXPECT_EQ(ranks.out, quiet.out);
  EXPECT_TRUE(has_line(ranks.err, "aligning: score pass 100%")) << ranks.err;
  EXPECT_LT(ranks.err.find("score pass"), ranks.err.find("traceback"));
  EXPECT_TRUE(has_line(ranks.err, "aligning: traceback 100%")) << ranks.err;
  auto score_only = align({pair[0], pair[1], "--matrix", "ednafull", "--progress", "--score-only"});
  ASSERT_EQ(score_only.exit_code, 0) << score_only.err;
  const std::string first = "\raligning: score pass   0%", last = "\raligning: score pass 100%\n";
  EXPECT_EQ(score_only.err.rfind(first, 0), 0U) << score_only.err;
  ASSERT_GE(score_only.err.size(), last.size());
  EXPECT_EQ(score_only.err.substr(score_only.err.size() - last.size()), last);
  EXPECT_EQ(score_only.err.find("traceback"), std::string::npos);
}

}  // namespace

}  // namespace cli_align_traceback
