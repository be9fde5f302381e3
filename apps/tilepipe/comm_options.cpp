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

int launch_exit_code(const comm::LaunchResult& result) {
  if (result.interrupted_by != 0) {
    (void)report_error(*result.failure());
    return 128 + result.interrupted_by;
  }
  const int r = result.failed_rank();
  if (r < 0) return result.status() == 0 ? exit_ok : exit_failure;
  const comm::RankEnd& end = result.ranks[static_cast<std::size_t>(r)];
  if (!end.error && end.term_signal == 0) {
    // The body reported its own failure (its line is on stderr already) and returned a code.
    return end.exit_code == exit_bad_input ? exit_bad_input : exit_failure;
  }
  return report_error(*result.failure());
}

int run_on_ranks(int ranks, const comm::Config& config,
                 const std::function<Expected<int>(comm::World&)>& body) {
  if (comm::World::launched_by_mpi()) {
    auto world = comm::World::from_mpi(config);
    if (!world) return report_error(world.error());
    auto code = body(*world);
    return code ? *code : report_error(code.error());
  }
  if (config.transport == comm::TransportKind::mpi) {
    return report_error(Error(Errc::invalid_argument,
                              "--transport mpi needs the ranks started by mpirun or srun (e.g. "
                              "mpirun -np 2 ...); forked ranks use shared memory"));
  }
  std::fflush(stdout);
  auto launched = comm::launch_local(ranks, config, body);
  if (!launched) return report_error(launched.error());
  return launch_exit_code(*launched);
}

}  // namespace tp::app
