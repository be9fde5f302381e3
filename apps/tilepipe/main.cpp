// tilepipe: dispatches `tilepipe <command> ...` to the registered subcommands.
#include "command.hpp"

#include <tilepipe/support/last_words.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

namespace {

void print_usage(std::FILE* out) {
  fmt::print(out,
             "usage: tilepipe <command> [options]   (tilepipe <command> --help for details;\n"
             "       tilepipe --version)\n\n");
  fmt::print(out, "commands:\n");
  for (const auto& c : tp::app::commands()) fmt::print(out, "  {:<11} {}\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  tp::set_last_words_sink(&tp::app::print_last_words);
  if (argc < 2) {
    // Bad input like any other: one line, exit 2; the usage is one --help away.
    tp::app::print_error_line(
        "no command given (usage: tilepipe <command> [options]; "
        "tilepipe --help lists the commands)");
    return tp::app::exit_bad_input;
  }
  const std::string_view name = argv[1];
  if (name == "--version" || name == "-V") {
    fmt::print("{}\n", tp::app::version_line());
    return tp::app::exit_ok;
  }
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return tp::app::exit_ok;
  }
  for (const auto& c : tp::app::commands()) {
    if (c.name != name) continue;
    std::string prog = "tilepipe " + std::string(name);
    argv[1] = prog.data();
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const std::bad_alloc&) {
      tp::app::print_error_line("out of memory");
      return tp::app::exit_failure;
    } catch (const std::exception& e) {
      tp::app::print_error_line(e.what());
      return tp::app::exit_failure;
    }
  }
  tp::app::print_error_line(fmt::format("unknown command '{}' (try: tilepipe --help)", name));
  return tp::app::exit_bad_input;
}
