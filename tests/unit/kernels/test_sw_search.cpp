// sw_search against the naive Gotoh DP and single-pair sw_traceback, on 1-3 threads, with short
// pairs one per thread and pairs tiled on every thread.
#include <tilepipe/kernels/sw_search.hpp>

#include "naive_sw.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace tp::kernels {
namespace {

TEST(SwSearch, every_pair_as_alone_on_any_threads_and_tiling) {
  const auto& mx = ScoreMatrix::blosum62();
  const unsigned seed = 1401;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  const std::string amino = "ACDEFGHIKLMNPQRSTVWY";
  auto random = [&](std::size_t n) {
    std::string s;
    for (std::size_t k = 0; k < n; ++k) s += amino[rng() % amino.size()];
    return s;
  };
  std::vector<std::string> q_text, t_text;
  for (int k = 0; k < 3; ++k) q_text.push_back(random(1 + rng() % 200));
  for (int k = 0; k < 7; ++k) t_text.push_back(random(1 + rng() % 300));
  t_text.push_back(q_text[0].substr(q_text[0].size() / 3) + random(20));  // a relative
  std::vector<std::vector<std::uint8_t>> queries, targets;
  for (const auto& s : q_text) queries.push_back(*mx.encode(s, "q"));
  for (const auto& s : t_text) targets.push_back(*mx.encode(s, "t"));
  std::vector<SwPair> pairs;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    for (std::size_t t = 0; t < targets.size(); ++t) pairs.push_back({q, t});
  }
  std::shuffle(pairs.begin(), pairs.end(), rng);  // results come back in the pairs' order
  const GapCosts gaps{10, 1};
  std::vector<SwPairResult> alone;
  for (const auto& p : pairs) {
    const SwResult best = naive_sw(mx, q_text[p.query], t_text[p.target], gaps);
    auto a = sw_traceback(mx, queries[p.query], targets[p.target], gaps, best);
    ASSERT_TRUE(a.has_value());
    alone.push_back({best, *a});
  }
  for (const int threads : {1, 2, 3}) {
    for (const std::int64_t tiled :
         {SwSearchOptions::default_tiled_cells, std::int64_t{1}, std::int64_t{5000}}) {
      SwSearchOptions o;
      o.threads = threads;
      o.tiled_cells = tiled;
      auto r = sw_search(mx, queries, targets, gaps, pairs, o);
      ASSERT_TRUE(r.has_value()) << r.error().message;
      ASSERT_EQ(r->size(), pairs.size());
      for (std::size_t k = 0; k < pairs.size(); ++k) {
        EXPECT_EQ((*r)[k].best, alone[k].best) << threads << " " << tiled << " pair " << k;
        ASSERT_TRUE((*r)[k].alignment.has_value());
        EXPECT_EQ(*(*r)[k].alignment, *alone[k].alignment) << threads << " " << tiled;
      }
    }
  }
  SwSearchOptions score_only;
  score_only.threads = 2;
  score_only.traceback = false;
  auto r = sw_search(mx, queries, targets, gaps, pairs, score_only);
  ASSERT_TRUE(r.has_value());
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    EXPECT_EQ((*r)[k].best, alone[k].best);
    EXPECT_FALSE((*r)[k].alignment.has_value());
  }
}

}  // namespace
}  // namespace tp::kernels
