// MpiWatchdog: the progress timeout for MPI_Init, the world's set-up and MPI_Finalize; a stopped
// rank of this host is named from /proc (its parent is ours: mpirun, Hydra's proxy, slurmstepd).
#include "mpi_watchdog.hpp"

#include "../sys.hpp"

#include <tilepipe/support/last_words.hpp>

#include <dirent.h>
#include <fcntl.h>
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

/// The parent pid of `pid` from /proc/<pid>/stat, or -1.
int parent_of(int pid) noexcept {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');
  int ppid = -1;
  char state = 0;
  if (close_paren == nullptr || std::sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) {
    return -1;
  }
  return ppid;
}

/// The job rank in process `pid`'s environment, or -1 (unreadable, none).
int rank_of(int pid) noexcept {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/environ", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::string env;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0 && env.size() < (1U << 20)) {
    env.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  for (const char* var : rank_variables) {
    const std::string key = std::string(var) + "=";
    for (std::size_t at = 0; at < env.size();) {
      const std::size_t end = env.find('\0', at);
      const std::size_t stop = end == std::string::npos ? env.size() : end;
      if (env.compare(at, key.size(), key) == 0) {
        return parse_rank(env.substr(at + key.size(), stop - at - key.size()).c_str());
      }
      at = stop + 1;
    }
  }
  return -1;
}

/// What the ranks of this job on this host (the processes that share our parent) are doing.
struct Siblings {
  std::string stopped;         ///< "rank 1 (pid 4242)": a stopped one, or ""
  bool lower_waiting = false;  ///< one with a lower rank than `rank` runs (it waits too)
};

Siblings look_at_siblings(int rank) {
  Siblings out;
  const int me = ::getpid();
  const int parent = ::getppid();
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0 || pid == me || parent_of(pid) != parent) continue;
    const int r = rank_of(pid);
    if (process_stopped(pid)) {
      if (out.stopped.empty()) {
        out.stopped = (r >= 0 ? "rank " + std::to_string(r) + " " : std::string("a rank ")) +
                      "(pid " + std::to_string(pid) + ")";
      }
    } else if (r >= 0 && rank >= 0 && r < rank) {
      out.lower_waiting = true;
    }
  }
  ::closedir(d);
  return out;
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
  const Siblings siblings = look_at_siblings(rank);
  text += siblings.stopped.empty() ? "a rank has not come (hung, stopped on another host, or lost)"
                                   : siblings.stopped + " is stopped";
  if (siblings.lower_waiting) {
    // A rank of this host with a lower number waits as well and says the same: one line is
    // enough. Its abort ends this process; abort anyway should it not come.
    std::this_thread::sleep_for(std::chrono::seconds(2));
  } else {
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
