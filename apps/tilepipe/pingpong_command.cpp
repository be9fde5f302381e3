// `tilepipe pingpong`: one-way latency and bandwidth between ranks 0 and 1 of a comm World.
#include "comm_options.hpp"
#include "command.hpp"
#include "parse_cli.hpp"

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/calibration.hpp>
#include <tilepipe/model/fit.hpp>
#include <tilepipe/runtime/ranks.hpp>
#include <tilepipe/runtime/run_options.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/core.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace tp::app {
namespace {

struct PingpongOptions {
  int ranks = 2;
  std::vector<std::size_t> sizes;
  std::int64_t iters = 1000;
  bool json = false;
  bool pin = true;
  bool world_buffers = true;  ///< --buffers world: the message buffer comes from World::allocate
  bool cacheline = false;     ///< --cacheline: interleave raw cache-line round trips (shm only)
};

struct SizeResult {
  std::size_t bytes = 0;
  std::int64_t round_trips = 0;
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  // --cacheline: the raw cache-line reference, batch for batch with the messages.
  double line_median_us = 0;
  double line_min_us = 0;
  double ratio_median = 0;  ///< median over batches of (message batch / cache-line batch)
};

/// The raw cache-line ping-pong between ranks 0 and 1 (comm_limits' cacheline, but between the
/// benchmark's own two processes): a flag store answered by a flag store, nothing else. Like a
/// channel's cells, round trip i uses line i mod 64 of a 4 KiB ring in each direction, so the
/// reference touches lines the way the messages do. Timed right after each message batch: the
/// VM's cross-core latency changes from one minute to the next, and a ratio of two batches taken
/// back to back on the same cores is the comparison that survives it.
class CachelineProbe {
 public:
  static constexpr std::size_t lines = 64;
  static constexpr std::size_t ring_bytes = lines * 64;

  static Expected<CachelineProbe> create(comm::World& world) {
    auto region = world.create_region(2 * ring_bytes);
    if (!region) return Unexpected{region.error()};
    std::span<std::byte> mem = region->local();
    if (world.rank() <= 1) {
      // Both ranks check (and both fail alike): the rings live in rank 0's part of the region.
      auto peer = world.peer_memory(*region, 1 - world.rank());
      if (!peer) {
        return fail(Errc::invalid_argument,
                    "--cacheline: ranks 0 and 1 must share memory (transport shm)");
      }
      if (world.rank() == 1) mem = *peer;
    }
    CachelineProbe probe;
    probe.ping_ = mem.data();
    probe.pong_ = mem.data() + ring_bytes;
    return probe;
  }
  /// `trips` round trips; both ranks call it with the same count. A partner that stops
  /// answering (it died) ends the wait with an error after `timeout`, never a hang.
  Status run(int rank, std::int64_t trips, std::chrono::milliseconds timeout) {
    for (std::int64_t i = 0; i < trips; ++i) {
      ++n_;
      auto& ping = flag(ping_, n_);
      auto& pong = flag(pong_, n_);
      // release/acquire: the flags carry no data; the orders only keep the loop honest.
      if (rank == 0) {
        ping.store(n_, std::memory_order_release);
        TP_TRY(await(pong, timeout));
      } else if (rank == 1) {
        TP_TRY(await(ping, timeout));
        pong.store(n_, std::memory_order_release);
      }
    }
    return {};
  }

 private:
  /// Spins until `f` holds n_; reads the clock only every 2^16 polls (off the timed path).
  Status await(const std::atomic<std::uint64_t>& f, std::chrono::milliseconds timeout) const {
    std::chrono::steady_clock::time_point deadline{};
    for (std::uint32_t spins = 1; f.load(std::memory_order_acquire) != n_; ++spins) {
      if ((spins & 0xffff) != 0) continue;
      const auto now = std::chrono::steady_clock::now();
      if (deadline == std::chrono::steady_clock::time_point{}) {
        deadline = now + timeout;
      } else if (now > deadline) {
        return fail(Errc::peer_lost, "--cacheline: the other rank did not answer within " +
                                         std::to_string(timeout.count()) + " ms");
      }
    }
    return {};
  }
  static std::atomic<std::uint64_t>& flag(std::byte* ring, std::uint64_t n) noexcept {
    return *reinterpret_cast<std::atomic<std::uint64_t>*>(ring + (n % lines) * 64);
  }
  std::byte* ping_ = nullptr;
  std::byte* pong_ = nullptr;
  std::uint64_t n_ = 0;
};

double min_of(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}
double max_of(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end());
}

bool is_pow2(std::int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

Expected<std::vector<std::size_t>> parse_sizes(const std::string& text) {
  const auto parts = split(text, ':');
  if (parts.size() > 2) {
    return fail(Errc::invalid_argument,
                "--sizes: '" + text + "' is not a size or a range like 0:4MiB");
  }
  auto lo = parse_bytes(parts[0], "--sizes");
  if (!lo) return Unexpected{lo.error()};
  auto hi = parts.size() == 2 ? parse_bytes(parts[1], "--sizes") : lo;
  if (!hi) return Unexpected{hi.error()};
  for (std::int64_t v : {*lo, *hi}) {
    if (v != 0 && !is_pow2(v)) {
      return fail(Errc::invalid_argument,
                  "--sizes: " + std::to_string(v) + " is not 0 or a power of two");
    }
  }
  if (*lo > *hi) {
    return fail(Errc::invalid_argument, "--sizes: lower bound " + std::to_string(*lo) +
                                            " exceeds upper bound " + std::to_string(*hi));
  }
  if (*hi > (std::int64_t{1} << 30)) {
    return fail(Errc::out_of_range,
                "--sizes: " + std::to_string(*hi) + " bytes exceeds the limit of 1GiB");
  }
  std::vector<std::size_t> out;
  if (*lo == 0) out.push_back(0);
  for (std::int64_t v = std::max<std::int64_t>(*lo, 1); v <= *hi; v *= 2) {
    out.push_back(static_cast<std::size_t>(v));
  }
  return out;
}

/// Round trips for one size: `iters` up to 64 KiB, then fewer so each size costs about as much.
std::int64_t round_trips_for(std::size_t bytes, std::int64_t iters) {
  if (bytes <= 65536) return iters;
  return std::max<std::int64_t>(10, iters * 65536 / static_cast<std::int64_t>(bytes));
}

Status ping_pong(comm::World& world, const PingpongOptions& opt, std::vector<SizeResult>& out) {
  const std::size_t max_bytes = opt.sizes.empty() ? 0 : opt.sizes.back();
  std::vector<std::byte> user_buf;
  std::span<std::byte> buf;
  if (opt.world_buffers) {
    auto mem = world.allocate(std::max<std::size_t>(max_bytes, 1));
    if (!mem) return Unexpected{mem.error()};
    buf = *mem;
  } else {
    user_buf.resize(std::max<std::size_t>(max_bytes, 1));
    buf = user_buf;
  }
  std::fill(buf.begin(), buf.end(), std::byte{0x5a});
  const int me = world.rank();
  constexpr int tag = 7;
  std::optional<CachelineProbe> probe;
  if (opt.cacheline) {
    auto made = CachelineProbe::create(world);
    if (!made) return Unexpected{made.error()};
    probe = *made;
  }
  const auto timeout = world.config().peer_timeout;
  for (std::size_t bytes : opt.sizes) {
    std::span<std::byte> msg(buf.data(), bytes);
    const std::int64_t trips = round_trips_for(bytes, opt.iters);
    const std::int64_t batches = std::min<std::int64_t>(trips, 15);
    const std::int64_t per_batch = trips / batches;
    const std::int64_t warm = std::max<std::int64_t>(2, per_batch / 4);
    TP_TRY(world.barrier());
    TP_TRY(exec::time_round_trips(world, msg, msg, {tag, 1, warm, false, nullptr}));
    if (probe) TP_TRY(probe->run(me, warm, timeout));
    // Right after each batch of messages, on the same cores: both see the same placement of the
    // two vCPUs, which on a VM can change from one second to the next.
    std::vector<double> line_us;
    std::vector<double> ratios;
    std::function<Status(std::int64_t)> after_batch;
    if (probe) {
      after_batch = [&](std::int64_t) -> Status {
        const auto t0 = std::chrono::steady_clock::now();
        TP_TRY(probe->run(me, per_batch, timeout));
        const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
        line_us.push_back(dt.count() / (2.0 * static_cast<double>(per_batch)));
        return {};
      };
    }
    auto timed =
        exec::time_round_trips(world, msg, msg, {tag, batches, per_batch, false, after_batch});
    if (!timed) return Unexpected{timed.error()};
    std::vector<double> one_way_us;
    for (std::size_t b = 0; b < timed->one_way_s.size(); ++b) {
      one_way_us.push_back(timed->one_way_s[b] * 1e6);
      if (probe) ratios.push_back(one_way_us.back() / line_us[b]);
    }
    if (one_way_us.empty()) continue;  // ranks beyond 1 only join
    SizeResult r{bytes, per_batch * batches, model::median(one_way_us), min_of(one_way_us),
                 max_of(one_way_us)};
    if (probe) {
      r.line_median_us = model::median(line_us);
      r.line_min_us = min_of(line_us);
      r.ratio_median = model::median(ratios);
    }
    out.push_back(r);
  }
  return world.barrier();
}

double bandwidth_mb_per_s(const SizeResult& r) {
  return r.median_us > 0 ? static_cast<double>(r.bytes) / r.median_us : 0.0;  // B/us == MB/s
}

void print_results(const comm::World& world, const PingpongOptions& opt,
                   const std::vector<SizeResult>& results) {
  const auto& cfg = world.config();
  const std::string transport(world.transport_to(1));
  const std::string sync(comm::to_string(cfg.sync));
  if (opt.json) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& r : results) {
      arr.push_back({{"bytes", r.bytes},
                     {"latency_us", r.median_us},
                     {"latency_us_min", r.min_us},
                     {"latency_us_max", r.max_us},
                     {"bandwidth_mb_per_s", bandwidth_mb_per_s(r)},
                     {"round_trips", r.round_trips},
                     {"transport", transport},
                     {"sync", sync},
                     {"link", comm::to_string(cfg.link)},
                     {"buffers", opt.world_buffers ? "world" : "user"},
                     {"ranks", world.size()}});
      if (opt.cacheline) {
        arr.back()["cacheline_us"] = r.line_median_us;
        arr.back()["cacheline_us_min"] = r.line_min_us;
        arr.back()["ratio_to_cacheline"] = r.ratio_median;
      }
    }
    nlohmann::ordered_json j = json_preamble("pingpong");
    j["results"] = std::move(arr);
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print(
      "# tilepipe pingpong: {} ranks, transport {}, sync {}, rendezvous {}, buffers {}, pinned "
      "{}{}\n",
      world.size(), transport, sync, comm::to_string(world.rendezvous_mode()),
      opt.world_buffers ? "world" : "user", opt.pin ? "yes" : "no",
      cfg.link.enabled ? ", emulated link " + comm::to_string(cfg.link) : "");
  fmt::print("# one-way latency = round trip / 2; median, min and max over up to 15 batches\n");
  if (opt.cacheline) {
    fmt::print(
        "# line_us: raw cache-line one-way latency, timed after each batch on the same "
        "ranks; ratio: median of the batches' latency / line\n");
  }
  fmt::print("{:>10} {:>12} {:>10} {:>10} {:>12} {:>8}", "bytes", "latency_us", "min_us", "max_us",
             "MB/s", "trips");
  fmt::print("{}\n", opt.cacheline ? fmt::format(" {:>10} {:>8}", "line_us", "ratio") : "");
  for (const auto& r : results) {
    fmt::print("{:>10} {:>12.3f} {:>10.3f} {:>10.3f} {:>12.1f} {:>8}", r.bytes, r.median_us,
               r.min_us, r.max_us, bandwidth_mb_per_s(r), r.round_trips);
    fmt::print("{}\n", opt.cacheline
                           ? fmt::format(" {:>10.3f} {:>8.2f}", r.line_median_us, r.ratio_median)
                           : "");
  }
}

/// One rank's part: the ping-pong, and on rank 0 the table; errors go back to the launcher.
Expected<std::vector<std::byte>> rank_body(comm::World& world, const PingpongOptions& opt) {
  if (world.size() < 2) {
    return fail(Errc::invalid_argument, "pingpong needs at least 2 ranks (mpirun -n 2)");
  }
  if (opt.pin) runtime::pin_to_cpu(world.rank());
  std::vector<SizeResult> results;
  TP_TRY(ping_pong(world, opt, results));
  if (world.rank() == 0) print_results(world, opt, results);
  std::fflush(stdout);
  return std::vector<std::byte>{};
}

int run_pingpong(int argc, char** argv) {
  CLI::App app{"Ping-pong between ranks 0 and 1: one-way latency and bandwidth per message size"};
  PingpongOptions opt;
  comm::Config cfg;
  CommFlags comm_flags;
  std::string sizes = "0:4MiB";
  std::string rendezvous = "auto";
  std::string buffers = "world";
  std::string eager_max;
  std::string slot_bytes;
  std::string chunk_bytes;
  std::string world_rendezvous;
  std::int64_t slots = 0;
  bool no_pin = false;
  app.add_option("--ranks", opt.ranks, "ranks to start when not under mpirun (>= 2)");
  add_comm_options(app, comm_flags);
  app.add_option("--sizes", sizes, "message sizes: A:B (powers of two from A to B) or one size");
  app.add_option("--iters", opt.iters, "round trips per size up to 64KiB (fewer above)");
  app.add_option("--rendezvous", rendezvous, "auto, cma (process_vm_readv) or copy");
  app.add_option("--buffers", buffers,
                 "world (World::allocate, peers map it: one-copy rendezvous) or user (a vector)");
  app.add_option("--eager-max", eager_max, "largest eager message, e.g. 16KiB");
  app.add_option("--slot-bytes", slot_bytes, "eager slot / rendezvous fragment size, e.g. 64KiB");
  app.add_option("--chunk-bytes", chunk_bytes,
                 "World-memory rendezvous: chunk copied by either rank, e.g. 128KiB; 0: no split");
  app.add_option("--world-rendezvous-min", world_rendezvous,
                 "World-memory messages from this size take the rendezvous, e.g. 16KiB; 0: never");
  app.add_option("--slots", slots, "eager slots per pair of ranks");
  app.add_flag("--json", opt.json, "print one JSON object: the results, one object per size");
  app.add_flag("--no-pin", no_pin, "do not pin rank r to core r");
  app.add_flag("--cacheline", opt.cacheline,
               "after each batch, time as many raw cache-line round trips between the same two "
               "ranks (shm) and report the ratio");
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;

  auto bad = [](const Error& e) { return report_error(e); };
  auto rv = comm::parse_rendezvous(rendezvous, "--rendezvous");
  if (!rv) return bad(rv.error());
  if (buffers != "world" && buffers != "user") {
    return bad(Error(Errc::invalid_argument,
                     "--buffers: '" + buffers + "' is not a buffer kind (world, user)"));
  }
  opt.world_buffers = buffers == "world";
  auto sz = parse_sizes(sizes);
  if (!sz) return bad(sz.error());
  if (opt.iters < 1 || opt.iters > 100'000'000) {
    return bad(Error(Errc::invalid_argument,
                     "--iters: " + std::to_string(opt.iters) + " must be in 1..100000000"));
  }
  // Byte-count options: each, when given, overrides one Config field.
  const std::array<std::tuple<const std::string*, const char*, std::size_t*>, 4> byte_options = {{
      {&eager_max, "--eager-max", &cfg.eager_max_bytes},
      {&slot_bytes, "--slot-bytes", &cfg.slot_bytes},
      {&chunk_bytes, "--chunk-bytes", &cfg.shm_chunk_bytes},
      {&world_rendezvous, "--world-rendezvous-min", &cfg.shm_rendezvous_min_bytes},
  }};
  for (const auto& [text, name, field] : byte_options) {
    if (text->empty()) continue;
    auto e = parse_bytes(*text, name);
    if (!e) return bad(e.error());
    *field = static_cast<std::size_t>(*e);
  }
  if (slots != 0) {
    if (slots < 2 || slots > 4096) {
      return bad(Error(Errc::invalid_argument,
                       "--slots: " + std::to_string(slots) + " must be in 2..4096"));
    }
    cfg.slots_per_channel = static_cast<std::uint32_t>(slots);
    cfg.credit_batch = std::max<std::uint32_t>(1, cfg.slots_per_channel / 2);
  }
  auto applied = apply_comm_flags(comm_flags, cfg);
  if (!applied) return bad(applied.error());
  cfg = *applied;
  cfg.rendezvous = *rv;
  if (auto v = cfg.validate(); !v) return bad(v.error());
  opt.sizes = *sz;
  opt.pin = !no_pin;

  if (!comm::World::launched_by_mpi() && (opt.ranks < 2 || opt.ranks > 256)) {
    return bad(Error(Errc::invalid_argument,
                     "--ranks: " + std::to_string(opt.ranks) + " must be in 2..256"));
  }
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (opt.ranks > cores) opt.pin = false;
  std::fflush(stdout);
  auto ran = runtime::run_ranks(opt.ranks, cfg, runtime::LaunchMode::automatic,
                                [&](comm::World& world) { return rank_body(world, opt); });
  return ran ? exit_ok : report_error(ran.error());
}

const CommandRegistration pingpong_registration{Command{
    "pingpong", "message latency and bandwidth between two ranks (shm or MPI)", run_pingpong}};

}  // namespace
}  // namespace tp::app
