// The launcher's supervision: a failed rank ends the others, interrupts are forwarded, ranks die
// with the launcher, each rank's Error is carried as data; the progress watchdog on a stopped peer.
#include "rank_check.hpp"

#include <tilepipe/comm/world.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

namespace tp::comm {
namespace {

using test::contains;
using test::small;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void sleep_long() {
  std::this_thread::sleep_for(std::chrono::seconds(30));
}

TEST(Launcher, a_killed_rank_ends_the_others_at_once_and_is_named_with_its_pid_and_signal) {
  const auto start = Clock::now();
  auto result = launch_local(3, small(SyncMode::block), [](World& w) -> int {
    RANK_OK(w.barrier());
    if (w.rank() == 1) ::raise(SIGKILL);
    sleep_long();  // ranks 0 and 2 would run on for 30 s
    return 0;
  });
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_LT(seconds_since(start), 5.0) << "the survivors were not ended at once";
  EXPECT_EQ(result->failed_rank(), 1);
  EXPECT_EQ(result->ranks[1].term_signal, SIGKILL);
  EXPECT_FALSE(result->ranks[1].ended_by_launcher);
  EXPECT_TRUE(result->ranks[0].ended_by_launcher);
  EXPECT_TRUE(result->ranks[2].ended_by_launcher);
  EXPECT_EQ(result->status(), 128 + SIGKILL);
  const auto why = result->failure();
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->rank, 1);
  EXPECT_EQ(why->code, Errc::peer_lost);
  EXPECT_EQ(why->message,
            "pid " + std::to_string(result->ranks[1].pid) + " was killed by signal 9 (SIGKILL)");
}

TEST(Launcher, a_rank_error_is_carried_as_data_once_and_ends_the_others) {
  auto result = launch_local(3, small(SyncMode::block), [](World& w) -> Expected<int> {
    if (w.rank() == 2) {
      Error e = Error::about("faces", Errc::invalid_argument, "direct needs shared memory");
      e.tile = {1, 65};
      return Unexpected{e};
    }
    sleep_long();
    return 0;
  });
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->failed_rank(), 2);
  EXPECT_EQ(result->ranks[2].exit_code, 2) << "a user error exits 2";
  const auto why = result->failure();
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->rank, 2);
  EXPECT_EQ(why->code, Errc::invalid_argument);
  EXPECT_EQ(why->option, "faces");
  EXPECT_EQ(why->message, "direct needs shared memory");
  EXPECT_EQ(why->tile, (std::vector<std::int64_t>{1, 65}));
  EXPECT_EQ(result->status(), 2);
  EXPECT_FALSE(result->ranks[0].error.has_value());
  EXPECT_FALSE(result->ranks[1].error.has_value());
}

TEST(Launcher, an_exception_in_a_rank_becomes_its_error) {
  auto result = launch_local(2, small(SyncMode::block), [](World& w) -> int {
    if (w.rank() == 0) throw std::runtime_error("std::bad_alloc");
    sleep_long();
    return 0;
  });
  ASSERT_TRUE(result.has_value());
  const auto why = result->failure();
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->rank, 0);
  EXPECT_EQ(why->code, Errc::internal);
  EXPECT_EQ(why->message, "std::bad_alloc");
  EXPECT_EQ(result->status(), 1);
}

TEST(Launcher, a_lost_peer_error_is_not_taken_for_the_cause) {
  // Rank 1 fails with an error of its own; rank 0 sees rank 1 go and fails with peer_lost. Both
  // fail on their own (the launcher is told not to intervene): the cause is rank 1.
  LaunchOptions keep_running;
  keep_running.stop_on_failure = false;
  auto result = launch_local(
      2, small(SyncMode::block),
      [](World& w) -> Expected<int> {
        if (w.rank() == 1) return Unexpected{Error::at(1, Errc::system, "disk on fire")};
        std::array<std::byte, 8> buf{};
        auto got = w.recv(1, 0, buf);
        if (!got) return Unexpected{got.error()};
        return 0;
      },
      keep_running);
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->ranks[0].error.has_value());
  EXPECT_EQ(result->ranks[0].error->code, Errc::peer_lost);
  EXPECT_EQ(result->failed_rank(), 1);
  EXPECT_EQ(result->failure()->message, "disk on fire");
}

TEST(Launcher, success_has_no_failure) {
  auto result =
      launch_local(2, small(SyncMode::block), [](World& w) { return w.barrier() ? 0 : 1; });
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status(), 0);
  EXPECT_EQ(result->failed_rank(), -1);
  EXPECT_FALSE(result->failure().has_value());
  EXPECT_EQ(result->interrupted_by, 0);
}

bool blocked(int sig) {
  sigset_t now;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &now);
  return sigismember(&now, sig) == 1;
}

TEST(Launcher, sigterm_to_the_launcher_is_forwarded_and_every_rank_stops_within_a_second) {
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
    const auto start = Clock::now();
    auto result = launch_local(3, small(SyncMode::block), [sig](World& w) -> int {
      RANK_OK(w.barrier());
      if (w.rank() == 0) ::kill(::getppid(), sig);  // the launcher
      sleep_long();
      return 0;
    });
    ASSERT_TRUE(result.has_value());
    EXPECT_LT(seconds_since(start), 3.0) << sig;
    EXPECT_EQ(result->interrupted_by, sig);
    EXPECT_EQ(result->status(), 128 + sig);
    for (const RankEnd& e : result->ranks) {
      EXPECT_EQ(e.term_signal, sig) << "each rank got the forwarded signal";
      EXPECT_TRUE(e.ended_by_launcher);
    }
    const auto why = result->failure();
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->code, Errc::interrupted);
    EXPECT_EQ(why->message, "interrupted by " + signal_name(sig) + ": every rank stopped");
    // The launcher's process is as before: the signal neither blocked nor pending.
    EXPECT_FALSE(blocked(sig));
    EXPECT_FALSE(blocked(SIGCHLD));
    sigset_t pending;
    ::sigpending(&pending);
    EXPECT_FALSE(sigismember(&pending, sig));
  }
}

TEST(Launcher, a_rank_that_ignores_the_forwarded_signal_gets_sigkill_after_the_grace) {
  LaunchOptions o;
  o.grace = std::chrono::milliseconds(200);
  const auto start = Clock::now();
  auto result = launch_local(
      2, small(SyncMode::block),
      [](World& w) -> int {
        ::signal(SIGTERM, SIG_IGN);
        RANK_OK(w.barrier());
        if (w.rank() == 1) ::kill(::getppid(), SIGTERM);
        sleep_long();
        return 0;
      },
      o);
  ASSERT_TRUE(result.has_value());
  EXPECT_LT(seconds_since(start), 3.0);
  EXPECT_EQ(result->interrupted_by, SIGTERM);
  EXPECT_EQ(result->ranks[0].term_signal, SIGKILL);
  EXPECT_EQ(result->ranks[1].term_signal, SIGKILL);
}

TEST(Launcher, an_ignored_signal_stays_ignored) {
  // nohup's SIGHUP: the caller ignores it, so the launcher neither catches nor forwards it.
  struct sigaction old {};
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ::sigaction(SIGHUP, &ign, &old);
  auto result = launch_local(2, small(SyncMode::block), [](World& w) -> int {
    RANK_OK(w.barrier());
    if (w.rank() == 0) ::kill(::getppid(), SIGHUP);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    RANK_OK(w.barrier());
    return 0;
  });
  ::sigaction(SIGHUP, &old, nullptr);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->interrupted_by, 0);
  EXPECT_EQ(result->status(), 0);
}

TEST(Launcher, ranks_die_with_a_launcher_killed_by_sigkill) {
  // A subreaper child runs the launcher in a grandchild and kills it: the ranks, orphaned to the
  // subreaper, must all end (PR_SET_PDEATHSIG) within 2 s. Exit code 0 of the child: they did.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    int fds[2];
    if (::pipe(fds) != 0) ::_exit(10);
    const pid_t launcher = ::fork();
    if (launcher == 0) {
      ::close(fds[0]);
      auto r = launch_local(3, small(SyncMode::block), [&](World& w) -> int {
        if (!w.barrier()) return 1;
        const pid_t me = ::getpid();
        if (::write(fds[1], &me, sizeof(me)) != sizeof(me)) return 1;
        sleep_long();
        return 0;
      });
      ::_exit(r ? 0 : 11);
    }
    ::close(fds[1]);
    std::set<pid_t> ranks;
    pid_t got = 0;
    while (ranks.size() < 3 && ::read(fds[0], &got, sizeof(got)) == sizeof(got)) ranks.insert(got);
    if (ranks.size() != 3) ::_exit(12);
    ::kill(launcher, SIGKILL);
    const auto start = Clock::now();
    int killed = 0;
    while (seconds_since(start) < 2.0) {
      int status = 0;
      const pid_t p = ::waitpid(-1, &status, WNOHANG);
      if (p < 0) break;  // ECHILD: the launcher and every rank are reaped
      if (p == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      if (ranks.count(p) != 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++killed;
    }
    ::_exit(killed == 3 ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10-12: set-up failed; 13: a rank outlived its launcher";
}

TEST(ProgressWatchdog, a_stopped_peer_fails_the_wait_naming_it_in_every_sync_mode) {
  for (const SyncMode sync : {SyncMode::block, SyncMode::hybrid, SyncMode::poll}) {
    Config cfg = small(sync);
    cfg.progress_timeout = std::chrono::milliseconds(300);
    const auto start = Clock::now();
    auto result = launch_local(2, cfg, [](World& w) -> Expected<int> {
      if (auto b = w.barrier(); !b) return Unexpected{b.error()};
      if (w.rank() == 1) ::raise(SIGSTOP);
      std::array<std::byte, 8> buf{};
      auto got = w.recv(1, 0, buf);
      if (!got) return Unexpected{got.error()};
      return 0;
    });
    ASSERT_TRUE(result.has_value());
    EXPECT_LT(seconds_since(start), 5.0) << to_string(sync);
    // Whichever notices first: rank 0's watchdog, or the launcher seeing its child stopped.
    const auto why = result->failure();
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->code, Errc::timeout);
    const std::string pid = std::to_string(result->ranks[1].pid);
    if (why->rank == 0) {
      EXPECT_EQ(why->message, "no progress from rank 1 (pid " + pid +
                                  ") for 0.3 s (progress timeout): rank 1 (pid " + pid +
                                  ") is stopped");
    } else {
      EXPECT_EQ(why->rank, 1);
      EXPECT_EQ(why->message,
                "pid " + pid + " was stopped by SIGSTOP for more than 0.3 s (progress timeout)");
    }
    EXPECT_TRUE(result->ranks[1].ended_by_launcher) << "the stopped rank is killed";
  }
}

TEST(ProgressWatchdog, bounds_notification_waits_and_can_be_turned_off) {
  Config cfg = small(SyncMode::block);
  cfg.progress_timeout = std::chrono::milliseconds(200);
  auto result = launch_local(2, cfg, [](World& w) -> Expected<int> {
    auto region = w.create_region(4096, 1);
    if (!region) return Unexpected{region.error()};
    if (w.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(2));  // silent, not stopped: hung
      return 0;
    }
    auto seen = w.wait_notifications(*region, 1, 0, 1);
    if (!seen) return Unexpected{seen.error()};
    return 0;
  });
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->failure().has_value());
  EXPECT_EQ(result->failure()->code, Errc::timeout);
  EXPECT_EQ(result->failure()->rank, 0);
  EXPECT_EQ(result->failure()->message,
            "no progress from rank 1 (pid " + std::to_string(result->ranks[1].pid) +
                ") for 0.2 s (progress timeout): it is alive but silent (hung?)");

  // Off: a peer that is silent for longer than a small timeout would allow is waited for.
  cfg.progress_timeout = std::chrono::milliseconds(0);
  auto waited = launch_local(2, cfg, [](World& w) -> int {
    if (w.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(400));
    RANK_OK(w.barrier());
    return 0;
  });
  ASSERT_TRUE(waited.has_value());
  EXPECT_EQ(waited->status(), 0);
  Config bad = small(SyncMode::block);
  bad.progress_timeout = std::chrono::milliseconds(-1);
  ASSERT_FALSE(bad.validate().has_value());
  EXPECT_TRUE(contains(bad.validate().error().message, "progress_timeout -1 ms"));
}

}  // namespace
}  // namespace tp::comm
