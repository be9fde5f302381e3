// Regions written directly: peer_memory (mapped for shm peers only), notify on counters ordered
// after direct stores (several threads, several counters), and notifiers that exit or die.
#include "rank_check.hpp"

#include <tilepipe/comm/world.hpp>

#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace tp::comm {
namespace {

using test::contains;
using test::small;

using test::run_ranks;

TEST(Regions, peer_memory_is_the_peers_local_part_and_absent_for_self) {
  run_ranks(3, small(SyncMode::hybrid), [](World& w) {
    const std::size_t bytes = 5000 + 100 * static_cast<std::size_t>(w.rank());
    auto region = w.create_region(bytes, 4);
    RANK_OK(region);
    RANK_CHECK(!w.peer_memory(*region, w.rank()).has_value());
    RANK_CHECK(!w.peer_memory(*region, -1).has_value() && !w.peer_memory(*region, 3).has_value());
    RANK_CHECK(!w.peer_memory(Region{}, (w.rank() + 1) % 3).has_value());
    // Each rank writes its rank number at offset 8 * rank of both peers, then notifies their
    // counter `rank` (counter c of a rank counts only rank c's notifications).
    for (int p = 0; p < w.size(); ++p) {
      if (p == w.rank()) continue;
      auto mem = w.peer_memory(*region, p);
      RANK_CHECK(mem.has_value());
      RANK_CHECK(mem->size() == 5000 + 100 * static_cast<std::size_t>(p));
      const std::uint64_t value = 1000 + static_cast<std::uint64_t>(w.rank());
      std::memcpy(mem->data() + 8 * w.rank(), &value, sizeof value);
      RANK_OK(w.notify(*region, p, static_cast<std::size_t>(w.rank())));
    }
    for (int p = 0; p < w.size(); ++p) {
      if (p == w.rank()) continue;
      auto seen = w.wait_notifications(*region, 1, static_cast<std::size_t>(p), p);
      RANK_OK(seen);
      RANK_CHECK(*seen == 1);
      std::uint64_t value = 0;
      std::memcpy(&value, region->local().data() + 8 * p, sizeof value);
      RANK_CHECK(value == 1000 + static_cast<std::uint64_t>(p));
    }
    auto mine = w.notifications(*region, static_cast<std::size_t>(w.rank()));
    RANK_OK(mine);
    RANK_CHECK(*mine == 0);  // nobody notified this rank's own-index counter
    auto unused = w.notifications(*region, 3);
    RANK_OK(unused);
    RANK_CHECK(*unused == 0);
    RANK_OK(w.notify(*region, w.rank(), 3));  // self notification
    auto self = w.notifications(*region, 3);
    RANK_OK(self);
    RANK_CHECK(*self == 1);
    RANK_OK(w.barrier());
    return 0;
  });
}

TEST(Regions, bad_counters_are_errors_naming_the_value) {
  run_ranks(2, small(SyncMode::hybrid), [](World& w) {
    auto none = w.create_region(64, 0);
    RANK_CHECK(!none && none.error().code == Errc::invalid_argument &&
               contains(none.error().message, "not 0"));
    auto region = w.create_region(64, 2 + static_cast<std::size_t>(w.rank()));
    RANK_OK(region);
    auto over = w.notify(*region, 1 - w.rank(), 3);
    if (w.rank() == 0) {
      RANK_CHECK(!over && over.error().code == Errc::out_of_range &&
                 contains(over.error().message, "has 3 counters"));
    } else {
      RANK_CHECK(!over && contains(over.error().message, "has 2 counters"));
    }
    auto bad_rank = w.notify(*region, 2, 0);
    RANK_CHECK(!bad_rank && bad_rank.error().code == Errc::invalid_argument);
    auto read = w.notifications(*region, 9);
    RANK_CHECK(!read && read.error().code == Errc::out_of_range);
    RANK_OK(w.barrier());
    return 0;
  });
}

// Producer threads of rank 0 store into distinct words of rank 1's region and notify their own
// counter after each store; consumer threads of rank 1 wait for each count and must see the
// word. Every counter ends at exactly the number of notifications (no increment lost).
void notify_orders_stores_under_threads(SyncMode sync) {
  run_ranks(2, small(sync), [](World& w) {
    constexpr int threads = 4;
    constexpr std::size_t per_thread = 3000;
    auto region = w.create_region(threads * per_thread * sizeof(std::uint64_t), threads);
    RANK_OK(region);
    std::vector<int> failures(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const auto base = static_cast<std::size_t>(t) * per_thread;
        const auto tt = static_cast<std::size_t>(t);
        if (w.rank() == 0) {
          auto mem = w.peer_memory(*region, 1);
          if (!mem) {
            ++failures[tt];
            return;
          }
          auto* words = reinterpret_cast<std::uint64_t*>(mem->data());
          for (std::size_t k = 0; k < per_thread; ++k) {
            words[base + k] = (base + k) * 7 + 1;
            if (!w.notify(*region, 1, tt)) ++failures[tt];
          }
        } else {
          const auto* words = reinterpret_cast<const std::uint64_t*>(region->local().data());
          for (std::size_t k = 0; k < per_thread; k += 1 + k % 3) {
            auto seen = w.wait_notifications(*region, k + 1, tt, 0);
            if (!seen) {
              ++failures[tt];
              return;
            }
            // Every word stored before the count seen is visible, not only word k.
            for (std::size_t j = 0; j < std::min<std::size_t>(*seen, per_thread); ++j) {
              if (words[base + j] != (base + j) * 7 + 1) ++failures[tt];
            }
          }
        }
      });
    }
    for (auto& th : pool) th.join();
    for (int f : failures) RANK_CHECK(f == 0);
    if (w.rank() == 1) {
      for (std::size_t t = 0; t < threads; ++t) {
        auto seen = w.wait_notifications(*region, per_thread, t, 0);
        RANK_OK(seen);
        RANK_CHECK(*seen == per_thread);
      }
    }
    RANK_OK(w.barrier());
    return 0;
  });
}

TEST(Regions, notify_orders_direct_stores_under_threads_hybrid) {
  notify_orders_stores_under_threads(SyncMode::hybrid);
}

TEST(Regions, notify_orders_direct_stores_under_threads_block) {
  notify_orders_stores_under_threads(SyncMode::block);
}

TEST(Regions, a_notifier_that_exits_or_dies_ends_the_wait_with_an_error) {
  LaunchOptions keep_running;  // rank 0 must notice the death itself
  keep_running.stop_on_failure = false;
  for (const bool kill : {false, true}) {
    auto result = launch_local(
        2, small(SyncMode::block),
        [kill](World& w) {
          auto region = w.create_region(4096, 2);
          RANK_OK(region);
          if (w.rank() == 1) {
            RANK_OK(w.notify(*region, 0, 1));
            if (kill) std::raise(SIGKILL);
            return 0;  // exits cleanly without the second notification
          }
          auto seen = w.wait_notifications(*region, 2, 1, 1);
          RANK_CHECK(!seen && seen.error().code == Errc::peer_lost);
          RANK_CHECK(contains(seen.error().message, "rank 1"));
          return 0;
        },
        keep_running);
    ASSERT_TRUE(result.has_value()) << result.error().message;
    EXPECT_EQ(result->exit_codes[0], 0) << (kill ? "killed" : "exited");
  }
}

}  // namespace
}  // namespace tp::comm
