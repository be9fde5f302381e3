// The --link option: one help text and one parser for every subcommand that moves messages.
#include "link_option.hpp"

namespace tp::app {

void add_link_option(CLI::App& app, std::string& spec) {
  std::string presets;
  for (const auto& p : comm::link_presets()) {
    presets += (presets.empty() ? "" : ", ") + std::string(p.name);
  }
  app.add_option("--link", spec,
                 "emulated interconnect between the ranks: latency=T,bandwidth=R (e.g. "
                 "latency=20us,bandwidth=80MB/s), a preset (" +
                     presets + ") or none");
}

Expected<comm::Link> parse_link_option(const std::string& spec) {
  if (spec.empty()) return comm::Link{};
  return comm::parse_link(spec, "--link");
}

}  // namespace tp::app
