// The communication flags every multi-rank subcommand shares (the ranks themselves start through
// the runtime: tp::runtime::run or run_ranks, and the exit code is report_error's).
#pragma once

#include <tilepipe/comm/config.hpp>
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

}  // namespace tp::app
