// CLI11 parsing with one-line errors, apart from command.hpp so that files that configure no
// options (main.cpp, align_search.cpp) do not compile CLI11.
#pragma once

#include <CLI/CLI.hpp>

namespace tp::app {

/// Parses argv with CLI11; returns -1 when parsing succeeded and the command should run, or the
/// exit code to return (0 after --help, 2 after a one-line error on stderr).
int parse_cli(CLI::App& app, int argc, char** argv);

}  // namespace tp::app
