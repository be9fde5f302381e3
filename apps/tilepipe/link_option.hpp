// The --link option shared by pingpong, run, sweep, calibrate and plan (docs/cli.md).
#pragma once

#include <tilepipe/comm/link.hpp>
#include <tilepipe/support/expected.hpp>

#include <CLI/CLI.hpp>

#include <string>

namespace tp::app {

/// Adds `--link SPEC` (an emulated interconnect between the ranks) to `app`, stored in `spec`.
void add_link_option(CLI::App& app, std::string& spec);

/// The link `spec` names ("" or "none": no link); errors name --link and the bad part.
Expected<comm::Link> parse_link_option(const std::string& spec);

}  // namespace tp::app
