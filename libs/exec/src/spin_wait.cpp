// The CPUs a process may use, and the spin of a wait that follows from them.
#include <tilepipe/exec/spin_wait.hpp>

#include <sched.h>

#include <algorithm>

namespace tp::exec {

std::int64_t affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

std::chrono::nanoseconds dedicated_spin(std::int64_t threads_here) {
  return threads_here >= 1 && threads_here <= affinity_cpus() ? team_spin
                                                              : std::chrono::nanoseconds(0);
}

}  // namespace tp::exec
