// Thin wrappers over the system calls the shm transport uses; each failure becomes a tp::Error.
#pragma once

#include <tilepipe/support/expected.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tp::comm::detail {

/// A mapping of a shared memory file; unmaps on destruction.
class Mapping {
 public:
  Mapping() = default;
  Mapping(void* base, std::size_t bytes) noexcept : base_(base), bytes_(bytes) {}
  Mapping(Mapping&& o) noexcept : base_(o.base_), bytes_(o.bytes_) { o.base_ = nullptr; }
  Mapping& operator=(Mapping&& o) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();
  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(base_); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
};

/// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_ = -1;
};

/// Anonymous shared memory file (memfd_create) of `bytes` bytes; never appears in /dev/shm.
Expected<Fd> create_shared_file(std::string_view name, std::size_t bytes);
/// Opens another process's shared file through /proc/<pid>/fd/<fd>. Errc::peer_lost when the
/// process has ended (gone, or a zombie: its files are closed) or ends within 200 ms of a failed
/// open (an exiting process closes its files first), Errc::system otherwise.
Expected<Fd> open_peer_file(int pid, int fd);
/// Maps `bytes` of `fd` read-write and shared.
Expected<Mapping> map_shared(const Fd& fd, std::size_t bytes);
/// Size of the file behind `fd` (fstat).
Expected<std::size_t> file_size(const Fd& fd);
/// Rounds up to the page size.
std::size_t page_round(std::size_t bytes) noexcept;

/// futex(FUTEX_WAIT) on a shared word: sleeps while *word == expected, at most `timeout`.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) noexcept;
/// futex(FUTEX_WAKE) waking every sleeper on a shared word.
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept;

/// pidfd_open(pid); -1 when the kernel lacks it (liveness then falls back to kill(pid, 0)).
int open_pidfd(int pid) noexcept;
/// True when the process behind `pidfd` (or `pid` if pidfd < 0) has exited.
bool process_exited(int pidfd, int pid) noexcept;

/// True when process `pid` is stopped (job control, SIGSTOP) or traced-stopped: its
/// /proc/<pid>/stat state is 'T' or 't', or its stop is under way (a thread stopped, or SIGSTOP
/// pending for the process: the leader shows 'T' once it has run).
bool process_stopped(int pid) noexcept;
/// True when process `pid` has ended: no such process, or a zombie (state 'Z' or 'X').
bool process_ended(int pid) noexcept;

/// process_vm_readv of `bytes` from (pid, remote) into local; returns errno (0 on success).
int read_peer_memory(int pid, std::uint64_t remote, std::byte* local, std::size_t bytes) noexcept;

/// process_vm_writev of `bytes` from local into (pid, remote); returns errno (0 on success).
int write_peer_memory(int pid, std::uint64_t remote, const std::byte* local,
                      std::size_t bytes) noexcept;

/// "<call>: <strerror(err)>".
std::string errno_text(std::string_view call, int err);

}  // namespace tp::comm::detail
