// The block-cyclic mapping (ADR 0018): every tile dependence runs forward in time (across nodes
// with the block schedule's node gap, the wrap from the last node to the first included), no CPU
// runs two tiles in one step, tiles_of covers every tile once, and the step count.
#include <tilepipe/plan/plan.hpp>

#include <gtest/gtest.h>

#include "../plan_request.hpp"

#include <map>
#include <set>

namespace {

using tp::plan::DependenceMatrix;
using tp::plan::GroupingKind;
using tp::plan::Index;
using tp::plan::Plan;
using tp::plan::PlanRequest;
using tp::plan::ScheduleKind;
using tp::plan::TileSpecKind;
using tp::test::height_request;

// Checks the schedule of `plan` tile by tile.
void check_schedule(const Plan& plan) {
  const Index counts = plan.tile_space().counts();
  const int n = plan.space().dims();
  std::int64_t tiles = 0;
  std::int64_t last = 0;
  std::set<std::pair<Index, std::int64_t>> owner_time;  // (rank, cpu, vertical: -) x time
  std::map<std::pair<std::int64_t, std::int64_t>, std::set<Index>> groups;  // (rank, t) -> tiles
  for (std::int64_t r = 0; r < plan.nodes(); ++r) {
    for (const auto& t : plan.tiles_of(r)) {
      ++tiles;
      ASSERT_EQ(plan.rank_of(plan.node_of(t)), r);
      const std::int64_t time = plan.time_of(t);
      last = std::max(last, time);
      Index who{r, plan.cpu_index(plan.cpu_of(t))};
      EXPECT_TRUE(owner_time.insert({who, time}).second) << "two tiles of one CPU in one step";
      groups[{r, time}].insert(t);
      for (const auto& d : plan.tile_deps()) {
        Index succ = t;
        bool inside = true;
        for (int k = 0; k < n; ++k) {
          const auto kk = static_cast<std::size_t>(k);
          succ[kk] += d[kk];
          inside = inside && succ[kk] < counts[kk];
        }
        if (!inside) continue;
        // The block schedule's gap between these CPUs: across nodes as between neighbour nodes.
        const bool remote = plan.node_of(succ) != plan.node_of(t);
        const bool overlap = plan.schedule().kind() == ScheduleKind::overlap;
        // Vertical grouping: a node's CPUs run one group in skewed sub-steps, one time step.
        const bool vertical = plan.schedule().grouping().kind() == GroupingKind::vertical;
        const std::int64_t gap = remote && overlap ? 2 : (vertical && !remote ? 0 : 1);
        EXPECT_GE(plan.time_of(succ) - time, gap);
      }
    }
  }
  EXPECT_EQ(tiles, plan.tile_space().size());
  EXPECT_EQ(plan.steps(), last + 1);
  if (plan.schedule().grouping().kind() == GroupingKind::vertical) {
    // A step of a node holds one tile per working CPU of one group: the same j_i everywhere.
    for (const auto& [key, ts] : groups) {
      std::set<std::int64_t> along_i;
      for (const auto& t : ts) along_i.insert(t[static_cast<std::size_t>(plan.map_dim())]);
      EXPECT_EQ(along_i.size(), 1u);
    }
  }
}

TEST(PlanCyclic, schedules_are_legal_and_conflict_free) {
  for (auto s : {ScheduleKind::overlap, ScheduleKind::blocking}) {
    for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
      for (std::int64_t c = 1; c <= 3; ++c) {
        for (std::int64_t p = 1; p <= 3; ++p) {
          for (std::int64_t m = 1; m <= 2; ++m) {
            auto two = Plan::make(height_request({40, 48}, 6, p, m, s, g, {c}));
            ASSERT_TRUE(two) << two.error().message;
            EXPECT_EQ(two->cyclic(), (Index{c}));
            check_schedule(*two);
            auto three =
                Plan::make(height_request({20, 14, 24}, 6, p, m, s, g, {c, c == 3 ? 1 : c}));
            ASSERT_TRUE(three) << three.error().message;
            check_schedule(*three);
          }
        }
      }
    }
  }
}

TEST(PlanCyclic, the_steps_of_a_one_dimensional_mesh) {
  // 2 nodes x 1 CPU, rows 4 = 2 cycles of 2, 8 tiles along i; overlap + hyperplane with m = 1:
  // f(x) = 2x, so the wrap needs L >= f(2) = 4 and the CPU's row L >= 8: last tile at
  // f(1) + L + 7 = 2 + 8 + 7.
  auto plan = Plan::make(
      height_request({16, 64}, 8, 2, 1, ScheduleKind::overlap, GroupingKind::hyperplane, {2}));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->tile_space().counts(), (Index{4, 8}));
  EXPECT_EQ(plan->steps(), 18);
  EXPECT_EQ(plan->node_of({2, 0}), (Index{0}));
  EXPECT_EQ(plan->node_of({3, 0}), (Index{1}));
  // Short rows along i: the wrap gap decides (L = 4 > 2 tiles).
  auto wide = Plan::make(
      height_request({16, 16}, 8, 2, 1, ScheduleKind::overlap, GroupingKind::hyperplane, {2}));
  ASSERT_TRUE(wide) << wide.error().message;
  EXPECT_EQ(wide->steps(), 2 + 4 + 2);
}

TEST(PlanCyclic, refuses_a_factor_the_rows_cannot_fill) {
  auto plan = Plan::make(
      height_request({4, 64}, 8, 2, 1, ScheduleKind::overlap, GroupingKind::hyperplane, {3}));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().option, "cyclic");
  EXPECT_EQ(plan.error().message,
            "factor 3 along dimension 1 is larger than the rows allow: 2 rows of tiles over 2 "
            "CPUs fill at most 1 cycles");
  auto wrong = Plan::make(height_request({8, 8, 64}, 8, 2, 1, ScheduleKind::overlap,
                                         GroupingKind::hyperplane, {2, 2, 2}));
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().option, "cyclic");
}

}  // namespace
