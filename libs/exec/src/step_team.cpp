// run_steps: std::jthread workers placed off their creator's CPU at the start, and a barrier that
// waits as the rank's sync mode says; the first exception (or a thread that cannot start) stops
// the team.
#include <tilepipe/exec/spin_wait.hpp>
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/support/assert.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

namespace tp::exec {

namespace {

// Where a new worker starts (ADR 0033). Linux places a new thread by its CPUs' recent load, and
// often on its creator's CPU, moving it to an idle one only milliseconds later: on a 2-vCPU VM
// two threads then shared one CPU for 2-10 ms of a 25 ms run. The creator therefore keeps each
// worker off its own CPU until the team starts, and the worker takes the creator's CPU set back
// as its first act: a placement at the start, not a pin (the scheduler moves it freely after).
// Best effort: a failing affinity call changes nothing but the placement.
class StartPlacement {
 public:
  explicit StartPlacement(bool team) {
#ifdef __linux__
    if (!team) return;
    cpu_set_t all;
    CPU_ZERO(&all);
    const int cpu = sched_getcpu();
    if (pthread_getaffinity_np(pthread_self(), sizeof all, &all) != 0 || cpu < 0 ||
        cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &all) || CPU_COUNT(&all) < 2) {
      return;
    }
    all_ = all;
    away_ = all;
    CPU_CLR(cpu, &*away_);
#else
    (void)team;
#endif
  }
  /// Keeps a just started worker off the creator's CPU (before the team starts).
  void send_away(std::jthread& worker) const noexcept {
#ifdef __linux__
    if (away_) (void)pthread_setaffinity_np(worker.native_handle(), sizeof(cpu_set_t), &*away_);
#else
    (void)worker;
#endif
  }
  /// In the worker, once the team runs: the creator's CPU set again.
  void release_self() const noexcept {
#ifdef __linux__
    if (all_) (void)pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), &*all_);
#endif
  }

 private:
#ifdef __linux__
  std::optional<cpu_set_t> all_;   // the creator's CPUs
  std::optional<cpu_set_t> away_;  // those without the creator's current CPU
#endif
};

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
    // poll: spin for a year (the deadline must not overflow the clock), never sleep.
    const std::chrono::nanoseconds spin =
        wait_.sync == comm::SyncMode::poll    ? std::chrono::hours(24 * 365)
        : wait_.sync == comm::SyncMode::block ? std::chrono::nanoseconds(0)
                                              : wait_.spin;
    spin_then_wait(
        gen_, [gen](std::uint32_t g) { return g != gen; }, spin);
  }

 private:
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
  const StartPlacement placement(threads > 1);
  auto work = [&](int t) {
    if (t != 0) {
      // Spin, then sleep (spin_wait.hpp): a sleeping thread's idle vCPU is slow to wake.
      if (spin_then_wait(gate, [](int g) { return g != 0; }) != 1) return;
      placement.release_self();
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
        placement.send_away(workers.back());
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
