// System-call wrappers for the shm transport (memfd, mmap, futex, pidfd, process_vm_readv).
#include "sys.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace tp::comm::detail {

namespace {
/// How long open_peer_file waits for a peer whose files are gone to end, in milliseconds.
constexpr int peer_exit_wait_ms = 200;
}  // namespace

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    if (base_ != nullptr) ::munmap(base_, bytes_);
    base_ = o.base_;
    bytes_ = o.bytes_;
    o.base_ = nullptr;
  }
  return *this;
}

Mapping::~Mapping() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string errno_text(std::string_view call, int err) {
  return std::string(call) + ": " + std::strerror(err);
}

std::size_t page_round(std::size_t bytes) noexcept {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

Expected<Fd> create_shared_file(std::string_view name, std::size_t bytes) {
  const std::string n(name);
  Fd fd(::memfd_create(n.c_str(), MFD_CLOEXEC));
  if (fd.get() < 0) return fail(Errc::system, errno_text("memfd_create", errno));
  if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    return fail(Errc::system,
                errno_text("ftruncate(memfd, " + std::to_string(bytes) + " bytes)", errno));
  }
  return fd;
}

Expected<Fd> open_peer_file(int pid, int fd) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  Fd out(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (out.get() < 0) {
    const int err = errno;
    // A peer that ended (an aborting job) closed its files: the job's end, not a fault here.
    // An exiting process closes its files (ENOENT, or ENXIO for a shared memory file, seen under
    // mpirun) before it becomes a zombie: it gets a moment to end.
    Errc code = Errc::system;
    if (err == ENOENT || err == ENXIO) {
      for (int i = 0; i < peer_exit_wait_ms && !process_ended(pid); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (process_ended(pid)) code = Errc::peer_lost;
    }
    return fail(code, errno_text("open(\"" + path + "\")", err));
  }
  return out;
}

Expected<std::size_t> file_size(const Fd& fd) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return fail(Errc::system, errno_text("fstat", errno));
  return static_cast<std::size_t>(st.st_size);
}

Expected<Mapping> map_shared(const Fd& fd, std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) {
    return fail(Errc::system, errno_text("mmap(" + std::to_string(bytes) + " bytes)", errno));
  }
  return Mapping(p, bytes);
}

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  // Shared (not FUTEX_PRIVATE) because the word lives in memory mapped by several processes.
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr,
            0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr,
            nullptr, 0);
}

int open_pidfd(int pid) noexcept {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

bool process_exited(int pidfd, int pid) noexcept {
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
  }
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

namespace {

// A small /proc file into `buf` (NUL-terminated); false when it cannot be read.
bool read_proc(const char* path, char* buf, std::size_t size) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, buf, size - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

// The state letter of a /proc stat file, or '\0' when it cannot be read.
char state_in(const char* path) noexcept {
  char buf[512];
  if (!read_proc(path, buf, sizeof(buf))) return '\0';
  // "pid (comm) S ...": the state follows the last ')' (comm may hold spaces and parentheses).
  const char* close_paren = std::strrchr(buf, ')');
  if (close_paren == nullptr || close_paren[1] != ' ') return '\0';
  return close_paren[2];
}

char process_state(int pid) noexcept {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  return state_in(path);
}

// True when a thread of process `pid` other than its leader is stopped ('T' or 't').
bool a_thread_stopped(int pid) noexcept {
  char path[96];
  std::snprintf(path, sizeof(path), "/proc/%d/task", pid);
  DIR* d = ::opendir(path);
  if (d == nullptr) return false;
  bool stopped = false;
  while (const dirent* e = ::readdir(d)) {
    const int tid = std::atoi(e->d_name);
    if (tid <= 0 || tid == pid) continue;
    std::snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
    const char state = state_in(path);
    if (state == 'T' || state == 't') {
      stopped = true;
      break;
    }
  }
  ::closedir(d);
  return stopped;
}

// True when SIGSTOP waits in the process's shared pending set ("ShdPnd" of /proc/<pid>/status,
// signal n at bit n - 1).
bool stop_pending(int pid) noexcept {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/status", pid);
  char buf[4096];
  if (!read_proc(path, buf, sizeof(buf))) return false;
  const char* line = std::strstr(buf, "\nShdPnd:");
  if (line == nullptr) return false;
  const unsigned long long mask = std::strtoull(line + 9, nullptr, 16);
  return ((mask >> (SIGSTOP - 1)) & 1ULL) != 0;
}

}  // namespace

bool process_ended(int pid) noexcept {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  const char state = process_state(pid);
  return state == 'Z' || state == 'X';
}

bool process_stopped(int pid) noexcept {
  const char state = process_state(pid);
  // A stop under way: the group stop completes when every thread has taken it, so until the
  // leader has run, a SIGSTOP shows as a stopped thread or as pending for the whole process.
  return state == 'T' || state == 't' || a_thread_stopped(pid) || stop_pending(pid);
}

int read_peer_memory(int pid, std::uint64_t remote, std::byte* local, std::size_t bytes) noexcept {
  std::size_t done = 0;
  while (done < bytes) {
    iovec l{local + done, bytes - done};
    iovec r{reinterpret_cast<void*>(remote + done), bytes - done};
    const ssize_t n = ::process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EFAULT;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

int write_peer_memory(int pid, std::uint64_t remote, const std::byte* local,
                      std::size_t bytes) noexcept {
  std::size_t done = 0;
  while (done < bytes) {
    iovec l{const_cast<std::byte*>(local) + done, bytes - done};
    iovec r{reinterpret_cast<void*>(remote + done), bytes - done};
    const ssize_t n = ::process_vm_writev(pid, &l, 1, &r, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EFAULT;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace tp::comm::detail
