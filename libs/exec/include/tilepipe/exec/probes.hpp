// The measurements a rank takes before its run (docs/executor.md, "Measurements"): a face's
// transfer time (by messages, or direct through any start/await pair), a tile's compute time
// alpha (resident and frontier), the communication thread's work per step C, and the threads'
// barrier time t_sync_in. Calibration's probes (`tilepipe calibrate`) are in calibration.hpp.
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/pipeline_tasks.hpp>
#include <tilepipe/exec/run_report.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/exec/step_team.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <vector>

namespace tp::exec {

/// The tag of probe messages (face lines use k * cpus + cpu, far below it).
inline constexpr int probe_tag = comm::max_tag;

/// Seconds one face takes to reach a neighbour: in each of 7 rounds every rank calls
/// `start(round)` (its faces leave) then `await(round)` (one face arrived on each of its
/// `receives` lines); the median of the round time over `receives`. Collective; 0 when the rank
/// receives nothing.
template <class Start, class Await>
Expected<double> measure_face_rounds(comm::World& world, std::size_t receives, Start&& start,
                                     Await&& await) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> times;
  for (int r = 0; r < 7; ++r) {
    if (auto b = world.barrier(); !b) return Unexpected{b.error()};
    const auto a = Clock::now();
    if (auto s = start(r); !s) return Unexpected{s.error()};
    if (auto w = await(r); !w) return Unexpected{w.error()};
    if (receives > 0) {
      times.push_back(std::chrono::duration<double>(Clock::now() - a).count() /
                      static_cast<double>(receives));
    }
  }
  if (auto b = world.barrier(); !b) return Unexpected{b.error()};
  if (times.empty()) return 0.0;
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

/// Seconds one face takes to reach a neighbour by messages: every rank sends one face of each of
/// its send lines and receives one on each receive line at once (measure_face_rounds).
template <int D>
Expected<double> measure_face_transfer(comm::World& world, const RankLayout<D>& layout,
                                       std::size_t elem_bytes) {
  std::vector<std::vector<std::byte>> in(layout.recv_lines.size());
  std::vector<std::vector<std::byte>> out(layout.send_lines.size());
  for (std::size_t l = 0; l < in.size(); ++l)
    in[l].resize(layout.recv_lines[l].max_elems * elem_bytes);
  for (std::size_t l = 0; l < out.size(); ++l)
    out[l].resize(layout.send_lines[l].max_elems * elem_bytes);
  std::vector<comm::Request> reqs;
  const auto start = [&](int) -> Status {
    for (std::size_t l = 0; l < in.size(); ++l) {
      auto q = world.irecv(layout.recv_lines[l].peer, probe_tag, in[l]);
      if (!q) return Unexpected{q.error()};
      reqs.push_back(std::move(*q));
    }
    for (std::size_t l = 0; l < out.size(); ++l) {
      auto q = world.isend(layout.send_lines[l].peer, probe_tag, out[l]);
      if (!q) return Unexpected{q.error()};
      reqs.push_back(std::move(*q));
    }
    return {};
  };
  const auto await = [&](int) -> Status {
    for (auto& q : reqs) {
      if (auto w = world.wait(q); !w) return Unexpected{w.error()};
    }
    reqs.clear();
    return {};
  };
  return measure_face_rounds(world, in.size(), start, await);
}

/// Seconds a resident kernel takes for a tile of `box`'s extents (min of 3 runs on a scratch
/// slab at the space's corner, boundary values around it): alpha of seed 002 formula (6).
template <ResidentKernel K>
double measure_tile_seconds(const K& kernel, const Box<K::dims>& box) {
  constexpr int D = K::dims;
  using T = typename K::value_type;
  Box<D> tile;
  Box<D> bounds;
  for (int d = 0; d < D; ++d) {
    tile.lo[d] = 1;
    tile.hi[d] = 1 + box.extent(d);
    bounds.lo[d] = 1 - halo_width<K>(d);
    bounds.hi[d] = tile.hi[d];
  }
  std::vector<T> scratch(static_cast<std::size_t>(bounds.volume()));
  const SlabView<T, D> slab(scratch.data(), bounds);
  fill_halo(kernel, slab, tile);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto a = std::chrono::steady_clock::now();
    kernel.compute_tile(tile, slab);
    best =
        std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  return best;
}

/// Seconds one compute_tile of a frontier kernel over a box like `box` takes (boundary faces
/// in), best of three.
template <FrontierKernel K>
double measure_tile_seconds(const K& kernel, const Box<K::dims>& box) {
  constexpr int D = K::dims;
  using F = typename K::face_type;
  Box<D> tile;
  for (int d = 0; d < D; ++d) {
    tile.lo[d] = 1;
    tile.hi[d] = 1 + box.extent(d);
  }
  std::array<std::vector<F>, D> in_buf, out_buf;
  FaceSet<const F, D> in;
  FaceSet<F, D> out;
  for (int k = 0; k < D; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    in_buf[kk].resize(kernel.face_size(k, tile));
    out_buf[kk].resize(kernel.face_size(k, tile));
    kernel.boundary_face(k, tile, std::span<F>(in_buf[kk]));
    in[kk] = std::span<const F>(in_buf[kk]);
    out[kk] = std::span<F>(out_buf[kk]);
  }
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto a = std::chrono::steady_clock::now();
    (void)kernel.compute_tile(tile, in, out);
    best =
        std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  return best;
}

/// Seconds of CPU work of one step's communication on this rank, as the communication thread
/// does it: start one send on every send line; (barrier: every face is on its way) wait for one
/// face on every receive line and unpack it; (barrier) complete the sends. The barriers keep the
/// time a peer takes to reach its sends out of C, which is the work, not the wait for a late
/// producer. Minimum of 7 rounds (like alpha: preemption on a shared machine only adds).
/// Collective; 0 without lines.
template <int D>
Expected<double> measure_comm_round(comm::World& world, const RankLayout<D>& layout,
                                    std::size_t elem_bytes) {
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point a) {
    return std::chrono::duration<double>(Clock::now() - a).count();
  };
  const bool lines = !layout.recv_lines.empty() || !layout.send_lines.empty();
  std::vector<std::vector<std::byte>> in(layout.recv_lines.size());
  std::vector<std::vector<std::byte>> out(layout.send_lines.size());
  std::vector<std::vector<std::byte>> halo(layout.recv_lines.size());
  for (std::size_t l = 0; l < in.size(); ++l) {
    in[l].resize(layout.recv_lines[l].max_elems * elem_bytes);
    halo[l].resize(in[l].size());
  }
  for (std::size_t l = 0; l < out.size(); ++l)
    out[l].resize(layout.send_lines[l].max_elems * elem_bytes);
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    std::vector<comm::Request> recvs;
    std::vector<comm::Request> sends;
    for (std::size_t l = 0; l < in.size(); ++l) {
      auto q = world.irecv(layout.recv_lines[l].peer, probe_tag, in[l]);
      if (!q) return Unexpected{q.error()};
      recvs.push_back(std::move(*q));
    }
    if (auto b = world.barrier(); !b) return Unexpected{b.error()};
    const auto a0 = Clock::now();
    for (std::size_t l = 0; l < out.size(); ++l) {
      auto q = world.isend(layout.send_lines[l].peer, probe_tag, out[l]);
      if (!q) return Unexpected{q.error()};
      sends.push_back(std::move(*q));
    }
    double work = since(a0);
    if (auto b = world.barrier(); !b) return Unexpected{b.error()};
    const auto a1 = Clock::now();
    for (std::size_t l = 0; l < recvs.size(); ++l) {
      if (auto w = world.wait(recvs[l]); !w) return Unexpected{w.error()};
      std::memcpy(halo[l].data(), in[l].data(), in[l].size());  // the unpack
    }
    work += since(a1);
    if (auto b = world.barrier(); !b) return Unexpected{b.error()};
    const auto a2 = Clock::now();
    for (auto& q : sends) {
      if (auto w = world.wait(q); !w) return Unexpected{w.error()};
    }
    work += since(a2);
    best = std::min(best, lines ? work : 0.0);
  }
  if (auto b = world.barrier(); !b) return Unexpected{b.error()};
  return best;
}

/// Seconds one barrier round of `threads` threads takes (t_sync_in of seed 002 formula (6)),
/// waited for as `wait` says: the median of 7 batches of 200 rounds. threads >= 2.
double measure_barrier_s(int threads, TeamWait wait);

/// The communication thread's row split (seed 002 5.4), measured on this rank and agreed by all
/// (collective): with the plan's equal rows, a step costs the communication thread r alpha + C
/// and the others x alpha, where its row has r and the q - 1 others x times an equal width,
/// r + (q - 1) x = q. Balance r alpha + C = x alpha gives r = 1 - C (q - 1) / (q alpha): the
/// model's W_c / alpha (docs/model.md) with q = m. Blocking overlaps nothing: r = 1. With one CPU
/// the communication thread computes nothing (r = 0). The least r over the ranks, or
/// `requested` (>= 0) with several CPUs. Fills ct's alpha_s, comm_round_s, share and split_dim.
template <ResidentKernel K>
Expected<RowSplit> measure_comm_thread_split(const K& kernel, const plan::Plan& plan,
                                             comm::World& world, bool direct, double requested,
                                             RankReport::CommThread& ct) {
  constexpr int D = K::dims;
  std::array<int, D> halo{};
  for (int d = 0; d < D; ++d) halo[static_cast<std::size_t>(d)] = halo_width<K>(d);
  RowSplit split;
  split.dim = comm_thread_split_dim(plan);
  double share = plan.cpus() == 1 ? 0.0 : 1.0;
  auto plain = build_rank_layout<D>(plan, world.rank(), halo, false);
  if (!plain) return Unexpected{plain.error()};
  // Direct faces: every compute thread copies its own faces; the communication thread only
  // notifies and waits, so C = 0 and the rows stay equal (not measured: no copy to time).
  if (!direct) {
    auto round = measure_comm_round(world, *plain, sizeof(typename K::value_type));
    if (!round) return Unexpected{round.error()};
    ct.comm_round_s = *round;
  }
  if (split.dim >= 0) {
    split.min_width = std::max(1, halo[static_cast<std::size_t>(split.dim)]);
    ct.alpha_s = measure_tile_seconds(kernel, plain->typical_tile);
    std::set<Index> rows;  // this node's rows of tiles along k (fewer where the space ends)
    for (const auto& step : plain->steps) {
      for (const auto& task : step.tasks) rows.insert(task.box.lo[split.dim]);
    }
    const auto q = static_cast<double>(rows.size());  // 0 on an idle rank: no constraint
    if (plan.schedule().kind() == plan::ScheduleKind::overlap && ct.alpha_s > 0 && q > 0) {
      share = 1.0 - ct.comm_round_s * (q - 1) / (q * ct.alpha_s);
    }
    share = std::clamp(share, 0.0, 1.0);
  }
  auto agreed = world.allreduce_min(share);
  if (!agreed) return Unexpected{agreed.error()};
  share = *agreed;
  if (requested >= 0 && plan.cpus() > 1) share = std::min(requested, 1.0);
  split.share = share;
  ct.share = share;
  ct.split_dim = split.dim + 1;
  return split;
}

}  // namespace tp::exec
