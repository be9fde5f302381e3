// Property tests: random plans checked against brute-force enumeration of their tile spaces.
// Each case prints its seed; rerun one with TILEPIPE_PROPERTY_SEED=<seed>.
#include <tilepipe/plan/plan.hpp>

#include "plan_property_helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace tp::plan::property {
namespace {

Case enumeration_case(std::uint64_t seed) {
  Picker pick(seed);
  Case c;
  const int n = static_cast<int>(pick(2, 4));
  for (int d = 0; d < n; ++d) c.request.size.push_back(pick(2, n == 4 ? 9 : 16));
  const int deps_kind = static_cast<int>(pick(0, 2));
  c.request.deps = deps_kind == 0 ? DependenceMatrix::unit(n) : random_01_deps(pick, n, 4);
  c.request.nodes = pick(1, 4);
  c.request.cpus = pick(1, 4);
  c.request.tile_kind = TileSpecKind::height;
  c.request.tile_height = pick(2, 6);
  c.request.schedule = pick(0, 1) ? ScheduleKind::overlap : ScheduleKind::blocking;
  c.request.grouping = pick(0, 1) ? GroupingKind::hyperplane : GroupingKind::vertical;
  if (pick(0, 1)) c.request.map_dim = static_cast<int>(pick(1, n));
  c.text = describe(seed, c.request);
  return c;
}

std::vector<std::uint64_t> enumeration_seeds(int count) {
  return property::seeds(count, 0x5EEDULL);
}

// Every tile the brute force sees: each point's tile.
std::vector<Index> all_tiles(const Plan& plan) {
  std::set<Index> tiles;
  const auto& ext = plan.space().extents();
  Index j(ext.size(), 1);
  while (true) {
    tiles.insert(plan.tiling().tile_of(j));
    int d = static_cast<int>(j.size()) - 1;
    while (d >= 0 && j[static_cast<std::size_t>(d)] == ext[static_cast<std::size_t>(d)]) {
      j[static_cast<std::size_t>(d)] = 1;
      --d;
    }
    if (d < 0) break;
    ++j[static_cast<std::size_t>(d)];
  }
  return {tiles.begin(), tiles.end()};
}

Index add(const Index& a, const Index& b) {
  Index s = a;
  for (std::size_t i = 0; i < s.size(); ++i) s[i] += b[i];
  return s;
}

// True when `to` is reachable from `from` by a non-empty path of D^S steps (all D^S >= 0).
bool reachable(const Index& from, const Index& to, const std::vector<Index>& ds) {
  std::vector<Index> stack{from};
  std::set<Index> seen;
  while (!stack.empty()) {
    Index t = stack.back();
    stack.pop_back();
    for (const auto& d : ds) {
      Index next = add(t, d);
      bool within = true;
      for (std::size_t i = 0; i < next.size(); ++i) within = within && next[i] <= to[i];
      if (!within) continue;
      if (next == to) return true;
      if (seen.insert(next).second) stack.push_back(next);
    }
  }
  return false;
}

TEST(PlanProperty, steps_mapping_and_schedule_agree_with_enumeration) {
  int planned = 0;
  for (auto seed : enumeration_seeds(400)) {
    const Case c = enumeration_case(seed);
    SCOPED_TRACE(c.text);
    auto plan = Plan::make(c.request);
    if (!plan) {
      // Only impossible meshes and illegal derived tilings may be refused.
      const auto code = plan.error().code;
      EXPECT_TRUE(code == tp::Errc::invalid_argument || code == tp::Errc::illegal_tiling)
          << plan.error().message;
      continue;
    }
    ++planned;
    const auto tiles = all_tiles(*plan);
    ASSERT_EQ(static_cast<std::int64_t>(tiles.size()), plan->tile_space().size());

    // steps = max - min + 1 of the schedule over every tile.
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& t : tiles) {
      lo = std::min(lo, plan->time_of(t));
      hi = std::max(hi, plan->time_of(t));
    }
    EXPECT_EQ(plan->steps(), hi - lo + 1);
    EXPECT_EQ(lo, 0);

    // Closed forms (seed 002 formula (4) and section 4.8, seed 000 formula (2)).
    const int i = plan->map_dim();
    const Index u = plan->tile_space().counts();
    // sum_mesh: the nodes along each mesh dimension that have rows, ceil(u_k / m_k) (p_k when
    // every CPU has a row).
    std::int64_t sum_u = 0, sum_mesh = 0;
    for (auto x : u) sum_u += x;
    for (int k = 0, f = 0; k < static_cast<int>(u.size()); ++k) {
      if (k == plan->map_dim()) continue;
      const auto m_k = plan->cpu_grid()[static_cast<std::size_t>(f++)];
      sum_mesh += (u[static_cast<std::size_t>(k)] + m_k - 1) / m_k;
    }
    const auto n = static_cast<std::int64_t>(u.size());
    const std::int64_t ui = u[static_cast<std::size_t>(i)];
    const bool hyper = c.request.grouping == GroupingKind::hyperplane;
    const bool overlap = c.request.schedule == ScheduleKind::overlap;
    std::int64_t closed = 0;
    if (hyper && overlap) closed = sum_mesh + sum_u - 2 * n + 2;  // formula (4)
    if (hyper && !overlap) closed = sum_u - n + 1;
    if (!hyper && overlap) closed = ui + 2 * (sum_mesh - (n - 1));
    if (!hyper && !overlap) closed = ui + sum_mesh - (n - 1);
    EXPECT_EQ(plan->steps(), closed) << "u " << join(u) << " mesh " << join(plan->mesh())
                                     << " grid " << join(plan->cpu_grid()) << " i " << i;

    // Each tile on exactly one node and CPU; tiles_of partitions the tile space.
    std::map<Index, std::int64_t> owner;
    for (std::int64_t r = 0; r < plan->nodes(); ++r) {
      std::int64_t last_time = -1;
      std::set<std::pair<std::int64_t, std::int64_t>> slots;
      for (const auto& t : plan->tiles_of(r)) {
        EXPECT_TRUE(owner.emplace(t, r).second);
        EXPECT_EQ(plan->rank_of(plan->node_of(t)), r);
        EXPECT_GE(plan->time_of(t), last_time);
        last_time = plan->time_of(t);
        // One tile per CPU per time step.
        EXPECT_TRUE(slots.insert({plan->time_of(t), plan->cpu_index(plan->cpu_of(t))}).second);
      }
    }
    EXPECT_EQ(owner.size(), tiles.size());

    // The schedule respects every tile dependence: a step later on the same node, two steps
    // later across nodes for the pipelined schedule (its communication takes a step).
    const std::set<Index> tile_set(tiles.begin(), tiles.end());
    for (const auto& t : tiles) {
      for (const auto& d : plan->tile_deps()) {
        const Index v = add(t, d);
        if (!tile_set.count(v)) continue;
        const std::int64_t gap = plan->time_of(v) - plan->time_of(t);
        const bool same_node = plan->node_of(t) == plan->node_of(v);
        const bool same_group = plan->group_of(t) == plan->group_of(v);
        if (same_node && same_group) {
          EXPECT_FALSE(hyper) << "a dependence inside a hyperplane group";
          EXPECT_EQ(gap, 0);
        } else if (same_node) {
          EXPECT_GE(gap, 1);
        } else {
          EXPECT_GE(gap, overlap ? 2 : 1);
        }
      }
    }

    // Theorem 1: no direct or indirect dependence between two tiles of a hyperplane group.
    if (hyper) {
      std::map<Index, std::vector<Index>> groups;
      for (const auto& t : tiles) groups[plan->group_of(t)].push_back(t);
      for (const auto& [g, members] : groups) {
        EXPECT_LE(static_cast<std::int64_t>(members.size()), plan->cpus());
        for (const auto& a : members) {
          for (const auto& b : members) {
            if (a != b) {
              EXPECT_FALSE(reachable(a, b, plan->tile_deps()));
            }
          }
        }
      }
    }
  }
  EXPECT_GT(planned, 150);
}

// The planner's objective (docs/math.md): steps x a tile's cross-section, then the steps.
std::pair<std::int64_t, std::int64_t> objective_of(const Plan& p) {
  std::int64_t cross = 1;
  for (int d = 0; d < p.space().dims(); ++d) {
    if (d != p.map_dim()) cross *= p.tiling().tile_extents()[static_cast<std::size_t>(d)];
  }
  return {p.steps() * cross, p.steps()};
}

TEST(PlanProperty, chosen_mesh_is_the_best_over_every_factorization) {
  for (auto seed : enumeration_seeds(150)) {
    Case c = enumeration_case(seed);
    c.request.map_dim = 0;
    SCOPED_TRACE(c.text);
    auto plan = Plan::make(c.request);
    if (!plan) continue;
    std::pair<std::int64_t, std::int64_t> best{INT64_MAX, INT64_MAX};
    for (const auto& mesh : tp::plan::ordered_factorizations(
             c.request.nodes, static_cast<int>(c.request.size.size()) - 1)) {
      PlanRequest r = c.request;
      r.map_dim = plan->map_dim() + 1;
      r.mesh = mesh;
      auto p = Plan::make(r);
      if (p) best = std::min(best, objective_of(*p));
    }
    EXPECT_EQ(objective_of(*plan), best);
  }
}

TEST(PlanProperty, skewed_tilings_count_steps_by_enumeration) {
  Picker pick(99);
  int planned = 0;
  for (int trial = 0; trial < 60; ++trial) {
    PlanRequest r;
    r.size = {pick(6, 20), pick(6, 20)};
    r.deps = DependenceMatrix::unit(2);
    r.tile_kind = TileSpecKind::matrix;
    // H = [[1/a, 0], [1/b, 1/b]]: skewed parallelogram tiles; unit dependences stay legal.
    const std::int64_t a = pick(2, 5), b = pick(2, 5);
    r.h = *tp::plan::parse_rational_matrix(
        "1/" + std::to_string(a) + ",0;1/" + std::to_string(b) + ",1/" + std::to_string(b), "H");
    r.map_dim = 2;
    auto ts = tp::plan::TileSpace::make(*tp::plan::IterationSpace::make(r.size),
                                        *tp::plan::Tiling::general(r.h));
    ASSERT_TRUE(ts);
    r.nodes = ts->counts()[0];  // one row of tiles per node
    r.cpus = 1;
    r.schedule = pick(0, 1) ? ScheduleKind::overlap : ScheduleKind::blocking;
    auto plan = Plan::make(r);
    ASSERT_TRUE(plan) << plan.error().message;
    ++planned;
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    plan->tile_space().for_each([&](const Index& t) {
      Index rel = t;
      for (std::size_t d = 0; d < rel.size(); ++d) rel[d] -= plan->tile_space().lower()[d];
      lo = std::min(lo, plan->time_of(rel));
      hi = std::max(hi, plan->time_of(rel));
    });
    EXPECT_EQ(plan->steps(), hi - lo + 1);
  }
  EXPECT_EQ(planned, 60);
}

}  // namespace
}  // namespace tp::plan::property
