// Emulated link: parsing, presets, and the sender-stamp / receiver-check delivery rule.
#include "link.hpp"

#include <sys/prctl.h>

#include <tilepipe/support/parse.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace tp::comm {

namespace {

using namespace std::chrono_literals;

// Seed 001 (DECK-SCI slides), "Concluding remarks (1)": DECK-SCI's minimal latency 4.66 us and
// maximum bandwidth 84.12 Mbytes/s on PCI-SCI cards (32-bit/33 MHz PCI). Seed 000, Section 5:
// Dolphin D330 cards, t_sci_start_dma = 49.2 us and t_sci_interrupt = 18.8 us from ping-pong;
// a message is known to the receiver after the DMA start and one interrupt (68 us). Seed 000
// gives no bandwidth: the D330 preset takes seed 001's PCI-SCI figure (docs/protocols.md).
constexpr std::array<LinkPreset, 2> presets = {{
    {"pci-sci", 4660ns, 84.12e6,
     "seed 001, 'Concluding remarks (1)': DECK-SCI minimal latency and maximum bandwidth"},
    {"d330", 68000ns, 84.12e6,
     "seed 000, Section 5: t_sci_start_dma + t_sci_interrupt = 49.2 + 18.8 us; bandwidth of "
     "seed 001 (seed 000 reports none)"},
}};

struct Unit {
  std::string_view suffix;
  double scale;
};

constexpr std::array<Unit, 4> time_units = {{{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}};
constexpr std::array<Unit, 10> rate_units = {{{"B/s", 1.0},
                                              {"KB/s", 1e3},
                                              {"MB/s", 1e6},
                                              {"GB/s", 1e9},
                                              {"KiB/s", 1024.0},
                                              {"MiB/s", 1024.0 * 1024.0},
                                              {"GiB/s", 1024.0 * 1024.0 * 1024.0},
                                              {"Kbit/s", 1e3 / 8},
                                              {"Mbit/s", 1e6 / 8},
                                              {"Gbit/s", 1e9 / 8}}};

Unexpected bad(std::string_view what, std::string why) {
  return fail(Errc::invalid_argument, std::string(what) + ": " + why);
}

/// "20us" -> 20 x 1e3 with the longest matching suffix; `units_text` lists them for the error.
Expected<double> parse_quantity(std::string_view value, std::string_view part,
                                std::span<const Unit> units, std::string_view units_text,
                                std::string_view what) {
  std::size_t digits = 0;
  while (digits < value.size() &&
         ((value[digits] >= '0' && value[digits] <= '9') || value[digits] == '.')) {
    ++digits;
  }
  if (digits == 0) {
    return bad(what, "'" + std::string(part) + "' does not start with a number");
  }
  double number = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + digits, number);
  if (ec != std::errc{} || ptr != value.data() + digits || !std::isfinite(number)) {
    return bad(what, "'" + std::string(part) + "': '" + std::string(value.substr(0, digits)) +
                         "' is not a number");
  }
  const std::string_view suffix = value.substr(digits);
  if (suffix.empty()) {
    return bad(what, "'" + std::string(part) + "' has no unit (" + std::string(units_text) + ")");
  }
  for (const Unit& u : units) {
    if (suffix == u.suffix) return number * u.scale;
  }
  return bad(what, "'" + std::string(part) + "': unknown unit '" + std::string(suffix) + "' (" +
                       std::string(units_text) + ")");
}

std::string preset_names() {
  std::string names;
  for (const auto& p : presets)
    names += std::string(names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

/// The largest unit in which `value` is a whole number (or the smallest unit, with decimals).
std::string format_exact(double value, std::span<const Unit> units) {
  for (auto it = units.rbegin(); it != units.rend(); ++it) {
    const double n = value / it->scale;
    // Whole numbers up to 2^53 only: llround beyond long long's range is not a number.
    if (n >= 1 && n <= 9007199254740992.0 && std::abs(n - std::round(n)) < 1e-9 * n) {
      return std::to_string(static_cast<long long>(std::llround(n))) + std::string(it->suffix);
    }
  }
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), value);
  return std::string(buf.data(), res.ptr) + std::string(units.front().suffix);
}

}  // namespace

std::chrono::nanoseconds Link::transfer_time(std::size_t bytes) const noexcept {
  if (bandwidth_bytes_per_s <= 0) return std::chrono::nanoseconds(0);
  return std::chrono::nanoseconds(
      std::llround(static_cast<double>(bytes) * 1e9 / bandwidth_bytes_per_s));
}

bool same_link(const Link& a, const Link& b) noexcept {
  if (a.enabled != b.enabled) return false;
  if (!a.enabled) return true;
  const double scale = std::max({a.bandwidth_bytes_per_s, b.bandwidth_bytes_per_s, 1.0});
  return a.latency == b.latency &&
         std::abs(a.bandwidth_bytes_per_s - b.bandwidth_bytes_per_s) <= 1e-9 * scale;
}

std::span<const LinkPreset> link_presets() noexcept {
  return presets;
}

Expected<Link> parse_link(std::string_view text, std::string_view what) {
  text = trim(text);
  Link link;
  if (text.empty()) {
    return bad(what, "empty link specification (latency=T,bandwidth=R, a preset: " +
                         preset_names() + ", or none)");
  }
  if (text == "none") return link;
  for (const auto& p : presets) {
    if (text == p.name) {
      link.enabled = true;
      link.latency = p.latency;
      link.bandwidth_bytes_per_s = p.bandwidth_bytes_per_s;
      link.preset = std::string(p.name);
      return link;
    }
  }
  bool have_latency = false;
  bool have_bandwidth = false;
  for (std::string_view part : split(text, ',')) {
    part = trim(part);
    const auto eq = part.find('=');
    if (eq == std::string_view::npos) {
      return bad(what, "'" + std::string(part) +
                           "' is neither key=value nor a preset (latency=T,bandwidth=R or " +
                           preset_names() + ")");
    }
    const std::string_view key = trim(part.substr(0, eq));
    const std::string_view value = trim(part.substr(eq + 1));
    if (key == "latency") {
      if (have_latency) return bad(what, "latency given twice");
      auto ns = parse_quantity(value, part, time_units, "ns, us, ms, s", what);
      if (!ns) return Unexpected{ns.error()};
      if (*ns > 1e12) return bad(what, "'" + std::string(part) + "': latency above 1000 s");
      link.latency = std::chrono::nanoseconds(std::llround(*ns));
      have_latency = true;
    } else if (key == "bandwidth") {
      if (have_bandwidth) return bad(what, "bandwidth given twice");
      auto rate = parse_quantity(
          value, part, rate_units,
          "B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s, Kbit/s, Mbit/s, Gbit/s", what);
      if (!rate) return Unexpected{rate.error()};
      if (*rate < 1.0) {
        return bad(what, "'" + std::string(part) + "': bandwidth must be at least 1 B/s");
      }
      // Above a petabyte per second no link is emulated; the bound also keeps to_string exact
      // (found by fuzzing: 2.4e70 B/s came back as bandwidth=-9223372036854775808GB/s).
      if (*rate > 1e15) {
        return bad(what, "'" + std::string(part) + "': bandwidth above 1 PB/s (1000000GB/s)");
      }
      link.bandwidth_bytes_per_s = *rate;
      have_bandwidth = true;
    } else {
      return bad(what, "unknown key '" + std::string(key) + "' in '" + std::string(part) +
                           "' (latency, bandwidth)");
    }
  }
  link.enabled = true;
  return link;
}

std::string to_string(const Link& link) {
  if (!link.enabled) return "none";
  // The latency is whole nanoseconds: the largest unit that divides it exactly (a relative
  // tolerance would print 220111111111 ns as 220111111us; found by fuzzing).
  const long long ns = link.latency.count();
  std::string s = "latency=" + std::to_string(ns) + "ns";
  for (auto it = time_units.rbegin(); ns != 0 && it != time_units.rend(); ++it) {
    const auto scale = static_cast<long long>(it->scale);
    if (ns % scale == 0) {
      s = "latency=" + std::to_string(ns / scale) + std::string(it->suffix);
      break;
    }
  }
  if (link.bandwidth_bytes_per_s > 0) {
    s += ",bandwidth=" + format_exact(link.bandwidth_bytes_per_s, std::span(rate_units).first(4));
  }
  return s;
}

namespace detail {

std::uint64_t link_now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

LinkEmulator::LinkEmulator(const Link& link, int ranks)
    : link_(link), free_at_ns_(static_cast<std::size_t>(ranks), 0) {
  ns_per_byte_ = link.bandwidth_bytes_per_s > 0 ? 1e9 / link.bandwidth_bytes_per_s : 0.0;
  // Sleeps end on arrival times: ask for precise timers (the default slack is 50 us) for this
  // thread and the threads it starts later.
  (void)::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

std::uint64_t LinkEmulator::depart(int dest, std::size_t bytes) noexcept {
  std::uint64_t& free_at = free_at_ns_[static_cast<std::size_t>(dest)];
  const std::uint64_t start = std::max(link_now_ns(), free_at);
  const auto transfer =
      static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) * ns_per_byte_));
  free_at = start + transfer;
  last_done_ns_ = free_at;
  return free_at + static_cast<std::uint64_t>(link_.latency.count());
}

void LinkEmulator::hold_send(std::uint64_t id, std::uint64_t done_ns) {
  held_.push_back(Held{id, done_ns});
}

void LinkEmulator::stamp(int dest, Cell& cell) noexcept {
  std::uint64_t arrival = 0;
  switch (cell.kind) {
    case cell_short:
      if (cell.tag == tag_link_put) {
        LinkPutNotice notice{};
        std::memcpy(&notice, cell.body, sizeof(notice));
        arrival = depart(dest, notice.bytes);
      } else {
        arrival = depart(dest, cell.bytes);
      }
      break;
    case cell_eager:
      arrival = depart(dest, cell.bytes);
      break;
    case cell_rts: {
      RtsBody rts{};
      std::memcpy(&rts, cell.body, sizeof(rts));
      arrival = depart(dest, rts.total_bytes);
      break;
    }
    default:
      break;  // CTS, FIN, fragments: the protocol's own control traffic is not charged
  }
  std::memcpy(cell.body + link_stamp_offset, &arrival, sizeof(arrival));
}

bool LinkEmulator::arrived(const Cell& cell) noexcept {
  std::uint64_t arrival = 0;
  std::memcpy(&arrival, cell.body + link_stamp_offset, sizeof(arrival));
  if (arrival == 0) return true;
  if (arrival <= link_now_ns()) return true;
  next_due_ns_ = std::min(next_due_ns_, arrival);
  return false;
}

void LinkEmulator::on_put_notice(const std::byte* data, std::size_t bytes) {
  LinkPutNotice notice{};
  std::memcpy(&notice, data, std::min(bytes, sizeof(notice)));
  if (notice.region >= notices_.size()) notices_.resize(notice.region + std::size_t{1});
  auto& counters = notices_[notice.region];
  if (notice.counter >= counters.size()) counters.resize(notice.counter + std::size_t{1}, 0);
  ++counters[notice.counter];
}

std::uint64_t LinkEmulator::notices(std::uint32_t region, std::size_t counter) const noexcept {
  if (region >= notices_.size() || counter >= notices_[region].size()) return 0;
  return notices_[region][counter];
}

std::chrono::nanoseconds LinkEmulator::sleep_time(std::chrono::nanoseconds limit,
                                                  std::chrono::nanoseconds spin) const noexcept {
  if (next_due_ns_ == UINT64_MAX) return limit;
  const auto wake = static_cast<std::int64_t>(next_due_ns_) - spin.count();
  const auto left = wake - static_cast<std::int64_t>(link_now_ns());
  if (left <= 0) return std::chrono::nanoseconds(0);
  return std::min(limit, std::chrono::nanoseconds(left));
}

}  // namespace detail

}  // namespace tp::comm
