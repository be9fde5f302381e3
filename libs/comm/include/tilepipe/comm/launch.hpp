// launch_local: forks the ranks of a shared-memory World on this host (no MPI needed).
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/comm/world.hpp>
#include <tilepipe/support/expected.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tp::comm {

/// How one launched rank ended.
struct RankEnd {
  int pid = 0;          ///< its process id
  int exit_code = 0;    ///< the body's return value, or 128 + signal number
  int term_signal = 0;  ///< the signal that ended it, 0 if it exited
  /// True when the launcher ended it (another rank had failed, or the launcher was interrupted):
  /// its end is a consequence, not a cause.
  bool ended_by_launcher = false;
  /// The Error the rank raised: returned by its body, its World's set-up failure, or an
  /// exception escaping the body (Errc::internal); rank set to this rank.
  std::optional<Error> error;
  /// Order in which the launcher saw the rank fail on its own (0 first); -1 if it did not.
  int failed_order = -1;
};

/// How a launch ended.
struct LaunchResult {
  std::vector<int> exit_codes;    ///< per rank: ranks[r].exit_code
  std::vector<int> term_signals;  ///< per rank: ranks[r].term_signal
  std::vector<RankEnd> ranks;     ///< per rank, in rank order
  /// SIGINT, SIGTERM or SIGHUP when the launcher received it and forwarded it to the ranks;
  /// 0 when it was not interrupted.
  int interrupted_by = 0;

  /// The rank whose own failure ended the run (LaunchOptions::stop_on_failure), or -1: among the
  /// ranks that failed on their own, the first whose failure is not a lost peer (a death by a
  /// signal, an error other than Errc::peer_lost / Errc::timeout, a bare non-zero exit), else
  /// the first of them.
  [[nodiscard]] int failed_rank() const noexcept;
  /// Why the run failed, as one Error for the application to format, or nullopt when every rank
  /// returned 0: the interruption (Errc::interrupted, "interrupted by SIGTERM: every rank
  /// stopped"), else failed_rank()'s own Error, else its death ("rank 1 (pid 4242) was killed by
  /// signal 9 (SIGKILL)", "rank 1 (pid 4242) exited with status 3"), Errc::peer_lost, rank set.
  [[nodiscard]] std::optional<Error> failure() const;
  /// 0 when every rank returned 0; 128 + signal when interrupted; else failed_rank()'s exit code.
  [[nodiscard]] int status() const noexcept;
};

/// How the launcher supervises its ranks.
struct LaunchOptions {
  /// When a rank fails on its own (exits non-zero, or dies by a signal), SIGKILL the other ranks
  /// at once, so that the run ends within milliseconds of the failure. Off: the others run on
  /// and must notice the failure themselves (World's peer checks; the tests of those).
  bool stop_on_failure = true;
  /// Forward SIGINT, SIGTERM and SIGHUP received by the launcher to every rank (unless the
  /// caller ignores that signal, as nohup does with SIGHUP); ranks still alive after `grace`
  /// are killed with SIGKILL.
  bool forward_signals = true;
  std::chrono::milliseconds grace = std::chrono::milliseconds(500);
  /// Called in the launcher once every rank is forked, before it starts supervising them: the
  /// launcher forks no more, so it may start threads of its own here (a progress display). Must
  /// return promptly; empty: nothing.
  std::function<void()> started;
};

/// A rank's body: its exit code (0 success), or an Error that the launcher carries to
/// RankEnd::error (the rank then exits 2 for a user error, 1 otherwise). Lambdas returning int
/// convert.
using RankBody = std::function<Expected<int>(World&)>;

/// Forks `ranks` processes (1..256) that share one memfd segment (never visible in /dev/shm),
/// runs `body(world)` in each and supervises them until every one has ended: a rank that fails
/// ends the others (LaunchOptions::stop_on_failure), interrupts are forwarded, and each rank
/// gets SIGKILL should the launcher die (PR_SET_PDEATHSIG), so no rank outlives it. Each child
/// flushes stdio and _exit()s with body's value; an exception escaping body becomes an Error
/// and exit code 1. Returns only in the caller's process, once every rank is reaped.
///
/// Call it from a single-threaded process (fork, and the signal mask: while it runs, it blocks
/// SIGCHLD and the forwarded signals and reads them from a signalfd; it restores the mask, the
/// SIGCHLD disposition and drains what it consumed before it returns). Never prints.
Expected<LaunchResult> launch_local(int ranks, const Config& config, const RankBody& body,
                                    const LaunchOptions& options = {});

/// "SIGKILL", "SIGTERM", ... for the usual signals, "signal N" otherwise.
std::string signal_name(int signal);

}  // namespace tp::comm
