// A thread that cannot start (pthread_create fails, injected) stops the step team with an error
// instead of leaving the started threads at the barrier for ever; the team's threads are kept from
// one run_steps to the next (they start once), and a fork neither inherits nor loses them.
#include <tilepipe/exec/rank_context.hpp>
#include <tilepipe/exec/step_team.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>

extern "C" void tp_fault_set_thread_budget(long threads);

namespace tp::exec {
namespace {

// Runs fn on a thread of its own: a fresh owner, so a fresh team (the team is the caller's).
template <class Fn>
void on_a_new_owner(Fn fn) {
  std::thread owner(fn);
  owner.join();
}

TEST(StepTeamFaults, a_thread_that_cannot_start_stops_the_team_and_names_it) {
  for (const long allowed : {0L, 1L, 2L}) {
    on_a_new_owner([allowed] {
      std::atomic<int> calls{0};
      tp_fault_set_thread_budget(allowed);
      std::string what;
      try {
        run_steps(4, 50, [&](int, Index) { calls.fetch_add(1, std::memory_order_relaxed); });
      } catch (const std::system_error& e) {
        what = e.what();
        EXPECT_EQ(e.code(), std::errc::resource_unavailable_try_again);
      }
      tp_fault_set_thread_budget(-1);
      EXPECT_EQ(what.rfind("cannot start thread " + std::to_string(allowed + 1) + " of 4", 0), 0U)
          << what;
      EXPECT_EQ(calls.load(), 0) << "no step runs on a partial team";
      calls = 0;
      run_steps(4, 10, [&](int, Index) { calls.fetch_add(1, std::memory_order_relaxed); });
      EXPECT_EQ(calls.load(), 40) << "the team works again once threads can start";
    });
  }
}

TEST(StepTeamFaults, the_team_starts_once_and_serves_every_later_call) {
  on_a_new_owner([] {
    std::set<std::thread::id> first, later;
    std::mutex m;
    run_steps(3, 2, [&](int, Index) {
      const std::lock_guard lock(m);
      first.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(first.size(), 3U);
    tp_fault_set_thread_budget(0);  // no thread may start from here on
    for (const int threads : {3, 2, 3}) {
      std::atomic<int> calls{0};
      run_steps(threads, 5, [&](int, Index) {
        calls.fetch_add(1, std::memory_order_relaxed);
        const std::lock_guard lock(m);
        later.insert(std::this_thread::get_id());
      });
      EXPECT_EQ(calls.load(), 5 * threads);
    }
    tp_fault_set_thread_budget(-1);
    EXPECT_EQ(later, first) << "the same threads ran every call";
  });
}

// A body on thread 0 that runs a team of its own while its team is busy: a team for that call.
TEST(StepTeamFaults, a_nested_team_on_thread_0_runs_beside_the_busy_one) {
  on_a_new_owner([] {
    std::atomic<int> outer{0}, inner{0};
    run_steps(2, 2, [&](int t, Index) {
      outer.fetch_add(1, std::memory_order_relaxed);
      if (t == 0)
        run_steps(2, 3, [&](int, Index) { inner.fetch_add(1, std::memory_order_relaxed); });
    });
    EXPECT_EQ(outer.load(), 4);
    EXPECT_EQ(inner.load(), 12);
  });
}

TEST(StepTeamFaults, warm_team_starts_the_threads_of_the_next_call) {
  on_a_new_owner([] {
    warm_team(2);
    tp_fault_set_thread_budget(0);
    std::atomic<int> calls{0};
    run_steps(2, 3, [&](int, Index) { calls.fetch_add(1, std::memory_order_relaxed); });
    tp_fault_set_thread_budget(-1);
    EXPECT_EQ(calls.load(), 6);
    tp_fault_set_thread_budget(0);
    EXPECT_THROW(warm_team(3), std::system_error);  // a third thread cannot start
    tp_fault_set_thread_budget(-1);
  });
}

// On the test's main thread: a fork from a process with other threads is not what this tests
// (ThreadSanitizer refuses threads in such a child), the team's own threads are.
TEST(StepTeamFaults, a_forked_child_starts_its_own_team_and_the_parent_keeps_working) {
  std::atomic<int> calls{0};
  run_steps(2, 4, [&](int, Index) { calls.fetch_add(1, std::memory_order_relaxed); });
  ASSERT_EQ(calls.load(), 8);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child has only this thread: a team inherited from the parent would wait for ever.
    std::atomic<int> n{0};
    run_steps(2, 4, [&](int, Index) { n.fetch_add(1, std::memory_order_relaxed); });
    ::_exit(n.load() == 8 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  calls = 0;
  run_steps(2, 4, [&](int, Index) { calls.fetch_add(1, std::memory_order_relaxed); });
  EXPECT_EQ(calls.load(), 8);
}

// A body on thread 0 that ends the process (exit()) while the other thread waits at the step's
// barrier: the team's thread-local destructor must not join a worker that waits for ever.
TEST(StepTeamFaults, exit_from_thread_0_in_the_middle_of_a_job_ends_the_process) {
  EXPECT_EXIT(run_steps(2, 3,
                        [](int t, Index s) {
                          if (t == 0 && s == 1) std::exit(7);
                        }),
              ::testing::ExitedWithCode(7), "");
}

TEST(StepTeamFaults, the_rank_error_boundary_reports_a_system_error_on_its_rank) {
  on_a_new_owner([] {
    tp_fault_set_thread_budget(0);
    const Status s = detail::run_guarded(3, 2, 5, TeamWait{}, [](int, Index) {});
    tp_fault_set_thread_budget(-1);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code, Errc::system);
    EXPECT_EQ(s.error().rank, 3);
    EXPECT_EQ(s.error().message.rfind("cannot start thread 1 of 2: ", 0), 0U) << s.error().message;
  });
}

}  // namespace
}  // namespace tp::exec
