// Parsers for command-line values: integers, "AxBxC" extents, byte sizes, lists. Pure functions.
#pragma once

#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace tp {

/// A whole decimal number in [min, max]; `what` names the value in the error message.
Expected<std::int64_t> parse_int(std::string_view text, std::string_view what,
                                 std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX);

/// Extents such as "12x12x524288": each >= 1; `what` names the value ("--size").
Expected<std::vector<std::int64_t>> parse_extents(std::string_view text, std::string_view what);

/// A byte count with an optional binary suffix: "0", "64", "16KiB", "4MiB", "1GiB" (also K/M/G).
Expected<std::int64_t> parse_bytes(std::string_view text, std::string_view what);

/// Splits on a separator character; empty pieces are kept (so "1,,2" yields an empty piece).
std::vector<std::string_view> split(std::string_view text, char sep);

/// Removes leading and trailing spaces and tabs.
std::string_view trim(std::string_view text);

}  // namespace tp
