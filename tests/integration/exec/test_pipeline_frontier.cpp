// Smith-Waterman across ranks and threads: the frontier pipeline against the sequential Gotoh DP.
#include <tilepipe/comm/launch.hpp>
#include <tilepipe/exec/gather.hpp>
#include <tilepipe/exec/pipeline_frontier.hpp>
#include <tilepipe/kernels/sw.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace {

using tp::plan::GroupingKind;
using tp::plan::ScheduleKind;

std::string random_protein(std::mt19937_64& rng, std::size_t n) {
  static const std::string letters = "ARNDCQEGHILKMFPSTWYV";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += letters[rng() % letters.size()];
  return s;
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
          tp::plan::PlanRequest req;
          req.size = {static_cast<std::int64_t>(q.size()), static_cast<std::int64_t>(t.size())};
          req.deps = *tp::plan::DependenceMatrix::parse("1,0;0,1;1,1");
          req.tile_height = 23;
          req.map_dim = 2;
          req.nodes = nodes;
          req.cpus = cpus;
          req.schedule = s;
          auto plan = tp::plan::Plan::make(req);
          ASSERT_TRUE(plan) << plan.error().message;
          SCOPED_TRACE("trial " + std::to_string(trial) + " nodes " + std::to_string(nodes) +
                       " cpus " + std::to_string(cpus) + " " + std::string(to_string(s)));
          tp::comm::Config config;
          config.sync = tp::comm::SyncMode::block;
          auto launched = tp::comm::launch_local(nodes, config, [&](tp::comm::World& world) {
            auto outcome = tp::exec::run_rank(kernel, *plan, world, tp::exec::PipelineOptions{});
            if (!outcome) {
              std::fprintf(stderr, "%s\n", outcome.error().message.c_str());
              return 3;
            }
            auto total = tp::exec::gather_outcomes<tp::kernels::SwKernel>(world, *outcome);
            if (!total) return 4;
            if (world.rank() != 0) return 0;
            const auto& r = (*total)->result;
            if (!(r == expected)) {
              std::fprintf(stderr, "got %d at (%lld,%lld), expected %d at (%lld,%lld)\n", r.score,
                           static_cast<long long>(r.end_query),
                           static_cast<long long>(r.end_target), expected.score,
                           static_cast<long long>(expected.end_query),
                           static_cast<long long>(expected.end_target));
              return 5;
            }
            return 0;
          });
          ASSERT_TRUE(launched);
          EXPECT_EQ(launched->status(), 0);
          ++ran;
        }
      }
    }
  }
  EXPECT_EQ(ran, 4 * 3 * 2 * 2);
}

}  // namespace
