// libFuzzer target: the emulated-link specification parser (tp::comm::parse_link, --link).
#include "fuzz_check.hpp"

#include <tilepipe/comm/link.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto link = tp::comm::parse_link(text, "--link");
  if (!link) {
    tp::fuzz::check_user_error(link.error());
    return 0;
  }
  tp::fuzz::check(link->latency.count() >= 0, "a negative latency");
  tp::fuzz::check(link->bandwidth_bytes_per_s >= 0, "a negative bandwidth");
  // to_string is documented to read back to the same link.
  const std::string canonical = tp::comm::to_string(*link);
  auto back = tp::comm::parse_link(canonical, "--link");
  tp::fuzz::check(back.has_value(), back ? "" : "'" + canonical + "': " + back.error().message);
  tp::fuzz::check(back->enabled == link->enabled && tp::comm::same_link(*back, *link),
                  "'" + canonical + "' does not read back to the same link");
  (void)link->transfer_time(size);
  return 0;
}
