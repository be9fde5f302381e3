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
/// exception is rethrown here. Preconditions: threads >= 1, steps >= 0.
void run_steps(int threads, Index steps, const std::function<void(int thread, Index step)>& body,
               TeamWait wait = {});

}  // namespace tp::exec
