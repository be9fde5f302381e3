// The communication flags every multi-rank subcommand shares, and the one way a subcommand runs
// a body on ranks (join the MPI job or fork local ranks) with one exit-code policy.
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/comm/launch.hpp>
#include <tilepipe/comm/world.hpp>
#include <tilepipe/support/expected.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace tp::app {

/// `--transport`, `--sync`, `--peer-timeout`, `--progress-timeout` and (optionally) `--link`, as
/// given.
struct CommFlags {
  std::string transport = "auto";
  std::string sync = "hybrid";
  double peer_timeout_s = 10;
  double progress_timeout_s = 60;  ///< 0: off
  std::string link;                ///< empty: no emulated link
};

/// Adds the communication flags to `app`; `context` prefixes each help text (e.g. "with --nodes:
/// "); `with_link` adds `--link`.
void add_comm_options(CLI::App& app, CommFlags& flags, std::string_view context = "",
                      bool with_link = true);

/// `base` with the flags applied; an error names the flag and the rule.
Expected<comm::Config> apply_comm_flags(const CommFlags& flags, comm::Config base = {});

/// Runs `body` on every rank: joins the MPI job when started by mpirun or srun, else forks
/// `ranks` local processes (refusing `--transport mpi`). A body returns its exit code, or an
/// Error that is printed once, by this function (under MPI on its rank; locally the launcher
/// carries it back). Returns the exit code of the command: under MPI the rank's own (an Error:
/// 2 for bad input, else 1); locally (launch_exit_code) 0 when every rank returned 0, 130 / 143 /
/// 129 when tilepipe was interrupted by SIGINT / SIGTERM / SIGHUP, else the failed rank's
/// (1, or 2 for bad input), with one line on stderr.
int run_on_ranks(int ranks, const comm::Config& config,
                 const std::function<Expected<int>(comm::World&)>& body);

/// The exit code of a local launch, with at most one line on stderr: an interrupt (128 + the
/// signal; "interrupted by SIGTERM: every rank stopped"), else the failed rank's Error or death
/// (1, or 2 for a user error; no line when that rank's body printed its own error and returned
/// a bare non-zero code), else 0.
int launch_exit_code(const comm::LaunchResult& result);

}  // namespace tp::app
