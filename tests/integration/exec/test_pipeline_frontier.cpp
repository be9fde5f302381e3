// Smith-Waterman across ranks and threads: the frontier pipeline against the sequential Gotoh DP.
#include <tilepipe/comm/launch.hpp>
#include <tilepipe/exec/gather.hpp>
#include <tilepipe/exec/pipeline_frontier.hpp>
#include <tilepipe/kernels/sw.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

using tp::plan::GroupingKind;
using tp::plan::ScheduleKind;

std::string random_protein(std::mt19937_64& rng, std::size_t n) {
  static const std::string letters = "ARNDCQEGHILKMFPSTWYV";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += letters[rng() % letters.size()];
  return s;
}

// The plan request of a local alignment of q against t: dependences (1,0), (0,1), (1,1), rows
// of tiles along the target (map_dim 2).
tp::plan::PlanRequest sw_request(std::size_t q_len, std::size_t t_len, std::int64_t tile_height,
                                 int nodes, int cpus) {
  tp::plan::PlanRequest req;
  req.size = {static_cast<std::int64_t>(q_len), static_cast<std::int64_t>(t_len)};
  req.deps = *tp::plan::DependenceMatrix::parse("1,0;0,1;1,1");
  req.tile_height = tile_height;
  req.map_dim = 2;
  req.nodes = nodes;
  req.cpus = cpus;
  return req;
}

// Runs `kernel` under `plan` on plan.nodes() local ranks (processes); 0 when rank 0's gathered
// result is `expected` and every rank's N is in [min_subtiles, max_subtiles], else the failing
// rank's code (3: run_rank failed, 4: gather, 5: wrong result, 7: N out of range).
int run_and_compare(const tp::kernels::SwKernel& kernel, const tp::plan::Plan& plan,
                    const tp::exec::PipelineOptions& options, const tp::kernels::SwResult& expected,
                    int min_subtiles = 1, int max_subtiles = 1) {
  tp::comm::Config config;
  config.sync = tp::comm::SyncMode::block;
  auto launched =
      tp::comm::launch_local(static_cast<int>(plan.nodes()), config, [&](tp::comm::World& world) {
        auto outcome = tp::exec::run_rank(kernel, plan, world, options);
        if (!outcome) {
          std::fprintf(stderr, "%s\n", outcome.error().message.c_str());
          return 3;
        }
        const int n = outcome->report.subtiles;
        if (n < min_subtiles || n > max_subtiles) {
          std::fprintf(stderr, "ran %d subtiles, expected %d..%d\n", n, min_subtiles, max_subtiles);
          return 7;
        }
        auto total = tp::exec::gather_outcomes<tp::kernels::SwKernel>(world, *outcome);
        if (!total) return 4;
        if (world.rank() != 0) return 0;
        const auto& r = (*total)->result;
        if (!(r == expected)) {
          std::fprintf(stderr, "got %d at (%lld,%lld), expected %d at (%lld,%lld)\n", r.score,
                       static_cast<long long>(r.end_query), static_cast<long long>(r.end_target),
                       expected.score, static_cast<long long>(expected.end_query),
                       static_cast<long long>(expected.end_target));
          return 5;
        }
        return 0;
      });
  if (!launched) return 6;
  return launched->status();
}

TEST(PipelineFrontier, smith_waterman_on_ranks_and_threads_matches_the_sequential_dp) {
  std::mt19937_64 rng(2024);
  const auto& matrix = tp::kernels::ScoreMatrix::blosum62();
  int ran = 0;
  for (int trial = 0; trial < 4; ++trial) {
    const auto q =
        *matrix.encode(random_protein(rng, 40 + 13 * static_cast<std::size_t>(trial)), "q");
    auto t_text = random_protein(rng, 300 + 71 * static_cast<std::size_t>(trial));
    const auto t = *matrix.encode(t_text, "t");
    const tp::kernels::GapCosts gaps{10, 1};
    const auto expected = tp::kernels::sw_sequential(matrix, q, t, gaps);
    const auto kernel = *tp::kernels::SwKernel::make(matrix, q, t, gaps);
    for (int nodes = 1; nodes <= 3; ++nodes) {
      for (int cpus = 1; cpus <= 2; ++cpus) {
        for (auto s : {ScheduleKind::blocking, ScheduleKind::overlap}) {
          auto req = sw_request(q.size(), t.size(), 23, nodes, cpus);
          req.schedule = s;
          auto plan = tp::plan::Plan::make(req);
          ASSERT_TRUE(plan) << plan.error().message;
          SCOPED_TRACE("trial " + std::to_string(trial) + " nodes " + std::to_string(nodes) +
                       " cpus " + std::to_string(cpus) + " " + std::string(to_string(s)));
          EXPECT_EQ(run_and_compare(kernel, *plan, tp::exec::PipelineOptions{}, expected), 0);
          ++ran;
        }
      }
    }
  }
  EXPECT_EQ(ran, 4 * 3 * 2 * 2);
}

// Vertical grouping: each tile runs as N subtiles along the target (the mapping dimension); the
// faces between ranks are concatenations of subtile faces. N = 5 does not divide the tiles' 23
// columns, and exceeds the last column of tiles' extent where the target is short (clamped).
TEST(PipelineFrontier, vertical_grouping_matches_the_sequential_dp) {
  std::mt19937_64 rng(77);
  const auto& matrix = tp::kernels::ScoreMatrix::blosum62();
  const tp::kernels::GapCosts gaps{10, 1};
  struct Input {
    std::string q, t;
  };
  std::vector<Input> inputs;
  inputs.push_back({random_protein(rng, 36), random_protein(rng, 163)});  // last column: 2 wide
  inputs.push_back({random_protein(rng, 11), random_protein(rng, 70)});
  inputs.push_back({"W", "W"});                                   // length 1
  inputs.push_back({std::string(9, 'W'), std::string(50, 'G')});  // no positive score (W/G = -2)
  int ran = 0;
  for (std::size_t x = 0; x < inputs.size(); ++x) {
    const auto q = *matrix.encode(inputs[x].q, "q");
    const auto t = *matrix.encode(inputs[x].t, "t");
    const auto expected = tp::kernels::sw_sequential(matrix, q, t, gaps);
    if (x == 3) {
      ASSERT_EQ(expected.score, 0);
    }
    const auto kernel = *tp::kernels::SwKernel::make(matrix, q, t, gaps);
    for (int nodes = 1; nodes <= 3; ++nodes) {
      for (int cpus = 1; cpus <= 3; ++cpus) {
        if (static_cast<std::size_t>(nodes * cpus) > q.size()) continue;
        for (int n : {1, 2, 3, 5}) {
          for (auto s : {ScheduleKind::blocking, ScheduleKind::overlap}) {
            auto req = sw_request(q.size(), t.size(), 23, nodes, cpus);
            req.schedule = s;
            req.grouping = GroupingKind::vertical;
            auto plan = tp::plan::Plan::make(req);
            if (!plan && x > 0) continue;  // short query: a CPU would get no row of tiles
            ASSERT_TRUE(plan) << plan.error().message;
            SCOPED_TRACE("input " + std::to_string(x) + " nodes " + std::to_string(nodes) +
                         " cpus " + std::to_string(cpus) + " subtiles " + std::to_string(n) + " " +
                         std::string(to_string(s)));
            tp::exec::PipelineOptions options;
            options.subtiles = n;
            // Every tile at least n wide: N is n, else clamped to the narrowest tile.
            const bool wide = t.size() >= 23 * 2 && t.size() % 23 >= static_cast<std::size_t>(n);
            EXPECT_EQ(run_and_compare(kernel, *plan, options, expected, wide ? n : 1, n), 0);
            ++ran;
          }
        }
      }
    }
  }
  EXPECT_GT(ran, 100);
}

// Every SIMD tile function the CPU runs, through the faces between ranks and threads: scores that
// overflow 8 bits (and, on the long pair, 16 bits) in some tiles and not in others.
TEST(PipelineFrontier, simd_tile_functions_match_the_sequential_dp_across_ranks) {
  std::mt19937_64 rng(1616);
  const auto& matrix = tp::kernels::ScoreMatrix::blosum62();
  const tp::kernels::GapCosts gaps{10, 1};
  std::vector<tp::kernels::SwOptions> paths;
  // (The scalar function runs in the tests above.)
  for (const auto isa :
       {tp::kernels::SwIsa::sse41, tp::kernels::SwIsa::avx2, tp::kernels::SwIsa::avx512}) {
    if (!tp::kernels::sw_isa_supported(isa)) continue;
    for (const int bits : {8, 16}) paths.push_back({isa, bits});
  }
  // W/W scores 11, C/C 9: a shared W/C-rich stretch scores about 10 per residue, so the long
  // one passes 32767 (16 bits) in its later tiles.
  const auto wc = [&](std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += "WWWWC"[rng() % 5];
    return s;
  };
  for (const std::size_t shared : {std::size_t{260}, std::size_t{3300}}) {
    const std::string core = wc(shared);
    const auto q = *matrix.encode(random_protein(rng, 40) + core, "q");
    const auto t = *matrix.encode(random_protein(rng, 90) + core + random_protein(rng, 30), "t");
    const auto expected = tp::kernels::sw_sequential(matrix, q, t, gaps);
    ASSERT_GT(expected.score, shared > 1000 ? 32767 : 127);
    for (const auto& path : paths) {
      // The short pair: SSE4.1 from 8 bits and AVX2 from 16 bits on every rank x CPU shape; the
      // long one (slow under sanitizers): the best ISA from 8 bits on 2 ranks x 2 CPUs.
      const bool long_pair = shared > 1000;
      if (long_pair ? path.min_bits != 8 || path.isa != tp::kernels::best_sw_isa()
                    : (path.isa == tp::kernels::SwIsa::sse41) != (path.min_bits == 8)) {
        continue;
      }
      const auto kernel = *tp::kernels::SwKernel::make(matrix, q, t, gaps, path);
      for (int nodes = 1; nodes <= 3; ++nodes) {
        for (int cpus = 1; cpus <= 2; ++cpus) {
          if (long_pair && (nodes != 2 || cpus != 2)) continue;
          auto plan = tp::plan::Plan::make(
              sw_request(q.size(), t.size(), long_pair ? 400 : 40, nodes, cpus));
          ASSERT_TRUE(plan) << plan.error().message;
          SCOPED_TRACE(std::string(to_string(kernel.isa())) + "/" +
                       std::to_string(kernel.min_bits()) + " shared " + std::to_string(shared) +
                       " nodes " + std::to_string(nodes) + " cpus " + std::to_string(cpus));
          EXPECT_EQ(run_and_compare(kernel, *plan, tp::exec::PipelineOptions{}, expected), 0);
        }
      }
    }
  }
}

// subtiles = 0: N measured (formula (7)), the same on every rank.
TEST(PipelineFrontier, vertical_grouping_with_measured_subtiles_matches_the_sequential_dp) {
  std::mt19937_64 rng(5);
  const auto& matrix = tp::kernels::ScoreMatrix::blosum62();
  const tp::kernels::GapCosts gaps{10, 1};
  const auto q = *matrix.encode(random_protein(rng, 60), "q");
  const auto t = *matrix.encode(random_protein(rng, 400), "t");
  const auto expected = tp::kernels::sw_sequential(matrix, q, t, gaps);
  const auto kernel = *tp::kernels::SwKernel::make(matrix, q, t, gaps);
  auto req = sw_request(q.size(), t.size(), 40, 2, 2);
  req.grouping = GroupingKind::vertical;
  auto plan = tp::plan::Plan::make(req);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(run_and_compare(kernel, *plan, tp::exec::PipelineOptions{}, expected, 1, 40), 0);
}

}  // namespace
