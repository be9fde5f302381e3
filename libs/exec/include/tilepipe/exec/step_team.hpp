// A team of threads that runs numbered steps with a barrier between consecutive steps.
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/exec/kernel.hpp>

#include <chrono>
#include <functional>

namespace tp::exec {

/// How a thread that has finished its step waits for the rest of the team: as the rank's ranks
/// wait for messages (comm::SyncMode). poll: spins; block: sleeps in the kernel at once (a futex
/// wake-up across cores costs 17-30 us here); hybrid: spins `spin`, then sleeps.
struct TeamWait {
  comm::SyncMode sync = comm::SyncMode::hybrid;
  std::chrono::nanoseconds spin = std::chrono::microseconds(50);

  /// The wait of a rank configured by `config` (its sync mode and spin_ns).
  static TeamWait of(const comm::Config& config) noexcept { return {config.sync, config.spin_ns}; }
};

/// Runs body(thread, step) on `threads` threads (the caller is thread 0) for step = 0 .. steps-1,
/// all threads finishing step s before any starts step s+1 (one barrier per step, waited for as
/// `wait` says). If a body throws, later steps are skipped on every thread and the first
/// exception is rethrown here; a thread that cannot start throws std::system_error before any
/// step runs. The other threads are the calling thread's team, started at its first call (or by
/// warm_team) and kept, waiting for the next call, until the calling thread exits or forks
/// (docs/adr/0040-a-persistent-team.md). Preconditions: threads >= 1, steps >= 0.
void run_steps(int threads, Index steps, const std::function<void(int thread, Index step)>& body,
               TeamWait wait = {});

/// Starts the calling thread's team for a later run_steps on `threads` threads now (the workers
/// wait for it, spinning for team_spin when each has a CPU of its own, then sleeping), so that
/// their start overlaps the caller's own preparation (reading the input). Throws
/// std::system_error when a thread cannot start. Precondition: threads >= 1.
void warm_team(int threads);

}  // namespace tp::exec
