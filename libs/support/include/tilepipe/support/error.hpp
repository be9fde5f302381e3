// Error values for bad input and environment failures (docs/architecture.md, "Errors").
#pragma once

#include <string>
#include <utility>

namespace tp {

/// What kind of failure an Error reports; the CLI maps it to an exit code.
enum class Errc {
  invalid_argument,  ///< bad input or configuration: exit 2
  out_of_range,      ///< a value that would overflow or exceed a limit: exit 2
  illegal_tiling,    ///< HD >= 0 or |HD| < 1 violated: exit 2
  system,            ///< a system or MPI call failed: exit 1
  peer_lost,         ///< a peer rank died or timed out: exit 1
  timeout,           ///< a bounded wait expired: exit 1
  internal,          ///< anything else that is not the user's fault: exit 1
};

/// An error: a code and one line of text that names the problem and the values involved.
struct Error {
  Errc code = Errc::internal;
  std::string message;

  Error() = default;
  Error(Errc c, std::string msg) : code(c), message(std::move(msg)) {}

  /// True when the error is the user's input (exit code 2), false for environment failures.
  [[nodiscard]] bool is_user_error() const noexcept {
    return code == Errc::invalid_argument || code == Errc::out_of_range ||
           code == Errc::illegal_tiling;
  }
};

}  // namespace tp
