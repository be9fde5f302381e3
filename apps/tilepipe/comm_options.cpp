// The shared communication flags: one set of options, one parser.
#include "comm_options.hpp"

#include "command.hpp"
#include "link_option.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace tp::app {

void add_comm_options(CLI::App& app, CommFlags& flags, std::string_view context, bool with_link) {
  const std::string c(context);
  app.add_option("--transport", flags.transport,
                 c + "auto|shm|mpi (auto: shm on one host, MPI across)")
      ->capture_default_str();
  app.add_option("--sync", flags.sync,
                 c + "poll|block|hybrid: how waiting ranks learn that data landed")
      ->capture_default_str();
  app.add_option("--peer-timeout", flags.peer_timeout_s,
                 c + "seconds after which a rank fails when a peer it waits on has died")
      ->capture_default_str();
  app.add_option("--progress-timeout", flags.progress_timeout_s,
                 c + "seconds a rank waits on a live but silent peer (stopped, hung) before the "
                     "run fails; 0: never")
      ->capture_default_str();
  if (with_link) add_link_option(app, flags.link);
}

Expected<comm::Config> apply_comm_flags(const CommFlags& flags, comm::Config base) {
  // At least a millisecond: the timeout is kept in whole milliseconds.
  if (!(flags.peer_timeout_s >= 0.001 && flags.peer_timeout_s <= 3600)) {
    return fail(
        Errc::invalid_argument,
        fmt::format("--peer-timeout: {} must be in [0.001, 3600] seconds", flags.peer_timeout_s));
  }
  base.peer_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(flags.peer_timeout_s * 1000));
  if (!(flags.progress_timeout_s == 0 ||
        (flags.progress_timeout_s >= 0.001 && flags.progress_timeout_s <= 86400))) {
    return fail(Errc::invalid_argument,
                fmt::format("--progress-timeout: {} must be 0 (off) or in [0.001, 86400] seconds",
                            flags.progress_timeout_s));
  }
  base.progress_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(flags.progress_timeout_s * 1000));
  auto sync = comm::parse_sync_mode(flags.sync, "--sync");
  if (!sync) return Unexpected{sync.error()};
  base.sync = *sync;
  auto transport = comm::parse_transport(flags.transport, "--transport");
  if (!transport) return Unexpected{transport.error()};
  base.transport = *transport;
  auto link = parse_link_option(flags.link);
  if (!link) return Unexpected{link.error()};
  base.link = *link;
  return base;
}

}  // namespace tp::app
