// Net: the interface of the inter-host backend (MPI). Engine code never includes <mpi.h>.
#pragma once

#include <tilepipe/support/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tp::comm::detail {

/// A message the backend has matched (MPI_Improbe) but not yet received.
struct NetIncoming {
  int source = -1;
  int tag = 0;
  std::size_t bytes = 0;
  int message = -1;  ///< backend handle for receive()/discard()
};

/// Inter-host messaging and RMA. Not thread-safe: the Engine calls it under its lock.
class Net {
 public:
  virtual ~Net() = default;
  /// Starts a send; returns a handle for test().
  virtual Expected<int> isend(int dest, int tag, const std::byte* data, std::size_t bytes) = 0;
  /// Starts receiving a probed message into `buffer` (bytes <= capacity checked by the caller).
  virtual Expected<int> receive(int message, std::byte* buffer, std::size_t bytes) = 0;
  /// Receives and drops a probed message (a receive that refused it).
  virtual Status discard(int message, std::size_t bytes) = 0;
  /// True once the operation behind `handle` finished; the handle is then released.
  virtual Expected<bool> test(int handle) = 0;
  /// Looks for one incoming message from any peer; false when none is pending.
  virtual Expected<bool> probe(NetIncoming& out) = 0;
  /// Collective: a window over [base, base + bytes) plus a notification counter; returns its id.
  virtual Expected<int> create_window(std::byte* base, std::size_t bytes) = 0;
  /// Writes into `target`'s window and (if notify) adds one to its counter after the data.
  virtual Status put(int window, int target, std::size_t offset, const std::byte* data,
                     std::size_t bytes, bool notify) = 0;
  /// This rank's counter of `window` (notifications that came over the network).
  virtual Expected<std::uint64_t> notifications(int window) = 0;
};

}  // namespace tp::comm::detail
