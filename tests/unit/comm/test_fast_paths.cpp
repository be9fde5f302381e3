// Multi-process tests of the lock-free short-message paths and of World::allocate memory.
#include "rank_check.hpp"

#include <tilepipe/comm/world.hpp>

#include <unistd.h>

#include <array>
#include <cstring>
#include <thread>

namespace tp::comm {
namespace {

using test::check_message;
using test::make_message;
using test::run_ranks;

/// A short message carrying (thread, sequence number) and a checksum of both.
struct Tagged {
  std::uint32_t thread;
  std::uint32_t seq;
  std::uint64_t check;
};
std::uint64_t checksum(std::uint32_t thread, std::uint32_t seq) {
  return (std::uint64_t{thread} * 0x9e3779b97f4a7c15ULL) ^
         (std::uint64_t{seq} * 0xbf58476d1ce4e5b9ULL);
}

class FastPaths : public ::testing::TestWithParam<SyncMode> {};

TEST_P(FastPaths, many_threads_exchange_short_messages_in_order_with_intact_content) {
  Config cfg = test::small_config(GetParam(), RendezvousMode::automatic);
  // poll: every waiting thread spins, so on a 2-core machine a message often waits for the
  // scheduler to preempt a spinner (a fast receive spinning on a channel owns it). With two
  // other busy processes on the cores, 2 x 6 threads took 2-50 s and 2 x 2 threads 1-27 s;
  // 2 x 2 threads with fewer messages still mix the fast and general paths on every channel.
  const bool poll = GetParam() == SyncMode::poll;
  const int threads = poll ? 2 : 6;
  const std::uint32_t per_thread = poll ? 100 : 400;
  run_ranks(2, cfg, [threads, per_thread](World& w) {
    const int peer = 1 - w.rank();
    std::vector<int> failures(std::size_t(threads), 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const auto th = static_cast<std::uint32_t>(t);
        auto& bad = failures[std::size_t(t)];
        for (std::uint32_t i = 0; i < per_thread; ++i) {
          // Rank 0 threads ping on tag t, rank 1 threads pong on tag 100 + t: every channel
          // has several readers and writers at once, fast and general paths mixed.
          Tagged out{th, i, checksum(th, i)};
          Tagged in{};
          auto in_bytes = std::as_writable_bytes(std::span(&in, 1));
          if (w.rank() == 0) {
            if (!w.send(peer, t, std::as_bytes(std::span(&out, 1)))) ++bad;
            auto info = w.recv(peer, 100 + t, in_bytes);
            if (!info || info->bytes != sizeof(Tagged) || info->tag != 100 + t) ++bad;
          } else {
            auto info = w.recv(peer, t, in_bytes);
            if (!info || info->bytes != sizeof(Tagged) || info->tag != t) ++bad;
            if (!w.send(peer, 100 + t, std::as_bytes(std::span(&out, 1)))) ++bad;
          }
          // FIFO per (source, tag): message i of thread t is the i-th one received on tag t.
          if (in.thread != th || in.seq != i || in.check != checksum(th, i)) ++bad;
        }
      });
    }
    for (auto& th : pool) th.join();
    for (int f : failures) RANK_CHECK(f == 0);
    return 0;
  });
}

TEST_P(FastPaths, mix_with_posted_any_source_and_unexpected_messages_in_order) {
  Config cfg = test::small_config(GetParam(), RendezvousMode::automatic);
  run_ranks(3, cfg, [](World& w) {
    auto word = [](std::uint32_t v) {
      std::array<std::byte, 4> b{};
      std::memcpy(b.data(), &v, 4);
      return b;
    };
    auto value = [](std::span<const std::byte> b) {
      std::uint32_t v = 0;
      std::memcpy(&v, b.data(), 4);
      return v;
    };
    constexpr std::uint32_t rounds = 50;
    if (w.rank() != 0) {
      // Tag 1: four messages; tag 2: one short, one eager, one rendezvous message.
      for (std::uint32_t i = 0; i < 4; ++i) RANK_OK(w.send(0, 1, word(10 * w.rank() + i)));
      RANK_OK(w.send(0, 2, word(77)));
      RANK_OK(w.send(0, 2, make_message(w.rank(), 0, 1, 900)));
      const auto big = make_message(w.rank(), 0, 2, 20000);
      auto rendezvous = w.isend(0, 2, big);
      RANK_OK(rendezvous);
      RANK_OK(w.barrier());
      RANK_OK(w.wait(*rendezvous));
      // Then, without waiting: tag 8 ahead of tag 9, received in the other order.
      for (std::uint32_t i = 0; i < rounds && w.rank() == 1; ++i) {
        RANK_OK(w.send(0, 8, word(i)));
        RANK_OK(w.send(0, 9, word(1000 + i)));
      }
      return 0;
    }
    RANK_OK(w.barrier());  // everything but the rendezvous payload has arrived: unexpected now
    std::array<std::byte, 4> a{};
    std::array<std::byte, 4> b{};
    // A receive posted first takes the first message of (1, 1); the blocking one the second.
    auto posted = w.irecv(1, 1, a);
    RANK_OK(posted);
    RANK_OK(w.recv(1, 1, b));
    RANK_OK(w.wait(*posted));
    RANK_CHECK(value(a) == 10 && value(b) == 11);
    for (int src : {2, 1}) {
      std::array<std::byte, 4> s{};
      auto info = w.recv(src, 2, s);
      RANK_OK(info);
      RANK_CHECK(info->bytes == 4 && value(s) == 77);
      std::vector<std::byte> e(900);
      RANK_OK(w.recv(src, 2, e));
      RANK_CHECK(check_message(e, src, 0, 1));
      std::vector<std::byte> r(20000);
      RANK_OK(w.recv(src, 2, r));
      RANK_CHECK(check_message(r, src, 0, 2));
    }
    // any_tag from one source, then any_source: per-source order is kept.
    auto info = w.recv(1, any_tag, a);
    RANK_OK(info);
    RANK_CHECK(info->tag == 1 && value(a) == 12);
    std::array<std::uint32_t, 3> next = {0, 13, 20};  // expected next value per source
    for (int k = 0; k < 5; ++k) {
      auto got = w.recv(any_source, 1, a);
      RANK_OK(got);
      auto& want = next[std::size_t(got->source)];
      RANK_CHECK(value(a) == want);
      ++want;
    }
    RANK_CHECK(next[1] == 14 && next[2] == 24);
    // The fast receive of tag 9 meets tag-8 cells first (or finds them already buffered).
    for (std::uint32_t i = 0; i < rounds; ++i) {
      RANK_OK(w.recv(1, 9, b));
      RANK_OK(w.recv(1, 8, a));
      RANK_CHECK(value(a) == i && value(b) == 1000 + i);
    }
    return 0;
  });
}

INSTANTIATE_TEST_SUITE_P(Comm, FastPaths,
                         ::testing::Values(SyncMode::poll, SyncMode::hybrid, SyncMode::block),
                         [](const auto& p) { return std::string(to_string(p.param)); });

TEST(FastPaths, short_message_longer_than_the_buffer_is_an_error_naming_both_sizes) {
  run_ranks(2, test::small_config(SyncMode::poll, RendezvousMode::automatic), [](World& w) {
    if (w.rank() == 1) {
      RANK_OK(w.send(0, 4, make_message(1, 0, 0, 40)));
      RANK_OK(w.send(0, 4, make_message(1, 0, 1, 8)));
      return 0;
    }
    std::array<std::byte, 16> small{};
    auto info = w.recv(1, 4, small);
    RANK_CHECK(!info.has_value());
    RANK_CHECK(info.error().message.find("40 bytes") != std::string::npos);
    RANK_CHECK(info.error().message.find("16 bytes") != std::string::npos);
    auto next = w.recv(1, 4, small);
    RANK_OK(next);
    RANK_CHECK(next->bytes == 8 && check_message(std::span(small).first(8), 1, 0, 1));
    return 0;
  });
}

class Allocate : public ::testing::TestWithParam<SyncMode> {};

TEST_P(Allocate, rendezvous_from_and_into_world_memory_keeps_content) {
  Config cfg = test::small_config(GetParam(), RendezvousMode::automatic);
  run_ranks(2, cfg, [](World& w) {
    // Short, eager, either side of the World-memory rendezvous threshold (512 B), of the
    // cooperative chunks (4 KiB), odd sizes, and large ones.
    const std::array<std::size_t, 11> sizes = {40,   511,   512,     1025,    8191, 8192,
                                               8193, 65537, 1 << 20, 3000001, 4097};
    constexpr std::size_t most = 3000001;
    auto send_mem = w.allocate(most);
    auto recv_mem = w.allocate(most + 64);
    RANK_OK(send_mem);
    RANK_OK(recv_mem);
    std::vector<std::byte> user(most);
    const int peer = 1 - w.rank();
    std::uint64_t seq = 0;
    for (std::size_t n : sizes) {
      // World -> World (cooperative), World -> user, user -> World; both directions.
      for (int variant = 0; variant < 3; ++variant, ++seq) {
        const bool world_src = variant != 2;
        const bool world_dst = variant != 1;
        const int sender = static_cast<int>(seq % 2);
        std::span<std::byte> src = world_src ? send_mem->first(n) : std::span(user).first(n);
        std::span<std::byte> dst = world_dst ? recv_mem->subspan(64, n) : std::span(user).first(n);
        if (w.rank() == sender) {
          const auto msg = make_message(sender, peer, seq, n);
          std::memcpy(src.data(), msg.data(), n);
          RANK_OK(w.send(peer, 5, src));
        } else {
          auto info = w.recv(peer, 5, dst);
          RANK_OK(info);
          RANK_CHECK(info->bytes == n);
          RANK_CHECK(check_message(dst, peer, w.rank(), seq));
        }
      }
    }
    RANK_OK(w.barrier());
    return 0;
  });
}

INSTANTIATE_TEST_SUITE_P(Comm, Allocate,
                         ::testing::Values(SyncMode::poll, SyncMode::hybrid, SyncMode::block),
                         [](const auto& p) { return std::string(to_string(p.param)); });

TEST(Allocate, memory_is_zeroed_page_aligned_and_bounded) {
  run_ranks(2, test::small_config(SyncMode::hybrid, RendezvousMode::automatic), [](World& w) {
    auto mem = w.allocate(10000);
    RANK_OK(mem);
    RANK_CHECK(mem->size() == 10000);
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    RANK_CHECK(reinterpret_cast<std::uintptr_t>(mem->data()) % page == 0);
    for (std::byte b : *mem) RANK_CHECK(b == std::byte{0});
    auto zero = w.allocate(0);
    RANK_CHECK(!zero.has_value());
    RANK_CHECK(zero.error().code == Errc::invalid_argument);
    RANK_CHECK(zero.error().message.find("allocate(0 bytes)") != std::string::npos);
    auto huge = w.allocate(std::size_t{1} << 41);
    RANK_CHECK(!huge.has_value() && huge.error().code == Errc::invalid_argument);
    // A message larger than the receive buffer from World memory: error, nothing written.
    if (w.rank() == 0) {
      std::fill(mem->begin(), mem->end(), std::byte{1});
      RANK_OK(w.send(1, 6, *mem));
    } else {
      auto info = w.recv(0, 6, mem->first(9999));
      RANK_CHECK(!info.has_value() && info.error().code == Errc::out_of_range);
      for (std::byte b : *mem) RANK_CHECK(b == std::byte{0});
    }
    return 0;
  });
}

}  // namespace
}  // namespace tp::comm
