// Link emulation inside the engine: the sender stamps arrival times, the receiver honours them.
#pragma once

#include "shm_layout.hpp"

#include <tilepipe/comm/link.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace tp::comm::detail {

/// Library-internal tag of the message that carries a put's notification over an emulated link.
inline constexpr int tag_link_put = -3;

/// With a link, short payloads end before the arrival stamp (the last 8 bytes of Cell::body).
inline constexpr std::size_t link_stamp_offset = 40;
static_assert(link_stamp_offset + sizeof(std::uint64_t) == cell_payload_bytes);
static_assert(sizeof(RtsBody) <= link_stamp_offset && sizeof(CtsBody) <= link_stamp_offset &&
              sizeof(FinBody) <= link_stamp_offset && sizeof(FragBody) <= link_stamp_offset);

/// Body of a tag_link_put message: which region and counter, and the bytes the notification
/// announces (a put's data, charged to the link; 0 for notify after direct stores).
struct LinkPutNotice {
  std::uint32_t region;
  std::uint32_t counter;
  std::uint64_t bytes;
};

/// steady_clock now, in nanoseconds since its epoch.
std::uint64_t link_now_ns() noexcept;

/// Per-rank link state. Times are steady_clock (CLOCK_MONOTONIC) nanoseconds, a clock shared by
/// every process of one host, so a stamp written by the sender means the same instant to the
/// receiver. Guarded by the Engine's lock.
class LinkEmulator {
 public:
  LinkEmulator(const Link& link, int ranks);

  /// Sender: a message of `bytes` to world rank `dest` starts now; returns its arrival time and
  /// marks the link to `dest` busy until max(now, free) + bytes / bandwidth.
  std::uint64_t depart(int dest, std::size_t bytes) noexcept;
  /// Sender, in write_cell: stamps the cell about to be published to `dest` (user messages and
  /// put notices are charged their bytes; protocol control cells carry stamp 0: no delay).
  void stamp(int dest, Cell& cell) noexcept;
  /// Receiver, in drain_channel: true when the cell's arrival time has passed; otherwise
  /// remembers it as the next time worth waking up for, and the channel stops there (FIFO).
  bool arrived(const Cell& cell) noexcept;

  /// Sender: when the link finishes pushing the last message stamped (its free time, ns).
  [[nodiscard]] std::uint64_t last_done_ns() const noexcept { return last_done_ns_; }
  /// Sender: keeps request `id` incomplete until `done_ns`.
  void hold_send(std::uint64_t id, std::uint64_t done_ns);
  /// Sender: calls `release(id)` for every held send whose time has passed; remembers the
  /// earliest one still held as a time worth waking up for.
  template <class Release>
  void release_due(Release&& release) {
    if (held_.empty()) return;
    const std::uint64_t now = link_now_ns();
    for (std::size_t k = held_.size(); k-- > 0;) {
      if (held_[k].done_ns <= now) {
        const std::uint64_t id = held_[k].id;
        held_[k] = held_.back();
        held_.pop_back();
        release(id);
      } else {
        next_due_ns_ = std::min(next_due_ns_, held_[k].done_ns);
      }
    }
  }

  /// Receiver: counts a put notice (tag_link_put payload) for its region.
  void on_put_notice(const std::byte* data, std::size_t bytes);
  /// Notifications delivered through the link for `region`'s `counter` (added to that counter).
  [[nodiscard]] std::uint64_t notices(std::uint32_t region, std::size_t counter) const noexcept;

  /// Forgets the earliest pending arrival (call before a progress pass that re-discovers it).
  void clear_next_due() noexcept { next_due_ns_ = UINT64_MAX; }
  /// How long a waiter may sleep: up to `limit`, but waking `spin` before the earliest pending
  /// arrival so that it polls (spins) across it; zero when that moment is already here.
  [[nodiscard]] std::chrono::nanoseconds sleep_time(std::chrono::nanoseconds limit,
                                                    std::chrono::nanoseconds spin) const noexcept;

  [[nodiscard]] const Link& link() const noexcept { return link_; }

 private:
  Link link_;
  double ns_per_byte_ = 0.0;
  std::vector<std::uint64_t> free_at_ns_;            ///< by destination world rank
  std::vector<std::vector<std::uint64_t>> notices_;  ///< by region id, then counter
  std::uint64_t next_due_ns_ = UINT64_MAX;
  std::uint64_t last_done_ns_ = 0;
  struct Held {
    std::uint64_t id;
    std::uint64_t done_ns;
  };
  std::vector<Held> held_;  ///< sends completing when the link has pushed their bytes
};

}  // namespace tp::comm::detail
