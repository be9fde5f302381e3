// The closed formula's hand-over between nodes (ModelOptions::pipeline_hops, docs/model.md "The
// hop") against the simulator: block and block-cyclic plans on seed 000's SCI cluster and on a
// machine whose faces fly 200 us, within 5%; by hand on a block plan; off, the seeds' formula;
// always on for cyclic plans.
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/sim/simulate.hpp>

#include <gtest/gtest.h>

#include "../seed_machines.hpp"

#include <cmath>
#include <string>

namespace model_hops_test {

using tp::model::Machine;
using tp::model::ModelOptions;
using tp::model::Seconds;
using tp::model::SendMode;
using tp::plan::DependenceMatrix;
using tp::plan::GroupingKind;
using tp::plan::Index;
using tp::plan::Plan;
using tp::plan::PlanRequest;
using tp::plan::ScheduleKind;

/// The SCI cluster with 200 us of latency per face: the flight is a large part of the hop.
Machine far() {
  Machine m = tp::test::seed000_sci();
  m.name = "far";
  m.link.latency = Seconds{200e-6};
  return m;
}

/// An overlap plan of unit dependences mapped along the last dimension.
Plan make_plan(Index size, std::int64_t height, std::int64_t nodes, std::int64_t cpus, Index cyclic,
               GroupingKind g = GroupingKind::hyperplane) {
  PlanRequest r;
  r.size = std::move(size);
  r.deps = DependenceMatrix::unit(static_cast<int>(r.size.size()));
  r.tile_height = height;
  r.nodes = nodes;
  r.cpus = cpus;
  r.map_dim = static_cast<int>(r.size.size());
  r.schedule = ScheduleKind::overlap;
  r.grouping = g;
  r.cyclic = std::move(cyclic);
  auto p = Plan::make(r);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return std::move(*p);
}

double predicted_s(const Plan& plan, const Machine& m, bool hops = true) {
  ModelOptions o;
  o.pipeline_hops = hops;
  auto p = tp::model::predict(plan, m, o);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return p ? p->total.count() : -1;
}

double simulated_s(const Plan& plan, const Machine& m) {
  auto r = tp::sim::simulate(plan, m, {});
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? r->simulated.count() : -1;
}

TEST(ModelHops, a_block_plan_charges_each_hand_over_one_hop) {
  // 16 nodes x 1 CPU, 8 tiles per row: 38 steps, 15 hand-overs on the corner path, each the
  // schedule's 2 steps; with hops (38 - 30) steps + 15 hops, the hop t_start + t_comm + t_comp.
  const Plan plan = make_plan({8192, 1024}, 128, 16, 1, {});
  ASSERT_EQ(plan.steps(), 38);
  ModelOptions o;
  o.pipeline_hops = true;
  auto p = tp::model::predict(plan, tp::test::seed000_sci(), o);
  ASSERT_TRUE(p.has_value());
  const auto& s = p->step;
  EXPECT_DOUBLE_EQ(s.hop.count(), (s.t_start + s.t_comm + s.t_comp).count());
  EXPECT_NEAR(p->total.count(), 8 * s.step.count() + 15 * s.hop.count(), 1e-12);
  // Off: every step at full length (the seeds' formula).
  o.pipeline_hops = false;
  auto seeds = tp::model::predict(plan, tp::test::seed000_sci(), o);
  ASSERT_TRUE(seeds.has_value());
  EXPECT_DOUBLE_EQ(seeds->total.count(), 38 * seeds->step.step.count());
  EXPECT_DOUBLE_EQ(seeds->step.hop.count(), 0);
}

TEST(ModelHops, cycles_on_one_node_have_no_hand_over) {
  // A cyclic plan is always charged with hops; on one node its steps are the plan's.
  const Plan plan = make_plan({64, 4096}, 256, 1, 2, {3});
  auto p = tp::model::predict(plan, tp::test::seed000_sci(), {});
  ASSERT_TRUE(p.has_value());
  EXPECT_NEAR(p->total.count(), static_cast<double>(plan.steps()) * p->step.step.count(),
              1e-12 * p->total.count());
}

TEST(ModelHops, cyclic_plans_agree_with_the_simulator_within_5_percent) {
  struct Case {
    Index size;
    std::int64_t height, nodes, cpus;
    Index cyclic;
    GroupingKind grouping;
  };
  const auto hyper = GroupingKind::hyperplane;
  const std::vector<Case> cases = {
      // docs/model.md "Block-cyclic plans against the formula": a fill of 30 steps, 8 tiles a row.
      {{8192, 1024}, 128, 16, 1, {1}, hyper},
      {{8192, 1024}, 128, 16, 1, {2}, hyper},
      {{8192, 1024}, 128, 16, 1, {4}, hyper},
      // Short rows against the fill, and a cycle longer than the fill.
      {{256, 512}, 64, 8, 1, {4}, hyper},
      {{512, 8192}, 64, 4, 1, {2}, hyper},
      // Two CPUs per node, a 2-D mesh with cycles along both dimensions, vertical grouping.
      {{512, 2048}, 128, 4, 2, {3}, hyper},
      {{64, 64, 1024}, 64, 4, 1, {2, 2}, hyper},
      {{512, 2048}, 128, 4, 2, {2}, GroupingKind::vertical},
  };
  for (const Machine& m : {tp::test::seed000_sci(), far()}) {
    for (const Case& c : cases) {
      const Plan plan = make_plan(c.size, c.height, c.nodes, c.cpus, c.cyclic, c.grouping);
      const double sim = simulated_s(plan, m);
      const double model = predicted_s(plan, m);
      std::string what = m.name + " " + std::to_string(plan.steps()) + " steps, cyclic";
      for (auto f : plan.cyclic()) what += " " + std::to_string(f);
      EXPECT_LT(std::abs(model / sim - 1), 0.05)
          << what << ": model " << model << " s, simulated " << sim << " s";
    }
  }
}

}  // namespace model_hops_test

namespace model_hops_test {

double executed_s(const Plan& plan, const Machine& m) {
  ModelOptions o;
  o.formula = tp::model::Formula::executed;
  auto p = tp::model::predict(plan, m, o);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return p ? p->total.count() : -1;
}

TEST(ModelFormula, executed_is_the_fill_drain_and_hops_for_one_sweep_and_for_several) {
  const Plan plan = make_plan({8192, 1024}, 128, 16, 1, {});
  ModelOptions both;
  both.edge_steps = true;
  both.pipeline_hops = true;
  ModelOptions executed;
  executed.formula = tp::model::Formula::executed;
  EXPECT_TRUE(tp::model::counts_edge_steps(executed));
  EXPECT_TRUE(tp::model::counts_hops(executed));
  const auto a = tp::model::predict(plan, tp::test::seed000_sci(), both);
  const auto b = tp::model::predict(plan, tp::test::seed000_sci(), executed);
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(a->total.count(), b->total.count());
  EXPECT_EQ(b->edge_steps, 0);  // with hops the pipeline's ends are the hops'
  EXPECT_EQ(b->formula, tp::model::Formula::executed);
  // Several sweeps: each a pipeline with its own hops (ADR 0034).
  executed.workload.sweeps = 3;
  EXPECT_TRUE(tp::model::counts_edge_steps(executed));
  EXPECT_TRUE(tp::model::counts_hops(executed));
  both.workload.sweeps = 3;
  const auto c = tp::model::predict(plan, tp::test::seed000_sci(), both);
  const auto d = tp::model::predict(plan, tp::test::seed000_sci(), executed);
  ASSERT_TRUE(c && d);
  EXPECT_DOUBLE_EQ(c->total.count(), d->total.count());
  EXPECT_DOUBLE_EQ(d->sweep.count(), b->sweep.count());
  // The seeds' formula: neither.
  EXPECT_FALSE(tp::model::counts_edge_steps(ModelOptions{}));
  EXPECT_FALSE(tp::model::counts_hops(ModelOptions{}));
}

TEST(ModelFormula, executed_matches_the_simulator_on_short_pipelines) {
  // 1, 4 and 16 tiles per row on 2-6 nodes of one CPU, on a machine where a step's overhead
  // (t_start + t_sync, 124 us) is three times a tile's computation: the pipeline's ends decide
  // the time. Charging the seeds' fill and drain steps at t_comp once predicted a negative time
  // for one tile per node and 22% too little for 4 (docs/model.md, "Two formulas"). Within 5%
  // of the simulator.
  for (const Machine& m : {tp::test::seed000_sci(), far()}) {
    for (std::int64_t nodes = 2; nodes <= 6; ++nodes) {
      for (std::int64_t height : {1024, 256, 64}) {
        const Plan plan = make_plan({nodes * 4, 1024}, height, nodes, 1, {});
        const double sim = simulated_s(plan, m);
        const double pred = executed_s(plan, m);
        EXPECT_GT(pred, 0) << m.name << " " << nodes << " " << height;
        EXPECT_NEAR(pred / sim, 1.0, 0.05) << m.name << " nodes " << nodes << " height " << height
                                           << ": " << pred << " s against " << sim << " s";
      }
    }
  }
}

}  // namespace model_hops_test
