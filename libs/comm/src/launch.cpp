// launch_local: one memfd segment, fork per rank, supervise (deaths, interrupts, errors), reap.
#include "engine.hpp"

#include <tilepipe/comm/launch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>

namespace tp::comm {

std::string signal_name(int signal) {
  switch (signal) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGSTOP:
      return "SIGSTOP";
    case SIGTSTP:
      return "SIGTSTP";
    case SIGTTIN:
      return "SIGTTIN";
    case SIGTTOU:
      return "SIGTTOU";
    default:
      return "signal " + std::to_string(signal);
  }
}

namespace {

bool lost_peer(const RankEnd& e) {
  return e.error && (e.error->code == Errc::peer_lost || e.error->code == Errc::timeout);
}

}  // namespace

int LaunchResult::failed_rank() const noexcept {
  int first = -1;
  int first_cause = -1;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankEnd& e = ranks[r];
    if (e.failed_order < 0) continue;
    if (first < 0 || e.failed_order < ranks[static_cast<std::size_t>(first)].failed_order) {
      first = static_cast<int>(r);
    }
    if (!lost_peer(e) &&
        (first_cause < 0 ||
         e.failed_order < ranks[static_cast<std::size_t>(first_cause)].failed_order)) {
      first_cause = static_cast<int>(r);
    }
  }
  return first_cause >= 0 ? first_cause : first;
}

std::optional<Error> LaunchResult::failure() const {
  if (interrupted_by != 0) {
    Error e(Errc::interrupted,
            "interrupted by " + signal_name(interrupted_by) + ": every rank stopped");
    e.signal = interrupted_by;
    return e;
  }
  const int r = failed_rank();
  if (r < 0) return std::nullopt;
  const RankEnd& e = ranks[static_cast<std::size_t>(r)];
  if (e.error) return e.error->on_rank(r);
  if (e.term_signal != 0) {
    return Error::at(r, Errc::peer_lost,
                     "pid " + std::to_string(e.pid) + " was killed by signal " +
                         std::to_string(e.term_signal) + " (" + signal_name(e.term_signal) + ")");
  }
  return Error::at(
      r, Errc::peer_lost,
      "pid " + std::to_string(e.pid) + " exited with status " + std::to_string(e.exit_code));
}

int LaunchResult::status() const noexcept {
  if (interrupted_by != 0) return 128 + interrupted_by;
  const int r = failed_rank();
  if (r >= 0) return ranks[static_cast<std::size_t>(r)].exit_code;
  for (int c : exit_codes) {
    if (c != 0) return c;
  }
  return 0;
}

namespace {

/// One Error on the launcher's pipe: this header, then the tile, the option and the message.
/// A record is written with one write() of at most PIPE_BUF bytes, so records never interleave.
struct WireHeader {
  std::uint32_t bytes;  ///< the whole record
  std::int32_t rank;
  std::int32_t code;
  std::uint32_t tile_count;
  std::uint32_t option_bytes;
  std::uint32_t message_bytes;
};

void send_error(int fd, int rank, const Error& error) {
  const std::size_t tiles = std::min<std::size_t>(error.tile.size(), 8);
  const std::size_t option = std::min<std::size_t>(error.option.size(), 64);
  const std::size_t fixed = sizeof(WireHeader) + tiles * sizeof(std::int64_t) + option;
  const std::size_t message = std::min<std::size_t>(error.message.size(), PIPE_BUF - fixed);
  WireHeader h{static_cast<std::uint32_t>(fixed + message), rank,
               static_cast<std::int32_t>(error.code),       static_cast<std::uint32_t>(tiles),
               static_cast<std::uint32_t>(option),          static_cast<std::uint32_t>(message)};
  std::array<char, PIPE_BUF> buf{};
  char* p = buf.data();
  std::memcpy(p, &h, sizeof(h));
  p += sizeof(h);
  if (tiles > 0) std::memcpy(p, error.tile.data(), tiles * sizeof(std::int64_t));
  p += tiles * sizeof(std::int64_t);
  std::memcpy(p, error.option.data(), option);
  p += option;
  std::memcpy(p, error.message.data(), message);
  const ssize_t n = ::write(fd, buf.data(), h.bytes);
  (void)n;
}

/// Parses the complete records at the front of `text` into `ranks`; keeps a partial tail.
void take_errors(std::string& text, std::vector<RankEnd>& ranks) {
  std::size_t at = 0;
  while (text.size() - at >= sizeof(WireHeader)) {
    WireHeader h{};
    std::memcpy(&h, text.data() + at, sizeof(h));
    if (text.size() - at < h.bytes) break;
    const char* p = text.data() + at + sizeof(h);
    Error e(static_cast<Errc>(h.code), {});
    e.rank = h.rank;
    e.tile.resize(h.tile_count);
    if (h.tile_count > 0) std::memcpy(e.tile.data(), p, h.tile_count * sizeof(std::int64_t));
    p += h.tile_count * sizeof(std::int64_t);
    e.option.assign(p, h.option_bytes);
    p += h.option_bytes;
    e.message.assign(p, h.message_bytes);
    if (h.rank >= 0 && static_cast<std::size_t>(h.rank) < ranks.size()) {
      auto& slot = ranks[static_cast<std::size_t>(h.rank)].error;
      if (!slot) slot = std::move(e);  // the first error a rank raises is its error
    }
    at += h.bytes;
  }
  text.erase(0, at);
}

/// What the launcher changes in its own process while it launches, restored by the destructor.
class SignalScope {
 public:
  SignalScope(bool forward) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGCHLD);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      // A signal the caller ignores (nohup's SIGHUP, a background job's SIGINT) stays ignored.
      if (forward && ::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) {
        sigaddset(&set_, sig);
      }
    }
    // waitpid needs SIGCHLD not ignored (SIG_IGN reaps children automatically).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(SIGCHLD, &dfl, &old_chld_);
    ::pthread_sigmask(SIG_BLOCK, &set_, &old_mask_);
    fd_ = ::signalfd(-1, &set_, SFD_NONBLOCK | SFD_CLOEXEC);
  }
  ~SignalScope() {
    if (fd_ >= 0) {
      drain();
      ::close(fd_);
    }
    ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    ::sigaction(SIGCHLD, &old_chld_, nullptr);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// Undoes the scope in a freshly forked child (before the rank body runs).
  void reset_in_child() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::sigaction(SIGCHLD, &old_chld_, nullptr);
    ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  /// Reads the pending signals; returns the last forwarded one seen (0 if none).
  int drain() noexcept {
    int got = 0;
    signalfd_siginfo info{};
    while (::read(fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
      if (info.ssi_signo != SIGCHLD) got = static_cast<int>(info.ssi_signo);
    }
    return got;
  }

 private:
  sigset_t set_{};
  sigset_t old_mask_{};
  struct sigaction old_chld_ {};
  int fd_ = -1;
};

[[noreturn]] void run_child(int rank, int ranks, const Config& config, detail::Mapping segment,
                            const RankBody& body, int error_fd) {
  int code = 1;
  try {
    std::vector<int> local(static_cast<std::size_t>(ranks));
    for (int i = 0; i < ranks; ++i) local[static_cast<std::size_t>(i)] = i;
    auto engine =
        detail::Engine::create(config, rank, ranks, std::move(segment), std::move(local), nullptr);
    if (!engine) {
      send_error(error_fd, rank, engine.error().on_rank(rank));
      code = engine.error().is_user_error() ? 2 : 1;
    } else {
      World world(std::move(*engine));
      auto result = body(world);
      if (result) {
        code = *result;
      } else {
        send_error(error_fd, rank, result.error().on_rank(rank));
        code = result.error().is_user_error() ? 2 : 1;
      }
    }
  } catch (const std::exception& e) {
    send_error(error_fd, rank, Error::at(rank, Errc::internal, e.what()));
    code = 1;
  } catch (...) {
    send_error(error_fd, rank, Error::at(rank, Errc::internal, "unknown exception"));
    code = 1;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

void kill_all(const std::vector<pid_t>& pids, const std::vector<bool>& alive,
              std::vector<RankEnd>& ends, int sig) {
  for (std::size_t r = 0; r < pids.size(); ++r) {
    if (!alive[r]) continue;
    ends[r].ended_by_launcher = true;
    ::kill(pids[r], sig);
  }
}

}  // namespace

Expected<LaunchResult> launch_local(int ranks, const Config& config, const RankBody& body,
                                    const LaunchOptions& options) {
  if (ranks < 1 || ranks > 256) {
    return Unexpected{Error::about("ranks", Errc::invalid_argument,
                                   std::to_string(ranks) + ": must be in 1..256")};
  }
  TP_TRY(config.validate());
  if (config.transport == TransportKind::mpi) {
    return fail(Errc::invalid_argument,
                "transport mpi needs an MPI launcher (mpirun); the local launcher uses shm");
  }
  const detail::SegmentGeometry geo = detail::geometry_for(config, ranks);
  const std::size_t bytes = detail::page_round(geo.total_bytes());
  auto fd = detail::create_shared_file("tilepipe-comm", bytes);
  if (!fd) return Unexpected{fd.error()};
  auto map = detail::map_shared(*fd, bytes);
  if (!map) return Unexpected{map.error()};
  // The mapping is inherited by fork; the memfd itself is closed before any rank runs, so the
  // memory disappears with the last process that maps it, whatever way it exits.
  *fd = detail::Fd();
  detail::init_segment(map->data(), geo);
  std::fflush(stdout);
  std::fflush(stderr);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    return fail(Errc::system, detail::errno_text("pipe", errno));
  detail::Fd error_read(pipe_fds[0]);
  detail::Fd error_write(pipe_fds[1]);
  // Only the launcher's end is non-blocking: a rank's record write never fails half-way.
  ::fcntl(error_read.get(), F_SETFL, ::fcntl(error_read.get(), F_GETFL) | O_NONBLOCK);

  SignalScope signals(options.forward_signals);
  if (signals.fd() < 0) return fail(Errc::system, detail::errno_text("signalfd", errno));
  const pid_t launcher = ::getpid();
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      for (pid_t p : pids) ::kill(p, SIGKILL);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      return fail(Errc::system, detail::errno_text("fork", err));
    }
    if (pid == 0) {
      // Die with the launcher, whatever way it ends (SIGKILL, the OOM killer); the check after
      // prctl closes the race with a launcher that died before it.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != launcher) ::_exit(1);
      signals.reset_in_child();
      error_read = detail::Fd();
      run_child(r, ranks, config, std::move(*map), body, error_write.get());
    }
    pids.push_back(pid);
  }
  *map = detail::Mapping();
  error_write = detail::Fd();  // the children hold the only write ends now
  if (options.started) options.started();

  LaunchResult result;
  result.ranks.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    result.ranks[static_cast<std::size_t>(r)].pid = pids[static_cast<std::size_t>(r)];
  std::vector<bool> alive(static_cast<std::size_t>(ranks), true);
  std::vector<int> stop_signal(static_cast<std::size_t>(ranks), 0);
  std::vector<std::chrono::steady_clock::time_point> stopped_since(static_cast<std::size_t>(ranks));
  int live = ranks;
  int failures = 0;
  bool stopping = false;
  using clock = std::chrono::steady_clock;
  bool grace_running = false;
  clock::time_point kill_at{};
  std::string pending;
  bool pipe_open = true;
  auto read_pipe = [&] {
    char chunk[4096];
    ssize_t n = 0;
    while ((n = ::read(error_read.get(), chunk, sizeof(chunk))) > 0) {
      pending.append(chunk, static_cast<std::size_t>(n));
    }
    if (n == 0) pipe_open = false;
    take_errors(pending, result.ranks);
  };

  while (live > 0) {
    std::array<pollfd, 2> fds{pollfd{signals.fd(), POLLIN, 0},
                              pollfd{pipe_open ? error_read.get() : -1, POLLIN, 0}};
    int timeout_ms = 100;  // a safety net: every rank is also re-checked without a SIGCHLD
    if (grace_running) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - clock::now());
      timeout_ms = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 100));
    }
    (void)::poll(fds.data(), fds.size(), timeout_ms);
    if (const int sig = signals.drain(); sig != 0 && result.interrupted_by == 0) {
      // Forward the interrupt; ranks that do not stop within the grace get SIGKILL.
      result.interrupted_by = sig;
      kill_all(pids, alive, result.ranks, sig);
      kill_at = clock::now() + options.grace;
      grace_running = true;
    }
    if (pipe_open) read_pipe();
    for (std::size_t r = 0; r < pids.size(); ++r) {
      if (!alive[r]) continue;
      int status = 0;
      pid_t got = 0;
      while (true) {
        got = ::waitpid(pids[r], &status, WNOHANG | WUNTRACED | WCONTINUED);
        if (got < 0 && errno == EINTR) continue;
        if (got > 0 && WIFSTOPPED(status)) {
          stopped_since[r] = clock::now();
          stop_signal[r] = WSTOPSIG(status);
          continue;
        }
        if (got > 0 && WIFCONTINUED(status)) {
          stop_signal[r] = 0;
          continue;
        }
        break;
      }
      if (got == 0) continue;
      alive[r] = false;
      --live;
      RankEnd& e = result.ranks[r];
      if (got < 0) {
        e.exit_code = 1;  // ECHILD: reaped elsewhere; its end is unknown
      } else if (WIFEXITED(status)) {
        e.exit_code = WEXITSTATUS(status);
      } else if (WIFSIGNALED(status)) {
        e.term_signal = WTERMSIG(status);
        e.exit_code = 128 + e.term_signal;
      }
      if (e.ended_by_launcher || e.exit_code == 0) continue;
      e.failed_order = failures++;
      if (options.stop_on_failure && !stopping) {
        stopping = true;
        kill_all(pids, alive, result.ranks, SIGKILL);
      }
    }
    // A rank stopped (SIGSTOP, SIGTSTP) for longer than the progress timeout while the launcher
    // runs ends the run like a hung rank would (a Ctrl-Z stops the launcher too, and the
    // SIGCONT of `fg` reaches every process at once: no false alarm).
    for (std::size_t r = 0; r < pids.size(); ++r) {
      if (!alive[r] || stop_signal[r] == 0 || stopping || result.interrupted_by != 0 ||
          config.progress_timeout.count() <= 0 ||
          clock::now() - stopped_since[r] <= config.progress_timeout) {
        continue;
      }
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g",
                    std::chrono::duration<double>(config.progress_timeout).count());
      RankEnd& e = result.ranks[r];
      e.error = Error::at(static_cast<int>(r), Errc::timeout,
                          "pid " + std::to_string(pids[r]) + " was stopped by " +
                              signal_name(stop_signal[r]) + " for more than " + seconds +
                              " s (progress timeout)");
      e.failed_order = failures++;
      stopping = true;
      kill_all(pids, alive, result.ranks, SIGKILL);
    }
    if (grace_running && clock::now() >= kill_at && live > 0) {
      kill_all(pids, alive, result.ranks, SIGKILL);
      grace_running = false;
    }
  }
  // Every child has exited: the pipe holds all it will ever hold.
  read_pipe();
  for (const RankEnd& e : result.ranks) {
    result.exit_codes.push_back(e.exit_code);
    result.term_signals.push_back(e.term_signal);
  }
  return result;
}

}  // namespace tp::comm
