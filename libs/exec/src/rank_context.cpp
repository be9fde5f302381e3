// Non-template parts of the rank pipelines' shared context: the plan check, the choice of N.
#include <tilepipe/exec/probes.hpp>
#include <tilepipe/exec/rank_context.hpp>
#include <tilepipe/model/cost_model.hpp>

#include <algorithm>

namespace tp::exec {

namespace detail {

Status check_plan_fits(const plan::Plan& plan, const comm::World& world, int dims) {
  if (plan.space().dims() != dims) {
    return fail(Errc::invalid_argument, "the plan has " + std::to_string(plan.space().dims()) +
                                            " dimensions but the kernel has " +
                                            std::to_string(dims));
  }
  if (world.size() != plan.nodes()) {
    return fail(Errc::invalid_argument, "the plan has " + std::to_string(plan.nodes()) +
                                            " nodes but the world has " +
                                            std::to_string(world.size()) + " ranks");
  }
  return {};
}

int choose_subtiles(const plan::Plan& plan, int requested, Index depth, Index max_n, double alpha_s,
                    TeamWait wait) {
  if (plan.schedule().grouping().kind() != plan::GroupingKind::vertical) return 1;
  Index n = requested;
  if (n <= 0) {
    const int threads = static_cast<int>(plan.cpus());
    const double t_sync_in = threads > 1 ? measure_barrier_s(threads, wait) : 0.0;
    n = model::best_subtiles(model::Seconds(alpha_s), model::Seconds(t_sync_in), depth,
                             std::max<Index>(max_n, 1));
  }
  return static_cast<int>(std::clamp<Index>(n, 1, std::max<Index>(max_n, 1)));
}

unsigned effective_mirror(const plan::Plan& plan, unsigned mask) {
  if (plan.is_cyclic()) return 0;
  unsigned m = 0;
  std::size_t f = 0;
  for (int d = 0; d < static_cast<int>(plan.space().dims()); ++d) {
    if (d == plan.map_dim()) continue;
    if (((mask >> d) & 1U) != 0 && plan.mesh()[f] > 1) m |= 1U << d;
    ++f;
  }
  return m;
}

std::vector<int> mirror_plays(const plan::Plan& plan, unsigned mask) {
  std::vector<int> plays(static_cast<std::size_t>(plan.nodes()));
  for (std::int64_t r = 0; r < plan.nodes(); ++r) {
    auto node = plan.node_coords(r);
    std::size_t f = 0;
    for (int d = 0; d < static_cast<int>(plan.space().dims()); ++d) {
      if (d == plan.map_dim()) continue;
      if (((mask >> d) & 1U) != 0) node[f] = plan.mesh()[f] - 1 - node[f];
      ++f;
    }
    plays[static_cast<std::size_t>(r)] = static_cast<int>(plan.rank_of(node));
  }
  return plays;
}

}  // namespace detail

}  // namespace tp::exec
