// `tilepipe align QUERY.fa DB.fa --top N`: every pair's score against the test's own Gotoh DP,
// the order of the hits and its ties, the top N of each query, the same hits on 1-2 threads and
// 1-2 ranks, every format, and the bad inputs.
#include <tilepipe/kernels/score_matrix.hpp>

#include "align_reference.hpp"
#include "cli_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_align_search {

namespace {

using tp::test::align;
using tp::test::cigar_score;
using tp::test::cli::expect_refused;
using tp::test::cli::file_bytes;
using tp::test::cli::temp_path;

struct Record {
  std::string name, residues;
};

// The plain Smith-Waterman score with affine gaps (Gotoh, full rows): a gap of L costs
// open + (L - 1) * extend.
long plain_sw(const std::string& a, const std::string& b, int open, int extend) {
  const auto& m = tp::kernels::ScoreMatrix::blosum62();
  constexpr long minus = -1000000;
  std::vector<long> h(b.size() + 1, 0), e(b.size() + 1, minus);
  long best = 0;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    long diag = 0, f = minus, left = 0;  // H[i-1][j-1], F[i][j], H[i][j-1]
    for (std::size_t j = 1; j <= b.size(); ++j) {
      e[j] = std::max(h[j] - open, e[j] - extend);  // gap along the query (from the row above)
      f = std::max(left - open, f - extend);        // gap along the target (from the left)
      const long cell = std::max({0L, diag + m.score(a[i - 1], b[j - 1]), e[j], f});
      diag = h[j];
      h[j] = cell;
      left = cell;
      best = std::max(best, cell);
    }
  }
  return best;
}

// Three queries (the third a copy of the first: ties by query order) and 20 short database
// records, random, with planted relatives of the queries (one planted twice: ties by database
// order).
struct Search {
  std::vector<Record> queries, targets;
  std::string query_path, db_path;

  explicit Search(unsigned seed) {
    std::mt19937 rng(seed);
    const std::string amino = "ACDEFGHIKLMNPQRSTVWY";
    auto random = [&](std::size_t n) {
      std::string s;
      for (std::size_t k = 0; k < n; ++k) s += amino[rng() % amino.size()];
      return s;
    };
    const std::string qa = random(40), qb = random(35);
    queries = {{"qa", qa}, {"qb", qb}, {"qa_copy", qa}};
    for (int k = 0; k < 20; ++k) {
      targets.push_back({"db" + std::to_string(k), random(15 + rng() % 46)});
    }
    std::string mutated = qb;
    mutated[7] = 'W';
    mutated[20] = 'C';
    targets[3].residues = random(6) + qa.substr(5, 25) + random(9);
    targets[7].residues = random(3) + mutated + random(4);
    targets[11].residues = targets[3].residues;
    targets[15].residues = random(5) + qa.substr(10, 8) + "GG" + qa.substr(18, 8) + random(5);
    targets[18].residues = qb.substr(0, 20);
    query_path = temp_path("search_q.fa");
    db_path = temp_path("search_db.fa");
    write(query_path, queries);
    write(db_path, targets);
  }
  ~Search() {
    std::remove(query_path.c_str());
    std::remove(db_path.c_str());
  }
  Search(const Search&) = delete;
  Search& operator=(const Search&) = delete;

  static void write(const std::string& path, const std::vector<Record>& records) {
    std::ofstream out(path);
    for (const auto& r : records) out << ">" << r.name << " a record\n" << r.residues << "\n";
  }
  [[nodiscard]] std::size_t index(const std::vector<Record>& v, const std::string& name) const {
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (v[k].name == name) return k;
    }
    ADD_FAILURE() << name;
    return 0;
  }
};

struct Want {
  long score;
  std::size_t query, target;
};

// Every pair scoring above 0 in the order the tool promises: score descending, then database
// order, then query order.
std::vector<Want> expected_hits(const Search& s, int open, int extend) {
  std::vector<Want> out;
  for (std::size_t q = 0; q < s.queries.size(); ++q) {
    for (std::size_t t = 0; t < s.targets.size(); ++t) {
      const long score = plain_sw(s.queries[q].residues, s.targets[t].residues, open, extend);
      if (score > 0) out.push_back({score, q, t});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Want& a, const Want& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.target != b.target ? a.target < b.target : a.query < b.query;
  });
  return out;
}

nlohmann::json hits_of(const tp::test::ProcessResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out)["hits"] : nlohmann::json::array();
}

TEST(AlignSearchCli, every_pair_against_a_plain_dp_in_order_with_ties) {
  const Search s(14);
  SCOPED_TRACE("seed 14");
  for (const auto& [open, extend] : std::vector<std::pair<int, int>>{{10, 1}, {4, 2}}) {
    const auto expected = expected_hits(s, open, extend);
    // Without --top: every hit.
    const auto hits =
        hits_of(align({s.query_path, s.db_path, "--json", "--gap-open", std::to_string(open),
                       "--gap-extend", std::to_string(extend)}));
    ASSERT_EQ(hits.size(), expected.size());
    for (std::size_t h = 0; h < hits.size(); ++h) {
      const auto& j = hits[h];
      const auto q = s.index(s.queries, j["query_name"]);
      const auto t = s.index(s.targets, j["target_name"]);
      EXPECT_EQ(j["score"].get<long>(), expected[h].score) << h;
      EXPECT_EQ(q, expected[h].query) << h;
      EXPECT_EQ(t, expected[h].target) << h;
      EXPECT_EQ(cigar_score(tp::kernels::ScoreMatrix::blosum62(), s.queries[q].residues,
                            s.targets[t].residues, j["query_start"], j["target_start"], j["cigar"],
                            open, extend),
                j["score"].get<long>())
          << j.dump();
      EXPECT_EQ(j["query_end"], j["end_query"]);
      EXPECT_EQ(j["target_length"], s.targets[t].residues.size());
      for (const char* key : {"length", "identity", "similarity", "gaps"}) {
        EXPECT_TRUE(j[key].is_number()) << key;
      }
    }
    // The ties the data plants: db3 and db11 are the same record, qa and qa_copy the same query.
    const auto at = [&](std::size_t q, std::size_t t) {
      return std::find_if(expected.begin(), expected.end(),
                          [&](const Want& e) { return e.query == q && e.target == t; }) -
             expected.begin();
    };
    EXPECT_EQ(at(0, 3) + 1, at(2, 3));   // same target: query order
    EXPECT_EQ(at(2, 3) + 1, at(0, 11));  // same score: database order first
    EXPECT_EQ(at(0, 11) + 1, at(2, 11));
    // --top 3: each query's first three of that order, the order kept.
    std::vector<Want> top;
    std::map<std::size_t, int> kept;
    for (const auto& e : expected) {
      if (kept[e.query]++ < 3) top.push_back(e);
    }
    const auto three =
        hits_of(align({s.query_path, s.db_path, "--json", "--top", "3", "--gap-open",
                       std::to_string(open), "--gap-extend", std::to_string(extend)}));
    ASSERT_EQ(three.size(), top.size());
    for (std::size_t h = 0; h < three.size(); ++h) {
      EXPECT_EQ(three[h]["query_name"], s.queries[top[h].query].name);
      EXPECT_EQ(three[h]["target_name"], s.targets[top[h].target].name);
      EXPECT_EQ(three[h]["score"].get<long>(), top[h].score);
    }
  }
}

// One pair per thread, pairs over forked ranks, every pair tiled (--tiled-cells 1): the same hits.
TEST(AlignSearchCli, threads_ranks_and_tiled_pairs_give_the_same_hits) {
  const Search s(15);
  const auto one = hits_of(align({s.query_path, s.db_path, "--json", "--top", "4"}));
  ASSERT_FALSE(one.empty());
  const std::vector<std::vector<std::string>> runs = {
      {"--cpus", "2"},
      {"--nodes", "2"},
      {"--nodes", "2", "--cpus", "2", "--sync", "block"},
      {"--cpus", "2", "--tiled-cells", "1"}};
  for (const auto& extra : runs) {
    std::vector<std::string> args = {s.query_path, s.db_path, "--json", "--top", "4"};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(hits_of(align(args)), one) << extra[0] << " " << extra[1];
  }
  // Text and --score-only too: byte for byte.
  auto a = align({s.query_path, s.db_path, "--top", "2"});
  auto b = align({s.query_path, s.db_path, "--top", "2", "--nodes", "2", "--cpus", "2"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  a = align({s.query_path, s.db_path, "--top", "2", "--score-only"});
  b = align({s.query_path, s.db_path, "--top", "2", "--score-only", "--cpus", "2", "--nodes", "2"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const auto lines = tp::test::lines_of(a.out);
  ASSERT_EQ(lines.size(), 7u) << a.out;  // a header and 2 hits of each of 3 queries
  EXPECT_EQ(lines[0], "query    target  score  end_query  end_target");
}

// The table, BLAST, SAM and pair outputs carry the JSON's hits, one per hit, in its order.
TEST(AlignSearchCli, each_format_one_entry_per_hit) {
  const Search s(16);
  const auto hits = hits_of(align({s.query_path, s.db_path, "--json", "--top", "2"}));
  ASSERT_EQ(hits.size(), 6u);
  auto r = align({s.query_path, s.db_path, "--top", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = tp::test::lines_of(r.out);
  ASSERT_EQ(lines.size(), 7u) << r.out;
  EXPECT_EQ(lines[0].rfind("query    target  score  query_start  query_end  target_start  "
                           "target_end  length  identity  similarity  gaps  cigar",
                           0),
            0u)
      << lines[0];
  for (std::size_t h = 0; h < hits.size(); ++h) {
    std::istringstream row(lines[h + 1]);
    std::string q, t, cigar;
    long score = 0, qs = 0, qe = 0, ts = 0, te = 0, length = 0, ident = 0, sim = 0, gaps = 0;
    row >> q >> t >> score >> qs >> qe >> ts >> te >> length >> ident >> sim >> gaps >> cigar;
    EXPECT_EQ(q, hits[h]["query_name"]);
    EXPECT_EQ(t, hits[h]["target_name"]);
    EXPECT_EQ(score, hits[h]["score"]);
    EXPECT_EQ(qs, hits[h]["query_start"]);
    EXPECT_EQ(te, hits[h]["target_end"]);
    EXPECT_EQ(ident, hits[h]["identity"]);
    EXPECT_EQ(cigar, hits[h]["cigar"]);
  }
  r = align({s.query_path, s.db_path, "--top", "2", "--format", "blast"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = tp::test::lines_of(r.out);
  ASSERT_EQ(lines.size(), hits.size()) << r.out;
  for (std::size_t h = 0; h < hits.size(); ++h) {
    const auto& j = hits[h];
    char pident[32];
    std::snprintf(pident, sizeof pident, "%.3f",
                  100.0 * j["identity"].get<double>() / j["length"].get<double>());
    EXPECT_EQ(lines[h].rfind(j["query_name"].get<std::string>() + "\t" +
                                 j["target_name"].get<std::string>() + "\t" + pident + "\t",
                             0),
              0u)
        << lines[h];
    EXPECT_EQ(lines[h].substr(lines[h].rfind("\t*\t") + 3), std::to_string(j["score"].get<int>()));
  }
  r = align({s.query_path, s.db_path, "--top", "2", "--format", "sam"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = tp::test::lines_of(r.out);
  ASSERT_EQ(lines.size(), 2 + s.targets.size() + hits.size()) << r.out;
  EXPECT_EQ(lines[1], "@SQ\tSN:db0\tLN:" + std::to_string(s.targets[0].residues.size()));
  std::set<std::string> primary;  // SAM: a query's first (best) hit flag 0, the next ones 256
  for (std::size_t h = 0; h < hits.size(); ++h) {
    const auto& rec = lines[2 + s.targets.size() + h];
    const std::string flag = primary.insert(hits[h]["query_name"]).second ? "0" : "256";
    EXPECT_EQ(rec.rfind(hits[h]["query_name"].get<std::string>() + "\t" + flag + "\t" +
                            hits[h]["target_name"].get<std::string>() + "\t" +
                            std::to_string(hits[h]["target_start"].get<int>()) + "\t255\t",
                        0),
              0u)
        << rec;
    EXPECT_NE(rec.find("\tAS:i:" + std::to_string(hits[h]["score"].get<int>()) + "\t"),
              std::string::npos);
  }
  r = align({s.query_path, s.db_path, "--top", "2", "--format", "pair"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t shown = 0;
  for (std::size_t at = r.out.find("# Aligned_sequences: 2\n"); at != std::string::npos;
       at = r.out.find("# Aligned_sequences: 2\n", at + 1), ++shown) {
    const auto& j = hits.at(shown);
    const std::string head = "# 1: " + j["query_name"].get<std::string>() +
                             "\n# 2: " + j["target_name"].get<std::string>() + "\n";
    EXPECT_EQ(r.out.compare(at + 23, head.size(), head), 0) << r.out.substr(at, 80);
  }
  EXPECT_EQ(shown, hits.size());
  // --output: the same bytes in the file.
  const std::string path = temp_path("search_out");
  auto w = align({s.query_path, s.db_path, "--top", "2", "--format", "pair", "-o", path});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_EQ(w.out, "");
  const std::string file = file_bytes(path);
  std::remove(path.c_str());
  EXPECT_EQ(file, r.out);
}

// SAM as aligners write it: one primary record per read (the query's best hit), its other hits
// secondary (flag 256), and a query without a hit one unmapped record (flag 4) after the hits.
TEST(AlignSearchCli, sam_has_one_primary_record_per_query) {
  const std::string qp = temp_path("sam_q.fa"), dp = temp_path("sam_db.fa");
  std::ofstream(qp) << ">hit\nMKVLAAGWW\n>none\nPPPP\n";
  std::ofstream(dp) << ">d1\nMKVLAAGWW\n>d2\nAAAAAAAA\n>d3\nGGGG\n";
  auto r = align({qp, dp, "--format", "sam"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:d1\tLN:9\n@SQ\tSN:d2\tLN:8\n@SQ\tSN:d3\tLN:4\n"
            "@PG\tID:tilepipe\tPN:tilepipe\n"
            // BLOSUM62: M5 K5 V4 L4 A4 A4 G6 W11 W11; A/A twice; G/G.
            "hit\t0\td1\t1\t255\t9M\t*\t0\t0\tMKVLAAGWW\t*\tAS:i:54\tNM:i:0\n"
            "hit\t256\td2\t1\t255\t4S2M3S\t*\t0\t0\tMKVLAAGWW\t*\tAS:i:8\tNM:i:0\n"
            "hit\t256\td3\t1\t255\t6S1M2S\t*\t0\t0\tMKVLAAGWW\t*\tAS:i:6\tNM:i:0\n"
            "none\t4\t*\t0\t0\t*\t*\t0\t0\tPPPP\t*\n");
  std::remove(qp.c_str());
  std::remove(dp.c_str());
}

// Records of length 0 (a header and no residues) align with nothing: no hit, on threads and
// ranks alike; in SAM an empty query is an unmapped record with SEQ '*', and an empty target has
// no @SQ line (SAM's LN is at least 1).
TEST(AlignSearchCli, empty_records_align_with_nothing) {
  const std::string qp = temp_path("empty_q.fa"), dp = temp_path("empty_db.fa");
  std::ofstream(qp) << ">hit\nMKVLAAGWW\n>nothing\n\n>last\nGGGG\n";
  std::ofstream(dp) << ">d1\nMKVLAAGWW\n>void\n>d3\nGGGG\n";
  for (const std::vector<std::string>& where :
       {std::vector<std::string>{}, {"--cpus", "2"}, {"--nodes", "2", "--sync", "block"}}) {
    std::vector<std::string> args = {qp, dp, "--format", "sam"};
    args.insert(args.end(), where.begin(), where.end());
    auto r = align(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out,
              "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:d1\tLN:9\n@SQ\tSN:d3\tLN:4\n"
              "@PG\tID:tilepipe\tPN:tilepipe\n"
              "hit\t0\td1\t1\t255\t9M\t*\t0\t0\tMKVLAAGWW\t*\tAS:i:54\tNM:i:0\n"
              "last\t0\td3\t1\t255\t4M\t*\t0\t0\tGGGG\t*\tAS:i:24\tNM:i:0\n"
              "last\t256\td1\t7\t255\t1M3S\t*\t0\t0\tGGGG\t*\tAS:i:6\tNM:i:0\n"
              "hit\t256\td3\t1\t255\t6S1M2S\t*\t0\t0\tMKVLAAGWW\t*\tAS:i:6\tNM:i:0\n"
              "nothing\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*\n")
        << where.size();
    args = {qp, dp, "--json"};
    args.insert(args.end(), where.begin(), where.end());
    auto j = align(args);
    ASSERT_EQ(j.exit_code, 0) << j.err;
    const auto hits = nlohmann::json::parse(j.out)["hits"];
    EXPECT_EQ(hits.size(), 4U) << j.out;
    for (const auto& h : hits) {
      EXPECT_NE(h["query_name"], "nothing");
      EXPECT_NE(h["target_name"], "void");
    }
  }
  std::remove(qp.c_str());
  std::remove(dp.c_str());
}

// Records without a name are named as EMBOSS names them (water prints EMBOSS_001 for the query
// and EMBOSS_002, EMBOSS_003 for the database's, in reading order): never an empty QNAME or qseqid.
TEST(AlignSearchCli, unnamed_records_are_named_as_emboss_names_them) {
  const std::string qp = temp_path("unnamed_q.fa"), dp = temp_path("unnamed_db.fa");
  std::ofstream(qp) << ">\nMKVLAAGWW\n";
  std::ofstream(dp) << "> \nMKVL\n>\nAAGWW\n>named\nMKV\n";
  auto r = align({qp, dp, "--format", "blast"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> ids;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    ids.push_back(line.substr(0, line.find('\t', line.find('\t') + 1)));
  }
  // BLOSUM62: A4 A4 G6 W11 W11 = 36; M5 K5 V4 L4 = 18; M5 K5 V4 = 14.
  EXPECT_EQ(ids, (std::vector<std::string>{"EMBOSS_001\tEMBOSS_003", "EMBOSS_001\tEMBOSS_002",
                                           "EMBOSS_001\tnamed"}))
      << r.out;
  auto pair = align({qp, dp, "--format", "pair", "--top", "1"});
  ASSERT_EQ(pair.exit_code, 0) << pair.err;
  EXPECT_NE(pair.out.find("# 1: EMBOSS_001\n# 2: EMBOSS_003\n"), std::string::npos) << pair.out;
  std::remove(qp.c_str());
  std::remove(dp.c_str());
}

TEST(AlignSearchCli, bad_input_exits_2_with_one_line) {
  const Search s(17);
  const std::string dir = ::testing::TempDir();
  const std::string empty = temp_path("search_empty.fa");
  const std::string bad = temp_path("search_bad.fa");
  Search::write(empty, {});
  Search::write(bad, {{"fine", "ACDEF"}, {"broken", "MKTAY1KQ"}});
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{s.query_path, s.db_path, "--top", "0"}, "--top: 0 must be >= 1"},
      {{s.query_path, s.db_path, "--top", "-2"}, "--top: -2 must be >= 1"},
      {{s.query_path, s.db_path, "--top", "three"}, "--top: 'three' is not a whole number"},
      {{s.query_path, empty, "--top", "1"}, empty + ": no FASTA record (empty file?)"},
      {{s.query_path, bad, "--top", "1"},
       bad + " sequence 'broken' position 6: letter '1' is not in the BLOSUM62 alphabet"},
      {{s.query_path, s.db_path, "--top", "1", "-o", dir + "no_such_dir/hits.txt"},
       "--output: cannot write '" + dir + "no_such_dir/hits.txt': directory '" + dir +
           "no_such_dir' does not exist"},
      {{s.query_path, s.db_path, "--tile", "8x8"},
       "--tile shapes one pair's run: a search (--top, or files of several records) chooses its "
       "own"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(message);
    expect_refused(align(args), message);
  }
  std::remove(empty.c_str());
  std::remove(bad.c_str());
}

}  // namespace

}  // namespace cli_align_search
