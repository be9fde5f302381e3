// The plan request the plan, model and sim unit tests build: unit dependences, a tile height,
// nodes x CPUs, a scheme and block-cyclic factors. Inline in tp::test: the unity build of a test
// executable compiles its files together, so no file defines its own copy (ADR 0019).
#pragma once

#include <tilepipe/plan/plan.hpp>

#include <cstdint>
#include <utility>

namespace tp::test {

/// Unit dependences over `size`, tiles `height` high along the mapping dimension (`map_dim`,
/// 1-based; 0: the planner's choice), `nodes` x `cpus`, the given scheme and cyclic factors
/// (empty: the block mapping).
inline plan::PlanRequest height_request(plan::Index size, std::int64_t height, std::int64_t nodes,
                                        std::int64_t cpus,
                                        plan::ScheduleKind s = plan::ScheduleKind::overlap,
                                        plan::GroupingKind g = plan::GroupingKind::hyperplane,
                                        plan::Index cyclic = {}, int map_dim = 0) {
  plan::PlanRequest r;
  r.size = std::move(size);
  r.deps = plan::DependenceMatrix::unit(static_cast<int>(r.size.size()));
  r.tile_kind = plan::TileSpecKind::height;
  r.tile_height = height;
  r.nodes = nodes;
  r.cpus = cpus;
  r.schedule = s;
  r.grouping = g;
  r.cyclic = std::move(cyclic);
  r.map_dim = map_dim;
  return r;
}

}  // namespace tp::test
