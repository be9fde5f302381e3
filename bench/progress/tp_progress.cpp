// Does a tilepipe transfer progress while both ranks compute? The protocol of mpi_progress.c on
// tp::comm: rank 0 isends, rank 1 irecvs, both compute (spin on the clock, no library call),
// then wait; the receiver's wait after the computation against the transfer time alone gives
// the share of the transfer that moved while both computed (docs/benchmarks.md, "Progress").
//
// usage: tp_progress LO HI REPEATS [poll|block|hybrid]
// Under mpirun the ranks come from MPI (transport mpi unless TP_PROGRESS_TRANSPORT=auto), else
// two local ranks over shm. JSON on stdout, one object per size.
#include <tilepipe/comm/launch.hpp>
#include <tilepipe/comm/world.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double now_s() {
  return std::chrono::duration<double>(clock_type::now().time_since_epoch()).count();
}

struct Options {
  long lo = 1024;
  long hi = 4L << 20;
  int repeats = 15;
};

bool ok(const tp::Status& s, const char* what) {
  if (s) return true;
  std::fprintf(stderr, "tp_progress: %s: %s\n", what, s.error().message.c_str());
  return false;
}

/// One transfer of `bytes` from rank 0 to rank 1 with `compute` seconds of spinning between
/// posting and waiting; returns the seconds from the end of the computation (or from the post)
/// to the completion of the local request, or a negative value on error.
double transfer(tp::comm::World& world, std::vector<std::byte>& buf, long bytes, double compute) {
  if (!ok(world.barrier(), "barrier")) return -1;
  const double t0 = now_s();
  const auto span = std::span(buf.data(), static_cast<std::size_t>(bytes));
  auto rq = world.rank() == 0 ? world.isend(1, 3, span) : world.irecv(0, 3, span);
  if (!rq) {
    std::fprintf(stderr, "tp_progress: post: %s\n", rq.error().message.c_str());
    return -1;
  }
  if (compute > 0) {
    while (now_s() < t0 + compute) {
    }
  }
  const double t1 = now_s();
  auto done = world.wait(*rq);
  if (!done) {
    std::fprintf(stderr, "tp_progress: wait: %s\n", done.error().message.c_str());
    return -1;
  }
  return now_s() - t1;
}

int body(tp::comm::World& world, const Options& opt) {
  if (world.size() != 2) {
    if (world.rank() == 0) std::fprintf(stderr, "tp_progress: needs exactly 2 ranks\n");
    return 2;
  }
  std::vector<std::byte> buf(static_cast<std::size_t>(opt.hi), std::byte{0x5a});
  std::vector<double> alone(static_cast<std::size_t>(opt.repeats));
  std::vector<double> overlapped(alone.size());
  bool first = true;
  if (world.rank() == 0) std::printf("[\n");
  for (long bytes = opt.lo; bytes <= opt.hi; bytes *= 2) {
    if (transfer(world, buf, bytes, 0.0) < 0) return 1;  // warm-up
    for (auto& t : alone) {
      t = transfer(world, buf, bytes, 0.0);
      if (t < 0) return 1;
    }
    std::sort(alone.begin(), alone.end());
    // Everyone computes for the same time: twice rank 1's median transfer plus 50 us.
    double result[2] = {alone[alone.size() / 2], 0.0};
    const auto result_bytes = std::as_writable_bytes(std::span(result));
    if (world.rank() == 1 && !ok(world.send(0, 4, result_bytes.first(8)), "send")) return 1;
    if (world.rank() == 0 && !world.recv(1, 4, result_bytes.first(8))) return 1;
    const double compute = 2.0 * result[0] + 50e-6;
    for (auto& t : overlapped) {
      t = transfer(world, buf, bytes, compute);
      if (t < 0) return 1;
    }
    std::sort(overlapped.begin(), overlapped.end());
    result[1] = overlapped[overlapped.size() / 2];
    if (world.rank() == 1 && !ok(world.send(0, 5, result_bytes), "send")) return 1;
    if (world.rank() == 0) {
      if (!world.recv(1, 5, result_bytes)) return 1;
      const double hidden = std::max(0.0, 1.0 - result[1] / result[0]);
      std::printf(
          "%s  {\"bytes\": %ld, \"transfer_us\": %.3f, \"compute_us\": %.3f, "
          "\"wait_after_compute_us\": %.3f, \"hidden\": %.4f}",
          first ? "" : ",\n", bytes, result[0] * 1e6, compute * 1e6, result[1] * 1e6, hidden);
      first = false;
    }
  }
  if (world.rank() == 0) std::printf("\n]\n");
  std::fflush(stdout);
  return ok(world.barrier(), "barrier") ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (argc > 1) opt.lo = std::atol(argv[1]);
  if (argc > 2) opt.hi = std::atol(argv[2]);
  if (argc > 3) opt.repeats = std::atoi(argv[3]);
  tp::comm::Config config;
  config.sync = tp::comm::SyncMode::poll;
  if (argc > 4) {
    auto sync = tp::comm::parse_sync_mode(argv[4], "sync mode");
    if (!sync) {
      std::fprintf(stderr, "tp_progress: %s\n", sync.error().message.c_str());
      return 2;
    }
    config.sync = *sync;
  }
  if (opt.lo < 1 || opt.hi < opt.lo || opt.repeats < 1 || opt.repeats > 101) {
    std::fprintf(stderr,
                 "usage: tp_progress LO HI REPEATS [poll|block|hybrid] "
                 "(1 <= LO <= HI, REPEATS 1..101)\n");
    return 2;
  }
  if (tp::comm::World::launched_by_mpi()) {
    const char* t = std::getenv("TP_PROGRESS_TRANSPORT");
    config.transport = (t != nullptr && std::strcmp(t, "auto") == 0)
                           ? tp::comm::TransportKind::automatic
                           : tp::comm::TransportKind::mpi;
    auto world = tp::comm::World::from_mpi(config);
    if (!world) {
      std::fprintf(stderr, "tp_progress: %s\n", world.error().message.c_str());
      return 1;
    }
    return body(*world, opt);
  }
  auto run = tp::comm::launch_local(2, config, [&](tp::comm::World& w) { return body(w, opt); });
  if (!run) {
    std::fprintf(stderr, "tp_progress: %s\n", run.error().message.c_str());
    return 1;
  }
  return run->status();
}
