// Ranks that share a host's cores (machine file network.hosts): each core shared equally by the
// threads computing on it (their tiles, and the copy of a rank's faces on its sending thread's
// core), a rank at the pace of its slowest thread, and a wake-up for a thread that slept on its
// faces or at its step barrier; checked against times derived by hand and against
// the unshared simulation where the cores suffice.
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/sim/simulate.hpp>

#include <gtest/gtest.h>

#include "sim_fixtures.hpp"

#include <algorithm>

namespace shared_hosts {

using tp::model::Machine;
using tp::model::Seconds;
using tp::model::SendMode;
using tp::plan::GroupingKind;
using tp::plan::Plan;
using tp::plan::ScheduleKind;
using tp::sim::SimOptions;
using tp::sim::simulate;
using tp::test::sim::make_plan;
using tp::test::sim::sim_s;
using tp::test::sim::simple;

constexpr double us = 1e-6;

/// No costs but the tiles': faces arrive (almost) the moment they are sent.
Machine compute_only() {
  Machine m = simple();
  m.t_start = Seconds{0};
  m.t_sync = Seconds{0};
  m.t_sync_in = Seconds{0};
  m.link.bandwidth_bytes_per_s = 1e18;
  return m;
}

Machine shared(Machine m, std::int64_t ranks_per_host, std::int64_t cores, double wake_us = 0) {
  m.network.hosts.ranks_per_host = ranks_per_host;
  m.network.hosts.cores = cores;
  m.network.hosts.wake = Seconds{wake_us * us};
  return m;
}

TEST(SimulateShared, hosts_with_a_core_per_thread_change_nothing) {
  const Machine m = simple();
  for (const auto s : {ScheduleKind::overlap, ScheduleKind::blocking}) {
    for (const auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
      for (const std::int64_t nodes : {1, 2, 3, 4}) {
        for (const std::int64_t cpus : {1, 2}) {
          if (g == GroupingKind::vertical && cpus == 1) continue;
          const Plan p = make_plan({64, 64, 8000}, 500, nodes, cpus, s, g);
          const double alone = sim_s(p, m);
          // One host of them all with a core per thread, or a host per rank.
          EXPECT_NEAR(sim_s(p, shared(m, nodes, nodes * cpus)), alone, 1e-12 * alone);
          EXPECT_NEAR(sim_s(p, shared(m, 1, cpus)), alone, 1e-12 * alone);
          EXPECT_NEAR(sim_s(p, shared(m, nodes, 64)), alone, 1e-12 * alone);
        }
      }
    }
  }
}

TEST(SimulateShared, two_threads_of_a_rank_on_one_core_take_twice_as_long) {
  const Machine m = compute_only();
  const Plan p = make_plan({64, 20000}, 1000, 1, 2);
  const double alone = sim_s(p, m);
  EXPECT_NEAR(sim_s(p, shared(m, 1, 1)), 2 * alone, 1e-9 * alone);
  // Every step ends at the threads' barrier, where the first to arrive slept: a wake-up each.
  EXPECT_NEAR(sim_s(p, shared(m, 1, 1, 5)), 2 * alone + static_cast<double>(p.steps()) * 5 * us,
              1e-9 * alone);
  // Vertical grouping: the N + 1 sub-steps' tiles take twice as long, the N barriers between
  // them (t_sync_in, 3 us) do not.
  const Machine with_barriers = [] {
    Machine x = compute_only();
    x.t_sync_in = Seconds{3 * us};
    return x;
  }();
  const Plan v = make_plan({64, 20000}, 1000, 1, 2, ScheduleKind::overlap, GroupingKind::vertical);
  auto r = simulate(v, with_barriers, {});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const double barriers =
      static_cast<double>(v.steps() * r->subtiles) * 3 * us;  // N per step, every step
  EXPECT_NEAR(sim_s(v, shared(with_barriers, 1, 1)),
              2 * (r->simulated.count() - barriers) + barriers, 1e-9 * r->simulated.count());
}

TEST(SimulateShared, two_ranks_on_one_core_take_their_whole_work) {
  // Z tiles of 32 x 500 points per rank, c each. On one core: rank 0's first tile alone (c),
  // then both at half pace (2c per step), then rank 1's last alone (c): 2 Z c, the core never
  // idle. On two cores the pipeline's (Z + 1) c.
  const std::int64_t z = 30;
  const double c = 32 * 500e-9;
  const Machine m = compute_only();
  const Plan p = make_plan({64, z * 500}, 500, 2, 1);
  EXPECT_NEAR(sim_s(p, m), static_cast<double>(z + 1) * c, 1e-6 * c);
  EXPECT_NEAR(sim_s(p, shared(m, 2, 1)), static_cast<double>(2 * z) * c, 1e-6 * c);
  EXPECT_NEAR(sim_s(p, shared(m, 2, 2)), static_cast<double>(z + 1) * c, 1e-6 * c);
}

TEST(SimulateShared, three_ranks_on_two_cores_go_at_the_pace_of_the_shared_core) {
  // Ranks 0 and 2 share core 0, rank 1 has core 1: rank 0's steps take 2c while rank 2 computes,
  // so the pipeline needs at least the 2 Z c of core 0's work, and little more (its fill).
  const std::int64_t z = 40;
  const double c = 32 * 500e-9;
  const Machine m = compute_only();
  const Plan p = make_plan({96, z * 500}, 500, 3, 1);
  const double t = sim_s(p, shared(m, 3, 2));
  EXPECT_GE(t, static_cast<double>(2 * z) * c * (1 - 1e-9));
  EXPECT_LE(t, static_cast<double>(2 * z + 2) * c);
  // Balanced sharing would be faster: four ranks on two cores put two on each.
  EXPECT_GT(t, sim_s(p, m) * 1.8);
}

TEST(SimulateShared, a_thread_that_slept_on_its_faces_pays_the_wake_up) {
  // Two ranks, a host each: rank 1 waits for its first face only (afterwards each face is in
  // before its CPU is free), so the wake-up delays the run once.
  const std::int64_t z = 30;
  const Machine m = compute_only();
  const Plan p = make_plan({64, z * 500}, 500, 2, 1);
  const double no_wake = sim_s(p, shared(m, 1, 1));
  EXPECT_NEAR(sim_s(p, shared(m, 1, 1, 7)), no_wake + 7 * us, 1e-9 * no_wake);
  // Blocking: rank 0 sleeps on its sends every step (they arrive after its CPU is done).
  const Plan b = make_plan({64, z * 500}, 500, 2, 1, ScheduleKind::blocking);
  const Machine slow_link = [] {
    Machine x = compute_only();
    x.link.bandwidth_bytes_per_s = 100e6;
    return x;
  }();
  const double b0 = sim_s(b, shared(slow_link, 1, 1));
  EXPECT_NEAR(sim_s(b, shared(slow_link, 1, 1, 7)), b0 + static_cast<double>(z) * 7 * us,
              1e-9 * b0);
}

TEST(SimulateShared, a_ranks_copy_of_its_faces_takes_its_core_from_the_rank_beside_it) {
  // Two ranks on one core, tiles of 32 x 500 points (c each); rank 0 copies a face of 500 x 8 B
  // per step at 1 GB/s (k = 4 us), rank 1 sends nothing. The core is never idle: the run takes
  // the whole work, 2 Z c + Z k, in both schedules (the copy is the sender's CPU in both). On two
  // cores rank 0's copies lengthen only its own steps.
  const std::int64_t z = 30;
  const double c = 32 * 500e-9, k = 4 * us;
  Machine m = compute_only();
  m.cpu_copy_bytes_per_s = 1e9;
  for (const auto s : {ScheduleKind::overlap, ScheduleKind::blocking}) {
    const Plan p = make_plan({64, z * 500}, 500, 2, 1, s);
    const double zd = static_cast<double>(z);
    EXPECT_NEAR(sim_s(p, shared(m, 2, 1)), 2 * zd * c + zd * k, 1e-6 * c) << tp::plan::to_string(s);
    EXPECT_NEAR(sim_s(p, shared(m, 2, 2)), sim_s(p, m), 1e-9 * c) << tp::plan::to_string(s);
    EXPECT_LT(sim_s(p, m), zd * c + c + zd * k + 1e-6 * c) << tp::plan::to_string(s);
  }
}

TEST(SimulateShared, figures_add_up_and_the_comm_thread_is_refused) {
  const Machine m = shared(simple(), 4, 2, 15);
  const Plan p = make_plan({64, 64, 8000}, 500, 4, 1);
  auto r = simulate(p, m, {});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto& cp = r->critical_path;
  EXPECT_NEAR((cp.compute + cp.overhead + cp.network).count(), r->simulated.count(),
              1e-9 * r->simulated.count());
  for (const auto& rank : r->ranks) {
    EXPECT_LE(rank.busy.count(), r->simulated.count() * (1 + 1e-12));
    EXPECT_GE(rank.idle.count(), -1e-12);
  }
  SimOptions ct;
  ct.model.comm_thread = true;
  auto refused = simulate(p, m, ct);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "the machine file's network.hosts (ranks sharing cores) is not simulated with a "
            "communication thread");
}

}  // namespace shared_hosts
