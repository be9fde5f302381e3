// Helpers for multi-process comm tests: checks inside forked ranks report through exit codes.
#pragma once

#include <tilepipe/comm/launch.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

/// Inside a rank body: on failure print the condition and return 1 from the body.
#define RANK_CHECK(cond)                                                                   \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "rank check failed: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

/// Inside a rank body: an Expected/Status must hold a value, else print its error and fail.
#define RANK_OK(expr)                                                                  \
  do {                                                                                 \
    const auto& rank_ok_v_ = (expr);                                                   \
    if (!rank_ok_v_) {                                                                 \
      std::fprintf(stderr, "rank error: %s at %s:%d: %s\n", #expr, __FILE__, __LINE__, \
                   rank_ok_v_.error().message.c_str());                                \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

namespace tp::comm::test {

/// Runs `body` on `ranks` forked ranks and expects every rank to return 0.
inline void run_ranks(int ranks, const Config& config, const std::function<int(World&)>& body) {
  auto result = launch_local(ranks, config, body);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  for (std::size_t r = 0; r < result->exit_codes.size(); ++r) {
    EXPECT_EQ(result->exit_codes[r], 0)
        << "rank " << r << " failed (signal " << result->term_signals[r] << ")";
  }
}

/// Deterministic content of message (src, dst, seq): byte i = hash(src, dst, seq, i).
inline std::byte pattern(int src, int dst, std::uint64_t seq, std::size_t i) {
  std::uint64_t x = (std::uint64_t(src) * 1315423911ULL) ^ (std::uint64_t(dst) * 2654435761ULL) ^
                    (seq * 0x9e3779b97f4a7c15ULL) ^ (i * 0xbf58476d1ce4e5b9ULL);
  x ^= x >> 31;
  return static_cast<std::byte>(x & 0xff);
}

inline std::vector<std::byte> make_message(int src, int dst, std::uint64_t seq, std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern(src, dst, seq, i);
  return v;
}

inline bool check_message(std::span<const std::byte> got, int src, int dst, std::uint64_t seq) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != pattern(src, dst, seq, i)) return false;
  }
  return true;
}

/// A config with small eager/slot sizes so that every protocol runs with few bytes.
inline Config small_config(SyncMode sync, RendezvousMode rendezvous) {
  Config c;
  c.sync = sync;
  c.rendezvous = rendezvous;
  c.short_max_bytes = 48;
  c.eager_max_bytes = 1024;
  c.slot_bytes = 4096;
  c.slots_per_channel = 4;
  c.credit_batch = 2;
  c.cells_per_channel = 8;
  c.cma_chunk_bytes = 4096;          // rendezvous of 8 KiB and more: cooperative cma
  c.shm_chunk_bytes = 4096;          // ... and cooperative copies between World memory
  c.shm_rendezvous_min_bytes = 512;  // World memory: rendezvous from 512 B (eager below)
  c.cma_min_bytes = 16384;           // automatic mode: copy below, cma above
  c.peer_timeout = std::chrono::seconds(5);
  return c;
}

// The small configuration with automatic rendezvous (the default of most tests).
inline Config small(SyncMode sync) {
  return small_config(sync, RendezvousMode::automatic);
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tp::comm::test
