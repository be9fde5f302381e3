// sw traceback against a plain full-matrix Gotoh DP with traceback written here.
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/sw_align.hpp>

#include "naive_sw.hpp"
#include "plain_alignment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace tp::kernels {
namespace {

// The best global alignment score (plain Gotoh, full rows).
long plain_global(const ScoreMatrix& mx, const std::string& q, const std::string& t, GapCosts g) {
  const std::size_t n = q.size(), m = t.size();
  std::vector<long> H(m + 1), E(m + 1, ninf), F(m + 1, ninf);
  H[0] = 0;
  for (std::size_t j = 1; j <= m; ++j) {
    E[j] = std::max(H[j - 1] - g.open, E[j - 1] - g.extend);
    H[j] = E[j];
  }
  for (std::size_t i = 1; i <= n; ++i) {
    long diag = H[0];
    F[0] = std::max(H[0] - g.open, F[0] - g.extend);
    H[0] = F[0];
    long e = ninf;
    for (std::size_t j = 1; j <= m; ++j) {
      e = std::max(H[j - 1] - g.open, e - g.extend);
      F[j] = std::max(H[j] - g.open, F[j] - g.extend);
      const long h = std::max({diag + mx.score(q[i - 1], t[j - 1]), e, F[j]});
      diag = H[j];
      H[j] = h;
    }
  }
  return H[m];
}

Ops ops_of(const std::vector<SwOp>& ops) {
  Ops out;
  for (const SwOp& o : ops) out.emplace_back(o.op, static_cast<long>(o.length));
  return out;
}

// A pair with a shared, mutated segment (so that alignments are long and gapped), or unrelated.
std::pair<std::string, std::string> random_pair(std::mt19937_64& rng, const std::string& letters,
                                                std::size_t n, std::size_t m) {
  std::uniform_int_distribution<std::size_t> pick(0, letters.size() - 1);
  std::uniform_int_distribution<int> pct(0, 99);
  std::string q, t;
  for (std::size_t i = 0; i < n; ++i) q += letters[pick(rng)];
  if (pct(rng) < 25) {
    for (std::size_t j = 0; j < m; ++j) t += letters[pick(rng)];
    return {q, t};
  }
  // t: a piece of q with substitutions, insertions and deletions, between random flanks.
  const std::size_t from = n > 1 ? rng() % n : 0;
  for (std::size_t i = from; i < n && t.size() < m; ++i) {
    const int r = pct(rng);
    if (r < 8) continue;
    if (r < 16) t += letters[pick(rng)];
    t += r < 30 ? letters[pick(rng)] : q[i];
  }
  while (t.size() < m) t.insert(t.begin() + static_cast<long>(rng() % (t.size() + 1)), 'A');
  return {q, t.substr(0, m)};
}

struct Setting {
  const ScoreMatrix* matrix;
  std::string letters;
  GapCosts gaps;
};

std::vector<Setting> settings() {
  const auto& b = ScoreMatrix::blosum62();
  const auto& d = ScoreMatrix::ednafull();
  const std::string aa = "ARNDCQEGHILKMFPSTWYV";
  return {{&b, aa, {10, 1}},     {&b, aa, {11, 2}},     {&b, aa, {5, 5}},
          {&b, aa, {3, 7}},      {&d, "ACGT", {10, 1}}, {&d, "ACGT", {16, 4}},
          {&d, "ACGTN", {2, 1}}, {&d, "ACGT", {0, 0}}};
}

// 60 random pairs, lengths 1..2000 (most short): score, start, end as the plain DP's, the path's
// own score equal to the score, and the plain DP's traceback scoring the same.
TEST(SwTraceback, equals_plain_full_matrix_gotoh_on_random_pairs) {
  const std::uint64_t seed = 20261126;
  std::mt19937_64 rng(seed);
  const auto all = settings();
  int gapped = 0, start_ties = 0;
  for (int k = 0; k < 60; ++k) {
    const Setting& s = all[static_cast<std::size_t>(k) % all.size()];
    const std::size_t n = k < 2 ? 2000 - 500 * static_cast<std::size_t>(k) : 1 + rng() % 300;
    const std::size_t m = k < 2 ? 1500 : 1 + rng() % 300;
    const auto [q, t] = random_pair(rng, s.letters, n, m);
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " pair " << k << " (" << n << " x " << m
                                      << ", gaps " << s.gaps.open << "/" << s.gaps.extend << ")");
    const auto qe = enc(*s.matrix, q), te = enc(*s.matrix, t);
    const Plain plain = plain_local(*s.matrix, q, t, s.gaps);
    const SwResult end = sw_sequential(*s.matrix, qe, te, s.gaps);
    ASSERT_EQ(end.score, plain.score);
    auto a = sw_traceback(*s.matrix, qe, te, s.gaps, end, {k < 2 ? 2 : k % 2 + 1, {}});
    ASSERT_TRUE(a.has_value()) << a.error().message;
    EXPECT_EQ(a->score, plain.score);
    EXPECT_EQ(a->query_start, plain.qs);
    EXPECT_EQ(a->target_start, plain.ts);
    EXPECT_EQ(a->query_end, plain.qe);
    EXPECT_EQ(a->target_end, plain.te);
    if (plain.score == 0) {
      EXPECT_TRUE(a->ops.empty());
      continue;
    }
    start_ties += plain.start_count > 1 ? 1 : 0;
    gapped += a->ops.size() > 1 ? 1 : 0;
    const auto start_q = static_cast<std::size_t>(plain.qs - 1);
    const auto start_t = static_cast<std::size_t>(plain.ts - 1);
    EXPECT_EQ(score_of(*s.matrix, q, t, s.gaps, start_q, start_t, ops_of(a->ops)), plain.score);
    EXPECT_EQ(score_of(*s.matrix, q, t, s.gaps, start_q, start_t, plain.ops), plain.score);
    EXPECT_EQ(alignment_score(*s.matrix, qe, te, s.gaps, *a), plain.score);
    long used_q = 0, used_t = 0;
    for (const auto& o : a->ops) {
      used_q += o.op != 'D' ? o.length : 0;
      used_t += o.op != 'I' ? o.length : 0;
    }
    EXPECT_EQ(used_q, plain.qe - plain.qs + 1);
    EXPECT_EQ(used_t, plain.te - plain.ts + 1);
    if (k < 2) {  // threads change nothing; the box is big enough for the threaded paths
      EXPECT_GT((plain.qe - plain.qs + 1) * (plain.te - plain.ts + 1), 1L << 20);
      auto one = sw_traceback(*s.matrix, qe, te, s.gaps, end, {1, {SwIsa::scalar}});
      ASSERT_TRUE(one.has_value());
      EXPECT_EQ(*one, *a);
    }
  }
  std::printf("%d gapped alignments, %d with several optimal starts\n", gapped, start_ties);
  EXPECT_GE(gapped, 25);
  EXPECT_GE(start_ties, 5);
}

// Myers-Miller alone: the global optimum on small pairs, empty and one-residue sides included.
TEST(SwTraceback, global_path_scores_the_plain_global_optimum) {
  std::mt19937_64 rng(7);
  const auto all = settings();
  for (int k = 0; k < 300; ++k) {
    const Setting& s = all[static_cast<std::size_t>(k) % all.size()];
    const auto [q, t] = random_pair(rng, s.letters, rng() % 40, rng() % 40);
    const auto qe = enc(*s.matrix, q), te = enc(*s.matrix, t);
    const auto ops = sw_global_path(*s.matrix, qe, te, s.gaps);
    EXPECT_EQ(score_of(*s.matrix, q, t, s.gaps, 0, 0, ops_of(ops)),
              plain_global(*s.matrix, q, t, s.gaps))
        << q << " / " << t << " gaps " << s.gaps.open << "/" << s.gaps.extend;
  }
}

// The half passes in striped int32 lanes (every ISA the CPU runs) give the scalar passes' columns,
// on one thread and two: boxes with padding columns, gaps cheaper than any mismatch (lazy passes
// across several lanes), open below extend and free gaps.
TEST(SwTraceback, global_path_is_the_same_in_every_isa) {
  std::mt19937_64 rng(11);
  const auto all = settings();
  int compared = 0;
  for (int k = 0; k < 48; ++k) {
    const Setting& s = all[static_cast<std::size_t>(k) % all.size()];
    const std::size_t n = k < 4 ? 700 + rng() % 300 : 1 + rng() % 260;
    const std::size_t m = k < 4 ? 600 + rng() % 300 : 1 + rng() % 260;
    const auto [q, t] = random_pair(rng, s.letters, n, m);
    const auto qe = enc(*s.matrix, q), te = enc(*s.matrix, t);
    const auto scalar = ops_of(sw_global_path(*s.matrix, qe, te, s.gaps, 1, SwIsa::scalar));
    for (const SwIsa isa : {SwIsa::sse41, SwIsa::avx2, SwIsa::avx512}) {
      if (!sw_isa_supported(isa)) continue;
      for (const int threads : {1, 2}) {
        EXPECT_EQ(ops_of(sw_global_path(*s.matrix, qe, te, s.gaps, threads, isa)), scalar)
            << to_string(isa) << ", " << threads << " threads, pair " << k << " (" << n << " x "
            << m << ") gaps " << s.gaps.open << "/" << s.gaps.extend;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 0);
}

TEST(SwTraceback, counts_and_cigar) {
  const auto& b = ScoreMatrix::blosum62();
  const std::string q = "MKVLAYGIWFHEAG", t = "MKILAGIWHEAG";
  const auto qe = enc(b, q), te = enc(b, t);
  const SwResult end = sw_sequential(b, qe, te, {10, 1});
  auto a = sw_traceback(b, qe, te, {10, 1}, end);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->score, 45);
  EXPECT_EQ(cigar(*a), "5M1I3M1I4M");
  const auto st = alignment_stats(b, qe, te, *a);
  EXPECT_EQ(st.length, 14);
  EXPECT_EQ(st.gaps, 2);
  EXPECT_EQ(st.gap_opens, 2);
  EXPECT_EQ(st.identity, 11);  // all but V/I (positive in BLOSUM62)
  EXPECT_EQ(st.mismatches, 1);
  EXPECT_EQ(st.similarity, 12);
  EXPECT_EQ(cigar(SwAlignment{}), "");
}

}  // namespace
}  // namespace tp::kernels

namespace tp::kernels {
namespace {

// Fractional gap penalties are scored in integers: the least factor that makes both integral.
TEST(SwTraceback, gap_scale_and_scaled_matrices) {
  EXPECT_EQ(gap_scale(10, 1).value(), 1);
  EXPECT_EQ(gap_scale(10, 0.5).value(), 2);
  EXPECT_EQ(gap_scale(10.25, 0.5).value(), 4);
  EXPECT_EQ(gap_scale(0.125, 1).value(), 8);
  EXPECT_EQ(gap_scale(10.333, 0.5).value(), 1000);
  EXPECT_EQ(gap_scale(10, 0.0001).error().message,
            "gap penalties 10 and 0.0001 are not multiples of 0.001");
  EXPECT_EQ(gap_scale(-1, 1).error().message, "gap penalty -1 outside [0, 10000]");
  const auto& b = ScoreMatrix::blosum62();
  const auto twice = b.scaled(2);
  ASSERT_TRUE(twice.has_value());
  for (std::size_t k = 0; k < b.scores().size(); ++k) {
    EXPECT_EQ(twice->scores()[k], 2 * b.scores()[k]);
  }
  EXPECT_EQ(b.scaled(1000).error().message,
            "matrix BLOSUM62 scaled by 1000 has the entry 11000, beyond +-10000");
}

}  // namespace
}  // namespace tp::kernels

namespace tp::kernels {
namespace {

// The internal check fails loudly: an end that is not the score pass's (a score the reverse pass
// cannot reach) aborts with the failed assertion.
TEST(SwTracebackDeathTest, an_end_that_is_not_the_score_passes_aborts) {
  const auto& d = ScoreMatrix::ednafull();
  const auto q = d.encode("ACGTACGTAC", "q").value(), t = d.encode("ACGTTCGTAC", "t").value();
  const SwResult end = sw_sequential(d, q, t, {10, 1});
  ASSERT_GT(end.score, 0);
  const SwResult wrong{end.score + 1, end.end_query, end.end_target};
  EXPECT_DEATH((void)sw_traceback(d, q, t, {10, 1}, wrong),
               "assertion violated: reverse->score == end.score");
}

}  // namespace
}  // namespace tp::kernels
