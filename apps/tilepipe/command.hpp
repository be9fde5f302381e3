// The subcommand registry: each subcommand file registers itself; main.cpp dispatches on argv[1].
#pragma once

#include <tilepipe/support/error.hpp>
#include <tilepipe/support/expected.hpp>
#include <tilepipe/support/output_file.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace tp::app {

/// One subcommand: `tilepipe <name> ...`; run receives argv with argv[0] = "tilepipe <name>".
struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);
};

/// All registered subcommands, in registration order.
std::vector<Command>& commands();

/// Registers a subcommand at static-initialization time (one object per subcommand file).
struct CommandRegistration {
  explicit CommandRegistration(Command c) { commands().push_back(c); }
};

/// Exit codes: 0 success, 1 run-time failure, 2 bad input.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_bad_input = 2;

/// The command-line flag of a library option field: "comm_thread" -> "--comm-thread".
std::string option_flag(std::string_view option);

/// The one line an error prints after "tilepipe: error: ": "[rank R] tile at (a, b): --flag
/// message", each part only where the error carries it. The only place a rank prefix is built.
std::string format_error(const Error& error);

/// `text` with every control byte (below 0x20, and 0x7f) written as a C escape (\n, \t, \x1b), so
/// that a value echoed in an error stays on one line and cannot drive the terminal.
std::string escape_controls(std::string_view text);

/// Prints "tilepipe: error: <message>" on stderr, control bytes escaped: the one place that
/// writes an error line.
void print_error_line(std::string_view message);

/// The last-words sink (tp::set_last_words_sink, RunOptions::last_words): the line report_error
/// prints, flushed, for an error that ends the process before it returns (an MPI job about to be
/// aborted).
void print_last_words(const Error& error) noexcept;

/// Checks an output path named by `flag` before any work (tp::OutputFile::make); an error names
/// the flag: "--trace: cannot write 'x/t.json': directory 'x' does not exist".
Expected<OutputFile> check_output(std::string_view flag, std::string path);

/// Prints "tilepipe: error: <format_error>" on stderr (print_error_line); returns 2 for user
/// errors, 128 + the signal for an interrupted run (Errc::interrupted), 1 otherwise.
int report_error(const Error& error);

/// "tilepipe VERSION (git REVISION)": what `tilepipe --version` prints.
std::string version_line();

/// The fields every JSON object tilepipe prints starts with (docs/cli.md, "JSON"):
/// `schema_version` (of the command's JSON, raised when a field changes meaning or goes away),
/// `command`, `tilepipe` {`version`, `git_revision`}, `host`, `date` (UTC, ISO 8601).
nlohmann::ordered_json json_preamble(std::string_view command);

}  // namespace tp::app
