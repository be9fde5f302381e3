// The fault suites' shared case runner: a fault case (what to start, what to do to it and when,
// what must follow), its run with every check (exit status, one line on stderr, the time to exit,
// no orphan process, nothing left in /dev/shm, no partial output) and the replayable seeds.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace tp::test::fault {

using Clock = std::chrono::steady_clock;

enum class Fault {
  kill_rank,
  stop_rank,
  term_rank,
  int_launcher,
  term_launcher,
  hup_launcher,
  kill_launcher,
  thread_start,
  stop_at_setup,  ///< mpirun: a rank stops before it joins the job (TILEPIPE_FAULT_STOP_RANK)
  rank_throws,    ///< mpirun: a rank's kernel throws (the test plugin's throw_row)
  threads_fail,   ///< mpirun: every rank's thread starts fail (the shim, through mpirun -x)
  bad_input       ///< mpirun: every rank finds the same bad input
};

/// What the fault does, in words ("kill -9 a rank").
const char* name_of(Fault f);

struct Case {
  std::uint64_t seed = 0;
  Fault fault = Fault::kill_rank;
  bool align = false;
  int ranks = 2;
  int cpus = 1;
  int victim = 0;  ///< the rank to fault (rank faults)
  std::chrono::milliseconds delay{0};
  std::vector<std::string> argv;
  std::string text;
  bool mpirun = false;    ///< launched by mpirun (the launcher is mpirun, the ranks its children)
  std::string vader_dir;  ///< mpirun: Open MPI's shared-memory segments go here (checked empty)
  std::vector<std::string> env;  ///< more environment for tilepipe
  std::string line;  ///< when set: the one line stderr must hold (a regular expression; VPID
                     ///< stands for the pid of the rank faulted)
  std::chrono::seconds limit{10};  ///< the bound on the time from the fault to the exit
  int code = 1;                    ///< with `line`: the exit status
};

/// A case of tilepipe run or align on forked ranks, drawn from `seed`: the command (--nodes 2-4,
/// --cpus 1-2, the schedule, the faces), the rank to fault and the delay.
Case make_case(std::uint64_t seed, Fault fault);

/// Runs one case and checks what follows the fault; returns true when the fault ended the run
/// (false: the run had already finished, a normal success).
bool run_case(const Case& c);

/// The seeds of `count` cases of `fault`, or the one in TILEPIPE_FAULT_SEED (a replay).
std::vector<std::uint64_t> seeds(Fault fault, int count);

/// How many of a suite's cases the fault struck while the run worked.
struct Tally {
  int cases = 0;
  int hit = 0;  ///< the fault ended the run (not a run that had already finished)
};

/// Runs the cases `make` builds from seeds(fault, count), each printed before it runs.
Tally run_cases(Fault fault, int count, Case (*make)(std::uint64_t seed, Fault fault));

}  // namespace tp::test::fault
