// Calibration probes on a World: ping-pong by size, isend cost, notification latency; barriers.
#include <tilepipe/exec/calibration.hpp>
#include <tilepipe/exec/step_team.hpp>

#include <algorithm>
#include <chrono>
#include <span>

namespace tp::exec {

namespace {

using Clock = std::chrono::steady_clock;

double median_of(std::vector<double> v) {
  TP_EXPECTS(!v.empty());
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double since(Clock::time_point a) {
  return std::chrono::duration<double>(Clock::now() - a).count();
}

/// Round trips of `bytes`-byte messages between ranks 0 and 1; on rank 0 the medians of the
/// round trip and of the isend call.
Expected<std::pair<double, double>> ping_pong(comm::World& world, std::int64_t bytes, int rounds,
                                              int tag) {
  std::vector<std::byte> out(static_cast<std::size_t>(bytes));
  std::vector<std::byte> in(static_cast<std::size_t>(bytes));
  std::vector<double> rtt;
  std::vector<double> start;
  const int me = world.rank();
  for (int r = 0; r < rounds + 1; ++r) {  // round 0 warms the path (faults in the pages)
    if (me == 0) {
      auto recv = world.irecv(1, tag, in);
      if (!recv) return Unexpected{recv.error()};
      const auto a = Clock::now();
      auto send = world.isend(1, tag, out);
      const double s = since(a);
      if (!send) return Unexpected{send.error()};
      if (auto w = world.wait(*send); !w) return Unexpected{w.error()};
      if (auto w = world.wait(*recv); !w) return Unexpected{w.error()};
      if (r > 0) {
        rtt.push_back(since(a));
        start.push_back(s);
      }
    } else if (me == 1) {
      if (auto w = world.recv(0, tag, in); !w) return Unexpected{w.error()};
      if (auto w = world.send(0, tag, out); !w) return Unexpected{w.error()};
    }
  }
  if (me != 0) return std::pair<double, double>{0, 0};
  return std::pair<double, double>{median_of(rtt), median_of(start)};
}

}  // namespace

Expected<CommProbeResult> probe_comm(comm::World& world, const CommProbeOptions& opts) {
  if (world.size() < 2) {
    return fail(Errc::invalid_argument, "the communication probe needs at least 2 ranks");
  }
  TP_EXPECTS(opts.round_trips >= 3);
  CommProbeResult result;
  int tag = 0;
  for (const std::int64_t bytes : opts.sizes) {
    TP_EXPECTS(bytes >= 1);
    constexpr std::int64_t budget = std::int64_t{64} << 20;  // bytes moved per size at most
    const int rounds =
        static_cast<int>(std::clamp<std::int64_t>(budget / bytes, 3, opts.round_trips));
    TP_TRY(world.barrier());
    auto r = ping_pong(world, bytes, rounds, tag++);
    if (!r) return Unexpected{r.error()};
    result.one_way_s.emplace_back(bytes, r->first / 2);
    result.isend_s.emplace_back(bytes, r->second);
  }
  TP_TRY(world.barrier());
  auto n = ping_pong(world, 8, std::max(opts.round_trips, 50), tag);
  if (!n) return Unexpected{n.error()};
  result.notify_s = n->first / 2;
  TP_TRY(world.barrier());
  return result;
}

double measure_thread_sync_s(int threads) {
  TP_EXPECTS(threads >= 2);
  constexpr Index rounds = 200;
  std::vector<double> batches;
  for (int b = 0; b < 7; ++b) {
    const auto a = Clock::now();
    run_steps(threads, rounds, [](int, Index) {});
    batches.push_back(since(a) / static_cast<double>(rounds));
  }
  return median_of(batches);
}

}  // namespace tp::exec
