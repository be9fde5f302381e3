// Transformation::find: skewing and reversal for negative dependences, refusals, and brute-force
// enumeration of small spaces (every dependence satisfied by the order, no point twice).
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/plan/transform.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace tp::plan {
namespace {

DependenceMatrix deps_of(const char* text) {
  auto d = DependenceMatrix::parse(text);
  EXPECT_TRUE(d.has_value()) << text;
  return *d;
}

TEST(Transformation, non_negative_dependences_keep_the_identity) {
  auto t = Transformation::find(deps_of("1,0;0,1;1,1"));
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->is_identity());
}

TEST(Transformation, sor_is_skewed_by_time) {
  auto t = Transformation::find(deps_of("0,1,0;0,0,1;1,-1,0;1,0,-1;1,0,0"));
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->rows_string(), "1,0,0;1,1,0;1,0,1");
  EXPECT_EQ(t->to_string(), "(x1, x2, x3) -> (x1, x1 + x2, x1 + x3)");
  EXPECT_EQ(t->apply(deps_of("0,1,0;0,0,1;1,-1,0;1,0,-1;1,0,0")).to_string(),
            "0,1,0;0,0,1;1,0,1;1,1,0;1,1,1");
  auto box = t->image({4, 10, 7});
  ASSERT_TRUE(box.has_value());
  EXPECT_EQ(box->lo, (Index{1, 2, 2}));
  EXPECT_EQ(box->extents, (Index{4, 13, 10}));
  EXPECT_EQ(t->unapply({3, 5, 9}), (Index{3, 2, 6}));
}

TEST(Transformation, steeper_dependences_skew_by_larger_factors) {
  auto t = Transformation::find(deps_of("1,-3;0,1"));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->rows_string(), "1,0;3,1");
}

TEST(Transformation, a_backward_dependence_is_reversed) {
  auto t = Transformation::find(deps_of("-1,0;0,1"));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->rows_string(), "-1,0;0,1");
}

TEST(Transformation, legal_without_reversal_needs_a_general_first_row) {
  // h = (3, 2) separates; no reversal or order makes both lexicographically positive.
  const auto d = deps_of("1,-1;-1,2");
  auto t = Transformation::find(d);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_TRUE(makes_non_negative(*t, d));
}

TEST(Transformation, opposite_dependences_are_refused_with_their_names) {
  auto t = Transformation::find(deps_of("1,-1;-1,1"));
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().message,
            "the dependences (1, -1) and (-1, 1) admit no legal schedule: a non-negative "
            "combination of them is zero");
  auto u = Transformation::find(deps_of("1,0,0;0,1,-1;1,-2,0;-2,1,1"));
  ASSERT_FALSE(u.has_value());  // the sum of all four is zero
  EXPECT_EQ(u.error().code, Errc::invalid_argument);
}

TEST(Plan, leaves_out_dependences_no_two_points_realize) {
  // One sweep of sor2d in the skewed space: the time extent is 1, so (1, *, *) never binds and a
  // time tile of 1 is legal; over 2 sweeps it binds and the same tile is refused.
  PlanRequest req;
  req.size = {1, 8, 8};
  req.deps = deps_of("0,1,0;0,0,1;1,0,1;1,1,0;1,1,1");
  req.tile_kind = TileSpecKind::extents;
  req.tile_extents = {1, 4, 8};
  auto p = Plan::make(req);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p->deps().to_string(), "0,1,0;0,0,1");
  req.size = {2, 8, 8};
  req.tile_extents = {1, 4, 8};
  EXPECT_FALSE(Plan::make(req).has_value());
}

// A space where no dependence is realized (one point: a one-residue alignment; a 1 x 1 x 5 space
// whose dependences all cross dimension 1 or 2): the plan keeps them all, and a height-only request
// takes tiles as wide as the longest dependence component along the thin dimensions, one row of
// tiles there (it exited 2 with "(1, 0) is not shorter than the tile side", tile size 1).
TEST(Plan, a_space_that_realizes_no_dependence_plans_on_any_number_of_nodes) {
  for (const auto& [size, deps] :
       {std::pair{Index{1, 1}, "1,0;0,1;1,1"}, {Index{1, 1, 5}, "1,0,1;0,1,1;1,1,0"}}) {
    for (int nodes : {1, 2, 3}) {
      PlanRequest req;
      req.size = size;
      req.deps = deps_of(deps);
      req.nodes = nodes;
      req.cpus = 2;
      req.tile_height = 2;
      auto p = Plan::make(req);
      ASSERT_TRUE(p.has_value()) << deps << " nodes " << nodes << ": " << p.error().message;
      EXPECT_EQ(p->deps().to_string(), deps);
      std::int64_t tiles = 1;
      for (auto c : p->tile_space().counts()) tiles *= c;
      EXPECT_EQ(tiles, size.back() == 1 ? 1 : 3) << deps;
    }
  }
}

// A dependence far longer than the space (the fuzzer's (1685028810, 11) in 64 x 64): the widest
// tile along a thin dimension is that long, and the thinnest legal width is found by bisection in
// a few dozen legality checks, not one per width (a linear search ran for minutes).
TEST(Plan, a_dependence_far_longer_than_the_space_plans_at_once) {
  PlanRequest req;
  req.size = Index{64, 64};
  req.deps = deps_of("1685028810,11");
  req.nodes = 2;
  req.cpus = 2;
  req.tile_height = 15137225;
  auto p = Plan::make(req);  // (the linear search never returned within the test's timeout)
  ASSERT_TRUE(p.has_value()) << p.error().message;
  // Along dimension 1 the height; along 0 one tile past the component 1685028810.
  EXPECT_EQ(p->tiling().tile_extents(), (Index{1685028811, 15137225}));
}

TEST(Transformation, make_refuses_non_unimodular_matrices) {
  EXPECT_FALSE(Transformation::make({{2, 0}, {0, 1}}));
  EXPECT_FALSE(Transformation::make({{1, 0, 0}, {0, 1, 0}}));
  EXPECT_TRUE(Transformation::make({{1, 0}, {5, -1}}));
}

// Some small h with h . d >= 1 for all d (a certificate that a schedule exists).
bool has_separating_row(const DependenceMatrix& deps) {
  const int n = deps.dims();
  Index h(static_cast<std::size_t>(n), -6);
  for (;;) {
    bool ok = true;
    for (const auto& d : deps.vectors()) {
      std::int64_t s = 0;
      for (int i = 0; i < n; ++i)
        s += h[static_cast<std::size_t>(i)] * d[static_cast<std::size_t>(i)];
      ok = ok && s >= 1;
    }
    if (ok) return true;
    int i = n - 1;
    while (i >= 0 && ++h[static_cast<std::size_t>(i)] > 6) h[static_cast<std::size_t>(i)] = -6, --i;
    if (i < 0) return false;
  }
}

// Enumerates J^n, maps every point through T, orders them as the executor does (rectangular
// tiles of the transformed space in wavefront order, points lexicographically inside a tile) and
// checks that each point comes after every point it depends on, and that no two points collide.
void check_by_enumeration(const Transformation& t, const DependenceMatrix& deps, const Index& size,
                          const Index& tile) {
  const std::size_t n = size.size();
  auto box = t.image(size);
  ASSERT_TRUE(box.has_value());
  std::map<Index, Index> position;  // original point -> sort key
  std::map<Index, Index> seen;      // transformed point -> original
  Index x(n, 1);
  for (;;) {
    const Index y = t.apply(x);
    ASSERT_TRUE(seen.emplace(y, x).second) << "two points map to " << to_string(y);
    ASSERT_EQ(t.unapply(y), x);
    Index key;
    std::int64_t wave = 0;
    Index c(n), in(n);
    for (std::size_t d = 0; d < n; ++d) {
      const std::int64_t r = y[d] - box->lo[d];
      ASSERT_GE(r, 0);
      ASSERT_LT(r, box->extents[d]);
      c[d] = r / tile[d];
      in[d] = r % tile[d];
      wave += c[d];
    }
    key.push_back(wave);
    key.insert(key.end(), c.begin(), c.end());
    key.insert(key.end(), in.begin(), in.end());
    position[x] = key;
    std::size_t d = n;
    while (d-- > 0) {
      if (++x[d] <= size[d]) break;
      x[d] = 1;
    }
    if (d == static_cast<std::size_t>(-1)) break;
  }
  for (const auto& [p, key] : position) {
    for (const auto& dep : deps.vectors()) {
      Index q(n);
      bool inside = true;
      for (std::size_t d = 0; d < n; ++d) {
        q[d] = p[d] - dep[d];
        inside = inside && q[d] >= 1 && q[d] <= size[d];
      }
      if (!inside) continue;
      EXPECT_LT(position.at(q), key) << to_string(p) << " runs before " << to_string(q)
                                     << ", on which it depends by " << to_string(dep);
    }
  }
}

TEST(Transformation, random_dependences_by_brute_force) {
  std::mt19937_64 rng(13);
  int found = 0, refused = 0;
  for (int trial = 0; trial < 500; ++trial) {
    std::uniform_int_distribution<int> dims(2, 4), count(1, 4), comp(-2, 2), ext(1, 4), tl(1, 3);
    const int n = dims(rng);
    std::vector<Index> vectors;
    const int q = count(rng);
    while (static_cast<int>(vectors.size()) < q) {
      Index d(static_cast<std::size_t>(n));
      for (auto& c : d) c = comp(rng);
      if (std::any_of(d.begin(), d.end(), [](std::int64_t c) { return c != 0; })) {
        vectors.push_back(d);
      }
    }
    auto deps = DependenceMatrix::make(n, vectors);
    ASSERT_TRUE(deps.has_value());
    auto t = Transformation::find(*deps);
    if (!t) {
      ++refused;
      EXPECT_FALSE(has_separating_row(*deps)) << "refused a legal set " << deps->to_string();
      continue;
    }
    ++found;
    EXPECT_TRUE(makes_non_negative(*t, *deps)) << deps->to_string();
    Index size(static_cast<std::size_t>(n)), tile(static_cast<std::size_t>(n));
    for (auto& e : size) e = ext(rng);
    for (auto& e : tile) e = tl(rng);
    check_by_enumeration(*t, *deps, size, tile);
  }
  EXPECT_GT(found, 100);
  EXPECT_GT(refused, 25);
}

}  // namespace
}  // namespace tp::plan
