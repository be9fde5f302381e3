// MPI transport tests: run under mpirun (2-3 ranks); every rank runs every test collectively.
#include <tilepipe/comm/world.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace tp::comm {
namespace {

World* g_world = nullptr;
TransportKind g_transport = TransportKind::automatic;

std::byte pattern(int src, int dst, std::uint64_t seq, std::size_t i) {
  std::uint64_t x = (std::uint64_t(src) * 1315423911ULL) ^ (std::uint64_t(dst) * 2654435761ULL) ^
                    (seq * 0x9e3779b97f4a7c15ULL) ^ (i * 0xbf58476d1ce4e5b9ULL);
  x ^= x >> 31;
  return static_cast<std::byte>(x & 0xff);
}

std::vector<std::byte> make_message(int src, int dst, std::uint64_t seq, std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern(src, dst, seq, i);
  return v;
}

bool check_message(std::span<const std::byte> got, int src, int dst, std::uint64_t seq) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != pattern(src, dst, seq, i)) return false;
  }
  return true;
}

TEST(MpiWorld, reports_ranks_and_transports) {
  World& w = *g_world;
  ASSERT_GE(w.size(), 2);
  ASSERT_LT(w.rank(), w.size());
  const std::string_view expected = g_transport == TransportKind::mpi ? "mpi" : "shm";
  for (int p = 0; p < w.size(); ++p) {
    EXPECT_EQ(w.transport_to(p), p == w.rank() ? "self" : expected) << "peer " << p;
  }
  ASSERT_TRUE(w.barrier().has_value());
}

TEST(MpiWorld, ring_exchange_of_every_protocol_size_is_intact) {
  World& w = *g_world;
  const int n = w.size();
  const int right = (w.rank() + 1) % n;
  const int left = (w.rank() + n - 1) % n;
  std::uint64_t seq = 0;
  for (std::size_t bytes : {0UL, 1UL, 48UL, 49UL, 16384UL, 16385UL, 65537UL, 1UL << 20}) {
    ++seq;
    const auto msg = make_message(w.rank(), right, seq, bytes);
    std::vector<std::byte> buf(bytes);
    auto r = w.irecv(left, 3, buf);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ASSERT_TRUE(w.send(right, 3, msg).has_value());
    auto info = w.wait(*r);
    ASSERT_TRUE(info.has_value()) << info.error().message;
    EXPECT_EQ(info->bytes, bytes);
    EXPECT_EQ(info->source, left);
    EXPECT_TRUE(check_message(buf, left, w.rank(), seq)) << bytes << " bytes";
  }
}

TEST(MpiWorld, any_source_out_of_order_tags_and_truncation) {
  World& w = *g_world;
  if (w.rank() != 0) {
    ASSERT_TRUE(w.send(0, 1, make_message(w.rank(), 0, 1, 100)).has_value());
    ASSERT_TRUE(w.send(0, 2, make_message(w.rank(), 0, 2, 30000)).has_value());
    ASSERT_TRUE(w.send(0, 5, make_message(w.rank(), 0, 5, 64)).has_value());
  } else {
    std::set<int> seen;
    for (int i = 1; i < w.size(); ++i) {
      std::vector<std::byte> buf(30000);
      auto info = w.recv(any_source, 2, buf);  // tag 2 first, though tag 1 was sent first
      ASSERT_TRUE(info.has_value()) << info.error().message;
      EXPECT_TRUE(check_message(buf, info->source, 0, 2));
      seen.insert(info->source);
    }
    EXPECT_EQ(static_cast<int>(seen.size()), w.size() - 1);
    for (int p = 1; p < w.size(); ++p) {
      std::vector<std::byte> buf(100);
      auto info = w.recv(p, 1, buf);
      ASSERT_TRUE(info.has_value()) << info.error().message;
      EXPECT_TRUE(check_message(buf, p, 0, 1));
      std::vector<std::byte> small(32, std::byte{0x33});
      auto trunc = w.recv(p, 5, std::span(small).first(16));
      ASSERT_FALSE(trunc.has_value());
      EXPECT_EQ(trunc.error().code, Errc::out_of_range);
      EXPECT_NE(trunc.error().message.find("64 bytes"), std::string::npos) << trunc.error().message;
      EXPECT_NE(trunc.error().message.find("16 bytes"), std::string::npos) << trunc.error().message;
      for (std::byte b : small) EXPECT_EQ(b, std::byte{0x33});
    }
  }
  ASSERT_TRUE(w.barrier().has_value());
}

TEST(MpiWorld, threads_send_concurrently) {
  World& w = *g_world;
  const int n = w.size();
  const int right = (w.rank() + 1) % n;
  const int left = (w.rank() + n - 1) % n;
  constexpr int threads = 3;
  std::array<int, threads> failures{};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const std::size_t bytes = static_cast<std::size_t>((i * 131 + t) % 20000);
        const auto seq = static_cast<std::uint64_t>(t * 1000 + i);
        const auto msg = make_message(w.rank(), right, seq, bytes);
        std::vector<std::byte> buf(bytes);
        auto r = w.irecv(left, 10 + t, buf);
        if (!r || !w.send(right, 10 + t, msg)) {
          ++failures[std::size_t(t)];
          continue;
        }
        auto info = w.wait(*r);
        if (!info || !check_message(buf, left, w.rank(), seq)) ++failures[std::size_t(t)];
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
  ASSERT_TRUE(w.barrier().has_value());
}

TEST(MpiWorld, puts_land_before_their_notification) {
  World& w = *g_world;
  const int n = w.size();
  const int right = (w.rank() + 1) % n;
  const int left = (w.rank() + n - 1) % n;
  auto region = w.create_region(8192);
  ASSERT_TRUE(region.has_value()) << region.error().message;
  for (int k = 0; k < 4; ++k) {
    const auto msg = make_message(w.rank(), right, static_cast<std::uint64_t>(k), 2048);
    auto s = w.put(*region, right, static_cast<std::size_t>(k) * 2048, msg);
    ASSERT_TRUE(s.has_value()) << s.error().message;
  }
  auto seen = w.wait_notifications(*region, 4);
  ASSERT_TRUE(seen.has_value()) << seen.error().message;
  EXPECT_EQ(*seen, 4U);
  for (int k = 0; k < 4; ++k) {
    EXPECT_TRUE(check_message(region->local().subspan(static_cast<std::size_t>(k) * 2048, 2048),
                              left, w.rank(), static_cast<std::uint64_t>(k)));
  }
  // A peer's memory is mapped only over shared memory; notify works on counter 0 either way
  // (after a barrier: every rank has seen its 4 notifications).
  ASSERT_TRUE(w.barrier().has_value());
  for (int p = 0; p < n; ++p) {
    EXPECT_EQ(w.peer_memory(*region, p).has_value(), w.transport_to(p) == "shm") << "rank " << p;
  }
  ASSERT_TRUE(w.notify(*region, right).has_value());
  seen = w.wait_notifications(*region, 5, 0, left);
  ASSERT_TRUE(seen.has_value()) << seen.error().message;
  EXPECT_EQ(*seen, 5U);
  auto over = w.put(*region, right, 8000, make_message(0, 0, 0, 200));
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, Errc::out_of_range);
  ASSERT_TRUE(w.barrier().has_value());
}

}  // namespace
}  // namespace tp::comm

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  tp::comm::Config cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--transport=", 0) == 0) {
      auto t = tp::comm::parse_transport(a.substr(12), "--transport");
      if (!t) {
        std::fprintf(stderr, "%s\n", t.error().message.c_str());
        return 2;
      }
      cfg.transport = *t;
    }
  }
  tp::comm::g_transport = cfg.transport;
  auto world = tp::comm::World::from_mpi(cfg);
  if (!world) {
    std::fprintf(stderr, "tilepipe: error: %s\n", world.error().message.c_str());
    return 1;
  }
  tp::comm::g_world = &*world;
  if (world->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
