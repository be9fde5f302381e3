// Fault injection under Open MPI's mpirun: the forked-rank suite's faults with the ranks started
// by mpirun, and the faults only a job has (a rank stopped before it joins or mid-run, thread
// starts failing in every rank, bad input every rank finds, a rank's kernel that throws).
#include "fault_case.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#if TILEPIPE_FAULT_MPIRUN

namespace tp::test::fault {

namespace {

/// The words of a space-separated list.
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find(' ', start);
    const std::string w = text.substr(start, end == std::string::npos ? end : end - start);
    if (!w.empty()) out.push_back(w);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

/// The same faults with the ranks started by Open MPI's mpirun (`-q`: none of its help texts;
/// its shared-memory segments in a private directory, checked empty afterwards): run or align, the
/// shm transport or MPI, more ranks than cores with `--sync block`; the launcher is mpirun.
Case make_mpirun_case(std::uint64_t seed, Fault fault) {
  Case c = make_case(seed, fault);
  std::mt19937_64 rng(seed ^ 0x6D70697275ULL);
  c.mpirun = true;
  // Strike after the ranks' set-up: Open MPI 4.1's mpirun can hang for good when a rank dies
  // while it connects to mpirun's PMIx server ("PMIX ERROR: UNREACHABLE", seen at 29 ms); the
  // run is 4 times longer than the local one so that most faults still strike a working run.
  c.delay = std::chrono::milliseconds(250 + rng() % 250);
  // Not in /dev/shm: the fault tests beside this one compare /dev/shm before and after.
  c.vader_dir = ::testing::TempDir() + "tp_fault_vader_" + std::to_string(::getpid()) + "_" +
                std::to_string(seed);
  const bool over_mpi = rng() % 2 == 0;
  std::vector<std::string> argv = {TILEPIPE_MPIEXEC};
  for (const auto& w : words_of(TILEPIPE_MPIEXEC_FLAGS)) argv.push_back(w);
  argv.insert(argv.end(), {"-q", "--mca", "btl_vader_backing_directory", c.vader_dir, "-np",
                           std::to_string(c.ranks)});
  // The tilepipe command of the local case, less --nodes (the job's size), faces copy over MPI.
  for (std::size_t i = 0; i < c.argv.size(); ++i) {
    if (c.argv[i] == "--nodes") {
      ++i;
      continue;
    }
    if (i > 0 && c.argv[i - 1] == "--size") {
      argv.emplace_back("128x1048576");
      continue;
    }
    if (over_mpi && i > 0 && c.argv[i - 1] == "--faces") {
      argv.emplace_back("copy");
      continue;
    }
    argv.push_back(c.argv[i]);
  }
  if (over_mpi) argv.insert(argv.end(), {"--transport", "mpi"});
  c.argv = argv;
  c.text = "seed " + std::to_string(seed) + ": " + name_of(fault) + " (rank " +
           std::to_string(c.victim) + ") after " + std::to_string(c.delay.count()) + " ms of";
  for (const auto& a : c.argv) c.text += " " + a;
  return c;
}

/// `count` cases of `fault` under mpirun (16 faults per build in all); at least one must strike a
/// working run.
void run_mpirun_fault(Fault fault, int count = 3) {
  const Tally t = run_cases(
      fault, count, [](std::uint64_t seed, Fault f) { return make_mpirun_case(seed + 50, f); });
  std::printf("mpirun, %s: %d of %d faults struck a working run\n", name_of(fault), t.hit, t.cases);
  if (std::getenv("TILEPIPE_FAULT_SEED") == nullptr) {
    EXPECT_GE(t.hit, 1) << "every fault came after the run's end: the runs are too short";
  }
}

/// mpirun -np `ranks` with Open MPI's segments in a private directory, then `args`.
Case mpirun_case(Fault fault, int ranks, const std::vector<std::string>& args) {
  Case c;
  c.fault = fault;
  c.mpirun = true;
  c.ranks = ranks;
  c.vader_dir = ::testing::TempDir() + "tp_fault_vader_" + std::to_string(::getpid()) + "_" +
                std::to_string(static_cast<int>(fault));
  c.argv = {TILEPIPE_MPIEXEC};
  for (const auto& w : words_of(TILEPIPE_MPIEXEC_FLAGS)) c.argv.push_back(w);
  c.argv.insert(c.argv.end(), {"-q", "--mca", "btl_vader_backing_directory", c.vader_dir, "-np",
                               std::to_string(ranks), TILEPIPE_EXE});
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  // Generous: mpirun's start and teardown under ASan on a loaded machine, plus the timeout.
  c.limit = std::chrono::seconds(60);
  c.text = name_of(fault);
  for (const auto& a : c.argv) c.text += " " + a;
  return c;
}

// A rank stopped before it joins the job (as if SIGSTOPped in its first milliseconds): the others
// wait in MPI_Init, out of the progress watchdog's sight; the set-up watchdog ends the job after
// the progress timeout, with one line naming the stopped rank (issue 16).
// Every other rank waits and times out at about the same moment: the lowest running rank of the
// host speaks (comm/job_voice.hpp), whichever timed out first.
TEST(FaultMpirun, a_rank_stopped_before_it_joins_ends_the_job_naming_it) {
  // {ranks, the rank stopped, the rank that speaks}
  for (const auto& [ranks, stopped, speaker] :
       {std::array{2, 1, 0}, std::array{3, 1, 0}, std::array{4, 0, 1}}) {
    Case c = mpirun_case(Fault::stop_at_setup, ranks,
                         {"run", "--kernel", "wave2d", "--size", "64x4096", "--tile", "16",
                          "--sync", "block", "--progress-timeout", "1"});
    c.env = {"TILEPIPE_FAULT_STOP_RANK=" + std::to_string(stopped)};
    c.line = R"(tilepipe: error: \[rank )" + std::to_string(speaker) +
             R"(\] no progress in the MPI job's set-up for 1 s \(progress timeout\): rank )" +
             std::to_string(stopped) + R"( \(pid \d+\) is stopped)";
    c.text += " (rank " + std::to_string(stopped) + " stopped)";
    std::printf("fault case %s\n", c.text.c_str());
    EXPECT_TRUE(run_case(c));
  }
}

// A rank stopped while the job works (3 ranks over shm; the rank, CPUs and schedule from the
// seed): every rank that waits on it times out, one line names it (the lowest running rank
// speaks; comm/job_voice.hpp), and MPI_Abort ends the job. The run lasts seconds, so that the
// stop lands before its end (a rank stopped after its last exchange is not covered: docs/mpi.md).
TEST(FaultMpirun, a_rank_stopped_mid_run_ends_the_job_with_one_line_naming_it) {
  // One seed under ASan (each case there takes about 19 s: make test's time), two elsewhere.
  for (const std::uint64_t seed : seeds(Fault::stop_rank, TILEPIPE_ASAN ? 1 : 2)) {
    std::mt19937_64 rng(seed);
    // Over shm only: with --transport mpi one job in 11 on a loaded machine hung silently until
    // killed (not understood yet; by hand it ends with the same one line).
    Case c =
        mpirun_case(Fault::stop_rank, 3,
                    {"run", "--kernel", "wave2d", "--size", "128x4194304", "--tile", "16", "--sync",
                     "block", "--progress-timeout", "1", "--cpus", std::to_string(1 + rng() % 2),
                     "--schedule", rng() % 2 == 0 ? "blocking" : "overlap"});
    c.victim = static_cast<int>(rng() % 3);
    c.delay = std::chrono::milliseconds(600);
    c.text += " (the rank of index " + std::to_string(c.victim) + " by pid stopped)";
    // Mid-run as a rule; in the set-up on a slow machine (the set-up watchdog's line then).
    c.line = R"(tilepipe: error: \[rank \d\] no progress (from rank \d( \(pid \d+\))?|)"
             R"(in the MPI job's set-up) for 1 s \(progress timeout\): rank \d \(pid VPID\) )"
             R"(is stopped)";
    c.text = "seed " + std::to_string(seed) + ": " + c.text;
    std::printf("fault case %s\n", c.text.c_str());
    EXPECT_TRUE(run_case(c));
  }
}

// Thread starts that fail in every rank under mpirun (the shim counts std::thread starts only,
// not the MPI library's threads): the set-up watchdog's thread, then a worker; one line, exit 1.
TEST(FaultMpirun, thread_starts_that_fail_end_the_job_with_one_line) {
  for (const int budget : {0, 1}) {
    std::vector<std::string> args = {"-x", std::string("LD_PRELOAD=") + TILEPIPE_FAULT_SHIM,
                                     "-x", "TILEPIPE_FAULT_THREADS=" + std::to_string(budget),
                                     "-x", "TILEPIPE_FAULT_THREADS_FROM=libstdc++"};
    if (TILEPIPE_ASAN) {
      args.insert(args.end(), {"-x", "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"});
    }
    args.insert(args.end(), {TILEPIPE_EXE, "run", "--kernel", "wave2d", "--size", "64x4096",
                             "--tile", "16", "--sync", "block", "--cpus", "2"});
    Case c = mpirun_case(Fault::threads_fail, 3, args);
    // mpirun_case puts tilepipe right after -np: the -x flags belong to mpirun, before it.
    c.argv.erase(std::find(c.argv.begin(), c.argv.end(), std::string(TILEPIPE_EXE)));
    c.line = budget == 0 ? R"(tilepipe: error: \[rank \d\] cannot start the set-up watchdog )"
                           R"(thread: Resource temporarily unavailable)"
                         : R"(tilepipe: error: \[rank \d\] cannot start thread 1 of 2: )"
                           R"(Resource temporarily unavailable)";
    c.text += " (budget " + std::to_string(budget) + ")";
    std::printf("fault case %s\n", c.text.c_str());
    EXPECT_TRUE(run_case(c));
  }
}

// Bad input under mpirun: every rank finds it, one says it (the lowest running rank; the
// others wait their turn and mpirun ends them), exit 2.
TEST(FaultMpirun, bad_input_is_reported_once) {
  Case c = mpirun_case(Fault::bad_input, 3, {"run", "--kernel", "wave2d", "--size", "12x"});
  c.line = R"(tilepipe: error: --size dimension 2: '' is not a whole number)";
  c.code = 2;
  std::printf("fault case %s\n", c.text.c_str());
  EXPECT_TRUE(run_case(c));
}

// A rank's kernel throws under mpirun: its error line reaches stderr once, before MPI_Abort ends
// the job (issue 16: every error a rank raises reaches the user once, with its rank once).
TEST(FaultMpirun, a_rank_that_throws_says_why_before_the_job_is_aborted) {
  for (const char* transport : {"auto", "mpi"}) {
    Case c = mpirun_case(Fault::rank_throws, 2,
                         {"run", "--plugin", TILEPIPE_TEST_PLUGIN, "--kernel", "scaled", "--size",
                          "40x40", "--tile", "8", "--map-dim", "2", "--param", "throw_row=40",
                          "--sync", "block", "--transport", transport});
    c.line = R"(tilepipe: error: \[rank 1\] tile at \(\d+, \d+\): kernel failed: row 40 is cursed)";
    std::printf("fault case %s\n", c.text.c_str());
    EXPECT_TRUE(run_case(c));
  }
}

TEST(FaultMpirun, kill_9_of_a_rank) {
  run_mpirun_fault(Fault::kill_rank);
}
// A rank stopped: a_rank_stopped_before_it_joins_ends_the_job_naming_it and
// a_rank_stopped_mid_run_ends_the_job_with_one_line_naming_it above.
TEST(FaultMpirun, sigterm_of_a_rank) {
  run_mpirun_fault(Fault::term_rank);
}
TEST(FaultMpirun, sigint_to_mpirun) {
  run_mpirun_fault(Fault::int_launcher);
}
TEST(FaultMpirun, sigterm_to_mpirun) {
  run_mpirun_fault(Fault::term_launcher);
}
TEST(FaultMpirun, sighup_to_mpirun) {
  run_mpirun_fault(Fault::hup_launcher, 2);
}
TEST(FaultMpirun, kill_9_of_mpirun) {
  run_mpirun_fault(Fault::kill_launcher, 2);
}

}  // namespace

}  // namespace tp::test::fault

#endif
