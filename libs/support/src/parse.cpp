// Parsers for command-line values; every failure names the value and the offending text.
#include <tilepipe/support/checked_math.hpp>
#include <tilepipe/support/parse.hpp>

#include <charconv>
#include <string>

namespace tp {

namespace {

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

}  // namespace

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = text.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(text.substr(start));
      return out;
    }
    out.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

Expected<std::int64_t> parse_int(std::string_view text, std::string_view what, std::int64_t min,
                                 std::int64_t max) {
  const std::string_view t = trim(text);
  std::int64_t value = 0;
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (!t.empty() && t.front() == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (t.empty() || ec == std::errc::invalid_argument || ptr != last) {
    return fail(Errc::invalid_argument,
                std::string(what) + ": " + quoted(text) + " is not a whole number");
  }
  if (ec == std::errc::result_out_of_range) {
    return fail(Errc::out_of_range,
                std::string(what) + ": " + quoted(text) + " does not fit in 64 bits");
  }
  if (value < min || value > max) {
    std::string range =
        value < min ? "must be >= " + std::to_string(min) : "must be <= " + std::to_string(max);
    return fail(value < min ? Errc::invalid_argument : Errc::out_of_range,
                std::string(what) + ": " + std::to_string(value) + " " + range);
  }
  return value;
}

Expected<std::vector<std::int64_t>> parse_extents(std::string_view text, std::string_view what) {
  if (trim(text).empty()) {
    return fail(Errc::invalid_argument,
                std::string(what) + ": empty value (expected e.g. 12x12x512)");
  }
  std::vector<std::int64_t> out;
  const auto pieces = split(trim(text), 'x');
  for (std::size_t d = 0; d < pieces.size(); ++d) {
    const std::string label = std::string(what) + " dimension " + std::to_string(d + 1);
    auto v = parse_int(pieces[d], label);
    if (!v) return Unexpected{v.error()};
    if (*v < 1) {
      return fail(Errc::invalid_argument, label + ": " + std::to_string(*v) + " must be >= 1");
    }
    out.push_back(*v);
  }
  return out;
}

Expected<std::int64_t> parse_bytes(std::string_view text, std::string_view what) {
  std::string_view t = trim(text);
  std::int64_t scale = 1;
  struct Suffix {
    std::string_view name;
    std::int64_t scale;
  };
  constexpr Suffix suffixes[] = {{"KiB", 1LL << 10},
                                 {"MiB", 1LL << 20},
                                 {"GiB", 1LL << 30},
                                 {"K", 1LL << 10},
                                 {"M", 1LL << 20},
                                 {"G", 1LL << 30},
                                 {"B", 1}};
  for (const auto& s : suffixes) {
    if (t.size() > s.name.size() && t.substr(t.size() - s.name.size()) == s.name) {
      scale = s.scale;
      t.remove_suffix(s.name.size());
      break;
    }
  }
  auto v = parse_int(t, what, 0);
  if (!v) {
    return fail(v.error().code, std::string(what) + ": " + quoted(text) +
                                    " is not a byte count (e.g. 0, 64, 16KiB, 4MiB)");
  }
  auto bytes = checked_mul(*v, scale);
  if (!bytes) {
    return fail(Errc::out_of_range,
                std::string(what) + ": " + quoted(text) + " does not fit in 64 bits");
  }
  return *bytes;
}

}  // namespace tp
