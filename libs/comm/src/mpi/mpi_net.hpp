// MpiNet: the Net backend on MPI-3 (non-blocking point-to-point, passive-target RMA).
#pragma once

#include "../net.hpp"

#include <mpi.h>

#include <chrono>

#include <vector>

namespace tp::comm::detail {

/// Net over a private duplicate of a communicator (errors returned, never fatal).
class MpiNet final : public Net {
 public:
  /// Takes ownership of `comm` (a dup with MPI_ERRORS_RETURN). `progress_timeout` bounds the
  /// collectives of create_window (MpiWatchdog): a peer stopped there would hold the others in
  /// MPI, out of the progress watchdog's sight.
  MpiNet(MPI_Comm comm, std::chrono::milliseconds progress_timeout) noexcept
      : comm_(comm), progress_timeout_(progress_timeout) {}
  ~MpiNet() override;
  MpiNet(const MpiNet&) = delete;
  MpiNet& operator=(const MpiNet&) = delete;

  Expected<int> isend(int dest, int tag, const std::byte* data, std::size_t bytes) override;
  Expected<int> receive(int message, std::byte* buffer, std::size_t bytes) override;
  Status discard(int message, std::size_t bytes) override;
  Expected<bool> test(int handle) override;
  Expected<bool> probe(NetIncoming& out) override;
  Expected<int> create_window(std::byte* base, std::size_t bytes) override;
  Status put(int window, int target, std::size_t offset, const std::byte* data, std::size_t bytes,
             bool notify) override;
  Expected<std::uint64_t> notifications(int window) override;

 private:
  struct Window {
    MPI_Win data = MPI_WIN_NULL;
    MPI_Win counter = MPI_WIN_NULL;
  };
  int add_request(MPI_Request r);

  MPI_Comm comm_;
  std::chrono::milliseconds progress_timeout_;
  std::vector<MPI_Request> requests_;
  std::vector<int> free_requests_;
  std::vector<MPI_Message> messages_;
  std::vector<int> free_messages_;
  std::vector<Window> windows_;
};

/// "MPI_Isend: <MPI error string>".
std::string mpi_error_text(const char* call, int code);

}  // namespace tp::comm::detail
