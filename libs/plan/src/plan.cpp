// The planner: exhaustive search over node meshes and CPU grids for the fewest time steps.
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/checked_math.hpp>

#include <algorithm>
#include <functional>
#include <tuple>

namespace tp::plan {

namespace {

std::string join_x(const Index& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

// Expands per-non-mapping-dimension factors to one entry per dimension (1 at the mapping one).
Index expand(const Index& factors, int map_dim) {
  Index full;
  std::size_t f = 0;
  for (int d = 0; d < static_cast<int>(factors.size()) + 1; ++d) {
    full.push_back(d == map_dim ? 1 : factors[f++]);
  }
  return full;
}

// The non-mapping entries of a per-dimension vector.
Index drop(const Index& v, int map_dim) {
  Index out;
  for (int d = 0; d < static_cast<int>(v.size()); ++d) {
    if (d != map_dim) out.push_back(v[static_cast<std::size_t>(d)]);
  }
  return out;
}

struct Candidate {
  Index mesh;
  Index cpu;
  Index widths;           // rectangular tilings only
  std::int64_t work = 0;  // steps x points of a tile's cross-section (k != i; fixed tiles: steps)
  std::int64_t steps = 0;
  std::int64_t face = 0;
};

// Rows of tiles (mesh_k x m_k) and the mesh, last non-mapping dimension first: the tie-breaks
// below prefer cutting the outer dimensions and keeping the inner ones, next to the contiguous
// last dimension of a row-major array, wide (longer runs for a tile's rows to reuse).
Index inner_first(const Index& a, const Index& b) {
  Index key;
  for (std::size_t k = a.size(); k-- > 0;) key.push_back(a[k] * (b.empty() ? 1 : b[k]));
  return key;
}

bool better(const Candidate& a, const Candidate& b) {
  const Index rows_a = inner_first(a.mesh, a.cpu);
  const Index rows_b = inner_first(b.mesh, b.cpu);
  const Index mesh_a = inner_first(a.mesh, {});
  const Index mesh_b = inner_first(b.mesh, {});
  return std::tie(a.work, a.steps, a.face, rows_a, mesh_a, a.cpu) <
         std::tie(b.work, b.steps, b.face, rows_b, mesh_b, b.cpu);
}

std::int64_t node_face_points(const Index& mesh_full, const Index& cpu_full, const Tiling& tiling,
                              int map_dim, std::int64_t cpus) {
  std::int64_t total = 0;
  const int n = tiling.dims();
  for (int k = 0; k < n; ++k) {
    if (k == map_dim || mesh_full[static_cast<std::size_t>(k)] == 1) continue;
    std::int64_t face = cpus / cpu_full[static_cast<std::size_t>(k)];
    if (tiling.is_rectangular()) {
      for (int d = 0; d < n; ++d) {
        if (d != k) face *= tiling.tile_extents()[static_cast<std::size_t>(d)];
      }
    }
    total += face;
  }
  return total;
}

}  // namespace

std::vector<Index> ordered_factorizations(std::int64_t value, int parts) {
  TP_EXPECTS(value >= 1 && parts >= 1);
  std::vector<std::int64_t> divisors;
  for (std::int64_t d = 1; d * d <= value; ++d) {
    if (value % d != 0) continue;
    divisors.push_back(d);
    if (d != value / d) divisors.push_back(value / d);
  }
  std::sort(divisors.begin(), divisors.end());
  std::vector<Index> out;
  Index current;
  std::function<void(std::int64_t)> rec = [&](std::int64_t rest) {
    if (static_cast<int>(current.size()) == parts - 1) {
      current.push_back(rest);
      out.push_back(current);
      current.pop_back();
      return;
    }
    for (auto d : divisors) {
      if (d > rest) break;
      if (rest % d != 0) continue;
      current.push_back(d);
      rec(rest / d);
      current.pop_back();
    }
  };
  rec(value);
  return out;
}

std::int64_t count_steps(const Schedule& schedule, const TileSpace& tiles) {
  if (tiles.is_box()) {
    // t is non-decreasing in every coordinate (Pi^G >= 0, H^G >= 0): extremes at the corners.
    for (auto c : schedule.vector()) TP_ASSERT(c >= 0);
    Index last = tiles.counts();
    for (auto& v : last) --v;
    const Index first(last.size(), 0);
    return schedule.time_of(last) - schedule.time_of(first) + 1;
  }
  std::int64_t lo = INT64_MAX;
  std::int64_t hi = INT64_MIN;
  tiles.for_each([&](const Index& t) {
    Index rel = t;
    for (std::size_t d = 0; d < rel.size(); ++d) rel[d] -= tiles.lower()[d];
    const std::int64_t v = schedule.time_of(rel);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  });
  return hi - lo + 1;
}

namespace {

// The request's dependences, nodes and CPUs against the space's n dimensions.
Status check_request(const PlanRequest& req, int n) {
  if (!req.deps) return fail(Errc::invalid_argument, "no dependences given (--kernel or --deps)");
  if (req.deps->dims() != n) {
    return fail(Errc::invalid_argument, "the dependence vectors have " +
                                            std::to_string(req.deps->dims()) +
                                            " entries but the iteration space " + join_x(req.size) +
                                            " has " + std::to_string(n) + " dimensions");
  }
  if (req.nodes < 1 || req.nodes > max_nodes) {
    return fail(req.nodes < 1 ? Errc::invalid_argument : Errc::out_of_range,
                "nodes: " + std::to_string(req.nodes) + " must be between 1 and " +
                    std::to_string(max_nodes));
  }
  if (req.cpus < 1 || req.cpus > max_cpus) {
    return fail(
        req.cpus < 1 ? Errc::invalid_argument : Errc::out_of_range,
        "cpus: " + std::to_string(req.cpus) + " must be between 1 and " + std::to_string(max_cpus));
  }
  if (!req.cyclic.empty()) {
    if (req.cyclic.size() != 1 && static_cast<int>(req.cyclic.size()) != n - 1) {
      return Unexpected{Error::about(
          "cyclic", Errc::invalid_argument,
          join_x(req.cyclic) + " has " + std::to_string(req.cyclic.size()) +
              " factors; give one, or one per non-mapping dimension (" + std::to_string(n - 1) +
              " for a " + std::to_string(n) + "-dimensional space)")};
    }
    for (auto c : req.cyclic) {
      if (c < 1 || c > max_cyclic) {
        return Unexpected{Error::about(
            "cyclic", Errc::invalid_argument,
            join_x(req.cyclic) + ": factors must be between 1 and " + std::to_string(max_cyclic))};
      }
    }
    const bool cyclic =
        std::any_of(req.cyclic.begin(), req.cyclic.end(), [](std::int64_t c) { return c > 1; });
    if (cyclic && req.tile_kind == TileSpecKind::matrix) {
      return Unexpected{Error::about("cyclic", Errc::invalid_argument,
                                     join_x(req.cyclic) +
                                         ": the block-cyclic mapping needs rectangular tiles (a "
                                         "general tiling matrix was given)")};
    }
  }
  return {};
}

// The cyclic factors per non-mapping dimension (all 1 when none were asked for).
Index cyclic_factors(const PlanRequest& req, int n) {
  if (req.cyclic.empty()) return Index(static_cast<std::size_t>(n - 1), 1);
  if (req.cyclic.size() == 1) return Index(static_cast<std::size_t>(n - 1), req.cyclic.front());
  return req.cyclic;
}

// A tiling known before the mesh (all extents, or H) with its tile space; nullopt for a
// height-only request, whose widths follow from the mesh.
struct FixedTiling {
  Tiling tiling;
  TileSpace space;
};
Expected<std::optional<FixedTiling>> fixed_tiling(const PlanRequest& req,
                                                  const IterationSpace& space) {
  const int n = space.dims();
  std::optional<Tiling> fixed;
  switch (req.tile_kind) {
    case TileSpecKind::height:
      if (req.tile_height < 1) {
        return fail(Errc::invalid_argument,
                    "tile height " + std::to_string(req.tile_height) + ": tile sizes must be >= 1");
      }
      return std::optional<FixedTiling>();
    case TileSpecKind::extents: {
      if (static_cast<int>(req.tile_extents.size()) != n) {
        return fail(Errc::invalid_argument, "the tile " + join_x(req.tile_extents) + " has " +
                                                std::to_string(req.tile_extents.size()) +
                                                " dimensions but the iteration space " +
                                                join_x(req.size) + " has " + std::to_string(n));
      }
      auto t = Tiling::rectangular(req.tile_extents);
      if (!t) return Unexpected{t.error()};
      fixed = std::move(*t);
      break;
    }
    case TileSpecKind::matrix: {
      if (req.h.size() != n) {
        return fail(Errc::invalid_argument, "the tiling matrix is " + std::to_string(req.h.size()) +
                                                "x" + std::to_string(req.h.size()) +
                                                " but the iteration space " + join_x(req.size) +
                                                " has " + std::to_string(n) + " dimensions");
      }
      auto t = Tiling::general(req.h);
      if (!t) return Unexpected{t.error()};
      fixed = std::move(*t);
      break;
    }
  }
  TP_TRY(check_legal(*fixed, *req.deps));
  auto ts = TileSpace::make(space, *fixed);
  if (!ts) return Unexpected{ts.error()};
  return std::optional<FixedTiling>(FixedTiling{std::move(*fixed), std::move(*ts)});
}

// The mapping dimension (0-based): given, or the one with the most tiles; ties: the last, as in
// the seeds, unless that is the dimension the kernel's array is contiguous along (then the last
// other one of the tie: ADR 0032).
Expected<int> mapping_dimension(const PlanRequest& req, const IterationSpace& space,
                                const std::optional<FixedTiling>& fixed) {
  const int n = space.dims();
  if (req.map_dim != 0) {
    if (req.map_dim < 1 || req.map_dim > n) {
      return Unexpected{Error::about(
          "map_dim", Errc::invalid_argument,
          std::to_string(req.map_dim) + ": the space has dimensions 1 to " + std::to_string(n))};
    }
    return req.map_dim - 1;
  }
  const auto tiles = [&](int d) -> std::int64_t {
    return fixed ? fixed->space.counts()[static_cast<std::size_t>(d)]
                 : ceil_div(space.extent(d), req.tile_height);
  };
  int map_dim = 0;
  std::int64_t best = -1;
  for (int d = 0; d < n; ++d) {
    const std::int64_t t = tiles(d);
    if (t > best || (t == best && req.contiguous_dim != d)) {
      best = t;
      map_dim = d;
    }
  }
  return map_dim;
}

// The meshes to try: the given one (checked), or every ordered factorization of the nodes.
Expected<std::vector<Index>> candidate_meshes(const PlanRequest& req, int n) {
  if (!req.mesh) return ordered_factorizations(req.nodes, n - 1);
  if (static_cast<int>(req.mesh->size()) != n - 1) {
    return Unexpected{Error::about("mesh", Errc::invalid_argument,
                                   join_x(*req.mesh) + " has " + std::to_string(req.mesh->size()) +
                                       " factors but a " + std::to_string(n) +
                                       "-dimensional space needs " + std::to_string(n - 1) +
                                       " (one per non-mapping dimension)")};
  }
  std::int64_t product = 1;
  for (auto f : *req.mesh) {
    if (f < 1) {
      return Unexpected{Error::about("mesh", Errc::invalid_argument, "factors must be >= 1")};
    }
    product *= f;  // each factor <= nodes, so the product is checked below before it can grow
    if (product > req.nodes) break;
  }
  if (product != req.nodes) {
    return Unexpected{
        Error::about("mesh", Errc::invalid_argument,
                     join_x(*req.mesh) + " does not have " + std::to_string(req.nodes) + " nodes")};
  }
  return std::vector<Index>{*req.mesh};
}

// a * b, or INT64_MAX when it does not fit (a, b >= 0): these figures only compare.
std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  return checked_mul(a, b).value_or(INT64_MAX);
}

// Points a node sends per step for rectangular tiles of `extents` (face_points()).
std::int64_t rect_face_points(const Index& mesh_full, const Index& cpu_full, const Index& extents,
                              int map_dim, std::int64_t cpus) {
  std::int64_t total = 0;
  const auto n = static_cast<int>(extents.size());
  for (int k = 0; k < n; ++k) {
    if (k == map_dim || mesh_full[static_cast<std::size_t>(k)] == 1) continue;
    std::int64_t face = cpus / cpu_full[static_cast<std::size_t>(k)];
    for (int d = 0; d < n; ++d) {
      if (d != k) face = saturating_mul(face, extents[static_cast<std::size_t>(d)]);
    }
    total = checked_add(total, face).value_or(INT64_MAX);
  }
  return total;
}

// The widths of a height-only tiling for one mesh and CPU grid (docs/math.md, "Choosing the mesh
// and the CPU grid"): the thinnest that give each CPU at most c_k rows, w_k = max(ceil(N_k /
// (c_k p_k m_k)), l_k), with l_k the thinnest legal width along k.
Index derived_widths(const PlanRequest& req, const IterationSpace& space, int map_dim,
                     const Index& mesh_full, const Index& cpu_full, const Index& cyclic_full,
                     const Index& thinnest_legal) {
  const int n = space.dims();
  Index widths(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    const auto dd = static_cast<std::size_t>(d);
    if (d == map_dim) {
      widths[dd] = req.tile_height;
      continue;
    }
    const std::int64_t slots =
        saturating_mul(saturating_mul(mesh_full[dd], cpu_full[dd]), cyclic_full[dd]);
    widths[dd] =
        std::max(ceil_div(space.extent(d), std::min(slots, space.extent(d))), thinnest_legal[dd]);
  }
  return widths;
}

// The widest tile of a height-only request: the height along the mapping dimension, one row along
// each other dimension k, max(N_k, r_k + 1) wide with r_k the longest dependence component along
// k. Wider than N_k only where no dependence is realized in the space (Plan::make keeps them all
// then; a space of one point, as a one-residue alignment): one row all the same, and legal.
Index widest_tile(const PlanRequest& req, const IterationSpace& space, int map_dim) {
  Index widest = space.extents();
  for (const auto& d : req.deps->vectors()) {
    for (std::size_t k = 0; k < widest.size(); ++k) {
      widest[k] = std::max(widest[k], (d[k] < 0 ? -d[k] : d[k]) + 1);
    }
  }
  widest[static_cast<std::size_t>(map_dim)] = req.tile_height;
  return widest;
}

// l_k per dimension: the thinnest legal width along k with the height along i and the widest tile
// along the other dimensions (legality of a rectangular tile only tightens as a side shrinks).
// Precondition: the widest tiling is legal.
Expected<Index> thinnest_legal_widths(const PlanRequest& req, const IterationSpace& space,
                                      int map_dim) {
  const int n = space.dims();
  const Index widest = widest_tile(req, space, map_dim);
  Index out(static_cast<std::size_t>(n), 1);
  for (int k = 0; k < n; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    if (k == map_dim) continue;
    // Legality only tightens as the side shrinks: a bisection over [1, widest_k], whose upper end
    // is legal (a dependence far longer than the space made a linear search take as many steps as
    // its length: 1.7e9 for the fuzzer's (1685028810, 11)).
    Index w = widest;
    Index::value_type lo = 1, hi = widest[kk];
    while (lo < hi) {
      w[kk] = lo + (hi - lo) / 2;
      auto t = Tiling::rectangular(w);
      if (!t) return Unexpected{t.error()};
      if (check_legal(*t, *req.deps)) {
        hi = w[kk];
      } else {
        lo = w[kk] + 1;
      }
    }
    out[kk] = lo;
  }
  return out;
}

// The best (mesh, CPU grid) and its widths by work, then step count, then face size (better()).
// nullopt when none fits; `legality_error` then holds the first illegal derived tiling's error.
Expected<std::optional<Candidate>> best_candidate(const PlanRequest& req,
                                                  const IterationSpace& space, int map_dim,
                                                  const std::optional<FixedTiling>& fixed,
                                                  const std::vector<Index>& meshes,
                                                  std::optional<Error>& legality_error,
                                                  std::optional<Error>& cyclic_error) {
  const int n = space.dims();
  const Index cyclic = cyclic_factors(req, n);
  const Index cyclic_full = expand(cyclic, map_dim);
  // Every cycle of a cyclic dimension k has rows: u_k > (c_k - 1) p_k m_k (the error names the
  // first dimension where a candidate fails).
  const auto cycles_filled = [&](const Index& rows, const Index& mesh, const Index& cpu) {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::int64_t slots = saturating_mul(mesh[k], cpu[k]);
      if (rows[k] > saturating_mul(cyclic[k] - 1, slots)) continue;
      if (!cyclic_error) {
        const int dim = static_cast<int>(k) + (static_cast<int>(k) >= map_dim ? 1 : 0);
        cyclic_error = Error::about(
            "cyclic", Errc::invalid_argument,
            "factor " + std::to_string(cyclic[k]) + " along dimension " + std::to_string(dim + 1) +
                " is larger than the rows allow: " + std::to_string(rows[k]) +
                " rows of tiles over " + std::to_string(slots) + " CPUs fill at most " +
                std::to_string(ceil_div(rows[k], slots)) + " cycles");
      }
      return false;
    }
    return true;
  };
  std::optional<Candidate> best;
  Index thinnest_legal;
  if (!fixed) {
    auto l = thinnest_legal_widths(req, space, map_dim);
    if (!l) return Unexpected{l.error()};
    thinnest_legal = std::move(*l);
  }
  const auto cpu_grids = ordered_factorizations(req.cpus, n - 1);
  for (const auto& mesh : meshes) {
    for (const auto& cpu : cpu_grids) {
      const Index mesh_full = expand(mesh, map_dim);
      const Index cpu_full = expand(cpu, map_dim);
      if (!fixed) {
        const Index widths =
            derived_widths(req, space, map_dim, mesh_full, cpu_full, cyclic_full, thinnest_legal);
        auto t = Tiling::rectangular(widths);
        if (!t) return Unexpected{t.error()};
        if (auto legal = check_legal(*t, *req.deps); !legal) {
          if (!legality_error) legality_error = legal.error();
          continue;
        }
        Index last(static_cast<std::size_t>(n));
        std::int64_t cross = 1;
        for (int d = 0; d < n; ++d) {
          const auto dd = static_cast<std::size_t>(d);
          last[dd] = ceil_div(space.extent(d), widths[dd]) - 1;
          if (d != map_dim) cross = saturating_mul(cross, widths[dd]);
        }
        Index rows = drop(last, map_dim);
        for (auto& r : rows) ++r;
        if (!cycles_filled(rows, mesh, cpu)) continue;
        const Schedule schedule(req.schedule, Grouping(req.grouping, map_dim, cpu_full), map_dim,
                                mesh_full, cyclic_full,
                                last[static_cast<std::size_t>(map_dim)] + 1);
        Candidate c{mesh, cpu, widths, 0, schedule.time_of(last) + 1, 0};
        c.work = saturating_mul(c.steps, cross);
        c.face = rect_face_points(mesh_full, cpu_full, widths, map_dim, req.cpus);
        if (!best || better(c, *best)) best = std::move(c);
        continue;
      }
      const Index counts = drop(fixed->space.counts(), map_dim);
      bool fits = true;
      for (std::size_t k = 0; k < counts.size(); ++k) {
        fits = fits && counts[k] <= saturating_mul(saturating_mul(mesh[k], cpu[k]), cyclic[k]);
      }
      if (!fits) continue;
      if (!cycles_filled(counts, mesh, cpu)) continue;
      const Schedule schedule(req.schedule, Grouping(req.grouping, map_dim, cpu_full), map_dim,
                              mesh_full, cyclic_full,
                              fixed->space.counts()[static_cast<std::size_t>(map_dim)]);
      Candidate c{mesh, cpu, {}, 0, count_steps(schedule, fixed->space), 0};
      c.work = c.steps;
      c.face = node_face_points(mesh_full, cpu_full, fixed->tiling, map_dim, req.cpus);
      if (!best || better(c, *best)) best = std::move(c);
    }
  }
  return best;
}

}  // namespace

Expected<Plan> Plan::make(const PlanRequest& request) {
  auto space = IterationSpace::make(request.size);
  if (!space) return Unexpected{space.error()};
  const int n = space->dims();
  TP_TRY(check_request(request, n));
  // A dependence that no two points of the space realize (|d_k| >= N_k in some dimension k: a
  // time loop of one sweep, an extent of 1) constrains no order: the plan leaves it out, so that
  // a tile as thin as such a dimension stays legal. At least one dependence is kept.
  PlanRequest req = request;
  std::vector<Index> realized;
  for (const auto& d : request.deps->vectors()) {
    bool inside = true;
    for (int k = 0; k < n; ++k) {
      const auto c = d[static_cast<std::size_t>(k)];
      inside = inside && (c < 0 ? -c : c) < space->extent(k);
    }
    if (inside) realized.push_back(d);
  }
  if (!realized.empty() && realized.size() < request.deps->vectors().size()) {
    req.deps = DependenceMatrix::make(n, std::move(realized)).value();
  }
  auto fixed = fixed_tiling(req, *space);
  if (!fixed) return Unexpected{fixed.error()};
  auto map_dim_or = mapping_dimension(req, *space, *fixed);
  if (!map_dim_or) return Unexpected{map_dim_or.error()};
  const int map_dim = *map_dim_or;
  if (!*fixed) {
    // The widest tiles (one row per dimension) are the most likely legal: when even they are not,
    // the height is what the dependences forbid, and no width helps.
    auto t = Tiling::rectangular(widest_tile(req, *space, map_dim));
    if (!t) return Unexpected{t.error()};
    TP_TRY(check_legal(*t, *req.deps));
  }
  auto meshes = candidate_meshes(req, n);
  if (!meshes) return Unexpected{meshes.error()};
  std::optional<Error> legality_error;
  std::optional<Error> cyclic_error;
  auto best = best_candidate(req, *space, map_dim, *fixed, *meshes, legality_error, cyclic_error);
  if (!best) return Unexpected{best.error()};
  if (!*best) {
    if (legality_error) return Unexpected{*legality_error};
    if (cyclic_error) return Unexpected{*cyclic_error};
    const std::string who = std::to_string(req.nodes) + " nodes x " + std::to_string(req.cpus) +
                            (req.cpus == 1 ? " CPU" : " CPUs") +
                            (req.mesh ? " (mesh " + join_x(*req.mesh) + ")" : "");
    TP_ASSERT(*fixed);  // a height-only request always fits one row per dimension (u_k = 1)
    return fail(Errc::invalid_argument, "cannot map the tile space: it has " +
                                            join_x(drop((*fixed)->space.counts(), map_dim)) +
                                            " rows of tiles across the mapping dimension " +
                                            std::to_string(map_dim + 1) + ", and no mesh of " +
                                            who + " gives every row its own CPU");
  }
  const Candidate& chosen = **best;
  Tiling tiling = *fixed ? (*fixed)->tiling : *Tiling::rectangular(chosen.widths);
  TileSpace ts = *fixed ? (*fixed)->space : *TileSpace::make(*space, tiling);
  const Index cpu_full = expand(chosen.cpu, map_dim);
  const Index cyclic = cyclic_factors(req, n);
  Schedule schedule(req.schedule, Grouping(req.grouping, map_dim, cpu_full), map_dim,
                    expand(chosen.mesh, map_dim), expand(cyclic, map_dim),
                    ts.counts()[static_cast<std::size_t>(map_dim)]);
  auto tile_deps = tile_dependences(tiling, *req.deps);
  if (!tile_deps) return Unexpected{tile_deps.error()};
  Plan plan(std::move(*space), *req.deps, std::move(tiling), std::move(ts), std::move(schedule));
  plan.tile_deps_ = std::move(*tile_deps);
  plan.map_dim_ = map_dim;
  plan.nodes_ = req.nodes;
  plan.cpus_ = req.cpus;
  plan.mesh_ = chosen.mesh;
  plan.cpu_grid_ = chosen.cpu;
  plan.cyclic_ = cyclic;
  plan.steps_ = chosen.steps;
  plan.face_points_ = chosen.face;
  // Rows of tiles per non-mapping dimension (of the tile space's bounding box): a node works when
  // its first row along every dimension exists; every row has one CPU, the other CPUs are idle.
  std::int64_t busy_nodes = 1;
  std::int64_t busy_cpus = 1;
  std::size_t f = 0;
  for (int d = 0; d < n; ++d) {
    if (d == map_dim) continue;
    // With c_k > 1 the last cycle has rows (cycles_filled), so every node and CPU works.
    const std::int64_t rows = std::min(plan.tile_space_.counts()[static_cast<std::size_t>(d)],
                                       saturating_mul(chosen.mesh[f], chosen.cpu[f]));
    busy_nodes *= ceil_div(rows, chosen.cpu[f]);
    busy_cpus *= rows;
    ++f;
  }
  plan.idle_nodes_ = req.nodes - busy_nodes;
  plan.idle_cpus_ = req.nodes * req.cpus - busy_cpus;
  return plan;
}

Index Plan::node_of(const Index& tile) const {
  Index node;
  std::size_t f = 0;
  for (int d = 0; d < static_cast<int>(tile.size()); ++d) {
    if (d == map_dim_) continue;
    const std::int64_t rows = mesh_[f] * cpu_grid_[f];  // P_k: the rows of one cycle
    const std::int64_t j = tile[static_cast<std::size_t>(d)];
    node.push_back(floor_div(j - floor_div(j, rows) * rows, cpu_grid_[f]));
    ++f;
  }
  return node;
}

Index Plan::cpu_of(const Index& tile) const {
  Index cpu;
  std::size_t f = 0;
  for (int d = 0; d < static_cast<int>(tile.size()); ++d) {
    if (d == map_dim_) continue;
    const std::int64_t m = cpu_grid_[f++];
    cpu.push_back(tile[static_cast<std::size_t>(d)] -
                  floor_div(tile[static_cast<std::size_t>(d)], m) * m);
  }
  return cpu;
}

std::int64_t Plan::rank_of(const Index& node) const {
  std::int64_t r = 0;
  for (std::size_t k = 0; k < node.size(); ++k) r = r * mesh_[k] + node[k];
  return r;
}

Index Plan::node_coords(std::int64_t rank) const {
  TP_EXPECTS(rank >= 0 && rank < nodes_);
  Index c(mesh_.size());
  for (std::size_t k = mesh_.size(); k-- > 0;) {
    c[k] = rank % mesh_[k];
    rank /= mesh_[k];
  }
  return c;
}

std::int64_t Plan::cpu_index(const Index& cpu) const {
  std::int64_t r = 0;
  for (std::size_t k = 0; k < cpu.size(); ++k) r = r * cpu_grid_[k] + cpu[k];
  return r;
}

std::vector<Index> Plan::tiles_of(std::int64_t rank) const {
  const Index node = node_coords(rank);
  const Index counts = tile_space_.counts();
  const int n = space_.dims();
  // The coordinates of the rank's rows per dimension: along k != i the m_k rows of its node in
  // every cycle (y P_k + node_k m_k + 0..m_k-1, below u_k), along i every tile.
  std::vector<std::vector<std::int64_t>> coords(static_cast<std::size_t>(n));
  std::size_t f = 0;
  for (int d = 0; d < n; ++d) {
    const auto dd = static_cast<std::size_t>(d);
    auto& c = coords[dd];
    if (d == map_dim_) {
      for (std::int64_t j = 0; j < counts[dd]; ++j) c.push_back(j);
      continue;
    }
    const std::int64_t period = mesh_[f] * cpu_grid_[f];
    for (std::int64_t first = node[f] * cpu_grid_[f]; first < counts[dd]; first += period) {
      for (std::int64_t j = first; j < std::min(counts[dd], first + cpu_grid_[f]); ++j) {
        c.push_back(j);
      }
    }
    if (c.empty()) return {};  // an idle node: no row of tiles reaches it
    ++f;
  }
  std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, Index>> keyed;
  std::vector<std::size_t> at(static_cast<std::size_t>(n), 0);
  Index t(static_cast<std::size_t>(n));
  while (true) {
    for (std::size_t d = 0; d < t.size(); ++d) t[d] = coords[d][at[d]];
    Index abs = t;
    for (std::size_t d = 0; d < abs.size(); ++d) abs[d] += tile_space_.lower()[d];
    if (tile_space_.contains(abs)) keyed.push_back({{time_of(t), cpu_index(cpu_of(t))}, t});
    int d = n - 1;
    while (d >= 0 &&
           at[static_cast<std::size_t>(d)] + 1 == coords[static_cast<std::size_t>(d)].size()) {
      at[static_cast<std::size_t>(d)] = 0;
      --d;
    }
    if (d < 0) break;
    ++at[static_cast<std::size_t>(d)];
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<Index> out;
  out.reserve(keyed.size());
  for (auto& k : keyed) out.push_back(std::move(k.second));
  return out;
}
}  // namespace tp::plan
