// The communication flags every multi-rank subcommand shares, and the one way a subcommand runs
// a body on ranks (join the MPI job or fork local ranks) with one exit-code policy.
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/comm/world.hpp>
#include <tilepipe/support/expected.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace tp::app {

/// `--transport`, `--sync`, `--peer-timeout` and (optionally) `--link`, as given.
struct CommFlags {
  std::string transport = "auto";
  std::string sync = "hybrid";
  double peer_timeout_s = 10;
  std::string link;  ///< empty: no emulated link
};

/// Adds the communication flags to `app`; `context` prefixes each help text (e.g. "with --nodes:
/// "); `with_link` adds `--link`.
void add_comm_options(CLI::App& app, CommFlags& flags, std::string_view context = "",
                      bool with_link = true);

/// `base` with the flags applied; an error names the flag and the rule.
Expected<comm::Config> apply_comm_flags(const CommFlags& flags, comm::Config base = {});

/// Runs `body` on every rank: joins the MPI job when started by mpirun or srun, else forks
/// `ranks` local processes (refusing `--transport mpi`). Returns the exit code of the command:
/// under MPI the rank's own; locally 0 when every rank returned 0, 2 when any rank found bad
/// input, else 1. Every error the launcher caught in a rank and every rank killed by a signal is
/// reported on stderr, one line each.
int run_on_ranks(int ranks, const comm::Config& config,
                 const std::function<int(comm::World&)>& body);

}  // namespace tp::app
