// The job's voice (job_voice.hpp): one line per job for a fault that several ranks see. The ranks
// of this host are the processes that share our parent (mpirun, Hydra's proxy, slurmstepd); the
// voice is an abstract Unix socket named after that parent, bound by the first rank to speak.
#include <tilepipe/comm/job_voice.hpp>

#include "sys.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <thread>

namespace tp::comm {

namespace {

constexpr std::initializer_list<const char*> rank_variables = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                                               "PMIX_RANK", "SLURM_PROCID"};
// The rank among this host's ranks: Open MPI, MPICH's Hydra, Slurm.
constexpr std::initializer_list<const char*> local_rank_variables = {
    "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"};
// The number of this host's ranks: Open MPI, Hydra.
constexpr std::initializer_list<const char*> local_size_variables = {"OMPI_COMM_WORLD_LOCAL_SIZE",
                                                                     "MPI_LOCALNRANKS"};

int parse_rank(const char* text) noexcept {
  char* end = nullptr;
  const long r = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && r >= 0 && r < (1L << 30) ? static_cast<int>(r) : -1;
}

int own_rank(std::initializer_list<const char*> variables) noexcept {
  for (const char* var : variables) {
    if (const char* text = std::getenv(var)) return parse_rank(text);
  }
  return -1;
}

/// The parent pid of `pid` from /proc/<pid>/stat, or -1 (also for a process that has exited and
/// awaits its reaping: state Z or X).
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
  return state == 'Z' || state == 'X' ? -1 : ppid;
}

/// The first of `variables` in process `pid`'s environment, as a rank, or -1.
int rank_of(int pid, std::initializer_list<const char*> variables) {
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
  for (const char* var : variables) {
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

/// Calls `visit(pid)` for every other live process with our parent.
template <class Visit>
void for_each_sibling(Visit&& visit) {
  const int me = ::getpid();
  const int parent = ::getppid();
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid > 0 && pid != me && parent_of(pid) == parent) visit(pid);
  }
  ::closedir(d);
}

/// Sleeps `length`, counted in slices of at most 100 ms, each at most its nominal length: time
/// this process spends stopped does not count.
void sleep_nominal(std::chrono::milliseconds length) {
  using clock = std::chrono::steady_clock;
  constexpr std::chrono::milliseconds slice(100);
  std::chrono::nanoseconds counted{0};
  while (counted < length) {
    const auto step = std::min<std::chrono::nanoseconds>(slice, length - counted);
    const auto before = clock::now();
    std::this_thread::sleep_for(step);
    counted += std::min<std::chrono::nanoseconds>(clock::now() - before, step);
  }
}

/// True when fewer than this host's ranks live (`live`, this process counted): a rank of the host
/// is gone, so the job is ending (a rank spoke, then exited; or one died, which the launcher
/// reports). Ranks do not leave before the job's end otherwise (MPI_Finalize waits for them all).
bool job_ending(int live) noexcept {
  const int local_size = own_rank(local_size_variables);
  return local_size > 0 && live < local_size;
}

std::atomic<int> voice_fd{-1};

/// Binds the host's voice for this job; true when this process holds it (or no socket could be
/// made: better a second line than none).
bool claim_voice() noexcept {
  if (voice_fd.load() >= 0) return true;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // Abstract (a leading NUL): no file, gone with the last descriptor, i.e. with this process.
  const int n = std::snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "tilepipe-voice-%d-%d",
                              static_cast<int>(::getuid()), static_cast<int>(::getppid()));
  const auto len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + static_cast<std::size_t>(n));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    const bool taken = errno == EADDRINUSE;
    ::close(fd);
    return !taken;
  }
  voice_fd.store(fd);  // held (never closed) until the process ends
  return true;
}

}  // namespace

std::string stopped_job_sibling() {
  std::string out;
  for_each_sibling([&](int pid) {
    if (!out.empty() || !detail::process_stopped(pid)) return;
    const int r = rank_of(pid, rank_variables);
    out = (r >= 0 ? "rank " + std::to_string(r) + " " : std::string("a rank ")) + "(pid " +
          std::to_string(pid) + ")";
  });
  return out;
}

bool take_job_voice(VoiceTurn turn) noexcept {
  if (own_rank(rank_variables) < 0) return true;  // not a rank of a launched job
  try {
    // The turn (in_turn): this rank's local rank less the stopped ranks before it (a stopped rank
    // is stopped for every rank that looks). Ranks that exited count: they spoke, or the launcher
    // reports them. A choice by rank, not by who noticed first.
    const bool by_local = own_rank(local_rank_variables) >= 0;
    const auto& variables = by_local ? local_rank_variables : rank_variables;
    int turn_number = own_rank(variables);
    int live = 1;
    for_each_sibling([&](int pid) {
      ++live;
      if (turn != VoiceTurn::in_turn || !detail::process_stopped(pid)) return;
      const int r = rank_of(pid, variables);
      if (r >= 0 && r < own_rank(variables)) --turn_number;
    });
    // A rank of this host is gone: the job is ending. The voice is held until its speaker dies, so
    // a rank whose own error comes after the speaker ended the job would find it free (every rank
    // failing to start its threads, 2026-11-27); and a rank resumed by the launcher's teardown
    // (SIGCONT, then SIGTERM) must not speak in between.
    if (job_ending(live)) {
      sleep_nominal(std::chrono::seconds(5));
      return false;
    }
    if (turn == VoiceTurn::in_turn) {
      sleep_nominal(std::chrono::milliseconds(2000) * std::max(turn_number, 0));
    }
    if (claim_voice()) return true;
    // Another rank speaks and is about to end the job (which ends this process too).
    sleep_nominal(std::chrono::seconds(5));
    return false;
  } catch (...) {
    return true;
  }
}

}  // namespace tp::comm
