// Non-template probes: the threads' barrier time t_sync_in.
#include <tilepipe/exec/probes.hpp>
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/support/assert.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace tp::exec {

double measure_barrier_s(int threads, TeamWait wait) {
  TP_EXPECTS(threads >= 2);
  using Clock = std::chrono::steady_clock;
  constexpr Index rounds = 200;
  std::vector<double> batches;
  for (int b = 0; b < 7; ++b) {
    const auto a = Clock::now();
    run_steps(
        threads, rounds, [](int, Index) {}, wait);
    batches.push_back(std::chrono::duration<double>(Clock::now() - a).count() /
                      static_cast<double>(rounds));
  }
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}

}  // namespace tp::exec
