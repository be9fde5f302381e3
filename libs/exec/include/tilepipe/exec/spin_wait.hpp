// Waiting on an atomic word: spin for a bounded time, then sleep in the kernel (hybrid waits).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace tp::exec {

/// How long a thread of a local team (run_steps' start gate, run_rows' wait for the tile above)
/// spins on its atomic word before it sleeps in the kernel (std::atomic::wait, a futex), in
/// nanoseconds. A thread that sleeps leaves its CPU idle, and in a virtual machine an idle vCPU
/// may be descheduled by the host: waking it took 1-4 ms on this project's 2-vCPU VM
/// (docs/benchmarks.md, "Smith-Waterman SIMD tiles against parasail", 2026-11-27c), as long as a
/// whole 30k x 30k protein score pass on two threads takes 25 ms. The first wait of a team (for
/// the first tile, or for the team to start) lasts about one tile, so the spin covers a tile of
/// a few milliseconds; a longer wait pays one wake-up. Spinning costs a CPU only while the team
/// has more threads than free CPUs, so it spins only where each thread has one (dedicated_spin).
/// Ranks' hybrid waits take the same spin where every thread of the host's ranks has a CPU
/// (runtime::spin_for_dedicated_cpus): a thread that slept after the default 50 us computed its
/// next tile slower, wave3d 16x16x262144 x 8 sweeps on 2 ranks or 1 rank x 2 CPUs ran 7-12%
/// faster with 5 ms (docs/executor.md).
inline constexpr std::chrono::nanoseconds team_spin = std::chrono::milliseconds(5);

/// The CPUs in this process's affinity mask (at least 1): what its threads may use, which a
/// batch system's cpuset or `taskset` may make fewer than the machine's.
std::int64_t affinity_cpus();

/// How long a waiting thread of `threads_here` threads on this host (the process's, or every
/// rank's on the host) spins before it sleeps: team_spin when each has a CPU of its own in the
/// affinity mask, else 0 (a spinning waiter would hold the CPU the thread it waits for needs:
/// two threads on one CPU, `taskset -c 0 tilepipe align --cpus 2`, ran 27% slower with the spin).
std::chrono::nanoseconds dedicated_spin(std::int64_t threads_here);

namespace detail {

/// A pause hint inside a spin loop (lets a sibling hyperthread run; no-op elsewhere).
inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace detail

/// Returns the first value of `word` (acquire) for which ready(value) holds: spins for at most
/// `spin`, then sleeps in std::atomic::wait until a store and notify change the value. The
/// writer must notify (notify_all) after each store that can make `ready` true.
template <class T, class Ready>
T spin_then_wait(const std::atomic<T>& word, Ready ready,
                 std::chrono::nanoseconds spin = team_spin) {
  T seen = word.load(std::memory_order_acquire);
  if (ready(seen)) return seen;
  // The clock is read once per 64 pauses: a pause takes 10-150 cycles, a clock read about 25 ns.
  const auto deadline = std::chrono::steady_clock::now() + spin;
  for (std::uint32_t i = 1;; ++i) {
    detail::spin_pause();
    seen = word.load(std::memory_order_acquire);
    if (ready(seen)) return seen;
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) break;
  }
  while (!ready(seen)) {
    word.wait(seen, std::memory_order_acquire);
    seen = word.load(std::memory_order_acquire);
  }
  return seen;
}

}  // namespace tp::exec
