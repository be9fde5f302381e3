// The simulator against answers known exactly: one rank, a two-rank pipeline derived by hand,
// the closed formulas' step time in the steady state, a slow node, contention on a torus.
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/sim/simulate.hpp>

#include <gtest/gtest.h>

#include "sim_fixtures.hpp"

#include <cmath>
#include <map>

namespace {

using tp::model::Machine;
using tp::model::Seconds;
using tp::model::SendMode;
using tp::plan::DependenceMatrix;
using tp::plan::GroupingKind;
using tp::plan::Plan;
using tp::plan::PlanRequest;
using tp::plan::ScheduleKind;
using tp::sim::SimOptions;
using tp::sim::simulate;
using tp::test::sim::make_plan;
using tp::test::sim::sim_s;
using tp::test::sim::simple;

constexpr double us = 1e-6;

double predicted_s(const Plan& plan, const Machine& m, tp::model::ModelOptions o = {}) {
  auto p = tp::model::predict(plan, m, o);
  EXPECT_TRUE(p.has_value());
  return p->total.count();
}

void expect_close(double got, double want) {
  EXPECT_NEAR(got, want, 1e-12 + 1e-12 * want);
}

TEST(Simulate, one_rank_is_steps_times_tile_time) {
  const Machine m = simple();
  // 1 CPU: Z tiles of 64 x 1000 points.
  const Plan one = make_plan({64, 20000}, 1000, 1, 1);
  expect_close(sim_s(one, m), 20 * 64000e-9);
  expect_close(sim_s(one, m), predicted_s(one, m));
  // 4 CPUs, hyperplane: the CPUs' rows skewed by one step, every step one full tile long.
  const Plan four = make_plan({64, 20000}, 1000, 1, 4);
  expect_close(sim_s(four, m), static_cast<double>(four.steps()) * 16000e-9);
  expect_close(sim_s(four, m), predicted_s(four, m));
  // 2 CPUs, vertical: every step is seed 002's beta (N + 1 subtile steps, N barriers).
  const Plan vert =
      make_plan({64, 20000}, 1000, 1, 2, ScheduleKind::overlap, GroupingKind::vertical);
  expect_close(sim_s(vert, m), predicted_s(vert, m));
  // The communication thread on one rank computes as much as the others: the same time.
  tp::model::ModelOptions ct;
  ct.comm_thread = true;
  SimOptions so;
  so.model = ct;
  expect_close(sim_s(four, m, so), predicted_s(four, m, ct));
}

// The step barrier (ADR 0034): with a tile spread, every hyperplane step of 4 CPUs computes the
// slowest of their tiles, 16000 ns (1 + e_4 x 0.05), in the simulator as in the model; one CPU
// and vertical grouping are unchanged.
TEST(Simulate, a_rank_of_several_cpus_steps_at_the_slowest_tile_as_the_model_does) {
  Machine m = simple();
  const Plan one = make_plan({64, 20000}, 1000, 1, 1);
  const Plan four = make_plan({64, 20000}, 1000, 1, 4);
  const Plan vert =
      make_plan({64, 20000}, 1000, 1, 2, ScheduleKind::overlap, GroupingKind::vertical);
  const double before_vert = sim_s(vert, m);
  m.tile_spread = 0.05;
  const double e4 = tp::model::expected_max_of_normals(4);
  expect_close(sim_s(four, m), static_cast<double>(four.steps()) * 16000e-9 * (1 + e4 * 0.05));
  expect_close(sim_s(four, m), predicted_s(four, m));
  expect_close(sim_s(one, m), 20 * 64000e-9);
  expect_close(sim_s(vert, m), before_vert);
  expect_close(sim_s(vert, m), predicted_s(vert, m));
}

TEST(Simulate, two_rank_pipeline_is_the_hand_derived_time) {
  // 2 ranks in a row, 1 CPU each, Z tiles of 32 x 500 points; faces of 500 points x 8 bytes.
  const std::int64_t z = 30;
  const double c = 32 * 500e-9;
  const double t_start = 10 * us, t_sync = 20 * us;
  const double wire = 500 * 8 / 100e6;
  for (double latency : {0.0, 7.0}) {
    const Machine m = simple(SendMode::serial, latency);
    const double l = latency * us;
    const Plan overlap = make_plan({64, z * 500}, 500, 2, 1);
    // Rank 0: step j > 0 starts its previous face (t_start + t_sync), then computes; the face of
    // tile j leaves t_start into step j + 1. Rank 1 computes each tile as soon as it arrives.
    const double s = t_start + t_sync;
    expect_close(sim_s(overlap, m),
                 2 * c + static_cast<double>(z - 1) * (s + c) + t_start + wire + l);
    // Blocking: rank 0's step = c + t_start + transfer + t_sync (the closed formula's step); it
    // ends after its last step, rank 1 a tile after the last face arrived.
    const Plan blocking = make_plan({64, z * 500}, 500, 2, 1, ScheduleKind::blocking);
    const double step = c + t_start + wire + l + t_sync;
    expect_close(sim_s(blocking, m),
                 std::max(static_cast<double>(z) * step,
                          static_cast<double>(z - 1) * step + 2 * c + t_start + wire + l));
  }
}

TEST(Simulate, critical_path_names_the_ranks_and_steps_derived_by_hand) {
  // The two-rank pipeline above: rank 1 waits for every face, so the chain runs through all of
  // rank 0's steps and hands over once, to rank 1's last step, when rank 0's last face arrives.
  const std::int64_t z = 30;
  const double c = 32 * 500e-9;
  const double t_start = 10 * us, t_sync = 20 * us, l = 7 * us;
  const double wire = 500 * 8 / 100e6;
  const Machine m = simple(SendMode::serial, 7);
  auto r = simulate(make_plan({64, z * 500}, 500, 2, 1), m, {});
  ASSERT_TRUE(r) << r.error().message;
  const auto& seg = r->critical_path.segments;
  ASSERT_EQ(seg.size(), 2u);
  EXPECT_EQ(seg[0].rank, 0);
  EXPECT_EQ(seg[0].first_step, 0);
  EXPECT_EQ(seg[0].last_step, z - 1);
  EXPECT_EQ(seg[0].begin.count(), 0);
  const double ready = c + static_cast<double>(z - 1) * (t_start + t_sync + c) + t_start;
  expect_close(seg[0].end.count(), ready);
  EXPECT_EQ(seg[1].rank, 1);
  EXPECT_EQ(seg[1].first_step, z - 1);
  EXPECT_EQ(seg[1].last_step, z - 1);
  expect_close(seg[1].begin.count(), ready + wire + l);
  EXPECT_EQ(seg[1].end, r->simulated);
  // Blocking with c < t_sync: rank 0's own steps (each waits for its own face) end last; no face
  // is handed over on the chain, though each of its messages is on it.
  auto b = simulate(make_plan({64, z * 500}, 500, 2, 1, ScheduleKind::blocking), m, {});
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_EQ(b->critical_path.segments.size(), 1u);
  EXPECT_EQ(b->critical_path.segments[0].rank, 0);
  EXPECT_EQ(b->critical_path.segments[0].last_step, z - 1);
  EXPECT_EQ(b->critical_path.messages, z);
}

TEST(Simulate, a_node_with_a_slower_link_stretches_its_transfers) {
  // The blocking two-rank pipeline with rank 0's ports at a quarter of the bandwidth: every step
  // of rank 0 pays the slower wire (the receiver's port, faster, ends with it: cut-through).
  const std::int64_t z = 30;
  const double c = 32 * 500e-9;
  const double t_start = 10 * us, t_sync = 20 * us;
  Machine m = simple();
  m.network.nodes.push_back({0, 1.0, 25e6});
  const double wire = 500 * 8 / 25e6;
  const double step = c + t_start + wire + t_sync;
  expect_close(sim_s(make_plan({64, z * 500}, 500, 2, 1, ScheduleKind::blocking), m),
               static_cast<double>(z) * step);
}

TEST(Simulate, a_torus_with_one_message_per_link_is_full_bisection) {
  // A 3x3 mesh on a 3x3 torus: every face crosses one link of its own, at the ports' bandwidth,
  // so the links add no time: bit for bit the full-bisection result, for every scheme.
  for (auto mode : {SendMode::serial, SendMode::parallel}) {
    Machine m = simple(mode, 4);
    for (auto s : {ScheduleKind::overlap, ScheduleKind::blocking}) {
      for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
        const Plan p = make_plan({24, 24, 3000}, 300, 9, 4, s, g);
        ASSERT_EQ(p.mesh(), (tp::plan::Index{3, 3}));
        m.network = {};
        auto full = simulate(p, m, {});
        m.network.topology = tp::model::Topology::torus;
        m.network.torus = {3, 3};
        m.network.link_bandwidth_bytes_per_s = m.link.bandwidth_bytes_per_s;
        auto torus = simulate(p, m, {});
        ASSERT_TRUE(full && torus);
        EXPECT_EQ(torus->simulated, full->simulated);
        EXPECT_EQ(torus->critical_path.network, full->critical_path.network);
        // Slower links: the same plan takes longer.
        m.network.link_bandwidth_bytes_per_s /= 4;
        auto slow = simulate(p, m, {});
        ASSERT_TRUE(slow);
        EXPECT_GT(slow->simulated, full->simulated);
      }
    }
  }
}

TEST(Simulate, spans_show_the_two_rank_pipeline_step_by_step) {
  // The overlapping two-rank pipeline: rank 0 computes Z tiles and, from its second step on,
  // first starts the previous face (t_start) and synchronizes (t_sync); rank 1 waits for each
  // face, then computes. Spans in time order, never overlapping, adding up to the ranks' figures.
  const std::int64_t z = 30;
  const double c = 32 * 500e-9;
  SimOptions o;
  o.spans = true;
  auto r = simulate(make_plan({64, z * 500}, 500, 2, 1), simple(SendMode::serial, 7), o);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->spans.size(), 2u);
  using tp::sim::SpanKind;
  for (std::size_t k = 0; k < 2; ++k) {
    std::map<SpanKind, std::int64_t> count;
    double computed = 0;
    double previous_end = 0;
    for (const auto& x : r->spans[k]) {
      EXPECT_EQ(x.rank, static_cast<std::int64_t>(k));
      EXPECT_GE(x.begin.count(), previous_end - 1e-15);
      EXPECT_GT(x.end, x.begin);
      previous_end = x.end.count();
      ++count[x.kind];
      if (x.kind == SpanKind::compute) computed += (x.end - x.begin).count();
    }
    expect_close(computed, static_cast<double>(z) * c);
    expect_close(computed, r->ranks[k].compute.count());
    EXPECT_EQ(count[SpanKind::compute], z);
    EXPECT_EQ(count[SpanKind::send_start], k == 0 ? z : 0);
    EXPECT_EQ(count[SpanKind::sync], k == 0 ? z : 0);
    EXPECT_EQ(count[SpanKind::wait], k == 0 ? 0 : z);
  }
  EXPECT_EQ(r->spans[1].back().end, r->simulated);
  // Without spans asked for, none are kept; past max_span_rank_steps they are refused.
  auto plain = simulate(make_plan({64, z * 500}, 500, 2, 1), simple(), {});
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->spans.empty());
  auto big = simulate(make_plan({64, 64, 100004}, 2, 2, 1), simple(), o);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message,
            "the schedule's spans are kept for at most 100000 rank steps; this plan has 100004 "
            "(fewer nodes or taller tiles)");
}

/// The simulated time grows by the closed formula's step time per extra tile along the mapping
/// dimension (the steady state of every interior node; the fill and drain stay the same).
double period(tp::plan::Index size, std::int64_t height, std::int64_t nodes, std::int64_t cpus,
              ScheduleKind s, GroupingKind g, const Machine& m) {
  const std::int64_t extra = 40;
  const Plan a = make_plan(size, height, nodes, cpus, s, g);
  size.back() += extra * height;
  const Plan b = make_plan(size, height, nodes, cpus, s, g);
  return (sim_s(b, m) - sim_s(a, m)) / static_cast<double>(extra);
}

TEST(Simulate, steady_state_step_is_the_closed_formula_of_seed_000_and_002) {
  // Seed 000: 3x3 single-CPU nodes, SCI DMA queue; seed 002: 4x2 dual-CPU nodes.
  Machine sci = simple(SendMode::queued);
  sci.compute.t_comp1 = Seconds{39.6e-9};
  sci.compute.element_bytes = 4;
  sci.t_start = Seconds{49.2 * us};
  sci.t_sync = Seconds{75.2 * us};
  sci.t_sync_in = Seconds{11 * us};
  sci.link.bandwidth_bytes_per_s = 84.12e6;
  for (auto s : {ScheduleKind::overlap, ScheduleKind::blocking}) {
    const Plan p = make_plan({12, 12, 1024 * 64}, 1024, 9, 1, s, GroupingKind::hyperplane);
    auto pred = tp::model::predict(p, sci, {});
    ASSERT_TRUE(pred);
    EXPECT_NEAR(period({12, 12, 1024 * 64}, 1024, 9, 1, s, GroupingKind::hyperplane, sci),
                pred->step.step.count(), 1e-9)
        << tp::plan::to_string(s);
    for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
      const Plan q = make_plan({16, 16, 1024 * 64}, 1024, 8, 2, s, g);
      auto pq = tp::model::predict(q, sci, {});
      ASSERT_TRUE(pq);
      EXPECT_NEAR(period({16, 16, 1024 * 64}, 1024, 8, 2, s, g, sci), pq->step.step.count(), 1e-9)
          << tp::plan::to_string(s) << " + " << tp::plan::to_string(g);
    }
  }
}

TEST(Simulate, a_cpus_copy_of_the_faces_is_paid_on_top_of_the_overlapped_step) {
  // 2 nodes (mesh 2 x 1), tiles 4 x 8 x 1024, one CPU each: one face of 8 x 1024 x 8 B = 64 KiB
  // per step. The link moves it in 655.36 us at 100 MB/s, of which a CPU copies at 400 MB/s for
  // 163.84 us. Transfer-bound (32 Ki points at 1 ns, 32.768 us of work): the overlapping step is
  // t_start + max(t_comp, t_comm - t_copy) + t_copy + t_sync = 10 + 491.52 + 163.84 + 20 us.
  Machine m = simple();
  m.cpu_copy_bytes_per_s = 400e6;
  const Plan o = make_plan({8, 8, 1024 * 64}, 1024, 2, 1, ScheduleKind::overlap);
  auto po = tp::model::predict(o, m, {});
  ASSERT_TRUE(po);
  EXPECT_NEAR(po->step.t_copy.count(), 163.84 * us, 1e-12);
  EXPECT_NEAR(po->step.step.count(), (10 + 491.52 + 163.84 + 20) * us, 1e-12);
  EXPECT_FALSE(po->step.compute_bound);
  // Blocking pays the whole transfer in series already: unchanged.
  const Machine dma = simple();
  const Plan b = make_plan({8, 8, 1024 * 64}, 1024, 2, 1, ScheduleKind::blocking);
  EXPECT_NEAR(predicted_s(b, m), predicted_s(b, dma), 1e-12);
  EXPECT_NEAR(sim_s(b, m), sim_s(b, dma), 1e-12);
  // Compute-bound (40 ns per point: 1310.72 us per tile): the copy still adds to the step, in
  // the model and in the simulator's steady state alike.
  m.compute.t_comp1 = Seconds{40e-9};
  auto pc = tp::model::predict(o, m, {});
  ASSERT_TRUE(pc);
  EXPECT_TRUE(pc->step.compute_bound);
  EXPECT_NEAR(pc->step.step.count(), (10 + 1310.72 + 163.84 + 20) * us, 1e-12);
  EXPECT_NEAR(
      period({8, 8, 1024 * 64}, 1024, 2, 1, ScheduleKind::overlap, GroupingKind::hyperplane, m),
      pc->step.step.count(), 1e-9);
}

TEST(Simulate, faces_arrive_no_earlier_than_the_senders_copy_of_them_ends) {
  // A copy slower than the link (50 MB/s against 100 MB/s): in the blocking schedule each of
  // rank 0's Z steps waits for its face until the copy is done, 2 x the wire time instead of 1.
  const std::int64_t z = 30;
  const double wire = 500 * 8 / 100e6;
  const Plan b = make_plan({64, z * 500}, 500, 2, 1, ScheduleKind::blocking);
  const Machine m = simple();
  Machine slow_copy = simple();
  slow_copy.cpu_copy_bytes_per_s = 50e6;
  EXPECT_NEAR(sim_s(b, slow_copy) - sim_s(b, m), static_cast<double>(z) * wire, 1e-9);
  // A copy faster than the link changes nothing there: the faces wait for the link.
  Machine fast_copy = simple();
  fast_copy.cpu_copy_bytes_per_s = 400e6;
  EXPECT_NEAR(sim_s(b, fast_copy), sim_s(b, m), 1e-12);
}

TEST(Simulate, a_slow_node_delays_the_pipeline_by_the_expected_amount) {
  const std::int64_t z = 30;
  const double c = 32 * 500e-9;
  const double t_start = 10 * us, t_sync = 20 * us;
  const double wire = 500 * 8 / 100e6;
  const Plan p = make_plan({64, z * 500}, 500, 2, 1);
  Machine m = simple();
  const double normal = sim_s(p, m);
  // The last rank 3 times slower: it becomes the bottleneck from its first tile on.
  m.network.nodes.push_back({1, 3.0, 0});
  const double first_arrival = c + t_start + wire;
  expect_close(sim_s(p, m), first_arrival + static_cast<double>(z) * 3 * c);
  EXPECT_GT(sim_s(p, m), normal);
  // The first rank 3 times slower: its step is t_start + t_sync + 3c.
  m.network.nodes = {{0, 3.0, 0}};
  expect_close(sim_s(p, m), 3 * c + static_cast<double>(z - 1) * (t_start + t_sync + 3 * c) +
                                t_start + wire + c);
  // A node override naming a rank the plan does not have is bad input.
  m.network.nodes = {{2, 3.0, 0}};
  auto r = simulate(p, m, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "the machine file's network.nodes names node 2 but the plan has 2 nodes (0..1)");
}

TEST(Simulate, idle_nodes_run_nothing_and_change_nothing) {
  // 2x64 points across the mapping dimension on a 2x2 mesh of 1-CPU nodes: one row of tiles along
  // the first dimension, so ranks 2 and 3 have none (ADR 0010). The busy ranks run exactly the
  // 1x2 mesh's plan: the same tiles, the same faces, the same time.
  const auto plan_on = [](std::int64_t nodes, tp::plan::Index mesh, ScheduleKind s,
                          GroupingKind g) {
    PlanRequest r;
    r.size = {2, 64, 1000};
    r.deps = DependenceMatrix::unit(3);
    r.tile_kind = tp::plan::TileSpecKind::extents;
    r.tile_extents = {2, 32, 10};
    r.nodes = nodes;
    r.cpus = 1;
    r.mesh = mesh;
    r.map_dim = 3;
    r.schedule = s;
    r.grouping = g;
    auto p = Plan::make(r);
    EXPECT_TRUE(p) << (p ? "" : p.error().message);
    return *p;
  };
  const Machine m = simple(SendMode::serial, 5);
  for (auto s : {ScheduleKind::overlap, ScheduleKind::blocking}) {
    for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
      const Plan idle = plan_on(4, {2, 2}, s, g);
      ASSERT_EQ(idle.idle_nodes(), 2);
      const Plan busy = plan_on(2, {1, 2}, s, g);
      auto a = simulate(idle, m, {});
      auto b = simulate(busy, m, {});
      ASSERT_TRUE(a) << a.error().message;
      ASSERT_TRUE(b) << b.error().message;
      EXPECT_EQ(a->simulated, b->simulated);
      ASSERT_EQ(a->ranks.size(), 4u);
      for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(a->ranks[r].finish, b->ranks[r].finish);
        EXPECT_EQ(a->ranks[r].messages_sent, b->ranks[r].messages_sent);
      }
      for (int r = 2; r < 4; ++r) {
        EXPECT_EQ(a->ranks[r].steps, 0);
        EXPECT_EQ(a->ranks[r].busy.count(), 0);
        EXPECT_EQ(a->ranks[r].messages_sent, 0);
        EXPECT_EQ(a->ranks[r].idle, a->simulated);
      }
    }
  }
}

TEST(Simulate, messages_sharing_a_torus_link_queue_behind_each_other) {
  // A 2x2 mesh, one tile per CPU row: rank 0 sends to ranks 1 and 2, both send to rank 3.
  // On a ring of 4 nodes, 0 -> 2 and 0 -> 1 share the link 0 -> 1 (0 -> 2 goes first: its
  // dimension comes first); 1 -> 3 runs 1 -> 2 -> 3 and 2 -> 3 shares nothing at that time.
  Machine m = simple(SendMode::parallel);
  m.t_start = Seconds{0};
  m.t_sync = Seconds{0};
  const double link = 50e6;
  const Plan p = make_plan({64, 64, 100}, 100, 4, 1);
  const double c = 32 * 32 * 100e-9;
  const double wire = 32 * 100 * 8 / link;  // one face over one torus link
  m.link.bandwidth_bytes_per_s = link;
  auto full = simulate(p, m, {});
  ASSERT_TRUE(full);
  expect_close(full->simulated.count(), 3 * c + 2 * wire);

  m.link.bandwidth_bytes_per_s = 1e18;  // the nodes' own ports cost nothing: the torus decides
  m.network.topology = tp::model::Topology::torus;
  m.network.torus = {4};
  m.network.link_bandwidth_bytes_per_s = link;
  auto torus = simulate(p, m, {});
  ASSERT_TRUE(torus);
  EXPECT_NEAR(torus->ranks[0].finish.count(), c + 2 * wire, 1e-9);      // its second face queued
  EXPECT_NEAR(torus->ranks[2].finish.count(), 2 * c + 2 * wire, 1e-9);  // got its face first
  EXPECT_NEAR(torus->ranks[1].finish.count(), 2 * c + 3 * wire, 1e-9);
  EXPECT_NEAR(torus->simulated.count(), 3 * c + 3 * wire, 1e-9);
  EXPECT_EQ(torus->critical_path.end_rank, 3);

  m.network.torus = {3};
  auto small = simulate(p, m, {});
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().message,
            "the machine file's torus 3 has 3 nodes, fewer than the plan's 4");
}

TEST(Simulate, critical_path_and_rank_figures_add_up) {
  const Machine m = simple(SendMode::serial, 5);
  for (auto s : {ScheduleKind::overlap, ScheduleKind::blocking}) {
    for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
      const Plan p = make_plan({48, 48, 9000}, 700, 6, 4, s, g);
      auto r = simulate(p, m, {});
      ASSERT_TRUE(r) << r.error().message;
      const auto& cp = r->critical_path;
      EXPECT_NEAR((cp.compute + cp.overhead + cp.network).count(), r->simulated.count(), 1e-12);
      EXPECT_GT(cp.messages, 0);
      ASSERT_EQ(static_cast<std::int64_t>(r->ranks.size()), p.nodes());
      for (const auto& x : r->ranks) {
        EXPECT_NEAR((x.busy + x.idle).count(), r->simulated.count(), 1e-12);
        EXPECT_LE(x.finish, r->simulated);
        EXPECT_GT(x.compute.count(), 0);
      }
      // Never faster than the busiest rank's own work.
      double busiest = 0;
      for (const auto& x : r->ranks) busiest = std::max(busiest, x.busy.count());
      EXPECT_GE(r->simulated.count(), busiest - 1e-12);
    }
  }
}

TEST(Simulate, a_thousand_rank_plan_respects_its_lower_bounds_and_grows_with_latency) {
  // 1024 ranks (32x32) x 16 CPUs (4x4), tiles of 4x4x64 points: 71,680 rank steps. Every tile
  // depends on the one before it on the longest chain of tiles (plan.steps() of them), and any
  // chain from rank 0 to rank 1023 crosses 62 rank boundaries, each costing at least the latency.
  const Plan p = make_plan({512, 512, 4096}, 64, 1024, 16);
  ASSERT_EQ(p.mesh(), (tp::plan::Index{32, 32}));
  ASSERT_EQ(p.cpu_grid(), (tp::plan::Index{4, 4}));
  const double tile = 4 * 4 * 64 * 1e-9;
  const std::int64_t hops = 31 + 31;
  double previous = 0;
  for (double latency_us : {0.0, 5.0, 50.0}) {
    auto r = simulate(p, simple(SendMode::serial, latency_us), {});
    ASSERT_TRUE(r) << r.error().message;
    const double t = r->simulated.count();
    EXPECT_EQ(r->rank_steps, 1024 * (64 + 6));
    EXPECT_GE(t,
              static_cast<double>(p.steps()) * tile + static_cast<double>(hops) * latency_us * us);
    double busiest = 0;
    for (const auto& x : r->ranks) busiest = std::max(busiest, x.busy.count());
    EXPECT_GE(t, busiest);
    EXPECT_GT(t, previous) << latency_us;  // more latency, strictly later
    previous = t;
    // The chain starts on rank 0 (the only rank whose first step waits for nothing) and moves to
    // a mesh successor (+1 or +32) at each hand-over, in time order, to the rank ending last.
    const auto& cp = r->critical_path;
    EXPECT_EQ(cp.end_rank, 1023);
    ASSERT_EQ(static_cast<std::int64_t>(cp.segments.size()), hops + 1);
    EXPECT_EQ(cp.segments.front().rank, 0);
    EXPECT_EQ(cp.segments.front().begin.count(), 0);
    EXPECT_EQ(cp.segments.back().rank, 1023);
    EXPECT_EQ(cp.segments.back().end, r->simulated);
    for (std::size_t k = 1; k < cp.segments.size(); ++k) {
      const auto& a = cp.segments[k - 1];
      const auto& b = cp.segments[k];
      EXPECT_TRUE(b.rank == a.rank + 1 || b.rank == a.rank + 32) << a.rank << " > " << b.rank;
      EXPECT_GE(b.begin.count(), a.end.count() + latency_us * us - 1e-15);
      EXPECT_LE(b.begin, b.end);
    }
  }
}

TEST(Simulate, progress_reaches_one) {
  const Plan p = make_plan({64, 64, 64000}, 100, 4, 2);
  SimOptions o;
  double last = -1;
  int calls = 0;
  o.progress = [&](double f) {
    EXPECT_GE(f, last);
    last = f;
    ++calls;
  };
  ASSERT_TRUE(simulate(p, simple(), o));
  EXPECT_EQ(last, 1.0);
  EXPECT_GE(calls, 1);
}

}  // namespace

namespace {

TEST(SimulateProperty, every_small_plan_finishes_and_respects_its_bounds) {
  // Random small plans (2-4 dimensions, uneven extents, 1-6 nodes, 1-4 CPUs, every scheme and
  // send mode): the simulation never stalls, is never faster than the busiest rank's own work,
  // and its critical path adds up to its time.
  std::uint64_t seed = 12345;
  const auto next = [&](std::int64_t lo, std::int64_t hi) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<std::int64_t>((seed >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  };
  int simulated = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int dims = static_cast<int>(next(2, 4));
    PlanRequest r;
    for (int d = 0; d < dims; ++d) r.size.push_back(next(6, 40));
    r.size.back() = next(50, 400);
    if (next(0, 1) == 0) {
      r.deps = DependenceMatrix::unit(dims);
    } else {
      auto deps = DependenceMatrix::unit(dims).vectors();
      tp::plan::Index diag(static_cast<std::size_t>(dims), 0);
      diag[0] = 1;
      diag[1] = 1;
      deps.push_back(diag);
      r.deps = *DependenceMatrix::make(dims, deps);
    }
    r.tile_height = next(2, 60);
    r.nodes = next(1, 6);
    r.cpus = next(1, 4);
    r.map_dim = dims;
    r.schedule = next(0, 1) == 0 ? ScheduleKind::overlap : ScheduleKind::blocking;
    r.grouping = next(0, 1) == 0 ? GroupingKind::hyperplane : GroupingKind::vertical;
    auto p = Plan::make(r);
    // A mesh these extents cannot form is the planner's business; idle nodes are simulated.
    if (!p) continue;
    Machine m = simple(static_cast<SendMode>(next(0, 2)), static_cast<double>(next(0, 5)));
    SimOptions o;
    o.model.comm_thread = r.schedule == ScheduleKind::overlap &&
                          r.grouping == GroupingKind::hyperplane && next(0, 1) == 0;
    auto s = simulate(*p, m, o);
    ASSERT_TRUE(s) << "trial " << trial << ": " << s.error().message;
    ++simulated;
    double busiest = 0;
    for (const auto& x : s->ranks) busiest = std::max(busiest, x.busy.count());
    if (!o.model.comm_thread) {
      EXPECT_GE(s->simulated.count(), busiest - 1e-12) << trial;
    }
    const auto& cp = s->critical_path;
    EXPECT_NEAR((cp.compute + cp.overhead + cp.network).count(), s->simulated.count(), 1e-12)
        << trial;
    // Its segments run from time 0 to the end, forward in time, one hand-over per message at most.
    ASSERT_FALSE(cp.segments.empty()) << trial;
    EXPECT_EQ(cp.segments.front().begin.count(), 0) << trial;
    EXPECT_EQ(cp.segments.back().end, s->simulated) << trial;
    EXPECT_EQ(cp.segments.back().rank, cp.end_rank) << trial;
    EXPECT_LE(static_cast<std::int64_t>(cp.segments.size()) - 1, cp.messages) << trial;
    for (std::size_t k = 1; k < cp.segments.size(); ++k) {
      EXPECT_GE(cp.segments[k].begin, cp.segments[k - 1].end) << trial;
      EXPECT_GT(cp.segments[k].rank, cp.segments[k - 1].rank) << trial;  // successors only
    }
  }
  EXPECT_GT(simulated, 100);
}

}  // namespace

namespace {

TEST(Simulate, a_workload_of_several_sweeps_repeats_the_simulated_sweep) {
  const Machine m = simple();
  const Plan plan = make_plan({32, 4000}, 500, 2, 1);
  const auto one = simulate(plan, m, {});
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->sweeps, 1);
  expect_close(one->sweep.count(), one->simulated.count());
  SimOptions o;
  o.model.workload.sweeps = 5;
  o.model.workload.copy_sweeps = 1;
  o.model.workload.between_sweep_bytes = 64000;
  const auto five = simulate(plan, m, o);
  ASSERT_TRUE(five.has_value());
  auto p = tp::model::predict(plan, m, o.model);
  ASSERT_TRUE(p.has_value());
  ASSERT_GT(p->between.count(), 0);
  ASSERT_GT(p->copy_sweep.count(), 0);
  EXPECT_EQ(five->sweeps, 5);
  // One sweep simulates as without the workload; the run is 4 of them, one copying sweep and 4
  // exchanges between sweeps as the model charges them.
  expect_close(five->sweep.count(), one->simulated.count());
  expect_close(five->simulated.count(),
               4 * one->simulated.count() + p->copy_sweep.count() + 4 * p->between.count());
}

}  // namespace
