// Pinning the local ranks a command starts: rank r on the r-th CPU this process may use.
#pragma once

namespace tp::app {

/// Restricts the calling process to one CPU: the (rank mod n)-th of the n CPUs in its current
/// affinity mask. Ranks that wait by spinning (poll, or hybrid's spin phase) must not share a
/// core: the spinner would hold the core its peer needs to answer. Best effort: a failure to
/// read or set the mask leaves the affinity as it was.
void pin_to_core(int rank) noexcept;

}  // namespace tp::app
