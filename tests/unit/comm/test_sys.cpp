// The shm transport's system-call wrappers (libs/comm/src/sys.hpp, internal): opening a peer's
// shared file tells a peer that ended (Errc::peer_lost: an aborting job) from any other failure.
#include <gtest/gtest.h>

#include "sys.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace tp::comm::detail {
namespace {

/// A child that creates a memfd, writes its number into `pipe_fds[1]`, then waits for a byte on
/// `hold[0]` before it exits.
pid_t child_with_memfd(int pipe_fds[2], int hold[2]) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto fd = create_shared_file("test-sys", 4096);
    const int n = fd ? fd->get() : -1;
    (void)!::write(pipe_fds[1], &n, sizeof n);
    char c = 0;
    (void)!::read(hold[0], &c, 1);
    ::_exit(0);
  }
  return pid;
}

TEST(Sys, opening_the_file_of_a_peer_that_ended_is_a_lost_peer) {
  int pipe_fds[2], hold[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::pipe(hold), 0);
  const pid_t pid = child_with_memfd(pipe_fds, hold);
  ASSERT_GT(pid, 0);
  int fd = -1;
  ASSERT_EQ(::read(pipe_fds[0], &fd, sizeof fd), static_cast<ssize_t>(sizeof fd));
  ASSERT_GE(fd, 0);
  // Alive: the file opens.
  EXPECT_TRUE(open_peer_file(pid, fd).has_value());
  EXPECT_FALSE(process_ended(pid));
  // A number that is no file of a live process: a plain system error.
  auto none = open_peer_file(pid, 999);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, Errc::system);
  // Ended but not reaped (a zombie: its files are closed), then reaped: a lost peer.
  (void)!::write(hold[1], "x", 1);
  for (int i = 0; i < 500 && !process_ended(pid); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(process_ended(pid));
  auto zombie = open_peer_file(pid, fd);
  ASSERT_FALSE(zombie);
  EXPECT_EQ(zombie.error().code, Errc::peer_lost) << zombie.error().message;
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  auto gone = open_peer_file(pid, fd);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, Errc::peer_lost) << gone.error().message;
  for (int f : {pipe_fds[0], pipe_fds[1], hold[0], hold[1]}) ::close(f);
}

/// The state letter of /proc/<pid>/stat ('?' when unreadable).
char state_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

TEST(Sys, a_process_counts_as_stopped_while_its_sigstop_is_pending_and_once_taken) {
  // A child that vforks: until its vfork child ends it waits in the kernel ('D'), where a SIGSTOP
  // stays pending for the process; then it takes the stop ('T'). The stop the rank watchdog looks
  // for may be under way like this when it looks (engine_wait.cpp).
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // vfork's semantics through clone, the inner child on a stack of its own, raw system calls
    // only (the sanitizers turn vfork into fork).
    static char stack[64 * 1024];
    const auto inner = [](void* arg) -> int {
      const int fd = *static_cast<int*>(arg);
      const auto self = static_cast<pid_t>(::syscall(SYS_getpid));
      (void)!::syscall(SYS_write, fd, &self, sizeof self);
      ::syscall(SYS_pause);
      ::syscall(SYS_exit, 0);
      return 0;
    };
    (void)!::clone(inner, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &pipe_fds[1]);
    while (true) ::pause();
  }
  pid_t inner = 0;
  ASSERT_EQ(::read(pipe_fds[0], &inner, sizeof inner), static_cast<ssize_t>(sizeof inner));
  for (int i = 0; i < 500 && state_of(pid) != 'D'; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(state_of(pid), 'D');
  EXPECT_FALSE(process_stopped(pid));
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(state_of(pid), 'D');  // the stop is pending, not taken
  EXPECT_TRUE(process_stopped(pid));
  ASSERT_EQ(::kill(inner, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, WUNTRACED), pid);
  ASSERT_TRUE(WIFSTOPPED(status));
  EXPECT_EQ(state_of(pid), 'T');
  EXPECT_TRUE(process_stopped(pid));
  ASSERT_EQ(::kill(pid, SIGCONT), 0);
  for (int i = 0; i < 500 && state_of(pid) == 'T'; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_FALSE(process_stopped(pid));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  for (int f : pipe_fds) ::close(f);
}

}  // namespace
}  // namespace tp::comm::detail
