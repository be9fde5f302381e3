// Error values for bad input and environment failures (docs/architecture.md, "Errors").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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
  interrupted,       ///< the run was stopped by a signal (SIGINT, SIGTERM, SIGHUP): exit 128 + it
};

/// An error: a code, one line of text that names the problem and the values involved, and its
/// context as data (which rank, which tile, which option), never concatenated into the text: the
/// application alone formats them (the CLI's `tilepipe: error: [rank R] ...`).
struct Error {
  Errc code = Errc::internal;
  std::string message;
  int rank = -1;                   ///< the rank that raised it, or -1 (not rank-specific)
  std::vector<std::int64_t> tile;  ///< the lowest point (1-based) of the tile it arose in, or {}
  /// The option at fault by its library name ("faces", "comm_thread", "link"), or empty; the
  /// message then continues the option's name ("direct needs every rank on shared memory").
  std::string option;
  int signal = 0;  ///< Errc::interrupted: the signal that stopped the run (the CLI exits 128 + it)

  Error() = default;
  Error(Errc c, std::string msg) : code(c), message(std::move(msg)) {}

  /// An error raised on rank `r`.
  static Error at(int r, Errc c, std::string msg) {
    Error e(c, std::move(msg));
    e.rank = r;
    return e;
  }
  /// An error about option `name`.
  static Error about(std::string name, Errc c, std::string msg) {
    Error e(c, std::move(msg));
    e.option = std::move(name);
    return e;
  }

  /// This error, raised on rank `r` unless a rank is already known (the first one to see it).
  [[nodiscard]] Error on_rank(int r) const& {
    Error e = *this;
    if (e.rank < 0) e.rank = r;
    return e;
  }

  /// True when the error is the user's input (exit code 2), false for environment failures.
  [[nodiscard]] bool is_user_error() const noexcept {
    return code == Errc::invalid_argument || code == Errc::out_of_range ||
           code == Errc::illegal_tiling;
  }
};

}  // namespace tp
