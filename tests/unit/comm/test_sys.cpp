// The shm transport's system-call wrappers (libs/comm/src/sys.hpp, internal): opening a peer's
// shared file tells a peer that ended (Errc::peer_lost: an aborting job) from any other failure.
#include <gtest/gtest.h>

#include "sys.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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

}  // namespace
}  // namespace tp::comm::detail
