// The seeds' published configurations reproduced by the planner (seed 000 5.2, seed 002 4.7-5.3).
#include <tilepipe/plan/plan.hpp>

#include <gtest/gtest.h>

#include "../plan_request.hpp"

namespace {

using tp::plan::DependenceMatrix;
using tp::plan::GroupingKind;
using tp::plan::Index;
using tp::plan::Plan;
using tp::plan::PlanRequest;
using tp::plan::ScheduleKind;
using tp::plan::TileSpecKind;
using tp::test::height_request;

TEST(PlanSeeds, seed_000_12x12x512k_on_9_nodes_has_520_steps) {
  auto plan = Plan::make(height_request({12, 12, 524288}, 1024, 9, 1));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->mesh(), (Index{3, 3}));
  EXPECT_EQ(plan->map_dim(), 2);
  EXPECT_EQ(plan->tiling().tile_extents(), (Index{4, 4, 1024}));
  // P'(g) = 2 sum x_i + x_k + 1 with x_i = 2, x_k = 511.
  EXPECT_EQ(plan->steps(), 2 * (2 + 2) + 511 + 1);
  EXPECT_EQ(plan->steps(), 520);
}

TEST(PlanSeeds, seed_002_16x16x64k_on_8_dual_nodes_has_74_steps) {
  auto plan = Plan::make(height_request({16, 16, 65536}, 1024, 8, 2));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto u = plan->tile_space().counts();
  // 3X/(2x) + 2Y/y + Z/z - 4, with X/x the tile rows along the dimension with m_k = 2.
  const int two = plan->cpu_grid()[0] == 2 ? 0 : 1;
  const std::int64_t formula = 3 * u[static_cast<std::size_t>(two)] / 2 +
                               2 * u[static_cast<std::size_t>(1 - two)] + 65536 / 1024 - 4;
  EXPECT_EQ(formula, 74);
  EXPECT_EQ(plan->steps(), 74);
}

TEST(PlanSeeds, seed_002_four_schemes_in_2d_follow_section_4_8) {
  // X/x = 10 tiles along the mapping dimension, Y/y = 6 rows on 3 dual nodes (Figures 5-6).
  const std::int64_t X = 10, Y = 6;
  const struct {
    ScheduleKind s;
    GroupingKind g;
    std::int64_t steps;
  } cases[] = {
      {ScheduleKind::blocking, GroupingKind::vertical, X + Y / 2 - 1},
      {ScheduleKind::overlap, GroupingKind::vertical, X + Y - 2},
      {ScheduleKind::overlap, GroupingKind::hyperplane, X + 3 * Y / 2 - 2},
      {ScheduleKind::blocking, GroupingKind::hyperplane, X + Y - 1},
  };
  for (const auto& c : cases) {
    auto r = height_request({60, 60}, 6, 3, 2);
    r.map_dim = 1;
    r.schedule = c.s;
    r.grouping = c.g;
    auto plan = Plan::make(r);
    ASSERT_TRUE(plan) << plan.error().message;
    EXPECT_EQ(plan->steps(), c.steps) << to_string(c.s) << " " << to_string(c.g);
  }
}

PlanRequest tile_space_request(Index u, std::int64_t nodes, std::int64_t cpus) {
  // Tiles of 2 points per side so that the unit dependences are legal.
  PlanRequest r;
  for (auto x : u) r.size.push_back(2 * x);
  r.deps = DependenceMatrix::unit(static_cast<int>(u.size()));
  r.tile_kind = TileSpecKind::extents;
  r.tile_extents = Index(u.size(), 2);
  r.nodes = nodes;
  r.cpus = cpus;
  return r;
}

TEST(PlanSeeds, seed_002_example_3_choice_of_m_k) {
  // J^S = 20x100x20, m = 4: m_1 = m_3 = 2 gives 156 steps; m_1 = 4, m_3 = 1 gives 161.
  auto best = Plan::make(tile_space_request({20, 100, 20}, 100, 4));
  ASSERT_TRUE(best) << best.error().message;
  EXPECT_EQ(best->map_dim(), 1);
  EXPECT_EQ(best->cpu_grid(), (Index{2, 2}));
  EXPECT_EQ(best->steps(), 156);
  auto r = tile_space_request({20, 100, 20}, 100, 4);
  r.mesh = Index{5, 20};
  auto forced = Plan::make(r);
  ASSERT_TRUE(forced) << forced.error().message;
  EXPECT_EQ(forced->cpu_grid(), (Index{4, 1}));
  EXPECT_EQ(forced->steps(), 161);
}

TEST(PlanSeeds, seed_002_example_3_second_space) {
  // J^S = 20x120x150, m = 4: m_1 = 1, m_2 = 4 gives 336 steps; m_1 = m_2 = 2 gives 356.
  auto best = Plan::make(tile_space_request({20, 120, 150}, 600, 4));
  ASSERT_TRUE(best) << best.error().message;
  EXPECT_EQ(best->map_dim(), 2);
  EXPECT_EQ(best->cpu_grid(), (Index{1, 4}));
  EXPECT_EQ(best->steps(), 336);
  auto r = tile_space_request({20, 120, 150}, 600, 4);
  r.mesh = Index{10, 60};
  auto forced = Plan::make(r);
  ASSERT_TRUE(forced) << forced.error().message;
  EXPECT_EQ(forced->steps(), 356);
}

TEST(PlanIdle, more_cpus_than_rows_leaves_nodes_and_cpus_idle) {
  // 2x2 cross-section, 9 nodes: unit dependences need tiles 2 wide, so one row of tiles and 8
  // nodes run nothing (the plan was refused before).
  auto plan = Plan::make(height_request({2, 2, 100}, 10, 9, 1));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->tile_space().counts(), (Index{1, 1, 10}));
  EXPECT_EQ(plan->idle_cpus(), 8);
  EXPECT_EQ(plan->idle_nodes(), 8);
  std::int64_t empty = 0;
  for (std::int64_t r = 0; r < 9; ++r) empty += plan->tiles_of(r).empty() ? 1 : 0;
  EXPECT_EQ(empty, plan->idle_nodes());
  EXPECT_FALSE(plan->tiles_of(0).empty());  // node 0 always has row 0
}

TEST(PlanIdle, cpus_without_rows_inside_a_working_node) {
  // One row of tiles across a 2-wide dimension (tiles 2 wide), 4 CPUs on 1 node: 3 idle CPUs.
  auto r = height_request({2, 64}, 8, 1, 4);
  auto plan = Plan::make(r);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->tile_space().counts(), (Index{1, 8}));
  EXPECT_EQ(plan->idle_nodes(), 0);
  EXPECT_EQ(plan->idle_cpus(), 3);
}

TEST(PlanIdle, issue_15_example_keeps_147_steps_the_145_needs_an_illegal_tile) {
  auto r = height_request({8, 65536, 48}, 512, 12, 4);
  r.map_dim = 2;
  auto plan = Plan::make(r);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->steps(), 147);
  EXPECT_EQ(plan->tiling().tile_extents(), (Index{2, 512, 4}));  // grain 4096: every CPU a row
  EXPECT_EQ(plan->idle_cpus(), 0);
  // 145 steps would take mesh 4x3 with grid 2x2, 8x6 rows: tiles 1 wide across dimension 1,
  // which the dependence (1, 0, 0) forbids.
  r.tile_kind = TileSpecKind::extents;
  r.tile_extents = {1, 512, 8};
  r.mesh = Index{4, 3};
  auto illegal = Plan::make(r);
  ASSERT_FALSE(illegal);
  EXPECT_EQ(illegal.error().code, tp::Errc::illegal_tiling);
}

// The automatic mapping dimension: the most tiles; a tie goes to the last dimension (the seeds)
// unless the kernel's array is contiguous along it, then to the last other one of the tie.
TEST(PlanMapping, a_tie_avoids_the_dimension_the_array_is_contiguous_along) {
  PlanRequest r = height_request({64, 64, 64}, 16, 2, 1);
  auto seeds = Plan::make(r);
  ASSERT_TRUE(seeds) << seeds.error().message;
  EXPECT_EQ(seeds->map_dim(), 2);
  r.contiguous_dim = 2;
  auto rows = Plan::make(r);
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(rows->map_dim(), 1);
  EXPECT_EQ(rows->tiling().tile_extents(), (Index{32, 16, 64}));
  r.contiguous_dim = 0;  // not in the tie's way: the last
  EXPECT_EQ(Plan::make(r)->map_dim(), 2);
  PlanRequest most = height_request({64, 64, 256}, 16, 2, 1);  // no tie: the most tiles wins
  most.contiguous_dim = 2;
  EXPECT_EQ(Plan::make(most)->map_dim(), 2);
}

TEST(PlanErrors, a_height_the_dependences_forbid) {
  // No width helps when the height is 1 along a dimension a unit dependence crosses.
  auto plan = Plan::make(height_request({4, 64}, 1, 4, 1));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, tp::Errc::illegal_tiling);
  EXPECT_NE(plan.error().message.find("dimension 2"), std::string::npos);
}

TEST(PlanErrors, fixed_tiles_with_more_rows_than_cpus) {
  auto r = height_request({12, 12, 64}, 8, 2, 1);
  r.tile_kind = TileSpecKind::extents;
  r.tile_extents = {2, 2, 8};  // 6x6 rows on 2 nodes x 1 CPU
  auto plan = Plan::make(r);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().message,
            "cannot map the tile space: it has 6x6 rows of tiles across the mapping dimension 3, "
            "and no mesh of 2 nodes x 1 CPU gives every row its own CPU");
}

TEST(PlanErrors, zero_cpus_and_bad_mesh) {
  auto r = height_request({12, 12, 64}, 8, 9, 0);
  EXPECT_FALSE(Plan::make(r));
  r.cpus = 1;
  r.mesh = Index{2, 2};
  auto plan = Plan::make(r);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().option, "mesh");
  EXPECT_EQ(plan.error().message, "2x2 does not have 9 nodes");
}

}  // namespace
