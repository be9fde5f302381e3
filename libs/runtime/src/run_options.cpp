// plan_run: the options of a run into a plan, with the cost model where a machine is given.
#include <tilepipe/runtime/run_options.hpp>

#include <sched.h>

#include <algorithm>

namespace tp::runtime {

void pin_to_cpu(int index) noexcept {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (index < 0 || ::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const int n = CPU_COUNT(&allowed);
  if (n == 0) return;
  int k = index % n;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed) || k-- > 0) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    (void)::sched_setaffinity(0, sizeof one, &one);
    return;
  }
}

Expected<PlannedRun> plan_run(const plan::Index& size, const plan::DependenceMatrix& deps,
                              std::int64_t nodes, const RunOptions& o, std::int64_t ranks_here,
                              std::optional<int> contiguous_dim) {
  plan::PlanRequest request;
  request.size = size;
  request.deps = deps;
  request.contiguous_dim = contiguous_dim;
  request.nodes = nodes;
  request.cpus = o.cpus > 0 ? o.cpus
                            : std::max<std::int64_t>(
                                  1, affinity_cpus() / std::max<std::int64_t>(1, ranks_here));
  request.mesh = o.mesh;
  request.map_dim = o.map_dim;
  request.cyclic = o.cyclic;
  request.schedule = o.schedule.value_or(plan::ScheduleKind::overlap);
  request.grouping = o.grouping.value_or(plan::GroupingKind::hyperplane);
  if (o.tile_extents) {
    request.tile_kind = plan::TileSpecKind::extents;
    request.tile_extents = *o.tile_extents;
  } else if (o.tile_height) {
    request.tile_height = *o.tile_height;
  } else if (!o.machine) {
    // About 64 tiles along the longest dimension (at least 2 points high).
    const auto longest = *std::max_element(size.begin(), size.end());
    request.tile_height = std::max<std::int64_t>(2, (longest + 63) / 64);
  }
  const bool shrink_cpus = o.cpus <= 0;  // the default CPU count may not fit small extents
  if (o.auto_cyclic && !o.machine) {
    return fail(Errc::invalid_argument,
                "an automatic block-cyclic factor needs a machine description: the cost model "
                "chooses it");
  }
  if (o.machine) {
    model::ChoiceRequest creq;
    creq.base = request;
    creq.auto_tile = !o.tile_extents && !o.tile_height;
    creq.auto_schedule = !o.schedule;
    creq.auto_grouping = !o.grouping;
    creq.auto_cyclic = o.auto_cyclic;
    if (creq.auto_tile) creq.base.tile_height = 1;
    creq.options.kernel = o.kernel_name;
    creq.options.comm_thread = o.comm_thread;
    creq.options.subtiles = o.subtiles;
    creq.options.formula = o.formula;
    creq.options.workload = o.workload;
    creq.options.workload.sweeps = o.sweeps;
    auto choice = model::choose(creq, *o.machine);
    while (!choice && shrink_cpus && creq.base.cpus > 1) {
      --creq.base.cpus;
      choice = model::choose(creq, *o.machine);
    }
    if (!choice) return Unexpected{choice.error()};
    auto plan = plan::Plan::make(choice->request);
    if (!plan) return Unexpected{plan.error()};
    return PlannedRun{std::move(*plan), std::move(*choice)};
  }
  auto plan = plan::Plan::make(request);
  while (!plan && shrink_cpus && request.cpus > 1) {
    --request.cpus;
    plan = plan::Plan::make(request);
  }
  if (!plan) return Unexpected{plan.error()};
  return PlannedRun{std::move(*plan), std::nullopt};
}

}  // namespace tp::runtime
