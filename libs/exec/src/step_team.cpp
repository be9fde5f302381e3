// run_steps: the calling thread's persistent team of workers (ADR 0040), each placed off its
// creator's CPU when it starts, and a barrier that waits as the rank's sync mode says; the first
// exception (or a thread that cannot start) stops the team.
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
  void send_away(std::thread& worker) const noexcept {
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

/// How long a worker spins for its next job before it sleeps: as the last job's barrier waited
/// (poll: team_spin, not for ever; the team's owner may never call again).
std::chrono::nanoseconds park_spin(TeamWait wait) noexcept {
  switch (wait.sync) {
    case comm::SyncMode::poll:
      return team_spin;
    case comm::SyncMode::block:
      return std::chrono::nanoseconds(0);
    case comm::SyncMode::hybrid:
      break;
  }
  return wait.spin;
}

/// The workers of one owner thread, kept from one run_steps to the next. Starting a thread and
/// joining it cost 50-140 us each on this project's 2-vCPU VM, 2-3% of a 10 ms score pass on two
/// threads, and a start waited 4-5 ms where the other vCPU had been idle long enough for the host
/// to deschedule it (docs/adr/0040-a-persistent-team.md). A job is published by bumping the
/// generation (release): a worker reads the job's fields after it sees the new generation
/// (acquire), runs its part, and counts itself finished (release), after which it touches
/// nothing of the job; the owner writes the next job only once every worker has counted itself.
class Team {
 public:
  Team() = default;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;
  ~Team() {
    // The owner exits in the middle of a job (exit() from a body on thread 0): its workers may
    // wait at the job's barrier for ever, so they are left to the process's end, not joined.
    if (busy_) {
      for (auto& w : workers_) w.detach();
      return;
    }
    shut_down();
  }

  bool busy() const noexcept { return busy_; }

  /// Starts workers until the team has `workers` of them (the `threads` of the message: the job's
  /// size). A thread that cannot start throws std::system_error naming it; the workers already
  /// started stay.
  void grow(int workers, int threads, std::chrono::nanoseconds spin) {
    if (static_cast<int>(workers_.size()) >= workers) return;
    const StartPlacement placement(true);
    park_spin_.store(spin.count(), std::memory_order_relaxed);
    const std::uint32_t gen = gen_.load(std::memory_order_relaxed);
    while (static_cast<int>(workers_.size()) < workers) {
      const int t = static_cast<int>(workers_.size()) + 1;
      try {
        workers_.emplace_back([this, t, gen, placement] { serve(t, gen, placement); });
      } catch (const std::system_error& e) {
        throw std::system_error(e.code(), "cannot start thread " + std::to_string(t) + " of " +
                                              std::to_string(threads));
      }
      placement.send_away(workers_.back());
    }
  }

  /// Runs job(t) on threads t = 0 (the caller) .. threads-1 and returns once every worker is done
  /// with it. job must not throw.
  void run(const std::function<void(int)>& job, int threads, std::chrono::nanoseconds spin) {
    TP_EXPECTS(threads - 1 <= static_cast<int>(workers_.size()) && !busy_);
    busy_ = true;
    finished_.store(0, std::memory_order_relaxed);
    job_ = &job;
    job_threads_ = threads;
    park_spin_.store(spin.count(), std::memory_order_relaxed);
    gen_.fetch_add(1, std::memory_order_release);
    gen_.notify_all();  // no system call when no worker sleeps
    job(0);
    const int n = static_cast<int>(workers_.size());
    // Every worker leaves the job's last barrier at once: spin for it (a sleeping owner would
    // wait on a wake-up).
    spin_then_wait(finished_, [n](int f) { return f == n; });
    busy_ = false;
  }

  /// Stops and joins every worker: at the owner's exit, and before the owner forks (a child gets
  /// only the forking thread, so a team it inherited would wait on workers that do not exist).
  void shut_down() noexcept {
    if (workers_.empty()) return;
    stop_ = true;
    gen_.fetch_add(1, std::memory_order_release);
    gen_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
    stop_ = false;
  }

 private:
  void serve(int t, std::uint32_t seen, StartPlacement placement) noexcept {
    bool placed = false;
    std::chrono::nanoseconds spin(park_spin_.load(std::memory_order_relaxed));
    for (;;) {
      seen = spin_then_wait(
          gen_, [seen](std::uint32_t g) { return g != seen; }, spin);
      if (stop_) return;
      if (t < job_threads_) {
        if (!placed) {
          placement.release_self();
          placed = true;
        }
        (*job_)(t);
      }
      spin = std::chrono::nanoseconds(park_spin_.load(std::memory_order_relaxed));
      finished_.fetch_add(1, std::memory_order_release);
      finished_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::atomic<std::uint32_t> gen_{0};
  std::atomic<int> finished_{0};
  std::atomic<std::int64_t> park_spin_{0};  // ns; atomic: a worker reads it while it starts
  const std::function<void(int)>* job_ = nullptr;
  int job_threads_ = 0;
  bool stop_ = false;
  bool busy_ = false;
};

thread_local Team this_threads_team;

/// Before fork(): the forking thread's workers are joined (the child would inherit a team without
/// threads, the parent starts them again at its next run_steps). Registered with the first team.
void register_fork_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef __linux__
    (void)pthread_atfork(
        [] {
          if (!this_threads_team.busy()) this_threads_team.shut_down();
        },
        nullptr, nullptr);
#endif
  });
}

}  // namespace

void warm_team(int threads) {
  TP_EXPECTS(threads >= 1);
  if (threads == 1 || this_threads_team.busy()) return;
  register_fork_handler();
  this_threads_team.grow(threads - 1, threads, dedicated_spin(threads));
}

void run_steps(int threads, Index steps, const std::function<void(int thread, Index step)>& body,
               TeamWait wait) {
  TP_EXPECTS(threads >= 1 && steps >= 0);
  // `failed` is only a hint to skip work; the barrier orders everything else (relaxed suffices).
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex first_mutex;
  TeamBarrier sync(threads, wait);
  const std::function<void(int)> work = [&](int t) {
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
  if (threads == 1) {
    work(0);
  } else {
    register_fork_handler();
    // A body that runs a team of its own on thread 0 gets a team for that call alone.
    std::optional<Team> nested;
    Team& team = this_threads_team.busy() ? nested.emplace() : this_threads_team;
    const auto spin = park_spin(wait);
    team.grow(threads - 1, threads, spin);  // throws before any step runs
    team.run(work, threads, spin);
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace tp::exec
