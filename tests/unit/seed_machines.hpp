// The machines of the seeds' experiments that the model and sim unit tests predict for, built in
// code (the files under tests/data/machines/ hold the same numbers). Inline in tp::test: the
// unity build of a test executable compiles its files together (ADR 0019).
#pragma once

#include <tilepipe/model/machine.hpp>

namespace tp::test {

/// Seed 000's SCI cluster (tests/data/machines/seed000-sci-cluster.json): t_start and t_sync in
/// microseconds as the seed's experiments vary them (49.2 and 75.2 in the file).
inline model::Machine seed000_sci(double t_start_us = 49.2, double t_sync_us = 75.2) {
  model::Machine m;
  m.name = "seed000-sci-cluster";
  m.host_bound = false;
  m.transport = "sci-dma";
  m.compute.t_comp1 = model::Seconds{39.6e-9};
  m.compute.element_bytes = 4;
  m.t_start = model::Seconds{t_start_us * 1e-6};
  m.t_sync = model::Seconds{t_sync_us * 1e-6};
  m.t_sync_in = model::Seconds{11e-6};
  m.link.latency = model::Seconds{0};
  m.link.bandwidth_bytes_per_s = 84.12e6;
  m.send_mode = model::SendMode::queued;
  return m;
}

}  // namespace tp::test
