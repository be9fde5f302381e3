// The search over tile heights and schemes behind `--tile auto --schedule auto --grouping auto`.
#include <tilepipe/model/choose.hpp>
#include <tilepipe/support/checked_math.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

namespace tp::model {

namespace {

/// Candidate heights in [lo, hi]: every smallest height of a distinct tile count when there are
/// at most `max_count` of them (exhaustive = true), else about max_count of them spaced
/// geometrically in the tile count.
struct Heights {
  std::vector<std::int64_t> z;
  bool exhaustive = true;
};

Heights heights_in(std::int64_t extent, std::int64_t lo, std::int64_t hi, std::size_t max_count) {
  Heights out;
  if (lo > hi) return out;
  const std::int64_t u_lo = ceil_div(extent, lo);  // most tiles
  const std::int64_t u_hi = ceil_div(extent, hi);  // fewest tiles
  // Distinct tile counts: at most one per height up to s = sqrt(extent), and one per count
  // ceil(extent / z) <= ceil(extent / s) beyond it.
  const auto s = static_cast<std::int64_t>(std::sqrt(static_cast<double>(extent)));
  const std::int64_t below = std::max<std::int64_t>(0, std::min(hi, s) - lo + 1);
  const std::int64_t above = std::max<std::int64_t>(
      0, std::min(u_lo, ceil_div(extent, std::max<std::int64_t>(1, s))) - u_hi + 1);
  const auto distinct = static_cast<std::uint64_t>(std::min(below + above, hi - lo + 1));
  if (distinct <= max_count) {
    // z is the smallest height with ceil(extent / z) = u; the next count u - 1 starts at
    // ceil(extent / (u - 1)).
    std::int64_t z = lo;
    for (;;) {
      out.z.push_back(z);
      const std::int64_t u = ceil_div(extent, z);
      if (u == 1) break;
      const std::int64_t next = ceil_div(extent, u - 1);
      if (next > hi) break;
      z = next;
    }
    return out;
  }
  out.exhaustive = false;
  const double a = static_cast<double>(u_lo);
  const double ratio = static_cast<double>(u_hi) / a;
  const double steps = static_cast<double>(max_count - 1);
  for (std::size_t j = 0; j < max_count; ++j) {
    const double u = std::round(a * std::pow(ratio, static_cast<double>(j) / steps));
    const auto uu = std::max<std::int64_t>(1, static_cast<std::int64_t>(u));
    out.z.push_back(std::clamp(ceil_div(extent, uu), lo, hi));
  }
  std::sort(out.z.begin(), out.z.end());
  out.z.erase(std::unique(out.z.begin(), out.z.end()), out.z.end());
  return out;
}

std::string seconds_text(Seconds s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g s", s.count());
  return buf;
}

std::string percent_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.3g%%", x * 100);
  return buf;
}

struct Evaluated {
  plan::PlanRequest request;
  Prediction prediction;
};

/// The best and second-best plans of one scheme (req's schedule and grouping): req as given, or
/// with `auto_tile` over the heights in [min_height, extent], sampling and zooming in between the
/// best's neighbours when there are too many to try all. `evaluate` plans and predicts one
/// request (nullopt when it cannot run).
template <class Evaluate>
std::pair<std::optional<Evaluated>, std::optional<Evaluated>> search_scheme(plan::PlanRequest req,
                                                                            bool auto_tile,
                                                                            std::int64_t extent,
                                                                            std::int64_t min_height,
                                                                            Evaluate&& evaluate) {
  std::optional<Evaluated> best;
  std::optional<Evaluated> second;
  const auto consider = [&](std::optional<Evaluated> e) {
    if (!e) return;
    if (!best || e->prediction.total < best->prediction.total) {
      second = std::move(best);
      best = std::move(e);
    } else if (!second || e->prediction.total < second->prediction.total) {
      second = std::move(e);
    }
  };
  if (!auto_tile) {
    consider(evaluate(req));
    return {std::move(best), std::move(second)};
  }
  std::set<std::int64_t> seen;  // heights evaluated (zooming revisits)
  Heights h = heights_in(extent, min_height, extent, max_exhaustive_heights);
  for (int zoom = 0; zoom < 64; ++zoom) {
    for (auto z : h.z) {
      if (!seen.insert(z).second) continue;
      req.tile_height = z;
      consider(evaluate(req));
    }
    if (h.exhaustive || !best) break;
    // Zoom in between the sampled neighbours of the best height and search again.
    const auto it = std::find(h.z.begin(), h.z.end(), best->request.tile_height);
    if (it == h.z.end()) break;
    const auto b = static_cast<std::size_t>(it - h.z.begin());
    const std::int64_t lo = h.z[b == 0 ? 0 : b - 1];
    const std::int64_t hi = h.z[std::min(b + 1, h.z.size() - 1)];
    if (hi - lo <= 1 || (lo == h.z.front() && hi == h.z.back())) break;
    h = heights_in(extent, lo, hi, max_exhaustive_heights);
  }
  return {std::move(best), std::move(second)};
}

std::string factors_text(const plan::Index& c) {
  std::string s;
  for (auto x : c) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

/// Why the model chose `best`: the scheme, the height, the plans compared, the runner-up.
std::string choice_reason(const Evaluated& best, const std::optional<Evaluated>& runner_up,
                          bool auto_tile, bool auto_cyclic, std::int64_t evaluated,
                          std::size_t schemes) {
  const auto& bp = best.prediction;
  std::string what = scheme_name(bp.schedule, bp.grouping, bp.comm_thread);
  if (auto_tile) what += " at tile height " + std::to_string(best.request.tile_height);
  if (auto_cyclic) what += " with cyclic factors " + factors_text(best.request.cyclic);
  std::string reason = what + " minimizes the predicted time (" + seconds_text(bp.total) +
                       ") over " + std::to_string(evaluated) + " plans";
  if (schemes > 1) {
    reason += " of " + std::to_string(schemes) +
              (auto_cyclic ? " schemes and cyclic factors" : " schemes");
  }
  if (runner_up) {
    const auto& rp = runner_up->prediction;
    reason += "; runner-up " + scheme_name(rp.schedule, rp.grouping, rp.comm_thread);
    if (auto_tile) reason += " at height " + std::to_string(runner_up->request.tile_height);
    if (auto_cyclic) reason += " with cyclic factors " + factors_text(runner_up->request.cyclic);
    reason += ": " + seconds_text(rp.total) + " (" + percent_text(rp.total / bp.total - 1.0) + ")";
  }
  return reason;
}

}  // namespace

std::vector<plan::Index> cyclic_candidates(int dims) {
  std::vector<plan::Index> out;
  if (dims < 2) return out;
  const auto k = static_cast<std::size_t>(dims - 1);
  std::int64_t top = 1;
  const auto fits = [&](std::int64_t c) {
    std::int64_t product = 1;
    for (std::size_t f = 0; f < k; ++f) product *= c;
    return product <= max_cyclic_candidates;
  };
  while (top < max_cyclic_candidate_factor && fits(top + 1)) ++top;
  plan::Index c(k, 1);
  for (;;) {
    out.push_back(c);
    std::size_t f = k;
    while (f > 0 && c[f - 1] == top) c[--f] = 1;
    if (f == 0) break;
    ++c[f - 1];
  }
  return out;
}

std::vector<std::int64_t> candidate_heights(std::int64_t extent, std::int64_t min_height) {
  TP_EXPECTS(extent >= 1);
  return heights_in(extent, std::max<std::int64_t>(1, min_height), extent, max_exhaustive_heights)
      .z;
}

Expected<Choice> choose(const ChoiceRequest& request, const Machine& machine) {
  const plan::PlanRequest& base = request.base;
  Choice choice;
  if (!request.auto_tile && !request.auto_schedule && !request.auto_grouping &&
      !request.auto_cyclic) {
    auto plan = plan::Plan::make(base);
    if (!plan) return Unexpected{plan.error()};
    auto p = predict(*plan, machine, request.options);
    if (!p) return Unexpected{p.error()};
    choice.request = base;
    choice.prediction = *p;
    choice.evaluated = 1;
    choice.reason = "tile, schedule and grouping given: predicted " + seconds_text(p->total);
    return choice;
  }
  if (request.auto_tile && base.tile_kind != plan::TileSpecKind::height) {
    return fail(Errc::invalid_argument,
                "an automatic tile height cannot be combined with given tile extents or a tiling "
                "matrix");
  }

  std::vector<plan::ScheduleKind> schedules{base.schedule};
  if (request.auto_schedule)
    schedules = {plan::ScheduleKind::overlap, plan::ScheduleKind::blocking};
  std::vector<plan::GroupingKind> groupings{base.grouping};
  if (request.auto_grouping) {
    groupings = {plan::GroupingKind::hyperplane, plan::GroupingKind::vertical};
  }

  plan::PlanRequest req = base;
  std::int64_t extent = 0;
  std::int64_t min_height = 1;
  if (request.auto_tile) {
    const int n = static_cast<int>(base.size.size());
    bool valid = n >= 2 && base.deps.has_value();
    for (auto e : base.size) valid = valid && e >= 1;
    if (!valid) {
      // Let the planner name what is wrong with the space or the dependences.
      req.tile_height = 1;
      auto plan = plan::Plan::make(req);
      if (!plan) return Unexpected{plan.error()};
      return fail(Errc::invalid_argument, "cannot choose a tile height for this request");
    }
    if (req.map_dim == 0) {
      // The planner's rule for a height: the dimension with the most tiles, i.e. the largest
      // extent (ties: the last). Fixed here so that every candidate maps the same dimension.
      int best = 0;
      for (int d = 0; d < n; ++d) {
        if (base.size[static_cast<std::size_t>(d)] >= base.size[static_cast<std::size_t>(best)]) {
          best = d;
        }
      }
      req.map_dim = best + 1;
    }
    if (req.map_dim >= 1 && req.map_dim <= n) {
      const auto i = static_cast<std::size_t>(req.map_dim - 1);
      extent = base.size[i];
      // |HD| < 1 along the mapping dimension: the height must exceed every dependence's d_i.
      for (const auto& d : base.deps->vectors()) min_height = std::max(min_height, d[i] + 1);
    }
  }

  std::optional<Evaluated> best;
  std::optional<Evaluated> runner_up;  // the best of another scheme, or of another height
  std::optional<Error> first_error;
  std::int64_t evaluated = 0;
  std::size_t schemes = 0;

  const auto evaluate = [&](plan::PlanRequest r) -> std::optional<Evaluated> {
    ModelOptions o = request.options;
    // Cyclic factors are compared with the hop the cycles repeat (block plans included).
    if (request.auto_cyclic) o.pipeline_hops = true;
    const bool vertical = r.grouping == plan::GroupingKind::vertical;
    const bool hyper_overlap = !vertical && r.schedule == plan::ScheduleKind::overlap;
    if (!vertical) o.subtiles = 0;
    if (!hyper_overlap && (request.auto_schedule || request.auto_grouping)) o.comm_thread = false;
    auto plan = plan::Plan::make(r);
    if (!plan) {
      if (!first_error) first_error = plan.error();
      return std::nullopt;
    }
    auto p = predict(*plan, machine, o);
    if (!p) {
      if (!first_error) first_error = p.error();
      return std::nullopt;
    }
    ++evaluated;
    return Evaluated{std::move(r), *p};
  };

  std::vector<plan::Index> factors{base.cyclic};
  if (request.auto_cyclic) factors = cyclic_candidates(static_cast<int>(base.size.size()));
  if (factors.empty()) factors.push_back({});
  const std::size_t variants = schedules.size() * groupings.size() * factors.size();
  for (const auto& cyclic : factors) {
    req.cyclic = cyclic;
    for (auto schedule : schedules) {
      for (auto grouping : groupings) {
        req.schedule = schedule;
        req.grouping = grouping;
        auto [scheme_best, scheme_second] =
            search_scheme(req, request.auto_tile, extent, min_height, evaluate);
        if (!scheme_best) continue;
        ++schemes;
        if (!best || scheme_best->prediction.total < best->prediction.total) {
          if (best) runner_up = std::move(best);
          best = std::move(scheme_best);
        } else if (!runner_up || scheme_best->prediction.total < runner_up->prediction.total) {
          runner_up = std::move(scheme_best);
        }
        if (variants == 1) runner_up = std::move(scheme_second);
      }
    }
  }
  if (!best) {
    if (first_error) return Unexpected{*first_error};
    return fail(Errc::invalid_argument, "no legal tile height along the mapping dimension");
  }

  choice.request = best->request;
  choice.prediction = best->prediction;
  choice.chosen_by_model = true;
  choice.evaluated = evaluated;
  choice.reason =
      choice_reason(*best, runner_up, request.auto_tile, request.auto_cyclic, evaluated, schemes);
  return choice;
}

}  // namespace tp::model
