// The preamble every JSON object of tilepipe starts with (docs/cli.md, "JSON"): checked, then
// removed so that the rest compares with a golden file.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <string>

namespace tp::test {

/// `j` without its preamble, after checking it: schema_version 1, `command`, the tilepipe version
/// and git revision, the host, and an ISO 8601 UTC date.
inline nlohmann::json without_preamble(nlohmann::json j, const std::string& command) {
  EXPECT_EQ(j.value("schema_version", 0), 1);
  EXPECT_EQ(j.value("command", ""), command);
  EXPECT_FALSE(j["tilepipe"].value("version", "").empty());
  EXPECT_FALSE(j["tilepipe"].value("git_revision", "").empty());
  EXPECT_TRUE(j["host"].is_string());
  EXPECT_TRUE(
      std::regex_match(j.value("date", ""), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << j.value("date", "");
  for (const char* key : {"schema_version", "command", "tilepipe", "host", "date"}) j.erase(key);
  return j;
}

}  // namespace tp::test
