// launch_local: forks the ranks of a shared-memory World on this host (no MPI needed).
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/comm/world.hpp>
#include <tilepipe/support/expected.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tp::comm {

/// How each launched rank ended.
struct LaunchResult {
  std::vector<int> exit_codes;    ///< per rank: the body's return value, or 128 + signal number
  std::vector<int> term_signals;  ///< per rank: the signal that killed it, 0 if it exited
  /// Failures the launcher itself caught in a rank (world setup, an exception escaping body),
  /// one line each, "[rank r] ..."; the body's own reports are the body's business.
  std::vector<std::string> errors;

  /// 0 when every rank returned 0, else the first non-zero exit code.
  [[nodiscard]] int status() const noexcept;
};

/// Forks `ranks` processes (1..256) that share one memfd segment (never visible in /dev/shm),
/// runs `body(world)` in each and waits for all of them. Each child flushes stdio and _exit()s
/// with body's value; an exception escaping body becomes exit code 1. Returns only in the
/// caller's process. Call it from a single-threaded process (fork). Never prints.
Expected<LaunchResult> launch_local(int ranks, const Config& config,
                                    const std::function<int(World&)>& body);

}  // namespace tp::comm
