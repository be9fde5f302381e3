// Shared CLI plumbing: the registry, error reporting and CLI11 parsing with one-line errors.
#include "command.hpp"
#include "parse_cli.hpp"
#include "tilepipe_git_revision.hpp"

#include <tilepipe/comm/job_voice.hpp>
#include <tilepipe/comm/world.hpp>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>

namespace tp::app {

std::string option_flag(std::string_view option) {
  std::string flag = "--";
  for (const char c : option) flag += c == '_' ? '-' : c;
  return flag;
}

std::string version_line() {
  return fmt::format("tilepipe {} (git {})", TILEPIPE_VERSION, TILEPIPE_GIT_REVISION);
}

nlohmann::ordered_json json_preamble(std::string_view command) {
  constexpr int schema_version = 1;
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::array<char, 32> date{};
  std::strftime(date.data(), date.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  nlohmann::ordered_json j;
  j["schema_version"] = schema_version;
  j["command"] = command;
  j["tilepipe"] = {{"version", TILEPIPE_VERSION}, {"git_revision", TILEPIPE_GIT_REVISION}};
  j["host"] = host.data();
  j["date"] = date.data();
  return j;
}

std::vector<Command>& commands() {
  static std::vector<Command> registry;
  return registry;
}

std::string format_error(const Error& error) {
  std::string line;
  if (error.rank >= 0) line += fmt::format("[rank {}] ", error.rank);
  if (!error.tile.empty()) line += fmt::format("tile at ({}): ", fmt::join(error.tile, ", "));
  if (!error.option.empty()) line += option_flag(error.option) + " ";
  return line + error.message;
}

std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

void print_error_line(std::string_view message) {
  fmt::print(stderr, "tilepipe: error: {}\n", escape_controls(message));
}

void print_last_words(const Error& error) noexcept {
  try {
    print_error_line(format_error(error));
  } catch (...) {
    std::fputs("tilepipe: error: (the error could not be formatted)\n", stderr);
  }
  std::fflush(stderr);
}

Expected<OutputFile> check_output(std::string_view flag, std::string path) {
  auto out = OutputFile::make(std::move(path));
  if (!out) {
    Error e = out.error();
    e.message = std::string(flag) + ": " + e.message;
    return Unexpected{std::move(e)};
  }
  return out;
}

namespace {

/// Under mpirun every rank meets the same bad input (or set-up failure): the lowest running rank
/// of the host says it, and its failing exit ends the job while the others wait their turn
/// (comm/job_voice.hpp). False: another rank speaks.
bool speaks_for_the_job() {
  return !comm::World::launched_by_mpi() || comm::take_job_voice(comm::VoiceTurn::in_turn);
}

}  // namespace

int report_error(const Error& error) {
  if (speaks_for_the_job()) print_error_line(format_error(error));
  if (error.code == Errc::interrupted && error.signal > 0) return 128 + error.signal;
  return error.is_user_error() ? exit_bad_input : exit_failure;
}

int parse_cli(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return exit_ok;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    while (!what.empty() && what.back() == '\n') what.pop_back();
    if (speaks_for_the_job()) print_error_line(what);
    return exit_bad_input;
  }
  return -1;
}

}  // namespace tp::app
