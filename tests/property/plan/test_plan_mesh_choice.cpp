// Property test: the planner's (mesh, CPU grid) is the best of the mapping family of docs/math.md
// ("Choosing the mesh and the CPU grid"), checked against an exhaustive search written here:
// every mesh and every CPU grid with the family's widths, steps counted from the schedule's
// definition. Each case prints its seed; rerun one with TILEPIPE_PROPERTY_SEED=<seed>.
#include <tilepipe/plan/plan.hpp>

#include "plan_property_helpers.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

namespace tp::plan::property {
namespace {

std::vector<std::uint64_t> mesh_choice_seeds(int count) {
  return property::seeds(count, 0xC0DEULL);
}

// Small spaces with 0/1 dependences (all realized: every extent >= 2), few nodes and CPUs.
Case mesh_choice_case(std::uint64_t seed) {
  Picker pick(seed);
  Case c;
  const int n = static_cast<int>(pick(2, 3));
  for (int d = 0; d < n; ++d) c.request.size.push_back(pick(2, 12));
  c.request.deps = random_01_deps(pick, n, 3);
  c.request.nodes = pick(1, 6);
  c.request.cpus = pick(1, 4);
  c.request.tile_kind = TileSpecKind::height;
  c.request.tile_height = pick(1, 6);
  c.request.schedule = pick(0, 1) ? ScheduleKind::overlap : ScheduleKind::blocking;
  c.request.grouping = pick(0, 1) ? GroupingKind::hyperplane : GroupingKind::vertical;
  c.request.map_dim = static_cast<int>(pick(1, n));
  c.text = describe(seed, c.request);
  return c;
}

// Every tuple of `parts` factors >= 1 whose product is `value`.
std::vector<Index> factor_tuples(std::int64_t value, int parts) {
  std::vector<Index> out;
  Index cur;
  std::function<void(std::int64_t)> rec = [&](std::int64_t rest) {
    if (static_cast<int>(cur.size()) == parts) {
      if (rest == 1) out.push_back(cur);
      return;
    }
    for (std::int64_t f = 1; f <= rest; ++f) {
      if (rest % f != 0) continue;
      cur.push_back(f);
      rec(rest / f);
      cur.pop_back();
    }
  };
  rec(value);
  return out;
}

// The time step of tile j from docs/math.md's table: groups floor(j_k / m_k) (k != i) and, along
// i, sum(j) (hyperplane) or j_i (vertical), weighted by Pi^G.
std::int64_t time_at(const Index& j, const Index& m_full, int i, bool hyper, bool overlap) {
  const std::int64_t node_coeff = overlap ? (hyper ? 1 : 2) : (hyper ? 0 : 1);
  std::int64_t t = 0;
  std::int64_t sum = 0;
  for (std::size_t k = 0; k < j.size(); ++k) {
    sum += j[k];
    if (static_cast<int>(k) != i) t += node_coeff * (j[k] / m_full[k]);
  }
  return t + (hyper ? sum : j[static_cast<std::size_t>(i)]);
}

struct Best {
  std::int64_t work = INT64_MAX;  // steps x points of a tile's cross-section (k != i)
  std::int64_t steps = INT64_MAX;
};

TEST(PlanMeshChoice, planner_matches_exhaustive_search_over_meshes_and_grids) {
  int planned = 0;
  int idle = 0;
  for (auto seed : mesh_choice_seeds(300)) {
    const Case c = mesh_choice_case(seed);
    SCOPED_TRACE(c.text);
    const PlanRequest& r = c.request;
    const auto n = static_cast<int>(r.size.size());
    const int i = r.map_dim - 1;
    const auto ii = static_cast<std::size_t>(i);
    const std::int64_t ui = (r.size[ii] + r.tile_height - 1) / r.tile_height;
    const bool hyper = r.grouping == GroupingKind::hyperplane;
    const bool overlap = r.schedule == ScheduleKind::overlap;
    // A width is legal when every dependence is shorter than the tile side along it.
    Index min_width(static_cast<std::size_t>(n), 1);
    for (const auto& d : r.deps->vectors()) {
      for (std::size_t k = 0; k < d.size(); ++k) min_width[k] = std::max(min_width[k], d[k] + 1);
    }
    const auto steps_of = [&](const Index& u, const Index& m_full) {
      Index last = u;
      for (auto& x : last) --x;
      return time_at(last, m_full, i, hyper, overlap) -
             time_at(Index(u.size(), 0), m_full, i, hyper, overlap) + 1;
    };
    Best best;
    const bool height_legal = r.tile_height >= min_width[ii];
    for (const auto& mesh : factor_tuples(height_legal ? r.nodes : 0, n - 1)) {
      for (const auto& grid : factor_tuples(r.cpus, n - 1)) {
        Index p_full, m_full;
        std::size_t f = 0;
        for (int d = 0; d < n; ++d) {
          p_full.push_back(d == i ? 1 : mesh[f]);
          m_full.push_back(d == i ? 1 : grid[f]);
          if (d != i) ++f;
        }
        // The family's widths for this mesh and grid: the thinnest giving each CPU at most one
        // row, no thinner than the dependences allow.
        Index w(static_cast<std::size_t>(n));
        Index u(static_cast<std::size_t>(n));
        std::int64_t cross = 1;
        for (int k = 0; k < n; ++k) {
          const auto kk = static_cast<std::size_t>(k);
          if (k == i) {
            w[kk] = r.tile_height;
          } else {
            const std::int64_t slots = std::min(p_full[kk] * m_full[kk], r.size[kk]);
            w[kk] = std::max((r.size[kk] + slots - 1) / slots, std::min(min_width[kk], r.size[kk]));
            cross *= w[kk];
          }
          u[kk] = (r.size[kk] + w[kk] - 1) / w[kk];
          if (k != i) {
            EXPECT_LE(u[kk], p_full[kk] * m_full[kk]);
          }
        }
        const std::int64_t steps = steps_of(u, m_full);
        const std::int64_t work = steps * cross;
        if (work < best.work || (work == best.work && steps < best.steps)) best = {work, steps};
      }
    }
    auto plan = Plan::make(r);
    if (!plan || !height_legal) {
      // Refused only when the family is empty: the height itself is illegal.
      EXPECT_FALSE(plan);
      EXPECT_EQ(best.work, INT64_MAX);
      if (!plan) {
        EXPECT_EQ(plan.error().code, tp::Errc::illegal_tiling) << plan.error().message;
      }
      continue;
    }
    ++planned;
    ASSERT_NE(best.work, INT64_MAX);
    // The plan's own candidate is in the family, its steps are the definition's...
    const Index u = plan->tile_space().counts();
    const auto& w = plan->tiling().tile_extents();
    Index m_full;
    std::int64_t cross = 1;
    for (int d = 0, f = 0; d < n; ++d) {
      const auto dd = static_cast<std::size_t>(d);
      if (d == i) {
        m_full.push_back(1);
        continue;
      }
      const auto ff = static_cast<std::size_t>(f++);
      m_full.push_back(plan->cpu_grid()[ff]);
      EXPECT_LE(u[dd], plan->mesh()[ff] * plan->cpu_grid()[ff]);
      cross *= w[dd];
    }
    EXPECT_EQ(u[ii], ui);
    EXPECT_EQ(plan->steps(), steps_of(u, m_full));
    // ... and nothing in the family does better.
    EXPECT_EQ(plan->steps() * cross, best.work);
    EXPECT_EQ(plan->steps(), best.steps);

    // Idle nodes and CPUs: those that tiles_of gives no tile.
    std::set<std::pair<std::int64_t, std::int64_t>> busy_cpus;
    std::set<std::int64_t> busy_nodes;
    std::int64_t tiles = 0;
    for (std::int64_t rank = 0; rank < plan->nodes(); ++rank) {
      for (const auto& t : plan->tiles_of(rank)) {
        ++tiles;
        busy_nodes.insert(rank);
        busy_cpus.insert({rank, plan->cpu_index(plan->cpu_of(t))});
      }
    }
    EXPECT_EQ(tiles, plan->tile_space().size());
    EXPECT_EQ(plan->idle_nodes(), plan->nodes() - static_cast<std::int64_t>(busy_nodes.size()));
    EXPECT_EQ(plan->idle_cpus(),
              plan->nodes() * plan->cpus() - static_cast<std::int64_t>(busy_cpus.size()));
    idle += plan->idle_cpus() > 0 ? 1 : 0;
  }
  EXPECT_GT(planned, 200);
  EXPECT_GT(idle, 20);  // the family's idle CPUs are exercised
}

}  // namespace
}  // namespace tp::plan::property
