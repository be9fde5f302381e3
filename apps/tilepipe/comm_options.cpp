// The shared communication flags and run_on_ranks: one parser, one launch, one exit-code policy.
#include "comm_options.hpp"

#include "command.hpp"
#include "link_option.hpp"

#include <tilepipe/comm/launch.hpp>

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

int run_on_ranks(int ranks, const comm::Config& config,
                 const std::function<int(comm::World&)>& body) {
  if (comm::World::launched_by_mpi()) {
    auto world = comm::World::from_mpi(config);
    if (!world) return report_error(world.error());
    return body(*world);
  }
  if (config.transport == comm::TransportKind::mpi) {
    return report_error(Error(Errc::invalid_argument,
                              "--transport mpi needs the ranks started by mpirun or srun (e.g. "
                              "mpirun -np 2 ...); forked ranks use shared memory"));
  }
  std::fflush(stdout);
  auto launched = comm::launch_local(ranks, config, body);
  if (!launched) return report_error(launched.error());
  for (const auto& e : launched->errors) fmt::print(stderr, "tilepipe: error: {}\n", e);
  bool bad_input = false;
  bool failed = false;
  for (std::size_t r = 0; r < launched->exit_codes.size(); ++r) {
    if (launched->term_signals[r] != 0) {
      fmt::print(stderr, "tilepipe: error: rank {} was killed by signal {}\n", r,
                 launched->term_signals[r]);
    }
    bad_input = bad_input || launched->exit_codes[r] == exit_bad_input;
    failed = failed || launched->exit_codes[r] != exit_ok;
  }
  return bad_input ? exit_bad_input : failed ? exit_failure : exit_ok;
}

}  // namespace tp::app
