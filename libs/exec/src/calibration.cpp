// Calibration probes on a World: ping-pong by size, isend cost, notification latency; barriers;
// the copy of faces into cold shared memory.
#include <tilepipe/exec/calibration.hpp>
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/model/fit.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <span>
#include <string>
#include <utility>

namespace tp::exec {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point a) {
  return std::chrono::duration<double>(Clock::now() - a).count();
}

/// Seconds of a round trip spent before the message leaves, and in the isend call itself.
struct RoundTripCosts {
  double posting_s = 0;  ///< posting the receive ahead (not part of the round trip)
  double isend_s = 0;
};

/// One round trip; on rank 0 with nonblocking, what posting the receive and the isend cost.
Expected<RoundTripCosts> round_trip(comm::World& world, std::span<std::byte> out,
                                    std::span<std::byte> in, int tag, bool nonblocking) {
  const int me = world.rank();
  if (me == 0 && nonblocking) {
    const auto p = Clock::now();
    auto recv = world.irecv(1, tag, in);
    if (!recv) return Unexpected{recv.error()};
    const auto a = Clock::now();
    auto send = world.isend(1, tag, out);
    const double isend_s = since(a);
    if (!send) return Unexpected{send.error()};
    TP_TRY(world.wait(*send));
    TP_TRY(world.wait(*recv));
    return RoundTripCosts{std::chrono::duration<double>(a - p).count(), isend_s};
  }
  if (me == 0) {
    TP_TRY(world.send(1, tag, out));
    TP_TRY(world.recv(1, tag, in));
  } else if (me == 1) {
    TP_TRY(world.recv(0, tag, in));
    TP_TRY(world.send(0, tag, out));
  }
  return RoundTripCosts{};
}

}  // namespace

Expected<RoundTripTimes> time_round_trips(comm::World& world, std::span<std::byte> out,
                                          std::span<std::byte> in, const RoundTripOptions& opts) {
  TP_EXPECTS(world.size() >= 2 && opts.tag >= 0 && opts.batches >= 1 && opts.per_batch >= 1);
  TP_EXPECTS(out.size() == in.size());
  RoundTripTimes times;
  const bool timed = world.rank() <= 1;
  for (Index b = 0; b < opts.batches; ++b) {
    RoundTripCosts sum;
    const auto a = Clock::now();
    for (Index i = 0; timed && i < opts.per_batch; ++i) {
      auto c = round_trip(world, out, in, opts.tag, opts.nonblocking);
      if (!c) return Unexpected{c.error()};
      sum.posting_s += c->posting_s;
      sum.isend_s += c->isend_s;
    }
    if (timed) {
      const auto n = static_cast<double>(opts.per_batch);
      times.one_way_s.push_back((since(a) - sum.posting_s) / (2.0 * n));
      if (opts.nonblocking) times.isend_s.push_back(sum.isend_s / n);
    }
    if (opts.after_batch) TP_TRY(opts.after_batch(b));
  }
  return times;
}

namespace {

/// `rounds` round trips of `bytes` bytes after one that warms the path (faults in the pages);
/// on rank 0 the medians of the one-way time and of the isend call.
Expected<std::pair<double, double>> probe_size(comm::World& world, std::int64_t bytes, int rounds,
                                               int tag) {
  std::vector<std::byte> out(static_cast<std::size_t>(bytes));
  std::vector<std::byte> in(static_cast<std::size_t>(bytes));
  TP_TRY(time_round_trips(world, out, in, RoundTripOptions{tag, 1, 1, true, nullptr}));
  auto t = time_round_trips(world, out, in, RoundTripOptions{tag, rounds, 1, true, nullptr});
  if (!t) return Unexpected{t.error()};
  if (world.rank() != 0) return std::pair<double, double>{0, 0};
  return std::pair<double, double>{model::median(t->one_way_s), model::median(t->isend_s)};
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
    auto r = probe_size(world, bytes, rounds, tag++);
    if (!r) return Unexpected{r.error()};
    result.one_way_s.emplace_back(bytes, r->first);
    result.isend_s.emplace_back(bytes, r->second);
  }
  TP_TRY(world.barrier());
  auto n = probe_size(world, 8, std::max(opts.round_trips, 50), tag);
  if (!n) return Unexpected{n.error()};
  result.notify_s = n->first;
  TP_TRY(world.barrier());
  return result;
}

Expected<ColdCopyProbe> ColdCopyProbe::make(std::size_t block, std::size_t region) {
  TP_EXPECTS(block >= 1 && region >= block);
  // A memory file, as comm's regions are: its pages are shared memory pages (no transparent huge
  // pages where the system keeps them off shared memory, as the slabs of direct faces have none).
  const int fd = memfd_create("tilepipe-copy-probe", MFD_CLOEXEC);
  if (fd < 0) return fail(Errc::system, std::string("memfd_create: ") + std::strerror(errno));
  void* p = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(region)) == 0) {
    p = mmap(nullptr, region, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    return fail(Errc::system, "the copy probe's " + std::to_string(region >> 20) +
                                  " MiB of shared memory: " + std::strerror(err));
  }
  ColdCopyProbe probe(static_cast<std::byte*>(p), block, region);
  std::memset(p, 1, region);  // every page faulted in
  std::memset(probe.src_.data(), 2, block);
  return probe;
}

ColdCopyProbe::ColdCopyProbe(ColdCopyProbe&& o) noexcept
    : dst_(std::exchange(o.dst_, nullptr)),
      block_(o.block_),
      region_(o.region_),
      src_(std::move(o.src_)) {}

ColdCopyProbe::~ColdCopyProbe() {
  if (dst_ != nullptr) munmap(dst_, region_);
}

double ColdCopyProbe::pass() {
  const std::size_t blocks = region_ / block_;
  const auto a = Clock::now();
  for (std::size_t i = 0; i < blocks; ++i) {
    std::memcpy(dst_ + i * block_, src_.data(), block_);
    src_[i % block_] = static_cast<std::byte>(i);  // each block's bytes differ
  }
  return since(a) / static_cast<double>(blocks * block_);
}

}  // namespace tp::exec
