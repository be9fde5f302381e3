// Unit tests of grouping matrices (seed 002 formulas 2-3) and the group schedules Pi^G.
#include <tilepipe/plan/schedule.hpp>

#include <gtest/gtest.h>

namespace {

using tp::plan::Grouping;
using tp::plan::GroupingKind;
using tp::plan::Index;
using tp::plan::Schedule;
using tp::plan::ScheduleKind;

TEST(Grouping, hyperplane_matrices_follow_formula_3) {
  // Seed 002 Example 2: map dimension 3, m = (2, 1).
  Grouping g(GroupingKind::hyperplane, 2, {2, 1, 1});
  EXPECT_EQ(g.p(), *tp::plan::parse_rational_matrix("2,0,0;0,1,0;-2,-1,1", "P"));
  EXPECT_EQ(g.h(), *tp::plan::parse_rational_matrix("1/2,0,0;0,1,0;1,1,1", "H"));
  EXPECT_EQ(*g.p().inverse(), g.h());
}

TEST(Grouping, group_of_equals_floor_of_hg_times_tile) {
  for (auto kind : {GroupingKind::hyperplane, GroupingKind::vertical}) {
    Grouping g(kind, 1, {3, 1, 2});
    for (std::int64_t a = 0; a < 7; ++a) {
      for (std::int64_t b = 0; b < 5; ++b) {
        for (std::int64_t c = 0; c < 5; ++c) {
          EXPECT_EQ(g.group_of({a, b, c}), g.h().apply_floor({a, b, c}));
        }
      }
    }
  }
}

TEST(Grouping, seed_002_example_1_groups) {
  // 2-D, map dimension 1, m_2 = 2: tiles (1,0) and (0,1) form group (1,0); (2,0),(1,1) -> (2,0).
  Grouping g(GroupingKind::hyperplane, 0, {1, 2});
  EXPECT_EQ(g.group_of({1, 0}), (Index{1, 0}));
  EXPECT_EQ(g.group_of({0, 1}), (Index{1, 0}));
  EXPECT_EQ(g.group_of({2, 0}), (Index{2, 0}));
  EXPECT_EQ(g.group_of({1, 1}), (Index{2, 0}));
  EXPECT_EQ(g.group_of({0, 2}), (Index{2, 1}));
}

TEST(Schedule, vectors_per_scheme) {
  const Index m{1, 2};
  EXPECT_EQ(Schedule(ScheduleKind::overlap, Grouping(GroupingKind::hyperplane, 0, m), 0).vector(),
            (Index{1, 1}));
  EXPECT_EQ(Schedule(ScheduleKind::blocking, Grouping(GroupingKind::hyperplane, 0, m), 0).vector(),
            (Index{1, 0}));
  EXPECT_EQ(Schedule(ScheduleKind::overlap, Grouping(GroupingKind::vertical, 0, m), 0).vector(),
            (Index{1, 2}));
  EXPECT_EQ(Schedule(ScheduleKind::blocking, Grouping(GroupingKind::vertical, 0, m), 0).vector(),
            (Index{1, 1}));
}

TEST(Schedule, single_cpu_overlap_is_seed_000_two_per_non_mapping_step) {
  // m = 1: t(j) = 2 sum_{i != k} j_i + j_k (seed 000, section 4), for both groupings.
  for (auto kind : {GroupingKind::hyperplane, GroupingKind::vertical}) {
    Schedule s(ScheduleKind::overlap, Grouping(kind, 2, {1, 1, 1}), 2);
    EXPECT_EQ(s.time_of({2, 1, 7}), 2 * 2 + 2 * 1 + 7);
  }
}

}  // namespace
