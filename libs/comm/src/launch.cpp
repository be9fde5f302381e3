// launch_local: one memfd segment, fork per rank, wait for all; the rank body runs in the child.
#include "engine.hpp"

#include <tilepipe/comm/launch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include <cerrno>
#include <cstdio>
#include <exception>

namespace tp::comm {

int LaunchResult::status() const noexcept {
  for (int c : exit_codes) {
    if (c != 0) return c;
  }
  return 0;
}

namespace {

/// Writes one line to the launcher's error pipe (a single write: lines never interleave).
void report(int fd, const std::string& line) {
  const std::string text = line + "\n";
  const ssize_t n = ::write(fd, text.data(), std::min<std::size_t>(text.size(), PIPE_BUF));
  (void)n;
}

[[noreturn]] void run_child(int rank, int ranks, const Config& config, detail::Mapping segment,
                            const std::function<int(World&)>& body, int error_fd) {
  int code = 1;
  try {
    std::vector<int> local(static_cast<std::size_t>(ranks));
    for (int i = 0; i < ranks; ++i) local[static_cast<std::size_t>(i)] = i;
    auto engine =
        detail::Engine::create(config, rank, ranks, std::move(segment), std::move(local), nullptr);
    if (!engine) {
      report(error_fd, engine.error().message);
    } else {
      World world(std::move(*engine));
      code = body(world);
    }
  } catch (const std::exception& e) {
    report(error_fd, "[rank " + std::to_string(rank) + "] " + e.what());
    code = 1;
  } catch (...) {
    report(error_fd, "[rank " + std::to_string(rank) + "] unknown exception");
    code = 1;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

}  // namespace

Expected<LaunchResult> launch_local(int ranks, const Config& config,
                                    const std::function<int(World&)>& body) {
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
      error_read = detail::Fd();
      run_child(r, ranks, config, std::move(*map), body, error_write.get());
    }
    pids.push_back(pid);
  }
  *map = detail::Mapping();
  error_write = detail::Fd();  // the children hold the only write ends now

  LaunchResult result;
  result.exit_codes.assign(static_cast<std::size_t>(ranks), 0);
  result.term_signals.assign(static_cast<std::size_t>(ranks), 0);
  for (int r = 0; r < ranks; ++r) {
    int status = 0;
    while (::waitpid(pids[static_cast<std::size_t>(r)], &status, 0) < 0) {
      if (errno != EINTR) return fail(Errc::system, detail::errno_text("waitpid", errno));
    }
    if (WIFEXITED(status)) {
      result.exit_codes[static_cast<std::size_t>(r)] = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      result.term_signals[static_cast<std::size_t>(r)] = WTERMSIG(status);
      result.exit_codes[static_cast<std::size_t>(r)] = 128 + WTERMSIG(status);
    }
  }
  // Every child has exited, so the pipe holds all it will ever hold (lines < PIPE_BUF each).
  std::string text;
  char chunk[4096];
  ssize_t n = 0;
  while ((n = ::read(error_read.get(), chunk, sizeof(chunk))) > 0) {
    text.append(chunk, static_cast<std::size_t>(n));
  }
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    result.errors.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return result;
}

}  // namespace tp::comm
