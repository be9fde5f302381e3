// Multi-process tests of the shm protocols at and around every threshold, in every sync mode.
#include "rank_check.hpp"

#include <tilepipe/comm/world.hpp>

#include <random>
#include <string>

namespace tp::comm {
namespace {

using test::check_message;
using test::make_message;
using test::run_ranks;

struct ProtoCase {
  SyncMode sync;
  RendezvousMode rendezvous;
};

class Protocols : public ::testing::TestWithParam<ProtoCase> {};

/// Sizes at each threshold and one byte either side, for the given config.
std::vector<std::size_t> threshold_sizes(const Config& c) {
  std::vector<std::size_t> s = {0, 1};
  for (std::size_t t :
       {c.short_max_bytes, c.eager_max_bytes, c.slot_bytes, c.slot_bytes * c.slots_per_channel}) {
    s.push_back(t - 1);
    s.push_back(t);
    s.push_back(t + 1);
  }
  s.push_back(3 * c.slot_bytes * c.slots_per_channel + 17);
  return s;
}

TEST_P(Protocols, round_trips_every_size_at_each_threshold_intact) {
  const Config cfg = test::small_config(GetParam().sync, GetParam().rendezvous);
  const auto sizes = threshold_sizes(cfg);
  run_ranks(2, cfg, [&](World& w) {
    const int peer = 1 - w.rank();
    std::uint64_t seq = 0;
    for (std::size_t n : sizes) {
      ++seq;
      std::vector<std::byte> buf(n + 64, std::byte{0xee});
      if (w.rank() == 0) {
        const auto msg = make_message(0, 1, seq, n);
        RANK_OK(w.send(peer, 5, msg));
        auto info = w.recv(peer, 6, std::span(buf).first(n));
        RANK_OK(info);
        RANK_CHECK(info->bytes == n && info->source == 1 && info->tag == 6);
        RANK_CHECK(check_message(std::span(buf).first(n), 1, 0, seq));
      } else {
        auto info = w.recv(peer, 5, std::span(buf).first(n));
        RANK_OK(info);
        RANK_CHECK(info->bytes == n && info->source == 0 && info->tag == 5);
        RANK_CHECK(check_message(std::span(buf).first(n), 0, 1, seq));
        const auto msg = make_message(1, 0, seq, n);
        RANK_OK(w.send(peer, 6, msg));
      }
      for (std::size_t i = n; i < buf.size(); ++i) RANK_CHECK(buf[i] == std::byte{0xee});
    }
    return 0;
  });
}

TEST_P(Protocols, random_sizes_between_four_ranks_keep_content) {
  // Four ranks on two cores: spinning ranks would starve each other, so poll becomes hybrid.
  const SyncMode sync = GetParam().sync == SyncMode::poll ? SyncMode::hybrid : GetParam().sync;
  const Config cfg = test::small_config(sync, GetParam().rendezvous);
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("random sizes seed %u\n", seed);
  constexpr int per_peer = 12;
  run_ranks(4, cfg, [&](World& w) {
    const int n = w.size();
    const int me = w.rank();
    auto size_of = [&](int src, int dst, int i) {
      std::mt19937 g(seed + static_cast<unsigned>(src * 1000 + dst * 100 + i));
      return std::uniform_int_distribution<std::size_t>(0, 40000)(g);
    };
    std::vector<std::vector<std::byte>> in, out;
    std::vector<Request> reqs;
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      for (int i = 0; i < per_peer; ++i) {
        in.emplace_back(size_of(p, me, i));
        auto r = w.irecv(p, i, in.back());
        RANK_OK(r);
        reqs.push_back(std::move(*r));
      }
    }
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      for (int i = 0; i < per_peer; ++i) {
        out.push_back(make_message(me, p, static_cast<std::uint64_t>(i), size_of(me, p, i)));
        auto r = w.isend(p, i, out.back());
        RANK_OK(r);
        reqs.push_back(std::move(*r));
      }
    }
    for (auto& r : reqs) RANK_OK(w.wait(r));
    std::size_t k = 0;
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      for (int i = 0; i < per_peer; ++i, ++k) {
        RANK_CHECK(check_message(in[k], p, me, static_cast<std::uint64_t>(i)));
      }
    }
    return 0;
  });
}

INSTANTIATE_TEST_SUITE_P(Comm, Protocols,
                         ::testing::Values(ProtoCase{SyncMode::poll, RendezvousMode::cma},
                                           ProtoCase{SyncMode::hybrid, RendezvousMode::copy},
                                           ProtoCase{SyncMode::block, RendezvousMode::cma},
                                           ProtoCase{SyncMode::block, RendezvousMode::copy}),
                         [](const auto& param_info) {
                           return std::string(to_string(param_info.param.sync)) + "_" +
                                  std::string(to_string(param_info.param.rendezvous));
                         });

TEST(Protocols, default_thresholds_round_trip_intact) {
  Config cfg;
  cfg.sync = SyncMode::hybrid;
  const std::vector<std::size_t> sizes = {cfg.short_max_bytes, cfg.short_max_bytes + 1,
                                          cfg.eager_max_bytes, cfg.eager_max_bytes + 1,
                                          cfg.slot_bytes + 1,  1 << 20};
  run_ranks(2, cfg, [&](World& w) {
    std::uint64_t seq = 0;
    for (std::size_t n : sizes) {
      std::vector<std::byte> buf(n);
      if (w.rank() == 0) {
        RANK_OK(w.send(1, 1, make_message(0, 1, ++seq, n)));
      } else {
        auto info = w.recv(0, 1, buf);
        RANK_OK(info);
        RANK_CHECK(info->bytes == n && check_message(buf, 0, 1, ++seq));
      }
    }
    return 0;
  });
}

}  // namespace
}  // namespace tp::comm
