// An emulated interconnect (latency + bandwidth per ordered pair of ranks) and its parser.
#pragma once

#include <tilepipe/support/expected.hpp>

#include <chrono>
#include <span>
#include <string>
#include <string_view>

namespace tp::comm {

/// A full-duplex link between every ordered pair of ranks on one host (docs/protocols.md,
/// "Emulated link"): a message of B bytes started at s on a link free at f arrives at
/// max(s, f) + latency + B / bandwidth and occupies the link until max(s, f) + B / bandwidth.
/// Plain data; `enabled == false` (the default) means no emulation and no cost.
struct Link {
  bool enabled = false;
  /// One-way latency added to every message and put (>= 0).
  std::chrono::nanoseconds latency{0};
  /// Bytes per second; 0 means unlimited (only the latency is emulated).
  double bandwidth_bytes_per_s = 0.0;
  /// The preset it came from ("" when given as latency=..,bandwidth=..).
  std::string preset;

  /// Transfer time of `bytes` on this link (bytes / bandwidth), in nanoseconds.
  [[nodiscard]] std::chrono::nanoseconds transfer_time(std::size_t bytes) const noexcept;
};

/// Same latency and bandwidth (the preset name does not matter).
bool same_link(const Link& a, const Link& b) noexcept;

/// A named link with the parameters a seed reports for its SCI card.
struct LinkPreset {
  std::string_view name;
  std::chrono::nanoseconds latency;
  double bandwidth_bytes_per_s;
  std::string_view source;  ///< seed and table/section the numbers come from
};

/// The presets accepted by parse_link (docs/protocols.md lists their sources).
std::span<const LinkPreset> link_presets() noexcept;

/// Parses "none", a preset name, or "latency=T,bandwidth=R" (either key may be left out; keys in
/// any order). T: a number with ns|us|ms|s; R: a number with B/s|KB/s|MB/s|GB/s (powers of 1000),
/// KiB/s|MiB/s|GiB/s (powers of 1024) or Kbit/s|Mbit/s|Gbit/s. `what` names the option in errors,
/// e.g. "--link: 'bandwidth=80' has no unit (B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s, ...)".
Expected<Link> parse_link(std::string_view text, std::string_view what);

/// "none", or "latency=20us,bandwidth=80MB/s" in the largest exact units (parse_link reads it
/// back to the same link).
std::string to_string(const Link& link);

}  // namespace tp::comm
