// The fault suites' shared case runner (fault_case.hpp): builds the forked-rank cases, spawns
// tilepipe, strikes, and checks everything that must follow.
#include "fault_case.hpp"

#include "run_process.hpp"

#include <nlohmann/json.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

extern char** environ;

namespace tp::test::fault {

namespace {

// The FASTA files this test process wrote, removed when it exits.
struct TempFiles {
  std::set<std::string> paths;
  TempFiles() = default;
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;
  ~TempFiles() {
    for (const std::string& p : paths) std::remove(p.c_str());
  }
};

std::string fasta_path(const char* name, std::size_t length, std::uint64_t seed) {
  // One file per test process: ctest runs the fault tests side by side.
  static TempFiles written;
  const std::string path =
      ::testing::TempDir() + "tp_fault_" + std::to_string(::getpid()) + "_" + name + ".fa";
  written.paths.insert(path);
  std::mt19937_64 rng(seed);
  std::string s = std::string(">") + name + "\n";
  for (std::size_t i = 0; i < length; ++i) s += "ACGT"[rng() % 4];
  std::ofstream(path) << s << "\n";
  return path;
}

/// /proc/sys/kernel/pid_max: pids wrap around to low numbers past it.
pid_t pid_limit() {
  static const pid_t limit = [] {
    std::ifstream in("/proc/sys/kernel/pid_max");
    pid_t n = 0;
    return in >> n && n > 0 ? n : 4194304;
  }();
  return limit;
}

/// The processes whose parent is `parent` (from /proc/<pid>/stat), in the order of their forks.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    // read(2), not an ifstream: a process that ends meanwhile makes libstdc++'s filebuf throw
    // ("underflow error reading the file: No such process").
    std::string stat;
    const int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY);
    if (fd < 0) continue;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n <= 0) continue;
    stat.assign(buf, static_cast<std::size_t>(n));
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 4 >= stat.size()) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + paren + 2, "%c %d", &state, &ppid) == 2 && ppid == parent) {
      out.push_back(pid);
    }
  }
  ::closedir(d);
  // In the order they were forked: by pid, except where the pids wrapped around pid_max (32768
  // on this machine) between two forks, whose later pids then come first: the sequence starts
  // after the widest gap when that gap is more than half the pid space.
  std::sort(out.begin(), out.end());
  if (out.size() > 1) {
    std::size_t after_gap = 0;
    pid_t widest = out.front() + (pid_limit() - out.back());
    for (std::size_t i = 1; i < out.size(); ++i) {
      if (out[i] - out[i - 1] > widest) {
        widest = out[i] - out[i - 1];
        after_gap = i;
      }
    }
    if (widest > pid_limit() / 2) {
      std::rotate(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(after_gap), out.end());
    }
  }
  return out;
}

/// /dev/shm, less Open MPI's own segments (`vader_segment.*` of its shared-memory transport,
/// `open_mpi.NNNN` of its posix shmem component): MPI jobs of tests running beside this one
/// create and remove them, and what a killed rank's Open MPI leaves is checked in the vader
/// directory below; tilepipe's own shared files are never among them.
std::set<std::string> dev_shm_entries() {
  std::set<std::string> out;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* e = ::readdir(d)) {
      const std::string_view name(e->d_name);
      if (name.rfind("vader_segment.", 0) != 0 && name.rfind("open_mpi.", 0) != 0) {
        out.insert(e->d_name);
      }
    }
    ::closedir(d);
  }
  return out;
}

/// A spawned tilepipe with its stdout and stderr collected as it runs.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
    int out_pipe[2];
    int err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC | O_NONBLOCK) != 0 ||
        ::pipe2(err_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
      throw std::runtime_error("pipe2");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    // Default dispositions and an empty mask, whatever ctest's shell left (a background job's
    // SIGINT is ignored, and an ignored signal is not forwarded).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigset_t defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    for (const auto& e : extra_env) env.push_back(e);
    std::vector<char*> args;
    std::vector<char*> envp;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    args.push_back(nullptr);
    envp.push_back(nullptr);
    const int rc = posix_spawn(&pid_, args[0], &actions, &attr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    fds_[0] = out_pipe[0];
    fds_[1] = err_pipe[0];
    if (rc != 0) throw std::runtime_error("posix_spawn " + argv[0]);
  }
  ~Child() {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  /// Reads what is there; true once the process is reaped and both pipes are at their end.
  bool poll_once(int timeout_ms) {
    pollfd p[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
    (void)::poll(p, 2, timeout_ms);
    for (int i = 0; i < 2; ++i) {
      if (fds_[i] < 0) continue;
      char buf[4096];
      ssize_t n = 0;
      while ((n = ::read(fds_[i], buf, sizeof(buf))) > 0) {
        (i == 0 ? out : err).append(buf, static_cast<std::size_t>(n));
      }
      if (n == 0) {
        ::close(fds_[i]);
        fds_[i] = -1;
      }
    }
    if (!reaped) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped = true;
        ended = Clock::now();
        signaled = WIFSIGNALED(status);
        code = signaled ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
      }
    }
    return reaped && fds_[0] < 0 && fds_[1] < 0;
  }
  /// Collects output until the process ends (true) or `limit` passes (false; it is then killed).
  bool wait_end(Clock::time_point limit) {
    while (!poll_once(5)) {
      if (Clock::now() > limit) {
        ::kill(pid_, SIGKILL);
        while (!poll_once(5)) {
        }
        return false;
      }
    }
    return true;
  }

  std::string out;
  std::string err;
  bool reaped = false;
  bool signaled = false;
  int code = -1;
  Clock::time_point ended{};

 private:
  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
};

/// Complete output: the one JSON object the run prints at its end.
bool complete_output(const std::string& out, bool align) {
  const auto j = nlohmann::json::parse(out, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains(align ? "score" : "checksum");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The signal a fault sends and to whom: a rank or the launcher (number 0: the fault is no
/// signal).
struct Signal {
  int number = 0;
  bool at_rank = false;
};

Signal signal_of(Fault f) {
  switch (f) {
    case Fault::kill_rank:
      return {SIGKILL, true};
    case Fault::stop_rank:
      return {SIGSTOP, true};
    case Fault::term_rank:
      return {SIGTERM, true};
    case Fault::int_launcher:
      return {SIGINT, false};
    case Fault::term_launcher:
      return {SIGTERM, false};
    case Fault::hup_launcher:
      return {SIGHUP, false};
    case Fault::kill_launcher:
      return {SIGKILL, false};
    case Fault::thread_start:
    case Fault::stop_at_setup:
    case Fault::rank_throws:
    case Fault::threads_fail:
    case Fault::bad_input:
      return {};
  }
  return {};
}

}  // namespace

const char* name_of(Fault f) {
  switch (f) {
    case Fault::kill_rank:
      return "kill -9 a rank";
    case Fault::stop_rank:
      return "SIGSTOP a rank";
    case Fault::term_rank:
      return "SIGTERM a rank";
    case Fault::int_launcher:
      return "SIGINT the launcher";
    case Fault::term_launcher:
      return "SIGTERM the launcher";
    case Fault::hup_launcher:
      return "SIGHUP the launcher";
    case Fault::kill_launcher:
      return "kill -9 the launcher";
    case Fault::thread_start:
      return "thread starts fail";
    case Fault::stop_at_setup:
      return "SIGSTOP of a rank before it joins";
    case Fault::rank_throws:
      return "a rank's kernel throws";
    case Fault::threads_fail:
      return "thread starts fail in every rank";
    case Fault::bad_input:
      return "bad input that every rank finds";
  }
  return "?";
}

Case make_case(std::uint64_t seed, Fault fault) {
  std::mt19937_64 rng(seed);
  Case c;
  c.seed = seed;
  c.fault = fault;
  c.align = rng() % 2 == 0;
  c.ranks = 2 + static_cast<int>(rng() % 3);
  c.cpus = fault == Fault::thread_start ? 2 : 1 + static_cast<int>(rng() % 2);
  c.victim = static_cast<int>(rng() % static_cast<std::uint64_t>(c.ranks));
  c.delay = std::chrono::milliseconds(rng() % 80);
  const char* schedule = rng() % 2 == 0 ? "blocking" : "overlap";
  const char* faces = rng() % 2 == 0 ? "copy" : "direct";
  // A run lasts 0.1-0.4 s on a quiet machine (release), so most faults land while the ranks work.
  if (c.align) {
    c.argv = {TILEPIPE_EXE,
              "align",
              fasta_path("query", 10000, 1),
              fasta_path("target", 300000, 2),
              "--matrix",
              "ednafull",
              "--schedule",
              schedule};
  } else {
    c.argv = {TILEPIPE_EXE, "run", "--kernel",   "wave2d", "--size",  "128x262144",
              "--tile",     "16",  "--schedule", schedule, "--faces", faces};
  }
  // The progress timeout only where a rank is stopped: elsewhere a rank slowed by the sanitizer
  // and a loaded machine must not be taken for a hung one.
  std::vector<std::string> common = {
      "--nodes", std::to_string(c.ranks), "--cpus", std::to_string(c.cpus), "--sync", "block",
      "--json"};
  if (fault == Fault::stop_rank) {
    common.insert(common.end(), {"--progress-timeout", "0.5"});
  }
  c.argv.insert(c.argv.end(), common.begin(), common.end());
  c.text = "seed " + std::to_string(seed) + ": " + name_of(fault) + " (rank " +
           std::to_string(c.victim) + ") after " + std::to_string(c.delay.count()) + " ms of";
  for (std::size_t i = 1; i < c.argv.size(); ++i) c.text += " " + c.argv[i];
  return c;
}

bool run_case(const Case& c) {
  SCOPED_TRACE(c.text);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);  // orphaned ranks come to us: we see any that survive
  if (c.mpirun) ::mkdir(c.vader_dir.c_str(), 0700);
  const auto shm_before = dev_shm_entries();
  std::vector<std::string> env;
  if (c.mpirun && TILEPIPE_ASAN) env.emplace_back("ASAN_OPTIONS=detect_leaks=0");
  if (c.fault == Fault::thread_start) {
    env = {std::string("LD_PRELOAD=") + TILEPIPE_FAULT_SHIM, "TILEPIPE_FAULT_THREADS=0"};
    if (TILEPIPE_ASAN) env.emplace_back("ASAN_OPTIONS=verify_asan_link_order=0");
  }
  env.insert(env.end(), c.env.begin(), c.env.end());
  Child child(c.argv, env);
  const auto started = Clock::now();
  Clock::time_point faulted = started;
  pid_t victim = 0;
  const Signal signal = signal_of(c.fault);
  bool delivered = false;
  if (signal.number != 0) {
    // Once every rank is up, wait the case's delay, then strike.
    std::vector<pid_t> ranks;
    while (!child.reaped && Clock::now() - started < std::chrono::seconds(10)) {
      ranks = children_of(child.pid());
      if (static_cast<int>(ranks.size()) == c.ranks) break;
      child.poll_once(1);
    }
    const auto strike = Clock::now() + c.delay;
    while (!child.reaped && Clock::now() < strike) child.poll_once(1);
    if (!child.reaped && static_cast<int>(ranks.size()) == c.ranks) {
      victim = signal.at_rank ? ranks[static_cast<std::size_t>(c.victim)] : child.pid();
      faulted = Clock::now();
      delivered = ::kill(victim, signal.number) == 0;
    }
  }
  const bool ended = child.wait_end(faulted + c.limit);
  EXPECT_TRUE(ended) << "no exit within " << c.limit.count() << " s of the fault (a hang)";
  const double exit_s = std::chrono::duration<double>(child.ended - faulted).count();
  EXPECT_LT(exit_s, static_cast<double>(c.limit.count()));

  // No process outlives the launcher (orphans are ours now; PR_SET_PDEATHSIG ends them).
  const auto reap_limit = Clock::now() + std::chrono::seconds(3);
  std::vector<pid_t> orphans;
  while (true) {
    int status = 0;
    const pid_t p = ::waitpid(-1, &status, WNOHANG);
    if (p < 0) break;  // ECHILD: nothing left
    if (p > 0) continue;
    if (Clock::now() > reap_limit) {
      orphans = children_of(::getpid());
      for (pid_t o : orphans) ::kill(o, SIGKILL);
      while (::waitpid(-1, &status, 0) > 0) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(orphans.empty()) << orphans.size() << " process(es) outlived the launcher";
  EXPECT_EQ(dev_shm_entries(), shm_before) << "something was left in /dev/shm";
  if (c.mpirun) {
    std::vector<std::string> left;
    if (DIR* d = ::opendir(c.vader_dir.c_str())) {
      while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] != '.') left.emplace_back(e->d_name);
      }
      ::closedir(d);
    }
    // mpirun killed outright cannot remove its ranks' segments (Open MPI's own files, which its
    // ranks' peers map lazily, by name, so no rank may remove them early; docs/mpi.md).
    if (c.fault != Fault::kill_launcher) {
      EXPECT_TRUE(left.empty()) << left.size() << " Open MPI segment(s) left, e.g. "
                                << left.front();
    }
    for (const auto& f : left) ::unlink((c.vader_dir + "/" + f).c_str());
    ::rmdir(c.vader_dir.c_str());
  }

  const auto err = lines_of(child.err);
  const bool complete = complete_output(child.out, c.align);
  // A fault that came after the run's end (or to a rank that had exited): a normal success.
  if (child.code == 0 && !child.signaled) {
    EXPECT_TRUE(err.empty()) << child.err;
    EXPECT_TRUE(complete) << "exit 0 with incomplete output: " << child.out;
    EXPECT_NE(c.fault, Fault::thread_start) << "no thread may start, yet the run succeeded";
    EXPECT_TRUE(c.line.empty()) << "the fault cannot come too late, yet the run succeeded";
    return false;
  }
  if (c.mpirun) {
    // mpirun ends the job (137/143 for a rank killed by SIGKILL/SIGTERM, 1 otherwise); stderr
    // holds at most one line, tilepipe's, and stdout nothing or the whole result.
    EXPECT_TRUE(delivered || signal.number == 0);
    if (c.fault == Fault::kill_launcher) {
      // mpirun killed outright: the ranks die with it (no orphan, checked above), nobody speaks.
      EXPECT_TRUE(child.signaled && child.code == 128 + SIGKILL) << child.code;
      EXPECT_TRUE(child.err.empty()) << child.err;
      EXPECT_TRUE(child.out.empty() || complete) << "partial output: " << child.out;
      return true;
    }
    EXPECT_FALSE(child.signaled) << "mpirun itself died of signal " << child.code - 128;
    // Open MPI's own libraries may complain as the job is torn down: its event library ("[warn]
    // Epoll MOD(1) on fd 29 failed ... Bad file descriptor", seen under ASan) and PMIx ("[vm:08826]
    // PMIX ERROR: ERROR in file .../gds_ds21_lock_pthread.c at line 99", after a kill -9 under
    // ASan in CI, 2026-11-27): mpirun's and its libraries' lines, not tilepipe's.
    static const std::regex pmix_noise(R"(^\[[^\]]+:\d+\] PMIX ERROR: .*)");
    std::vector<std::string> ours;
    for (const auto& line : err) {
      if (line.rfind("[warn] Epoll ", 0) != 0 && !std::regex_match(line, pmix_noise)) {
        ours.push_back(line);
      }
    }
    EXPECT_LE(ours.size(), 1U) << child.err;
    if (!ours.empty()) {
      EXPECT_EQ(ours[0].rfind("tilepipe: error: ", 0), 0U) << ours[0];
    }
    if (!c.line.empty()) {
      // The rank's own line, once, before MPI_Abort ended the job.
      EXPECT_EQ(child.code, c.code);
      EXPECT_EQ(ours.size(), 1U) << child.err;
      if (ours.size() == 1U) {
        std::string line = c.line;
        if (const auto at = line.find("VPID"); at != std::string::npos) {
          line.replace(at, 4, std::to_string(victim));
        }
        EXPECT_TRUE(std::regex_match(ours[0], std::regex(line))) << ours[0];
      }
    }
    EXPECT_TRUE(child.out.empty() || complete) << "partial output: " << child.out;
    return true;
  }
  const std::string vpid = std::to_string(victim);
  switch (c.fault) {
    case Fault::kill_rank:
    case Fault::term_rank: {
      EXPECT_TRUE(delivered);
      EXPECT_EQ(child.code, 1);
      EXPECT_FALSE(child.signaled);
      if (err.size() != 1U) {
        ADD_FAILURE() << "not one line on stderr: " << child.err;
        return true;
      }
      const std::string what =
          c.fault == Fault::kill_rank ? "signal 9 (SIGKILL)" : "signal 15 (SIGTERM)";
      EXPECT_EQ(err[0], "tilepipe: error: [rank " + std::to_string(c.victim) + "] pid " + vpid +
                            " was killed by " + what);
      EXPECT_TRUE(child.out.empty()) << "partial output: " << child.out;
      break;
    }
    case Fault::stop_rank: {
      EXPECT_TRUE(delivered);
      EXPECT_EQ(child.code, 1);
      EXPECT_FALSE(child.signaled);
      if (err.size() != 1U) {
        ADD_FAILURE() << "not one line on stderr: " << child.err;
        return true;
      }
      const std::string by_launcher = "tilepipe: error: [rank " + std::to_string(c.victim) +
                                      "] pid " + vpid +
                                      " was stopped by SIGSTOP for more than 0.5 s (progress "
                                      "timeout)";
      const bool by_watchdog =
          err[0].rfind("tilepipe: error: [rank ", 0) == 0 &&
          contains(err[0], "for 0.5 s (progress timeout): rank " + std::to_string(c.victim) +
                               " (pid " + vpid + ") is stopped");
      EXPECT_TRUE(err[0] == by_launcher || by_watchdog) << err[0];
      EXPECT_TRUE(child.out.empty()) << "partial output: " << child.out;
      break;
    }
    case Fault::int_launcher:
    case Fault::term_launcher:
    case Fault::hup_launcher:
    case Fault::kill_launcher: {
      EXPECT_TRUE(delivered);
      EXPECT_EQ(child.code, 128 + signal.number);
      if (child.signaled) {
        // Killed outright (SIGKILL, or the signal came before or after the launch): no line.
        EXPECT_TRUE(err.empty()) << child.err;
        EXPECT_TRUE(child.out.empty() || complete) << "partial output: " << child.out;
      } else {
        if (err.size() != 1U) {
          ADD_FAILURE() << "not one line on stderr: " << child.err;
          return true;
        }
        EXPECT_EQ(err[0], std::string("tilepipe: error: interrupted by ") +
                              (signal.number == SIGINT    ? "SIGINT"
                               : signal.number == SIGTERM ? "SIGTERM"
                                                          : "SIGHUP") +
                              ": every rank stopped");
        EXPECT_TRUE(child.out.empty()) << "partial output: " << child.out;
      }
      break;
    }
    case Fault::thread_start: {
      EXPECT_EQ(child.code, 1);
      EXPECT_FALSE(child.signaled);
      if (err.size() != 1U) {
        ADD_FAILURE() << "not one line on stderr: " << child.err;
        return true;
      }
      EXPECT_EQ(err[0].rfind("tilepipe: error: [rank ", 0), 0U) << err[0];
      EXPECT_TRUE(contains(err[0], "] cannot start thread 1 of ")) << err[0];
      EXPECT_TRUE(contains(err[0], ": Resource temporarily unavailable")) << err[0];
      EXPECT_TRUE(child.out.empty()) << "partial output: " << child.out;
      break;
    }
    case Fault::stop_at_setup:
    case Fault::rank_throws:
    case Fault::threads_fail:
    case Fault::bad_input:
      ADD_FAILURE() << "an mpirun-only fault";
      break;
  }
  return true;
}

Tally run_cases(Fault fault, int count, Case (*make)(std::uint64_t seed, Fault fault)) {
  Tally t;
  for (const std::uint64_t seed : seeds(fault, count)) {
    const Case c = make(seed, fault);
    std::printf("fault case %s\n", c.text.c_str());
    std::fflush(stdout);
    ++t.cases;
    if (run_case(c)) ++t.hit;
  }
  return t;
}

std::vector<std::uint64_t> seeds(Fault fault, int count) {
  if (const char* s = std::getenv("TILEPIPE_FAULT_SEED")) return {std::strtoull(s, nullptr, 10)};
  std::vector<std::uint64_t> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(0xFA17ULL * 1000 + static_cast<std::uint64_t>(fault) * 100 +
                  static_cast<std::uint64_t>(i));
  }
  return out;
}

}  // namespace tp::test::fault
