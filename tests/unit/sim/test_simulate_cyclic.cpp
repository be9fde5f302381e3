// The simulator on block-cyclic plans (ADR 0018): a two-rank case with the wrap derived by hand in
// both regimes (the wrap's latency hidden by the first cycle, or a per-cycle fill), one rank
// against the closed formula, rank steps and messages against the plan's tiles, and the
// enumerated rows against the block mapping's closed form.
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/sim/simulate.hpp>

#include <gtest/gtest.h>

#include "../plan_request.hpp"

#include <set>

namespace sim_cyclic_test {

using tp::model::Machine;
using tp::model::Seconds;
using tp::model::SendMode;
using tp::plan::GroupingKind;
using tp::plan::Index;
using tp::plan::Plan;
using tp::plan::ScheduleKind;
using tp::sim::SimOptions;
using tp::sim::simulate;

constexpr double us = 1e-6;

/// 1 ns per point; no start-up, synchronization or transfer cost: only compute and latency.
Machine latency_only(double latency_us, SendMode mode = SendMode::serial) {
  Machine m;
  m.name = "latency-only";
  m.host_bound = false;
  m.transport = "test";
  m.compute.t_comp1 = Seconds{1e-9};
  m.compute.element_bytes = 8;
  m.t_start = Seconds{0};
  m.t_sync = Seconds{0};
  m.t_sync_in = Seconds{0};
  m.link.latency = Seconds{latency_us * us};
  m.link.bandwidth_bytes_per_s = 1e30;
  m.send_mode = mode;
  return m;
}

tp::Expected<Plan> cyclic_plan(Index size, std::int64_t height, std::int64_t nodes,
                               std::int64_t cpus, Index cyclic,
                               ScheduleKind s = ScheduleKind::overlap,
                               GroupingKind g = GroupingKind::hyperplane) {
  const int map_dim = static_cast<int>(size.size());
  return Plan::make(tp::test::height_request(std::move(size), height, nodes, cpus, s, g,
                                             std::move(cyclic), map_dim));
}

double sim_s(const Plan& plan, const Machine& m, SimOptions o = {}) {
  auto r = simulate(plan, m, o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? r->simulated.count() : -1;
}

TEST(SimulateCyclic, two_ranks_with_the_wrap_are_the_hand_derived_time) {
  // 4 rows of 8 points on 2 ranks x 1 CPU, c = 2: rank 0 runs rows 0 and 2, rank 1 rows 1 and 3;
  // z = 10 tiles of 8 x 1000 points (c = 8 us) per row. Plan times: row v of cycle y at
  // 2 v + 10 y + j_i. Row 1 (rank 1) hands its faces to row 2 (rank 0): the wrap.
  const std::int64_t z = 10;
  auto plan = cyclic_plan({32, z * 1000}, 1000, 2, 1, {2});
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->steps(), 2 * z + 2);
  const double c = 8 * 1000e-9;
  // Overlap: a face leaves when its sender's next step begins. Rank 1 runs row 1's tile j from
  // (j + 1) c + l; rank 0 needs row 1's tile j for row 2's tile j at (j + 2) c + 2 l.
  // Latency 5 us: 2 l <= (z - 2) c, rank 0 runs its 2 z tiles back to back; rank 1's row 3 tile
  // j starts at (z + j + 1) c + l: the end (2 z + 1) c + l.
  {
    const double l = 5 * us;
    auto s = simulate(*plan, latency_only(5), {});
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_NEAR(s->simulated.count(), static_cast<double>(2 * z + 1) * c + l, 1e-12);
    // Rank 0 sends both its rows' faces (z each), rank 1 row 1's over the wrap; row 3 is last.
    EXPECT_EQ(s->ranks[0].messages_sent, 2 * z);
    EXPECT_EQ(s->ranks[1].messages_sent, z);
    EXPECT_EQ(s->ranks[0].steps, 2 * z);
    EXPECT_EQ(s->ranks[1].steps, 2 * z);
  }
  // Latency 50 us: 2 l > (z - 2) c, rank 0 waits for the wrap (the second cycle's fill): row 2's
  // tile j runs from (j + 2) c + 2 l, row 3's from (j + 3) c + 3 l: the end (z + 3) c + 3 l.
  {
    const double l = 50 * us;
    EXPECT_NEAR(sim_s(*plan, latency_only(50)), static_cast<double>(z + 3) * c + 3 * l, 1e-12);
  }
}

TEST(SimulateCyclic, one_rank_equals_the_closed_formula) {
  // No faces leave the rank: its cycles run back to back, steps x tile time, as predicted.
  for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
    auto plan = cyclic_plan({12, 4000}, 500, 1, 2, {3}, ScheduleKind::overlap, g);
    ASSERT_TRUE(plan) << plan.error().message;
    ASSERT_TRUE(plan->is_cyclic());
    const Machine m = latency_only(0);
    auto p = tp::model::predict(*plan, m, {});
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_NEAR(sim_s(*plan, m), p->total.count(), 1e-12);
  }
}

/// A linear congruential generator (fixed seeds: every run replays the same plans).
struct Rng {
  std::uint64_t seed;
  std::int64_t next(std::int64_t lo, std::int64_t hi) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<std::int64_t>((seed >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

/// Random small plans: 2-3 dimensions, 1-4 nodes, 1-3 CPUs, both schedules and groupings.
tp::Expected<Plan> random_plan(Rng& g, bool cyclic) {
  const int dims = static_cast<int>(g.next(2, 3));
  Index size;
  for (int d = 0; d < dims; ++d) size.push_back(g.next(6, 30));
  size.back() = g.next(40, 200);
  Index factors;
  if (cyclic) {
    for (int d = 0; d + 1 < dims; ++d) factors.push_back(g.next(1, 3));
  }
  return cyclic_plan(size, g.next(3, 40), g.next(1, 4), g.next(1, 3), factors,
                     g.next(0, 1) == 0 ? ScheduleKind::overlap : ScheduleKind::blocking,
                     g.next(0, 1) == 0 ? GroupingKind::hyperplane : GroupingKind::vertical);
}

TEST(SimulateCyclic, rank_steps_and_messages_are_the_plans_tiles) {
  // Per rank: its steps are the distinct times of its tiles (exec runs those), its messages the
  // tiles with a successor on another rank (the wrap included); the simulation never stalls and
  // its critical path adds up.
  Rng g{2026};
  int simulated = 0;
  for (int trial = 0; trial < 120; ++trial) {
    auto plan = random_plan(g, true);
    if (!plan) continue;
    const Machine m =
        latency_only(static_cast<double>(g.next(0, 30)), static_cast<SendMode>(g.next(0, 2)));
    auto s = simulate(*plan, m, {});
    ASSERT_TRUE(s) << "trial " << trial << ": " << s.error().message;
    ++simulated;
    const Index counts = plan->tile_space().counts();
    for (std::int64_t r = 0; r < plan->nodes(); ++r) {
      std::set<std::int64_t> times;
      std::int64_t messages = 0;
      for (const auto& t : plan->tiles_of(r)) {
        times.insert(plan->time_of(t));
        for (std::size_t k = 0; k < t.size(); ++k) {
          if (static_cast<int>(k) == plan->map_dim() || t[k] + 1 == counts[k]) continue;
          auto succ = t;
          ++succ[k];
          if (plan->node_of(succ) != plan->node_of(t)) ++messages;
        }
      }
      const auto& x = s->ranks[static_cast<std::size_t>(r)];
      EXPECT_EQ(x.steps, static_cast<std::int64_t>(times.size())) << trial << " rank " << r;
      EXPECT_EQ(x.messages_sent, messages) << trial << " rank " << r;
    }
    const auto& cp = s->critical_path;
    EXPECT_NEAR((cp.compute + cp.overhead + cp.network).count(), s->simulated.count(), 1e-12)
        << trial;
  }
  EXPECT_GT(simulated, 40);
}

TEST(SimulateCyclic, enumerated_rows_equal_the_block_mappings_closed_form) {
  // The cyclic path (rows enumerated) on block plans gives the closed form's result exactly.
  Rng g{7};
  int compared = 0;
  for (int trial = 0; trial < 80; ++trial) {
    auto plan = random_plan(g, false);
    if (!plan) continue;
    Machine m =
        latency_only(static_cast<double>(g.next(0, 30)), static_cast<SendMode>(g.next(0, 2)));
    m.t_start = Seconds{2 * us};
    m.t_sync = Seconds{3 * us};
    m.t_sync_in = Seconds{1 * us};
    m.link.bandwidth_bytes_per_s = 1e8;
    SimOptions closed, rows;
    rows.enumerate_rows = true;
    auto a = simulate(*plan, m, closed);
    auto b = simulate(*plan, m, rows);
    ASSERT_TRUE(a && b) << trial;
    ++compared;
    EXPECT_EQ(a->simulated, b->simulated) << trial;
    EXPECT_EQ(a->rank_steps, b->rank_steps) << trial;
    EXPECT_EQ(a->events, b->events) << trial;
    for (std::size_t r = 0; r < a->ranks.size(); ++r) {
      EXPECT_EQ(a->ranks[r].messages_sent, b->ranks[r].messages_sent) << trial;
      EXPECT_EQ(a->ranks[r].bytes_sent, b->ranks[r].bytes_sent) << trial;
      EXPECT_EQ(a->ranks[r].compute, b->ranks[r].compute) << trial;
    }
  }
  EXPECT_GT(compared, 30);
}

}  // namespace sim_cyclic_test
