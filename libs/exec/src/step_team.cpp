// run_steps: std::jthread workers and a barrier that waits as the rank's sync mode says; the first
// exception (or a thread that cannot start) stops the team.
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/support/assert.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace tp::exec {
namespace {

/// A centralized barrier whose waiters spin, sleep, or spin then sleep (TeamWait). The last
/// thread to arrive resets the count and advances the generation (release); a waiter leaves when
/// it sees the generation change (acquire), so a step's writes are visible in the next step.
/// std::barrier sleeps after a few spins: on 2 cores a step of two threads then cost a futex
/// wake-up and a reschedule, 50-100 us, against tiles of 100 us.
class TeamBarrier {
 public:
  TeamBarrier(int threads, TeamWait wait) : threads_(threads), wait_(wait) {}

  void arrive_and_wait() {
    const std::uint32_t gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      count_.store(0, std::memory_order_relaxed);
      gen_.store(gen + 1, std::memory_order_release);
      gen_.notify_all();  // no system call when nobody sleeps
      return;
    }
    if (wait_.sync != comm::SyncMode::block) {
      const auto deadline = std::chrono::steady_clock::now() + wait_.spin;
      for (unsigned n = 0; gen_.load(std::memory_order_acquire) == gen; ++n) {
        // Look at the clock every 64 spins only: it costs more than a spin.
        if (wait_.sync == comm::SyncMode::hybrid && (n & 63U) == 63U &&
            std::chrono::steady_clock::now() >= deadline) {
          break;
        }
        relax();
      }
    }
    while (gen_.load(std::memory_order_acquire) == gen) gen_.wait(gen, std::memory_order_acquire);
  }

 private:
  static void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  const int threads_;
  const TeamWait wait_;
  std::atomic<int> count_{0};
  std::atomic<std::uint32_t> gen_{0};
};

}  // namespace

void run_steps(int threads, Index steps, const std::function<void(int thread, Index step)>& body,
               TeamWait wait) {
  TP_EXPECTS(threads >= 1 && steps >= 0);
  // `failed` is only a hint to skip work; the barrier orders everything else (relaxed suffices).
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex first_mutex;
  TeamBarrier sync(threads, wait);
  // The start gate: no thread runs a step before the whole team has started, so that a thread
  // that cannot start leaves no step half run (a body waiting on a tile that will never run).
  // 0: threads still starting, 1: run, 2: a thread could not start. Release/acquire: a worker
  // that sees 1 sees the team complete; one that sees 2 leaves at once.
  std::atomic<int> gate{0};
  auto work = [&](int t) {
    if (t != 0) {
      gate.wait(0, std::memory_order_acquire);
      if (gate.load(std::memory_order_acquire) != 1) return;
    }
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
    for (int t = 1; t < threads; ++t) {
      try {
        workers.emplace_back(work, t);
      } catch (const std::system_error& e) {
        // The threads already started never reach the barrier: they leave at the gate, and the
        // error is rethrown once they have joined.
        first = std::make_exception_ptr(std::system_error(
            e.code(),
            "cannot start thread " + std::to_string(t) + " of " + std::to_string(threads)));
        break;
      }
    }
    gate.store(first ? 2 : 1, std::memory_order_release);
    gate.notify_all();
    if (!first) work(0);
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace tp::exec
