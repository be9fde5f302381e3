// Fault injection on forked ranks: tilepipe run/align with a rank or the launcher killed, stopped
// or signalled at a random moment, or thread starts failing; each case prints its seed (replay one
// with TILEPIPE_FAULT_SEED=<seed>) and asserts the exit status, one line on stderr, the time to
// exit, no orphan process, nothing left in /dev/shm and no partial output (fault_case.hpp).
#include "fault_case.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace tp::test::fault {

namespace {

/// Seven cases of `fault` (56 faults per build, 112 in release + asan); at least half must strike
/// a working run.
void run_fault(Fault fault) {
  const Tally t = run_cases(fault, 7, make_case);
  std::printf("%s: %d of %d faults struck a working run\n", name_of(fault), t.hit, t.cases);
  if (std::getenv("TILEPIPE_FAULT_SEED") == nullptr) {
    EXPECT_GE(2 * t.hit, t.cases) << "most faults came after the run's end: the runs are too short";
  }
}

TEST(Fault, kill_9_of_a_rank) {
  run_fault(Fault::kill_rank);
}
TEST(Fault, sigstop_of_a_rank) {
  run_fault(Fault::stop_rank);
}
TEST(Fault, sigterm_of_a_rank) {
  run_fault(Fault::term_rank);
}
TEST(Fault, sigint_to_the_launcher) {
  run_fault(Fault::int_launcher);
}
TEST(Fault, sigterm_to_the_launcher) {
  run_fault(Fault::term_launcher);
}
TEST(Fault, sighup_to_the_launcher) {
  run_fault(Fault::hup_launcher);
}
TEST(Fault, kill_9_of_the_launcher) {
  run_fault(Fault::kill_launcher);
}
TEST(Fault, thread_starts_that_fail) {
  run_fault(Fault::thread_start);
}

}  // namespace

}  // namespace tp::test::fault
