// Pinning the local ranks a command starts (affinity.hpp).
#include "affinity.hpp"

#include <sched.h>

namespace tp::app {

void pin_to_core(int rank) noexcept {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  int cpus[CPU_SETSIZE];
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus[n++] = c;
  }
  if (n == 0 || rank < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[rank % n], &one);
  (void)sched_setaffinity(0, sizeof(one), &one);
}

}  // namespace tp::app
