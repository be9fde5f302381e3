// The automatic choice against brute force over every tile height and scheme on small spaces.
#include <tilepipe/model/choose.hpp>

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace {

using tp::model::ChoiceRequest;
using tp::model::choose;
using tp::model::Machine;
using tp::model::Seconds;
using tp::plan::DependenceMatrix;
using tp::plan::GroupingKind;
using tp::plan::Plan;
using tp::plan::PlanRequest;
using tp::plan::ScheduleKind;

Machine machine(double t_comp1_ns, double t_start_us, double t_sync_us, double bw) {
  Machine m;
  m.name = "test";
  m.transport = "shm";
  m.compute.t_comp1 = Seconds{t_comp1_ns * 1e-9};
  m.compute.element_bytes = 8;
  m.t_start = Seconds{t_start_us * 1e-6};
  m.t_sync = Seconds{t_sync_us * 1e-6};
  m.t_sync_in = Seconds{2e-6};
  m.link.latency = Seconds{1e-6};
  m.link.bandwidth_bytes_per_s = bw;
  m.send_mode = tp::model::SendMode::serial;
  return m;
}

/// The seeds' SCI machines: 4-byte floats, one DMA queue per step, no separate latency.
Machine seed_machine(double t_start_us, double t_sync_us) {
  Machine m = machine(39.6, t_start_us, t_sync_us, 84.12e6);
  m.compute.element_bytes = 4;
  m.link.latency = Seconds{0};
  m.send_mode = tp::model::SendMode::queued;
  return m;
}

PlanRequest request(tp::plan::Index size, std::int64_t nodes, std::int64_t cpus,
                    const std::string& deps = "") {
  PlanRequest r;
  r.size = std::move(size);
  r.deps = deps.empty() ? DependenceMatrix::unit(static_cast<int>(r.size.size()))
                        : *DependenceMatrix::parse(deps);
  r.nodes = nodes;
  r.cpus = cpus;
  return r;
}

/// The smallest predicted time over every height 1..extent (illegal heights skipped).
double brute_force(PlanRequest r, const Machine& m, std::int64_t extent) {
  double best = 1e300;
  for (std::int64_t z = 1; z <= extent; ++z) {
    r.tile_height = z;
    auto plan = Plan::make(r);
    if (!plan) continue;
    auto p = tp::model::predict(*plan, m, {});
    if (p) best = std::min(best, p->total.count());
  }
  return best;
}

TEST(CandidateHeights, are_the_smallest_height_of_every_tile_count) {
  for (std::int64_t extent : {1, 2, 7, 100, 101, 1000, 4096}) {
    for (std::int64_t min_height : {1, 2, 5}) {
      std::set<std::int64_t> expected;
      std::set<std::int64_t> counts;
      for (std::int64_t z = min_height; z <= extent; ++z) {
        const std::int64_t u = (extent + z - 1) / z;
        if (counts.insert(u).second) expected.insert(z);  // z ascending: first z is the smallest
      }
      const auto got = tp::model::candidate_heights(extent, min_height);
      EXPECT_EQ(std::set<std::int64_t>(got.begin(), got.end()), expected)
          << extent << " " << min_height;
      EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
    }
  }
  EXPECT_LE(tp::model::candidate_heights(1 << 20, 1).size(), 2u * 1024u + 1u);
}

struct Case {
  tp::plan::Index size;
  std::int64_t nodes;
  std::int64_t cpus;
  std::string deps;
  Machine m;
};

std::vector<Case> cases() {
  return {
      {{8, 8, 300}, 4, 1, "", machine(40, 50, 70, 80e6)},
      {{8, 8, 257}, 4, 2, "", machine(5, 20, 5, 1e8)},
      {{12, 300}, 3, 2, "1,0;0,1;1,1", machine(3, 10, 10, 1e7)},
      {{12, 12, 200}, 9, 1, "1,0,0;0,1,0;0,0,2", machine(100, 100, 10, 1e9)},
      {{4, 4, 4, 120}, 8, 1, "", machine(20, 5, 5, 5e8)},
  };
}

TEST(Choose, tile_height_matches_brute_force_for_each_scheme) {
  for (const auto& c : cases()) {
    for (auto s : {ScheduleKind::overlap, ScheduleKind::blocking}) {
      for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
        ChoiceRequest cr;
        cr.base = request(c.size, c.nodes, c.cpus, c.deps);
        cr.base.schedule = s;
        cr.base.grouping = g;
        cr.auto_tile = true;
        auto choice = choose(cr, c.m);
        ASSERT_TRUE(choice) << choice.error().message;
        const double brute = brute_force(cr.base, c.m, c.size.back());
        EXPECT_NEAR(choice->prediction.total.count(), brute, 1e-12 * brute)
            << c.size.back() << " " << tp::model::scheme_name(s, g, false);
        EXPECT_EQ(choice->request.schedule, s);
        EXPECT_EQ(choice->request.grouping, g);
        // The reported prediction is the one of the plan the chosen request gives.
        auto plan = Plan::make(choice->request);
        ASSERT_TRUE(plan);
        EXPECT_DOUBLE_EQ(tp::model::predict(*plan, c.m, {})->total.count(),
                         choice->prediction.total.count());
      }
    }
  }
}

TEST(Choose, everything_auto_matches_brute_force_over_schemes_and_heights) {
  for (const auto& c : cases()) {
    ChoiceRequest cr;
    cr.base = request(c.size, c.nodes, c.cpus, c.deps);
    cr.auto_tile = cr.auto_schedule = cr.auto_grouping = true;
    auto choice = choose(cr, c.m);
    ASSERT_TRUE(choice) << choice.error().message;
    double brute = 1e300;
    for (auto s : {ScheduleKind::overlap, ScheduleKind::blocking}) {
      for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
        PlanRequest r = cr.base;
        r.schedule = s;
        r.grouping = g;
        brute = std::min(brute, brute_force(r, c.m, c.size.back()));
      }
    }
    EXPECT_NEAR(choice->prediction.total.count(), brute, 1e-12 * brute);
    EXPECT_TRUE(choice->chosen_by_model);
    EXPECT_NE(choice->reason.find("minimizes the predicted time"), std::string::npos);
    EXPECT_NE(choice->reason.find("runner-up"), std::string::npos) << choice->reason;
  }
}

TEST(Choose, measured_samples_keep_the_search_exact) {
  Machine m = machine(40, 50, 70, 80e6);
  m.compute.samples = {{64, Seconds{80e-9}}, {1024, Seconds{30e-9}}, {8192, Seconds{45e-9}}};
  ChoiceRequest cr;
  cr.base = request({8, 8, 3000}, 4, 1);
  cr.auto_tile = true;
  auto choice = choose(cr, m);
  ASSERT_TRUE(choice);
  const double brute = brute_force(cr.base, m, 3000);
  EXPECT_NEAR(choice->prediction.total.count(), brute, 1e-12 * brute);
}

TEST(Choose, sampled_heights_for_huge_extents_find_a_local_optimum) {
  const Machine m = machine(40, 50, 70, 80e6);
  ChoiceRequest cr;
  cr.base = request({4, 4, 40000000000}, 4, 1);
  cr.auto_tile = true;
  auto choice = choose(cr, m);
  ASSERT_TRUE(choice) << choice.error().message;
  const std::int64_t z = choice->request.tile_height;
  const double best = choice->prediction.total.count();
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> any(1, 40000000);
  PlanRequest r = cr.base;
  for (int i = 0; i < 400; ++i) {
    r.tile_height = i < 200 ? std::max<std::int64_t>(1, z - 100 + i) : any(rng);
    auto plan = Plan::make(r);
    ASSERT_TRUE(plan);
    EXPECT_GE(tp::model::predict(*plan, m, {})->total.count(), best * (1 - 1e-12))
        << r.tile_height << " vs chosen " << z;
  }
}

// The optimum over every height of the seeds' own closed forms, computed without the planner.
TEST(ChooseSeeds, optimal_heights_are_the_argmin_of_the_papers_formulas) {
  const auto argmin = [](std::int64_t dimz, auto&& t) {
    std::int64_t best = 1;
    for (std::int64_t z = 2; z <= dimz; ++z) {
      if (t(z) < t(best)) best = z;
    }
    return best;
  };
  struct Seed000 {
    tp::plan::Index size;
    std::int64_t x;
  };
  for (const auto& c : {Seed000{{12, 12, 524288}, 4}, Seed000{{24, 24, 262144}, 8},
                        Seed000{{24, 24, 2097152}, 8}}) {
    // Seed 000 formula (3).
    const auto t = [&](std::int64_t z) {
      const double steps = 2 * 2 * (3 - 1) + static_cast<double>((c.size[2] + z - 1) / z);
      return steps * (49.2e-6 + static_cast<double>(c.x * c.x * z) * 39.6e-9 + 4 * 18.8e-6);
    };
    ChoiceRequest cr;
    cr.base = request(c.size, 9, 1);
    cr.auto_tile = true;
    auto choice = choose(cr, seed_machine(49.2, 4 * 18.8));
    ASSERT_TRUE(choice) << choice.error().message;
    EXPECT_EQ(choice->request.tile_height, argmin(c.size[2], t)) << c.size[2];
    EXPECT_NEAR(choice->prediction.total.count(), t(choice->request.tile_height), 1e-12);
  }
  // Seed 002 5.3, overlap + hyperplane, 16x16x65536 on 8 dual nodes.
  const auto t2 = [](std::int64_t z) {
    return (6.0 + 8.0 + static_cast<double>((65536 + z - 1) / z) - 4) *
           (100e-6 + static_cast<double>(16 * z) * 39.6e-9);
  };
  ChoiceRequest cr;
  cr.base = request({16, 16, 65536}, 8, 2);
  cr.auto_tile = true;
  auto choice = choose(cr, seed_machine(49.2, 50.8));
  ASSERT_TRUE(choice) << choice.error().message;
  EXPECT_EQ(choice->request.tile_height, argmin(65536, t2));
  EXPECT_EQ(choice->request.tile_height, 1024);
}

TEST(Choose, nothing_auto_predicts_the_given_request) {
  ChoiceRequest cr;
  cr.base = request({12, 12, 524288}, 9, 1);
  cr.base.tile_height = 1024;
  auto choice = choose(cr, machine(39.6, 49.2, 75.2, 84.12e6));
  ASSERT_TRUE(choice);
  EXPECT_FALSE(choice->chosen_by_model);
  EXPECT_EQ(choice->evaluated, 1);
  EXPECT_EQ(choice->prediction.steps, 520);
}

TEST(Choose, errors_are_the_planners) {
  ChoiceRequest cr;
  cr.base = request({12, 12, 64}, 1, 1);
  cr.base.tile_kind = tp::plan::TileSpecKind::extents;
  cr.base.tile_extents = {4, 4, 4};
  auto choice = choose(cr, machine(1, 1, 1, 1e9));
  ASSERT_FALSE(choice);
  EXPECT_EQ(choice.error().message,
            "cannot map the tile space: it has 3x3 rows of tiles across the mapping dimension 3, "
            "and no mesh of 1 nodes x 1 CPU gives every row its own CPU");
  // Fewer rows than CPUs is no error (issue 15): 2x2 on 9 nodes runs on the nodes with a row.
  cr.base = request({2, 2, 64}, 9, 1);
  cr.auto_tile = true;
  EXPECT_TRUE(choose(cr, machine(1, 1, 1, 1e9)));
}

TEST(Choose, heights_respect_the_dependence_length) {
  ChoiceRequest cr;
  cr.base = request({4, 4, 50}, 1, 1, "1,0,0;0,1,0;0,0,3");
  cr.auto_tile = true;
  // Communication-free single node with a per-step cost: the smallest legal height is not best,
  // but every candidate must be > 3.
  auto choice = choose(cr, machine(1, 1, 1, 1e9));
  ASSERT_TRUE(choice) << choice.error().message;
  EXPECT_GE(choice->request.tile_height, 4);
}

}  // namespace

namespace choose_cyclic {

TEST(CyclicCandidates, are_every_factor_vector_up_to_the_cap) {
  EXPECT_TRUE(tp::model::cyclic_candidates(1).empty());
  const auto two = tp::model::cyclic_candidates(2);
  ASSERT_EQ(two.size(), 8u);
  EXPECT_EQ(two.front(), (tp::plan::Index{1}));
  EXPECT_EQ(two.back(), (tp::plan::Index{8}));
  const auto three = tp::model::cyclic_candidates(3);
  ASSERT_EQ(three.size(), 64u);
  EXPECT_EQ(three[1], (tp::plan::Index{1, 2}));
  EXPECT_EQ(three.back(), (tp::plan::Index{8, 8}));
  EXPECT_EQ(tp::model::cyclic_candidates(4).size(), 64u);  // 4 x 4 x 4
  EXPECT_EQ(tp::model::cyclic_candidates(5).size(), 16u);  // 2^4 (3^4 > 64)
}

/// The smallest prediction over every candidate the planner accepts (ties: the first).
std::pair<double, tp::plan::Index> brute_force_cyclic(PlanRequest r, const Machine& m) {
  std::pair<double, tp::plan::Index> best{1e300, {}};
  for (const auto& c : tp::model::cyclic_candidates(static_cast<int>(r.size.size()))) {
    r.cyclic = c;
    auto plan = Plan::make(r);
    if (!plan) continue;
    tp::model::ModelOptions o;
    o.pipeline_hops = true;  // every candidate with the hop, the block plan included
    auto p = tp::model::predict(*plan, m, o);
    if (p && p->total.count() < best.first) best = {p->total.count(), c};
  }
  return best;
}

TEST(Choose, cyclic_factors_are_the_best_candidate_of_the_model) {
  // Short rows on many nodes (8192 x 1024 mapped along 1024 on 16 nodes, tile 128: X = 8
  // against a fill of 2 (16 - 1) steps): thinner rows in cycles shorten the fill's steps.
  PlanRequest wide = request({8192, 1024}, 16, 1);
  wide.map_dim = 2;
  wide.tile_height = 128;
  // A 3-D space on 4 nodes: one factor per non-mapping dimension.
  PlanRequest cube = request({24, 20, 64}, 4, 1);
  cube.tile_height = 8;
  const Machine sci = seed_machine(49.2, 75.2);
  for (const auto& base : {wide, cube}) {
    ChoiceRequest cr;
    cr.base = base;
    cr.auto_cyclic = true;
    auto choice = choose(cr, sci);
    ASSERT_TRUE(choice) << choice.error().message;
    const auto [time, factors] = brute_force_cyclic(base, sci);
    EXPECT_EQ(choice->request.cyclic, factors);
    EXPECT_DOUBLE_EQ(choice->prediction.total.count(), time);
    EXPECT_NE(choice->reason.find("with cyclic factors"), std::string::npos) << choice->reason;
  }
  // The wide case pays for cycles in the model.
  EXPECT_GT(brute_force_cyclic(wide, sci).second[0], 1);
}

}  // namespace choose_cyclic
