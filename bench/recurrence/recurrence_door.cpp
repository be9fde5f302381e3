// The 2-D recurrence (examples/02_recurrence/recurrence.hpp) through tilepipe's door, for
// bench_recurrence.py: one run of T sweeps, timed inside (set-up apart) and reported as JSON.
//
//   recurrence_door N RANKS CPUS SWEEPS TILE [MAP_DIM]
// forks RANKS ranks, or joins mpirun's job; MAP_DIM (1 or 2; 0 or none: the planner's) is the
// mapping dimension: 1 pipelines along the rows, each rank a band of columns (as the hand-written
// code), 2 along the columns (tiles TILE columns wide, their rows strided by the rank's width).
#include "../../examples/02_recurrence/recurrence.hpp"

#include <tilepipe/run.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: recurrence_door N RANKS CPUS SWEEPS TILE [MAP_DIM]\n");
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  const recurrence::Index n = std::atoll(argv[1]);
  tp::runtime::RunOptions options;
  options.nodes = std::atoll(argv[2]);
  if (tp::runtime::joins_mpi(options.launch)) options.nodes = 0;  // the job's size
  options.cpus = std::atoll(argv[3]);
  options.sweeps = std::atoi(argv[4]);
  options.tile_height = std::atoll(argv[5]);
  if (argc == 7) options.map_dim = std::atoi(argv[6]);
  auto run = tp::runtime::run(recurrence::Recurrence{}, {n, n}, options);
  if (!run) {
    std::fprintf(stderr, "error: %s\n", run.error().message.c_str());
    return run.error().is_user_error() ? 2 : 1;
  }
  if (!run->root) return 0;
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "{\"n\": %lld, \"ranks\": %lld, \"cpus\": %lld, \"sweeps\": %d, \"tile\": %lld, \"map_dim\": "
      "%d, "
      "\"seconds\": %.6f, \"setup_s\": %.6f, \"process_s\": %.6f, \"sum\": \"%016llx\"}\n",
      static_cast<long long>(n), static_cast<long long>(run->planned.plan.nodes()),
      static_cast<long long>(run->planned.plan.cpus()), options.sweeps,
      static_cast<long long>(options.tile_height.value_or(0)), run->planned.plan.map_dim() + 1,
      run->summary.wall_s(), run->summary.setup_s(), total,
      static_cast<unsigned long long>(run->result));
  return 0;
}
