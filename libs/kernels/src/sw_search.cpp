// sw_search: short pairs one per thread from a shared counter, long pairs tiled on every thread
// (both on the calling thread's team, exec::run_steps).
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/exec/rect_tiling.hpp>
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/kernels/sw_search.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <system_error>

namespace tp::kernels {

namespace {

// One pair on `threads` threads: the score pass tiled as `tilepipe align` tiles it, then the
// traceback on the same threads.
Expected<SwPairResult> align_pair(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                  std::span<const std::uint8_t> target, GapCosts gaps, int threads,
                                  const SwSearchOptions& options) {
  // A sequence of length 0 aligns with nothing: score 0, an empty alignment (no space to tile).
  if (query.empty() || target.empty()) {
    return SwPairResult{SwResult{},
                        options.traceback ? std::optional(SwAlignment{}) : std::nullopt};
  }
  auto kernel = SwKernel::make(matrix, query, target, gaps, options.sw);
  if (!kernel) return Unexpected{kernel.error()};
  const auto tile = sw_default_tile(static_cast<std::int64_t>(query.size()),
                                    static_cast<std::int64_t>(target.size()), threads);
  auto tiling = exec::RectTiling<2>::make(kernel->space(), {tile[0], tile[1]});
  if (!tiling) return Unexpected{tiling.error()};
  auto best = exec::run_local(*kernel, *tiling, threads);
  if (!best) return Unexpected{best.error()};
  SwPairResult out{*best, std::nullopt};
  if (options.traceback) {
    auto a = sw_traceback(matrix, query, target, gaps, *best, {threads, options.sw});
    if (!a) return Unexpected{a.error()};
    out.alignment = std::move(*a);
  }
  return out;
}

}  // namespace

Expected<std::vector<SwPairResult>> sw_search(const ScoreMatrix& matrix,
                                              std::span<const std::vector<std::uint8_t>> queries,
                                              std::span<const std::vector<std::uint8_t>> targets,
                                              GapCosts gaps, std::span<const SwPair> pairs,
                                              const SwSearchOptions& options) {
  const int threads = std::max(options.threads, 1);
  std::vector<SwPairResult> results(pairs.size());
  std::vector<std::size_t> shorts;
  auto cells = [&](const SwPair& p) {
    return static_cast<std::int64_t>(queries[p.query].size()) *
           static_cast<std::int64_t>(targets[p.target].size());
  };
  // Long pairs first, one after the other on every thread.
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    if (cells(pairs[k]) < options.tiled_cells) {
      shorts.push_back(k);
      continue;
    }
    auto r = align_pair(matrix, queries[pairs[k].query], targets[pairs[k].target], gaps, threads,
                        options);
    if (!r) return Unexpected{r.error()};
    results[k] = std::move(*r);
  }
  // Short pairs: each thread takes the next pair from the counter (relaxed: the counter hands
  // out indices only; the results are published by run_steps' return).
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::optional<Error> first_error;
  std::size_t first_error_at = shorts.size();
  auto work = [&](int, exec::Index) {
    for (std::size_t s = next.fetch_add(1, std::memory_order_relaxed); s < shorts.size();
         s = next.fetch_add(1, std::memory_order_relaxed)) {
      if (failed.load(std::memory_order_relaxed)) return;
      const SwPair& p = pairs[shorts[s]];
      auto r = align_pair(matrix, queries[p.query], targets[p.target], gaps, 1, options);
      if (!r) {
        // The error of the earliest failing pair, whatever the threads' timing.
        const std::lock_guard lock(error_mutex);
        if (s < first_error_at) {
          first_error_at = s;
          first_error = r.error();
        }
        failed.store(true, std::memory_order_relaxed);
        return;
      }
      results[shorts[s]] = std::move(*r);
    }
  };
  // The calling thread's team (exec::run_steps: the threads the long pairs ran on); where no
  // team can start, this thread takes every pair (run_steps throws before any step runs).
  const auto team = static_cast<int>(std::min<std::size_t>(
      static_cast<std::size_t>(threads), std::max<std::size_t>(shorts.size(), 1)));
  try {
    exec::run_steps(team, 1, work);
  } catch (const std::system_error&) {
    work(0, 0);
  }
  if (first_error) return Unexpected{*first_error};
  return results;
}

}  // namespace tp::kernels
