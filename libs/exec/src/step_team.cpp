// run_steps: std::jthread workers and a std::barrier; the first exception stops the team.
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/support/assert.hpp>

#include <atomic>
#include <barrier>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tp::exec {

void run_steps(int threads, Index steps, const std::function<void(int thread, Index step)>& body) {
  TP_EXPECTS(threads >= 1 && steps >= 0);
  // `failed` is only a hint to skip work; the barrier orders everything else (relaxed suffices).
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex first_mutex;
  std::barrier sync(threads);
  auto work = [&](int t) {
    for (Index s = 0; s < steps; ++s) {
      if (!failed.load(std::memory_order_relaxed)) {
        try {
          body(t, s);
        } catch (...) {
          const std::lock_guard lock(first_mutex);
          if (!first) first = std::current_exception();
          failed.store(true, std::memory_order_relaxed);
        }
      }
      if (threads > 1) sync.arrive_and_wait();
    }
  };
  {
    std::vector<std::jthread> workers;
    workers.reserve(static_cast<std::size_t>(threads - 1));
    for (int t = 1; t < threads; ++t) workers.emplace_back(work, t);
    work(0);
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace tp::exec
