// Faults: truncation, invalid ranks/tags/regions, a killed peer, launcher exit codes, no shm left.
#include "rank_check.hpp"

#include <tilepipe/comm/world.hpp>

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tp::comm {
namespace {

using test::contains;
using test::small;

using test::check_message;
using test::make_message;
using test::run_ranks;

/// The entries of /dev/shm that tilepipe could have made (its shared files are memfds named
/// tilepipe-*; a named segment would carry the name too). Others' are left out: tests and MPI
/// jobs running beside this one (ctest -j, Open MPI's vader) come and go there.
std::set<std::string> dev_shm_entries() {
  std::set<std::string> out;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* e = ::readdir(d)) {
      if (std::string_view(e->d_name).find("tilepipe") != std::string_view::npos) {
        out.insert(e->d_name);
      }
    }
    ::closedir(d);
  }
  return out;
}

TEST(Faults, truncation_names_both_sizes_and_writes_nothing_past_the_buffer) {
  for (RendezvousMode mode : {RendezvousMode::cma, RendezvousMode::copy}) {
    run_ranks(2, test::small_config(SyncMode::hybrid, mode), [](World& w) {
      for (std::size_t n : {40, 900, 30000}) {  // short, eager, rendezvous
        if (w.rank() == 0) {
          RANK_OK(w.send(1, 1, make_message(0, 1, n, n)));
          RANK_OK(w.send(1, 2, make_message(0, 1, n + 1, 8)));
        } else {
          std::vector<std::byte> buf(n, std::byte{0x11});
          auto info = w.recv(0, 1, std::span(buf).first(n / 2));
          RANK_CHECK(!info);
          RANK_CHECK(info.error().code == Errc::out_of_range);
          RANK_CHECK(contains(info.error().message, std::to_string(n) + " bytes"));
          RANK_CHECK(contains(info.error().message, std::to_string(n / 2) + " bytes"));
          for (std::byte b : buf) RANK_CHECK(b == std::byte{0x11});
          // The channel keeps working after a refused message.
          std::array<std::byte, 8> next{};
          RANK_OK(w.recv(0, 2, next));
          RANK_CHECK(test::check_message(next, 0, 1, n + 1));
        }
      }
      return 0;
    });
  }
}

TEST(Faults, invalid_rank_tag_and_region_are_errors) {
  run_ranks(2, small(SyncMode::hybrid), [](World& w) {
    std::array<std::byte, 4> b{};
    auto s = w.send(2, 0, b);
    RANK_CHECK(!s && s.error().code == Errc::invalid_argument &&
               contains(s.error().message, "rank 2"));
    s = w.send(-1, 0, b);
    RANK_CHECK(!s && s.error().code == Errc::invalid_argument);
    s = w.send(1 - w.rank(), -5, b);
    RANK_CHECK(!s && contains(s.error().message, "tag -5"));
    s = w.send(1 - w.rank(), max_tag + 1, b);
    RANK_CHECK(!s && s.error().code == Errc::invalid_argument);
    auto r = w.irecv(7, 0, b);
    RANK_CHECK(!r && contains(r.error().message, "rank 7"));
    r = w.irecv(0, -3, b);
    RANK_CHECK(!r && r.error().code == Errc::invalid_argument);
    Region none;
    auto p = w.put(none, 0, 0, b);
    RANK_CHECK(!p && p.error().code == Errc::invalid_argument &&
               contains(p.error().message, "region"));
    auto region = w.create_region(64);
    RANK_OK(region);
    p = w.put(*region, 5, 0, b);
    RANK_CHECK(!p && contains(p.error().message, "rank 5"));
    Request inactive;
    auto t = w.wait(inactive);
    RANK_CHECK(!t && t.error().code == Errc::invalid_argument);
    RANK_OK(w.barrier());
    return 0;
  });
}

TEST(Faults, killed_peer_fails_every_waiting_call_and_leaves_no_shm) {
  const auto before = dev_shm_entries();
  Config cfg = small(SyncMode::block);
  cfg.peer_timeout = std::chrono::seconds(2);
  // The launcher leaves the survivors running: they must notice the death themselves.
  LaunchOptions keep_running;
  keep_running.stop_on_failure = false;
  auto result = launch_local(
      3, cfg,
      [](World& w) {
        if (w.rank() == 2) {
          RANK_OK(w.barrier());
          ::raise(SIGKILL);
        }
        RANK_OK(w.barrier());  // the barrier may or may not see rank 2 die: it completes before
        std::array<std::byte, 64> buf{};
        // Rank 0 waits on rank 2, rank 1 waits on anyone: both must fail, naming rank 2.
        auto info = w.recv(w.rank() == 0 ? 2 : any_source, 1, buf);
        RANK_CHECK(!info);
        RANK_CHECK(info.error().code == Errc::peer_lost);
        RANK_CHECK(contains(info.error().message, "rank 2"));
        return 0;
      },
      keep_running);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->exit_codes[0], 0);
  EXPECT_EQ(result->exit_codes[1], 0);
  EXPECT_EQ(result->term_signals[2], SIGKILL);
  EXPECT_NE(result->status(), 0);
  EXPECT_EQ(dev_shm_entries(), before);
}

TEST(Faults, rank_that_exits_early_fails_receives_from_it) {
  auto result = launch_local(2, small(SyncMode::hybrid), [](World& w) {
    if (w.rank() == 1) return 0;  // leaves without sending
    std::array<std::byte, 8> buf{};
    auto info = w.recv(1, 0, buf);
    RANK_CHECK(!info && info.error().code == Errc::peer_lost);
    RANK_CHECK(contains(info.error().message, "rank 1"));
    return 0;
  });
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status(), 0);
}

TEST(Faults, launcher_reports_failing_ranks) {
  LaunchOptions keep_running;
  keep_running.stop_on_failure = false;
  auto result = launch_local(
      3, small(SyncMode::hybrid),
      [](World& w) -> int {
        if (w.rank() == 1) return 3;
        if (w.rank() == 2) throw std::runtime_error("boom");
        return 0;
      },
      keep_running);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->exit_codes, (std::vector<int>{0, 3, 1}));
  EXPECT_TRUE(result->status() == 3 || result->status() == 1) << result->status();
  ASSERT_TRUE(result->ranks[2].error.has_value());
  EXPECT_EQ(result->ranks[2].error->message, "boom");
  EXPECT_EQ(result->ranks[2].error->rank, 2);
  EXPECT_EQ(result->ranks[2].error->code, Errc::internal);
  EXPECT_FALSE(result->ranks[1].error.has_value());
  auto bad = launch_local(0, small(SyncMode::hybrid), [](World&) { return 0; });
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
}

TEST(Faults, no_shared_memory_object_is_left_behind) {
  const auto before = dev_shm_entries();
  run_ranks(2, small(SyncMode::hybrid), [](World& w) {
    auto region = w.create_region(4096);
    RANK_OK(region);
    auto mem = w.allocate(1 << 20);  // mapped by the peer on the rendezvous below
    RANK_OK(mem);
    const auto big = make_message(0, 0, 0, 1 << 20);
    std::memcpy(mem->data(), big.data(), big.size());
    auto out = w.isend(1 - w.rank(), 1, *mem);
    RANK_OK(out);
    std::vector<std::byte> in(1 << 20);
    RANK_OK(w.recv(1 - w.rank(), 1, in));
    RANK_OK(w.wait(*out));
    RANK_CHECK(check_message(in, 0, 0, 0));
    const auto msg = make_message(0, 0, 0, 100000);
    auto sent = w.isend(1 - w.rank(), 0, msg);
    RANK_OK(sent);
    std::vector<std::byte> buf(100000);
    RANK_OK(w.recv(1 - w.rank(), 0, buf));
    RANK_OK(w.wait(*sent));
    return 0;
  });
  EXPECT_EQ(dev_shm_entries(), before);
}

TEST(Config, rejects_inconsistent_values_naming_the_field) {
  Config c;
  EXPECT_TRUE(c.validate().has_value());
  c.short_max_bytes = 49;
  ASSERT_FALSE(c.validate().has_value());
  EXPECT_TRUE(contains(c.validate().error().message, "short_max_bytes 49"));
  c = Config{};
  c.eager_max_bytes = c.slot_bytes + 1;
  EXPECT_FALSE(c.validate().has_value());
  c = Config{};
  c.cells_per_channel = 48;
  EXPECT_TRUE(contains(c.validate().error().message, "power of two"));
  c = Config{};
  c.shm_chunk_bytes = 100;
  ASSERT_FALSE(c.validate().has_value());
  EXPECT_TRUE(contains(c.validate().error().message, "shm_chunk_bytes 100"));
  c = Config{};
  c.credit_batch = c.slots_per_channel + 1;
  EXPECT_FALSE(c.validate().has_value());
}

TEST(Config, parses_mode_names) {
  EXPECT_EQ(*parse_sync_mode("poll", "--sync"), SyncMode::poll);
  EXPECT_EQ(*parse_sync_mode("hybrid", "--sync"), SyncMode::hybrid);
  EXPECT_EQ(*parse_transport("mpi", "--transport"), TransportKind::mpi);
  EXPECT_EQ(*parse_rendezvous("copy", "--rendezvous"), RendezvousMode::copy);
  auto bad = parse_sync_mode("spin", "--sync");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "--sync: 'spin' is not a sync mode (poll, block, hybrid)");
}

}  // namespace
}  // namespace tp::comm
