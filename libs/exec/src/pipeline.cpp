// Non-template parts of the rank pipeline: the intra-node barrier measurement (t_sync_in).
#include <tilepipe/exec/pipeline.hpp>

#include <algorithm>

namespace tp::exec::detail {

double measure_barrier_s(int threads) {
  constexpr Index rounds = 200;
  std::vector<double> batches;
  for (int b = 0; b < 5; ++b) {
    const auto a = Clock::now();
    run_steps(threads, rounds, [](int, Index) {});
    batches.push_back(seconds(Clock::now() - a) / static_cast<double>(rounds));
  }
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}

}  // namespace tp::exec::detail
