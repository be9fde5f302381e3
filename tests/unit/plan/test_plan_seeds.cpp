// The seeds' published configurations reproduced by the planner (seed 000 5.2, seed 002 4.7-5.3).
#include <tilepipe/plan/plan.hpp>

#include <gtest/gtest.h>

namespace {

using tp::plan::DependenceMatrix;
using tp::plan::GroupingKind;
using tp::plan::Index;
using tp::plan::Plan;
using tp::plan::PlanRequest;
using tp::plan::ScheduleKind;
using tp::plan::TileSpecKind;

PlanRequest height_request(Index size, std::int64_t height, std::int64_t nodes, std::int64_t cpus) {
  PlanRequest r;
  r.size = std::move(size);
  r.deps = DependenceMatrix::unit(static_cast<int>(r.size.size()));
  r.tile_kind = TileSpecKind::height;
  r.tile_height = height;
  r.nodes = nodes;
  r.cpus = cpus;
  return r;
}

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

TEST(PlanErrors, node_count_that_cannot_form_a_mesh) {
  auto plan = Plan::make(height_request({2, 2, 100}, 10, 9, 1));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().message,
            "cannot form a mesh of 9 nodes x 1 CPU over the extents 2x2 across the mapping "
            "dimension 3: every CPU needs its own non-empty row of tiles");
}

TEST(PlanErrors, derived_widths_too_small_for_the_dependences) {
  // 4 rows over an extent of 4 leave tiles 1 wide: a unit dependence is not shorter than that.
  auto plan = Plan::make(height_request({4, 64}, 8, 4, 1));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, tp::Errc::illegal_tiling);
  EXPECT_NE(plan.error().message.find("dimension 1"), std::string::npos);
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
