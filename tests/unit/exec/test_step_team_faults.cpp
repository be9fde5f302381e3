// A thread that cannot start (pthread_create fails, injected) stops the step team with an error
// instead of leaving the started threads at the barrier for ever.
#include <tilepipe/exec/rank_context.hpp>
#include <tilepipe/exec/step_team.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <system_error>

extern "C" void tp_fault_set_thread_budget(long threads);

namespace tp::exec {
namespace {

TEST(StepTeamFaults, a_thread_that_cannot_start_stops_the_team_and_names_it) {
  for (const long allowed : {0L, 1L, 2L}) {
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
  }
  std::atomic<int> calls{0};
  run_steps(4, 10, [&](int, Index) { calls.fetch_add(1, std::memory_order_relaxed); });
  EXPECT_EQ(calls.load(), 40) << "the team works again once threads can start";
}

TEST(StepTeamFaults, the_rank_error_boundary_reports_a_system_error_on_its_rank) {
  tp_fault_set_thread_budget(0);
  const Status s = detail::run_guarded(3, 2, 5, TeamWait{}, [](int, Index) {});
  tp_fault_set_thread_budget(-1);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, Errc::system);
  EXPECT_EQ(s.error().rank, 3);
  EXPECT_EQ(s.error().message.rfind("cannot start thread 1 of 2: ", 0), 0U) << s.error().message;
}

}  // namespace
}  // namespace tp::exec
