// launch_local: one memfd segment, fork per rank, wait for all; the rank body runs in the child.
#include "engine.hpp"

#include <tilepipe/comm/launch.hpp>

#include <sys/wait.h>
#include <unistd.h>

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

[[noreturn]] void run_child(int rank, int ranks, const Config& config, detail::Mapping segment,
                            const std::function<int(World&)>& body) {
  int code = 1;
  try {
    std::vector<int> local(static_cast<std::size_t>(ranks));
    for (int i = 0; i < ranks; ++i) local[static_cast<std::size_t>(i)] = i;
    auto engine =
        detail::Engine::create(config, rank, ranks, std::move(segment), std::move(local), nullptr);
    if (!engine) {
      std::fprintf(stderr, "tilepipe: error: %s\n", engine.error().message.c_str());
    } else {
      World world(std::move(*engine));
      code = body(world);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilepipe: error: [rank %d] %s\n", rank, e.what());
    code = 1;
  } catch (...) {
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
    return fail(Errc::invalid_argument, "--ranks " + std::to_string(ranks) + ": must be in 1..256");
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

  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      for (pid_t p : pids) ::kill(p, SIGKILL);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      return fail(Errc::system, detail::errno_text("fork", err));
    }
    if (pid == 0) run_child(r, ranks, config, std::move(*map), body);
    pids.push_back(pid);
  }
  *map = detail::Mapping();

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
  return result;
}

}  // namespace tp::comm
