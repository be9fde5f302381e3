// The step-time formulas against hand-computed values of the seeds' own equations.
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/plan/transform.hpp>

#include <gtest/gtest.h>

#include "../plan_request.hpp"
#include "../seed_machines.hpp"

#include <algorithm>
#include <cmath>

namespace {

using tp::model::Machine;
using tp::model::ModelOptions;
using tp::model::predict;
using tp::model::Seconds;
using tp::model::SendMode;
using tp::plan::DependenceMatrix;
using tp::plan::GroupingKind;
using tp::plan::Index;
using tp::plan::Plan;
using tp::plan::PlanRequest;
using tp::plan::ScheduleKind;

constexpr double us = 1e-6;
constexpr double ns = 1e-9;

/// The seeds' SCI machines: t_start, t_sync, t_comp1 = 39.6 ns, floats, 84.12 MB/s, one DMA queue.
Plan make_plan(Index size, std::int64_t z, std::int64_t nodes, std::int64_t cpus,
               ScheduleKind s = ScheduleKind::overlap, GroupingKind g = GroupingKind::hyperplane) {
  auto p = Plan::make(tp::test::height_request(std::move(size), z, nodes, cpus, s, g));
  EXPECT_TRUE(p) << p.error().message;
  return *p;
}

double predicted_s(const Plan& plan, const Machine& m, ModelOptions o = {}) {
  auto p = predict(plan, m, o);
  EXPECT_TRUE(p) << p.error().message;
  return p ? p->total.count() : -1;
}

// Seed 000 formula (3): T(z) = (2 sum x_i + x_k + 1)(t_start_dma + t_comp + t_sync), with
// sum x_i = 2 (3 - 1), x_k = DIMZ/z - 1, t_comp = x^2 z t_comp1, t_sync = 4 x 18.8 us.
double seed000_formula3(double dimz, double x, double z) {
  return (2 * 2 * (3 - 1) + (std::ceil(dimz / z) - 1) + 1) *
         (49.2 * us + x * x * z * 39.6 * ns + 4 * 18.8 * us);
}

TEST(CostModelSeed000, overlap_time_is_formula_3) {
  const Machine m = tp::test::seed000_sci(49.2, 4 * 18.8);
  for (std::int64_t z : {256, 1024, 3000, 3584, 8192, 65536}) {
    const Plan p = make_plan({12, 12, 524288}, z, 9, 1);
    EXPECT_NEAR(predicted_s(p, m), seed000_formula3(524288, 4, static_cast<double>(z)), 1e-12)
        << "z = " << z;
    const Plan q = make_plan({24, 24, 262144}, z, 9, 1);
    EXPECT_NEAR(predicted_s(q, m), seed000_formula3(262144, 8, static_cast<double>(z)), 1e-12)
        << "z = " << z;
  }
  // A hand value: z = 1024 on 12x12x512K: 520 steps x (124.4 us + 16384 x 39.6 ns).
  const Plan p = make_plan({12, 12, 524288}, 1024, 9, 1);
  EXPECT_NEAR(predicted_s(p, m), 520 * (124.4e-6 + 16384 * 39.6e-9), 1e-12);
}

TEST(CostModelSeed000, the_step_is_compute_bound_and_sends_the_faces_in_one_queue) {
  const Plan p = make_plan({12, 12, 524288}, 1024, 9, 1);
  auto pr = predict(p, tp::test::seed000_sci(49.2, 75.2), {});
  ASSERT_TRUE(pr);
  // Two successors, each a 4 x 1024 face of 4-byte floats.
  EXPECT_EQ(pr->step.messages, 2);
  EXPECT_EQ(pr->step.face_bytes, 2 * 4 * 1024 * 4);
  EXPECT_EQ(pr->step.face_bytes, p.face_points() * 4);
  EXPECT_NEAR(pr->step.t_comm.count(), 32768 / 84.12e6, 1e-15);
  EXPECT_TRUE(pr->step.compute_bound);
  EXPECT_EQ(pr->steps, 520);
}

// Seed 002 5.3: T_non-blocking,hyperplane = (3X/(2x) + 2Y/y + Z/z - 4)(100 us + x^2 z 39.6 ns).
TEST(CostModelSeed002, non_blocking_hyperplane_is_the_papers_formula) {
  const Machine m = tp::test::seed000_sci(49.2, 50.8);
  for (std::int64_t z : {128, 512, 1024, 4096}) {
    const Plan p = make_plan({16, 16, 65536}, z, 8, 2);
    const double X = 16, Y = 16, x = 4, zz = static_cast<double>(z);
    const double expected =
        (3 * X / (2 * x) + 2 * Y / x + 65536 / zz - 4) * (100 * us + x * x * zz * 39.6 * ns);
    EXPECT_NEAR(predicted_s(p, m), expected, 1e-12) << "z = " << z;
  }
}

TEST(CostModelSeed002, blocking_adds_the_transfer_and_overlap_hides_it) {
  const Machine m = tp::test::seed000_sci(49.2, 50.8);
  const Plan b = make_plan({16, 16, 65536}, 1024, 8, 2, ScheduleKind::blocking);
  auto pb = predict(b, m, {});
  ASSERT_TRUE(pb);
  // Mesh 2x4, CPU grid 2x1: along dimension 1 one 4 x z face, along dimension 2 two.
  EXPECT_EQ(pb->step.face_bytes, (4 * 1024 + 2 * 4 * 1024) * 4);
  const double t_comp = 16 * 1024 * 39.6 * ns;
  const double t_comm = (12 * 1024 * 4) / 84.12e6;
  EXPECT_NEAR(pb->step.step.count(), t_comp + 100 * us + t_comm, 1e-15);
  EXPECT_NEAR(pb->total.count(), static_cast<double>(b.steps()) * (t_comp + 100 * us + t_comm),
              1e-12);
}

TEST(CostModelVertical, beta_is_formula_6_and_n_is_formula_7) {
  const Seconds alpha{69e-3};
  const Seconds t_in{11e-6};
  // Seed 002 5.2: alpha ~ 69 ms, t_synch_in ~ 11 us: N = sqrt(alpha / t_synch_in) = 79.2.
  EXPECT_NEAR(tp::model::vertical_beta(alpha, t_in, 79, 1).count(), 69e-3 * 80 / 79 + 79 * 11e-6,
              1e-15);
  EXPECT_EQ(tp::model::best_subtiles(alpha, t_in, 1, 100000), 79);
  // beta_min ~ alpha + 2 sqrt(alpha t_synch_in).
  EXPECT_NEAR(tp::model::vertical_beta(alpha, t_in, 79, 1).count(),
              69e-3 + 2 * std::sqrt(69e-3 * 11e-6), 1e-6);
  // Brute force over N.
  for (std::int64_t depth : {1, 2, 3}) {
    std::int64_t best = 1;
    for (std::int64_t n = 1; n <= 500; ++n) {
      if (tp::model::vertical_beta(alpha, t_in, n, depth) <
          tp::model::vertical_beta(alpha, t_in, best, depth)) {
        best = n;
      }
    }
    EXPECT_EQ(tp::model::best_subtiles(alpha, t_in, depth, 500), best) << depth;
  }
  EXPECT_EQ(tp::model::best_subtiles(alpha, t_in, 1, 10), 10);  // capped by the tile height
  EXPECT_EQ(tp::model::best_subtiles(alpha, Seconds{0}, 1, 64), 64);
  EXPECT_EQ(tp::model::best_subtiles(alpha, t_in, 0, 64), 1);
  EXPECT_DOUBLE_EQ(tp::model::vertical_beta(alpha, t_in, 1, 0).count(), alpha.count());
}

TEST(CostModelVertical, vertical_grouping_computes_beta_per_step) {
  const Machine m = tp::test::seed000_sci(49.2, 50.8);
  const Plan p =
      make_plan({16, 16, 65536}, 1024, 8, 2, ScheduleKind::overlap, GroupingKind::vertical);
  auto pr = predict(p, m, {});
  ASSERT_TRUE(pr) << pr.error().message;
  const Seconds alpha{16 * 1024 * 39.6 * ns};
  const auto n = tp::model::best_subtiles(alpha, Seconds{11 * us}, 1, 1024);
  EXPECT_EQ(pr->step.subtiles, n);
  EXPECT_NEAR(pr->step.t_comp.count(),
              tp::model::vertical_beta(alpha, Seconds{11 * us}, n, 1).count(), 1e-15);
  EXPECT_NEAR(pr->step.step.count(), 100 * us + pr->step.t_comp.count(), 1e-15);
  // A given N is used as given.
  auto given = predict(p, m, ModelOptions{"", false, 4});
  ASSERT_TRUE(given);
  EXPECT_EQ(given->step.subtiles, 4);
  EXPECT_NEAR(given->step.t_comp.count(), alpha.count() * 5 / 4 + 4 * 11 * us, 1e-15);
  EXPECT_FALSE(predict(p, m, ModelOptions{"", false, 1025}));
  EXPECT_FALSE(predict(make_plan({16, 16, 65536}, 1024, 8, 2), m, ModelOptions{"", false, 4}));
}

TEST(CostModelCommThread, one_cpu_is_the_overlap_formula_and_more_cpus_share_the_overhead) {
  const Machine m = tp::test::seed000_sci(49.2, 50.8);
  const Plan one = make_plan({12, 12, 524288}, 1024, 9, 1);
  EXPECT_NEAR(predicted_s(one, m, ModelOptions{"", true, 0}), predicted_s(one, m), 1e-12);

  const Plan two = make_plan({16, 16, 65536}, 1024, 8, 2);
  auto pr = predict(two, m, ModelOptions{"", true, 0});
  ASSERT_TRUE(pr);
  const double alpha = 16 * 1024 * 39.6 * ns;
  // (m alpha + t_start + t_sync) / m: the overhead spread over both threads.
  EXPECT_NEAR(pr->step.step.count(), (2 * alpha + 100 * us) / 2, 1e-15);
  EXPECT_NEAR(pr->step.comm_thread_comp.count(), (2 * alpha + 100 * us) / 2 - 100 * us, 1e-15);
  EXPECT_LT(pr->total.count(), predicted_s(two, m));

  auto bad = predict(make_plan({16, 16, 65536}, 1024, 8, 2, ScheduleKind::blocking), m,
                     ModelOptions{"", true, 0});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "the communication thread (seed 002 5.4) is modelled for the overlap schedule with "
            "hyperplane grouping only, not blocking + hyperplane");
}

TEST(CostModelCommThread, a_slow_link_bounds_the_step) {
  Machine m = tp::test::seed000_sci(10, 10);
  m.link.bandwidth_bytes_per_s = 1e6;  // 48 KiB per step: 49 ms of transfer
  const Plan two = make_plan({16, 16, 65536}, 1024, 8, 2);
  auto pr = predict(two, m, ModelOptions{"", true, 0});
  ASSERT_TRUE(pr);
  const double t_comm = 12 * 1024 * 4 / 1e6;
  EXPECT_NEAR(pr->step.step.count(), 20 * us + t_comm, 1e-12);
  EXPECT_FALSE(pr->step.compute_bound);
}

TEST(CostModelComm, send_modes_and_latency) {
  Machine m = tp::test::seed000_sci(5, 7);
  m.link.latency = Seconds{3 * us};
  m.link.bandwidth_bytes_per_s = 1e9;
  const Plan p = make_plan({16, 16, 65536}, 1024, 8, 2, ScheduleKind::blocking);
  const double alpha = 16 * 1024 * 39.6 * ns;
  const double b1 = 4 * 1024 * 4, b2 = 2 * 4 * 1024 * 4;
  m.send_mode = SendMode::queued;
  EXPECT_NEAR(predict(p, m, {})->step.step.count(),
              alpha + 5 * us + 3 * us + (b1 + b2) / 1e9 + 7 * us, 1e-15);
  m.send_mode = SendMode::serial;
  EXPECT_NEAR(predict(p, m, {})->step.step.count(),
              alpha + 2 * 5 * us + 2 * 3 * us + (b1 + b2) / 1e9 + 7 * us, 1e-15);
  m.send_mode = SendMode::parallel;
  EXPECT_NEAR(predict(p, m, {})->step.step.count(), alpha + 2 * 5 * us + 3 * us + b2 / 1e9 + 7 * us,
              1e-15);
}

TEST(CostModelComm, one_node_pays_no_communication) {
  const Plan p = make_plan({16, 16, 4096}, 256, 1, 1, ScheduleKind::blocking);
  auto pr = predict(p, tp::test::seed000_sci(49.2, 75.2), {});
  ASSERT_TRUE(pr);
  EXPECT_EQ(pr->step.messages, 0);
  EXPECT_EQ(pr->step.t_start.count(), 0);
  EXPECT_EQ(pr->step.t_sync.count(), 0);
  EXPECT_NEAR(pr->total.count(), static_cast<double>(p.steps()) * 16 * 16 * 256 * 39.6 * ns, 1e-12);
}

TEST(CostModelComm, deeper_dependences_send_thicker_faces) {
  PlanRequest r;
  r.size = {12, 12, 4096};
  r.deps = *DependenceMatrix::parse("2,0,0;0,1,0;0,0,1");
  r.tile_height = 64;
  r.nodes = 9;
  auto p = Plan::make(r);
  ASSERT_TRUE(p) << p.error().message;
  auto faces = tp::model::face_bytes_per_neighbour(*p, 8);
  ASSERT_TRUE(faces);
  // Tiles 4 x 4 x 64; dimension 1 sends two layers of 4 x 64, dimension 2 one.
  EXPECT_EQ(*faces, (std::vector<std::int64_t>{2 * 4 * 64 * 8, 4 * 64 * 8}));
}

TEST(CostModelComm, kernels_use_their_own_compute_cost) {
  Machine m = tp::test::seed000_sci(49.2, 75.2);
  tp::model::ComputeCost wave;
  wave.t_comp1 = Seconds{10 * ns};
  wave.element_bytes = 8;
  m.kernels.emplace("wave3d", wave);
  const Plan p = make_plan({12, 12, 524288}, 1024, 9, 1);
  auto pr = predict(p, m, ModelOptions{"wave3d", false, 0});
  ASSERT_TRUE(pr);
  EXPECT_NEAR(pr->step.alpha.count(), 16384 * 10 * ns, 1e-15);
  EXPECT_EQ(pr->step.face_bytes, 2 * 4 * 1024 * 8);
}

TEST(CostModelComm, general_tiling_matrices_are_refused) {
  PlanRequest r;
  r.size = {4, 16};
  r.deps = DependenceMatrix::unit(2);
  r.map_dim = 2;
  r.tile_kind = tp::plan::TileSpecKind::matrix;
  r.h = *tp::plan::parse_rational_matrix("1/4,0;1/8,1/8", "H");
  auto p = Plan::make(r);
  ASSERT_TRUE(p) << p.error().message;
  auto pr = predict(*p, tp::test::seed000_sci(1, 1), {});
  ASSERT_FALSE(pr);
  EXPECT_EQ(pr.error().message,
            "the cost model needs rectangular tiles (--tile); a general tiling matrix is not "
            "modelled");
}

}  // namespace

namespace {

// Fill and drain: overlap's first step sends nothing and the last step of either schedule has
// no consumer for its faces; with edge_steps they cost t_comp alone (docs/model.md).
TEST(CostModelEdgeSteps, first_and_last_steps_compute_only) {
  Machine m = tp::test::seed000_sci(3, 0.5);
  m.link.latency = Seconds{20 * us};
  m.link.bandwidth_bytes_per_s = 80e6;  // comm-bound: a 12 x z float face takes 0.6 us per z
  m.send_mode = SendMode::serial;
  m.compute.t_comp1 = Seconds{1 * ns};  // a 6 x 12 x 32768 tile: 2.4 ms against 19.7 ms
  ModelOptions edges;
  edges.edge_steps = true;
  for (auto schedule : {ScheduleKind::overlap, ScheduleKind::blocking}) {
    const Plan p = make_plan({12, 12, 131072}, 32768, 2, 1, schedule);
    auto seeds = predict(p, m, {});
    auto refined = predict(p, m, edges);
    ASSERT_TRUE(seeds && refined);
    const std::int64_t k = schedule == ScheduleKind::overlap ? 2 : 1;
    EXPECT_EQ(refined->edge_steps, k);
    EXPECT_EQ(seeds->edge_steps, 0);
    const double step = seeds->step.step.count();
    const double t_comp = seeds->step.t_comp.count();
    EXPECT_FALSE(seeds->step.compute_bound);
    EXPECT_NEAR(seeds->total.count(), static_cast<double>(p.steps()) * step, 1e-12);
    EXPECT_NEAR(refined->total.count(),
                static_cast<double>(p.steps() - k) * step + static_cast<double>(k) * t_comp, 1e-12);
  }
  // One node sends nothing: every step is already compute only.
  const Plan one = make_plan({12, 12, 131072}, 32768, 1, 1);
  EXPECT_NEAR(predicted_s(one, m, edges), predicted_s(one, m), 1e-15);
}

// The executed formula's last step computes the row's last tile, cut short where the tile height
// does not divide the extent: 131072 = 4 x 32768 + 8192, so a fifth of a tile's points less
// than five full tiles (by hand, one node: no fill, no faces). Where it divides, nothing
// changes; the seeds' formula charges every tile in full.
TEST(CostModelEdgeSteps, the_last_step_computes_the_rows_last_tile_as_cut_short) {
  Machine m = tp::test::seed000_sci(3, 0.5);
  m.compute.t_comp1 = Seconds{1 * ns};
  ModelOptions executed;
  executed.formula = tp::model::Formula::executed;
  const Plan cut = make_plan({12, 12, 4 * 32768 + 8192}, 32768, 1, 1);
  auto seeds = predict(cut, m, {});
  auto exec = predict(cut, m, executed);
  ASSERT_TRUE(seeds && exec);
  ASSERT_EQ(cut.steps(), 5);
  const double t_comp = 12.0 * 12.0 * 32768 * ns;
  EXPECT_NEAR(seeds->total.count(), 5 * seeds->step.step.count(), 1e-12);
  EXPECT_NEAR(exec->total.count(), 5 * exec->step.step.count() - 0.75 * t_comp, 1e-12);
  // A height that divides: the executed formula keeps five full steps.
  const Plan whole = make_plan({12, 12, 5 * 32768}, 32768, 1, 1);
  EXPECT_NEAR(predicted_s(whole, m, executed), 5 * exec->step.step.count(), 1e-12);
  // With tile-size samples the cut tile costs its own tile time: a quarter of a full tile's
  // points at twice the cost per point is half a full tile.
  m.compute.samples = {{12 * 12 * 8192, Seconds{2 * ns}}, {12 * 12 * 32768, Seconds{1 * ns}}};
  auto sampled = predict(cut, m, executed);
  ASSERT_TRUE(sampled);
  EXPECT_NEAR(sampled->total.count(), 5 * sampled->step.step.count() - 0.5 * t_comp, 1e-12);
}

}  // namespace

namespace {

using tp::model::Workload;

// sweep3d's workload on 4x4x32 cells, 2 nodes, tile height 8, T = 2, by hand.
TEST(CostModelWorkload, repeated_sweeps_are_whole_pipelines_with_a_copy_sweep_and_exchanges) {
  const Machine m = tp::test::seed000_sci(49.2, 75.2);
  const Plan plan = make_plan({4, 4, 32}, 8, 2, 1);
  // Mesh 2x1 over (i, j), tiles 2x4x8, 4 tiles along k per node: the second node starts two
  // steps after the first (overlap), so 2 + 4 = 6 steps.
  ASSERT_EQ(plan.mesh(), (Index{2, 1}));
  ASSERT_EQ(plan.tiling().tile_extents(), (Index{2, 4, 8}));
  ASSERT_EQ(plan.steps(), 6);
  ModelOptions o;
  o.workload.sweeps = 17;  // T = 2: 8 T + 1
  o.workload.copy_sweeps = 1;
  o.workload.element_bytes = 80;
  o.workload.between_sweep_bytes = 4 * 4 * 32 * 16 + 1;  // odd: each node's share rounds up
  auto p = predict(plan, m, o);
  ASSERT_TRUE(p) << p.error().message;
  const double face = 4 * 8 * 80;  // one layer of a tile's j x k cross-section, 80-byte cells
  EXPECT_EQ(p->step.face_bytes, 4 * 8 * 80);
  const double t_comm = face / 84.12e6;
  const double alpha = 64 * 39.6 * ns;
  const double sweep = 6 * (49.2 * us + std::max(alpha, t_comm) + 75.2 * us);
  const double copy = 6 * (49.2 * us + t_comm + 75.2 * us);
  // One barrier round between 2 nodes, twice; the exchange: 49.2 us + 4097 bytes.
  const double between = 2 * 75.2 * us + 49.2 * us + 4097.0 / 84.12e6;
  EXPECT_NEAR(p->sweep.count(), sweep, 1e-12 * sweep);
  EXPECT_NEAR(p->copy_sweep.count(), copy, 1e-12 * copy);
  EXPECT_NEAR(p->between.count(), between, 1e-12 * between);
  const double total = 16 * sweep + copy + 16 * between;
  EXPECT_NEAR(p->total.count(), total, 1e-12 * total);
  EXPECT_EQ(p->sweeps, 17);
  // One node: no faces and nothing between the sweeps; the copy sweep costs nothing.
  const Plan one = make_plan({4, 4, 32}, 8, 1, 1);
  auto q = predict(one, m, o);
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->between.count(), 0.0);
  EXPECT_EQ(q->copy_sweep.count(), 0.0);
  EXPECT_NEAR(q->total.count(), 16 * q->sweep.count(), 1e-15);
}

TEST(CostModelWorkload, one_sweep_is_the_seeds_prediction_and_bad_workloads_are_refused) {
  const Machine m = tp::test::seed000_sci(49.2, 75.2);
  const Plan plan = make_plan({12, 12, 524288}, 3641, 9, 1);
  auto p = predict(plan, m, {});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->total.count(), p->step.step.count() * static_cast<double>(p->steps));
  EXPECT_EQ(p->total, p->sweep);
  ModelOptions bad;
  bad.workload.sweeps = 2;
  bad.workload.copy_sweeps = 3;
  auto q = predict(plan, m, bad);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().message,
            "workload of 2 sweeps (3 copying), 0 bytes between sweeps, 0-byte elements: needs "
            "sweeps >= 1, 0 <= copy sweeps <= sweeps, bytes >= 0");
  EXPECT_EQ(tp::model::barrier_rounds(1), 0);
  EXPECT_EQ(tp::model::barrier_rounds(2), 1);
  EXPECT_EQ(tp::model::barrier_rounds(5), 3);
  EXPECT_EQ(tp::model::barrier_rounds(8), 3);
}

// Mirrored sweeps (ADR 0024): the exchange moves only the points whose mirrored rows miss them.
// 4 = 2 + 2 along i on 2 nodes: symmetric, nothing moves (the barriers remain); 5 = 3 + 2: node
// 0's rows 0..2 against the reflection of node 1's (0..1) keep 2 of 5, node 1's 2 of 2: a fifth
// moves; a 2 x 2 mesh of 5 x 4: i keeps 4 of 5, j all: 1 - 4/5; one node: nothing to miss.
TEST(CostModelWorkload, mirrored_sweeps_charge_the_points_the_mirrored_rows_miss) {
  const Machine m = tp::test::seed000_sci(49.2, 75.2);
  const auto plan_of = [](Index size, Index mesh, std::int64_t nodes) {
    auto req = tp::test::height_request(std::move(size), 8, nodes, 1, ScheduleKind::overlap,
                                        GroupingKind::hyperplane);
    req.mesh = std::move(mesh);
    req.map_dim = 3;
    auto p = Plan::make(req);
    EXPECT_TRUE(p) << p.error().message;
    return *p;
  };
  const Plan even = plan_of({4, 4, 32}, {2, 1}, 2);
  const Plan odd = plan_of({5, 4, 32}, {2, 1}, 2);
  const Plan mesh = plan_of({5, 4, 32}, {2, 2}, 4);
  EXPECT_EQ(tp::model::mirror_miss(even), 0.0);
  EXPECT_NEAR(tp::model::mirror_miss(odd), 0.2, 1e-15);
  EXPECT_NEAR(tp::model::mirror_miss(mesh), 1.0 - 0.8, 1e-15);
  EXPECT_EQ(tp::model::mirror_miss(make_plan({5, 4, 32}, 8, 1, 1)), 0.0);
  ModelOptions o;
  o.workload.sweeps = 9;
  o.workload.between_sweep_bytes = 5 * 4 * 32 * 8;
  o.workload.mirrored = true;
  auto p = predict(even, m, o);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_NEAR(p->between.count(), 2 * 75.2 * us, 1e-18);  // two barriers, no exchange
  auto q = predict(odd, m, o);
  ASSERT_TRUE(q) << q.error().message;
  // A fifth of 5120 bytes, each node's half: 512 bytes in one message.
  const double between = 2 * 75.2 * us + 49.2 * us + 512.0 / 84.12e6;
  EXPECT_NEAR(q->between.count(), between, 1e-12 * between);
  o.workload.mirrored = false;  // the whole box's share, as before
  auto r = predict(odd, m, o);
  ASSERT_TRUE(r) << r.error().message;
  const double whole = 2 * 75.2 * us + 49.2 * us + 2560.0 / 84.12e6;
  EXPECT_NEAR(r->between.count(), whole, 1e-12 * whole);

  // With a CPU copy bandwidth, a mirrored sweep refills the shared slab's outer halo (ADR
  // 0034): the node's block of the even plan is 2 x 4 x 32, its layers 4 x 32 + 2 x 32 + 2 x 4
  // = 200 points of 80 bytes at 1 GB/s; not mirrored, nothing.
  Machine copying = m;
  copying.cpu_copy_bytes_per_s = 1e9;
  o.workload.element_bytes = 80;
  o.workload.mirrored = true;
  auto h = predict(even, copying, o);
  ASSERT_TRUE(h) << h.error().message;
  const double refill = 2 * 75.2 * us + 200.0 * 80 / 1e9;
  EXPECT_NEAR(h->between.count(), refill, 1e-12 * refill);
  o.workload.mirrored = false;
  o.workload.between_sweep_bytes = 0;
  auto n = predict(even, copying, o);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_NEAR(n->between.count(), 2 * 75.2 * us, 1e-18);
}

// sor2d, T = 4 sweeps of a 6x6 grid: the planner's skewed box (t, i + t, j + t) is 4 x 9 x 9;
// its faces carry the low halo of the other dimensions.
TEST(CostModelWorkload, sor_runs_in_the_skewed_box_with_halo_faces) {
  DependenceMatrix deps =
      *DependenceMatrix::make(3, {{0, 1, 0}, {0, 0, 1}, {1, -1, 0}, {1, 0, -1}, {1, 0, 0}});
  auto t = tp::plan::transform_space({4, 6, 6}, deps);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->box.extents, (Index{4, 9, 9}));
  PlanRequest r;
  r.size = t->box.extents;
  r.deps = t->deps;
  r.tile_kind = tp::plan::TileSpecKind::extents;
  r.tile_extents = {4, 3, 9};
  r.nodes = 3;
  r.mesh = {1, 3};
  r.map_dim = 3;
  auto plan = Plan::make(r);
  ASSERT_TRUE(plan) << plan.error().message;
  // Tiles 4 x 3 x 9: 1 x 3 x 1 of them, one per node along i (dimension 2), one tile along j
  // (the mapping dimension). Overlap: each node starts two steps after its predecessor, so the
  // last tile runs at step 2 x 2 = 4: 5 steps.
  EXPECT_EQ(plan->steps(), 5);
  const Machine m = tp::test::seed000_sci(49.2, 75.2);
  ModelOptions o;
  o.workload.element_bytes = 8;
  o.workload.face_halo = true;
  auto p = predict(*plan, m, o);
  ASSERT_TRUE(p) << p.error().message;
  // Across i: (4 + 1) x (9 + 1) doubles (across t nothing: one node along t).
  EXPECT_EQ(p->step.face_bytes, 5 * 10 * 8);
  const double alpha = 4 * 3 * 9 * 39.6 * ns;
  const double step = 49.2 * us + std::max(alpha, 400 / 84.12e6) + 75.2 * us;
  EXPECT_NEAR(p->total.count(), 5 * step, 1e-12 * 5 * step);
  o.workload.face_halo = false;
  auto q = predict(*plan, m, o);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->step.face_bytes, 4 * 9 * 8);
}

}  // namespace

namespace cost_model_cyclic {

/// A 2-D plan of `cyclic` cycles on 2 nodes x 1 CPU, mapped along the 64-point dimension.
Plan cyclic_plan(Index size, std::int64_t cyclic) {
  auto p = Plan::make(tp::test::height_request(std::move(size), 8, 2, 1, ScheduleKind::overlap,
                                               GroupingKind::hyperplane, {cyclic}, 2));
  EXPECT_TRUE(p) << p.error().message;
  return *p;
}

TEST(CostModelCyclic, every_cycles_fill_and_the_wrap_are_hops_and_steps_of_an_interior_node) {
  // ADR 0018's example: 16x64, tile 8, 2 nodes, c = 2: 4 rows of 4 x 8 tiles, X = 8 along the
  // mapping dimension, f(x) = 2 x, L = max(f(2), X) = 8; steps (c - 1) L + f(1) + X = 18. Node 1
  // sends its first cycle's faces over the wrap to node 0 every step, as node 0 sends to node 1:
  // one message of a face 8 points high (4-byte elements) per step and node.
  const Machine m = tp::test::seed000_sci(10, 20);
  const Plan two = cyclic_plan({16, 64}, 2);
  ASSERT_EQ(two.steps(), 18);
  auto p = predict(two, m, {});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->step.messages, 1);
  EXPECT_EQ(p->step.face_bytes, 8 * 4);
  const double t_comp = 4 * 8 * 39.6 * ns;
  const double t_comm = 8 * 4 / 84.12e6;
  const double step = 10 * us + std::max(t_comp, t_comm) + 20 * us;
  // A cyclic plan's hand-overs between nodes are hops (docs/model.md, "The hop"): t_start +
  // t_comm + t_comp. In seconds, f'(1) = hop, f'(2) = 2 hop (the wrap), L' = max(2 hop, 8 steps)
  // = 8 steps; the last tile (row 3 = cycle 1, row 1; j_i = 7) at hop + 8 + 7 steps, + its step.
  const double hop = 10 * us + t_comm + t_comp;
  EXPECT_NEAR(p->step.hop.count(), hop, 1e-15);
  EXPECT_NEAR(p->total.count(), 16 * step + hop, 1e-15);
  // The block mapping keeps the seeds' formula: 10 steps of 8 x 8 tiles.
  const Plan one = cyclic_plan({16, 64}, 1);
  ASSERT_EQ(one.steps(), 10);
  EXPECT_NEAR(predict(one, m, {})->total.count(), 10 * (10 * us + 8 * 8 * 39.6 * ns + 20 * us),
              1e-15);
  // Short rows (16x16: X = 2 < f(2) = 4): the schedule's second cycle waits for the wrap, L = 4,
  // 8 steps; in seconds the wrap (2 hops) comes before node 0 ends its row (2 steps), so
  // L' = 2 steps and the time hop + 2 + 1 steps + the last step.
  const Plan fill = cyclic_plan({16, 16}, 2);
  ASSERT_EQ(fill.steps(), 8);
  ASSERT_LT(2 * hop, 2 * step);
  EXPECT_NEAR(predict(fill, m, {})->total.count(), 4 * step + hop, 1e-15);
}

}  // namespace cost_model_cyclic

// A copying sweep's tiles stream Workload::copy_bytes_per_point bytes per point at the
// machine's CPU copy bandwidth (ADR 0034): 64 points x 88 bytes at 1 GB/s per tile, in every
// step of the copy sweep; without the machine's copy bandwidth, or with no bytes, nothing.
TEST(CostModelWorkload, a_copy_sweep_streams_its_bytes_at_the_cpu_copy_bandwidth) {
  Machine m = tp::test::seed000_sci(49.2, 75.2);
  m.cpu_copy_bytes_per_s = 1e9;
  const Plan plan = make_plan({4, 4, 32}, 8, 1, 1);  // one node: 4 steps of 128-point tiles
  ModelOptions o;
  o.workload.sweeps = 9;
  o.workload.copy_sweeps = 1;
  o.workload.copy_bytes_per_point = 88;
  auto p = predict(plan, m, o);
  ASSERT_TRUE(p) << p.error().message;
  const double tile = static_cast<double>(p->step.tile_points) * 88 / 1e9;
  EXPECT_NEAR(p->copy_sweep.count(), static_cast<double>(p->steps) * tile, 1e-15);
  EXPECT_GT(p->copy_sweep.count(), 0.0);
  EXPECT_NEAR(p->total.count(), 8 * p->sweep.count() + p->copy_sweep.count(), 1e-15);
  m.cpu_copy_bytes_per_s = 0;
  auto q = predict(plan, m, o);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->copy_sweep.count(), 0.0);
  o.workload.copy_bytes_per_point = -1;
  EXPECT_FALSE(predict(plan, m, o));
}

// The node's step barrier (ADR 0034): with hyperplane grouping the m CPUs' tiles end at the
// barrier, so the step computes E[max of m tiles] = alpha (1 + e_m spread); one CPU, vertical
// grouping and a machine without tile_spread keep alpha.
TEST(CostModelBarrier, a_step_of_several_cpus_lasts_as_long_as_the_slowest_tile) {
  EXPECT_EQ(tp::model::expected_max_of_normals(1), 0.0);
  EXPECT_NEAR(tp::model::expected_max_of_normals(2), 1 / std::sqrt(std::acos(-1.0)), 1e-9);
  EXPECT_NEAR(tp::model::expected_max_of_normals(3), 1.5 / std::sqrt(std::acos(-1.0)), 1e-9);
  EXPECT_NEAR(tp::model::expected_max_of_normals(4), 1.0293753730, 1e-8);
  EXPECT_NEAR(tp::model::expected_max_of_normals(10), 1.5387527308, 1e-8);

  Machine m = tp::test::seed000_sci(49.2, 75.2);
  const Plan two = make_plan({16, 16, 4096}, 256, 1, 2);
  const Plan one = make_plan({16, 16, 4096}, 256, 1, 1);
  const Plan vertical =
      make_plan({16, 16, 4096}, 256, 1, 2, ScheduleKind::overlap, GroupingKind::vertical);
  auto base = predict(two, m, {});
  ASSERT_TRUE(base);
  EXPECT_EQ(base->step.t_comp, base->step.alpha);
  m.tile_spread = 0.1;
  auto p = predict(two, m, {});
  ASSERT_TRUE(p);
  const double alpha = p->step.alpha.count();
  EXPECT_NEAR(p->step.t_comp.count(), alpha * (1 + 0.1 / std::sqrt(std::acos(-1.0))),
              1e-12 * alpha);
  EXPECT_NEAR(p->total.count(),
              base->total.count() * p->step.t_comp.count() / base->step.t_comp.count(),
              1e-9 * p->total.count());
  auto q = predict(one, m, {});
  ASSERT_TRUE(q);
  EXPECT_EQ(q->step.t_comp, q->step.alpha);
  auto v = predict(vertical, m, {});
  ASSERT_TRUE(v);
  m.tile_spread = 0;
  auto v0 = predict(vertical, m, {});
  ASSERT_TRUE(v0);
  EXPECT_EQ(v->step.t_comp, v0->step.t_comp);
}
