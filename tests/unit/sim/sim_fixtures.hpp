// The simulator tests' round-number machine, their plans of unit dependences and their call of
// the simulator.
#pragma once

#include <tilepipe/model/machine.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/sim/simulate.hpp>

#include <gtest/gtest.h>

#include "../plan_request.hpp"

#include <cstdint>
#include <utility>

namespace tp::test::sim {

/// Round numbers: 1 ns per point, 8-byte elements, t_start 10 us, t_sync 20 us, t_sync_in 3 us,
/// 100 MB/s.
inline model::Machine simple(model::SendMode mode = model::SendMode::serial,
                             double latency_us = 0) {
  model::Machine m;
  m.name = "simple";
  m.host_bound = false;
  m.transport = "test";
  m.compute.t_comp1 = model::Seconds{1e-9};
  m.compute.element_bytes = 8;
  m.t_start = model::Seconds{10e-6};
  m.t_sync = model::Seconds{20e-6};
  m.t_sync_in = model::Seconds{3e-6};
  m.link.latency = model::Seconds{latency_us * 1e-6};
  m.link.bandwidth_bytes_per_s = 100e6;
  m.send_mode = mode;
  return m;
}

/// The unit-dependence plan of tp::test::height_request, mapped along the last dimension.
inline plan::Plan make_plan(plan::Index size, std::int64_t height, std::int64_t nodes,
                            std::int64_t cpus, plan::ScheduleKind s = plan::ScheduleKind::overlap,
                            plan::GroupingKind g = plan::GroupingKind::hyperplane) {
  const int map_dim = static_cast<int>(size.size());
  auto p =
      plan::Plan::make(height_request(std::move(size), height, nodes, cpus, s, g, {}, map_dim));
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return *p;
}

/// The simulated time of `plan` on `m` (a failed simulation fails the test and gives -1).
inline double sim_s(const plan::Plan& plan, const model::Machine& m,
                    const tp::sim::SimOptions& o = {}) {
  auto r = tp::sim::simulate(plan, m, o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? r->simulated.count() : -1;
}

}  // namespace tp::test::sim
