// MpiWatchdog: the progress timeout for MPI_Init and the world's set-up; a stopped rank of this
// host is named from /proc (its parent is ours: mpirun, Hydra's proxy, slurmstepd).
#include "mpi_watchdog.hpp"

#include <tilepipe/comm/job_voice.hpp>
#include <tilepipe/support/last_words.hpp>

#include <unistd.h>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

namespace tp::comm::detail {

namespace {

constexpr const char* rank_variables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                          "SLURM_PROCID"};

int parse_rank(const char* text) noexcept {
  char* end = nullptr;
  const long r = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && r >= 0 && r < (1L << 30) ? static_cast<int>(r) : -1;
}

}  // namespace

int launcher_rank() noexcept {
  for (const char* var : rank_variables) {
    if (const char* text = std::getenv(var)) return parse_rank(text);
  }
  return -1;
}

MpiWatchdog::MpiWatchdog(std::chrono::milliseconds timeout, const char* phase)
    : timeout_(timeout), phase_(phase) {
  if (timeout_.count() <= 0) return;
  try {
    thread_ = std::thread([this] {
      // Counted in slices of at most 100 ms, each at most its nominal length: time this process
      // spent stopped itself (SIGSTOP, then mpirun's SIGCONT before its SIGTERM) is no peer's
      // silence, and must not fire the watchdog the moment the process resumes.
      using clock = std::chrono::steady_clock;
      constexpr std::chrono::milliseconds slice(100);
      std::chrono::nanoseconds counted{0};
      std::unique_lock lock(mu_);
      while (counted < timeout_) {
        const auto step = std::min<std::chrono::nanoseconds>(slice, timeout_ - counted);
        const auto before = clock::now();
        if (cv_.wait_for(lock, step, [this] { return done_; })) return;
        counted += std::min<std::chrono::nanoseconds>(clock::now() - before, step);
      }
      expire();
    });
  } catch (const std::system_error& e) {
    why_not_ = e.code().message();
  }
}

MpiWatchdog::~MpiWatchdog() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void MpiWatchdog::expire() {
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", std::chrono::duration<double>(timeout_).count());
  std::string text =
      std::string("no progress in ") + phase_ + " for " + seconds + " s (progress timeout): ";
  const int rank = launcher_rank();
  const std::string stopped = stopped_job_sibling();
  text += stopped.empty() ? "a rank has not come (hung, stopped on another host, or lost)"
                          : stopped + " is stopped";
  // Every waiting rank of the host expires about now: the lowest running one speaks, the others
  // stay silent (its abort ends them), whatever the order in which their timeouts fired.
  if (take_job_voice(VoiceTurn::in_turn)) {
    say_last_words(Error::at(rank, Errc::timeout, std::move(text)));
  }
  ::alarm(10);  // the backstop: SIGALRM ends this process should the abort below hang
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized != 0 && finalized == 0) MPI_Abort(MPI_COMM_WORLD, 1);
  ::_exit(1);
}

}  // namespace tp::comm::detail
