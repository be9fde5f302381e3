// The rank pipeline for frontier kernels (only faces travel, e.g. Smith-Waterman): a rank runs its
// tiles with hyperplane or vertical grouping, faces between its own tiles in double-buffered
// slots, faces to and from other ranks through tp::comm written and read in place. With vertical
// grouping each tile runs as N subtiles along the mapping dimension, each a frontier tile of its
// own; a face crossing another dimension is the concatenation of the N subtile faces
// (docs/executor.md).
#pragma once

#include <tilepipe/exec/pipeline.hpp>

#include <map>
#include <tuple>

namespace tp::exec {

namespace detail {

/// Seconds one compute_tile of a frontier kernel over a box like `box` takes (boundary faces in),
/// best of three.
template <FrontierKernel K>
double measure_frontier_tile_seconds(const K& kernel, const Box<K::dims>& box) {
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
    const auto a = Clock::now();
    (void)kernel.compute_tile(tile, in, out);
    best = std::min(best, seconds(Clock::now() - a));
  }
  return best;
}

}  // namespace detail

/// Runs rank world.rank()'s tiles of `plan` for a frontier kernel, with hyperplane or vertical
/// grouping (options.subtiles: N, 0 = seed 002 formula (7) measured, the least over the ranks so
/// that all agree on the faces' layout). Same contract as the resident run_rank.
template <FrontierKernel K>
Expected<RankOutcome<typename K::result_type>> run_rank(const K& kernel, const plan::Plan& plan,
                                                        comm::World& world,
                                                        const PipelineOptions& options) {
  constexpr int D = K::dims;
  using F = typename K::face_type;
  using R = typename K::result_type;
  using detail::Clock;
  if (auto ok = detail::check_plan_fits(plan, world, D); !ok) return Unexpected{ok.error()};
  const bool vertical = plan.schedule().grouping().kind() == plan::GroupingKind::vertical;
  const bool overlap = plan.schedule().kind() == plan::ScheduleKind::overlap;
  const int threads = static_cast<int>(plan.cpus());
  const int map_i = plan.map_dim();
  std::array<int, D> halo{};
  halo.fill(1);
  auto layout_or = build_rank_layout<D>(plan, world.rank(), halo, false);
  if (!layout_or) return Unexpected{layout_or.error()};
  RankLayout<D>& layout = *layout_or;

  // N, the same on every rank (the faces between ranks are concatenations of N subtile faces).
  int subtiles = 1;
  if (vertical) {
    subtiles = options.subtiles;
    if (subtiles <= 0) {
      const double t_sync_in = threads > 1 ? detail::measure_barrier_s(threads) : 0.0;
      const double alpha = detail::measure_frontier_tile_seconds(kernel, layout.typical_tile);
      subtiles = t_sync_in > 0 ? static_cast<int>(std::lround(std::sqrt(alpha / t_sync_in))) : 1;
    }
    subtiles = static_cast<int>(std::clamp<Index>(subtiles, 1, layout.min_map_extent));
    auto agreed = detail::allreduce_min(world, static_cast<double>(subtiles));
    if (!agreed) return Unexpected{agreed.error()};
    subtiles = std::max(1, static_cast<int>(*agreed));
  }
  const int nsub = subtiles;
  // Subtile s of a tile: the box cut into N parts along the mapping dimension.
  const auto part_of = [&](const Box<D>& box, Index s) {
    Box<D> part = box;
    if (nsub > 1) {
      const Index len = box.extent(map_i);
      part.lo[map_i] = box.lo[map_i] + len * s / nsub;
      part.hi[map_i] = box.lo[map_i] + len * (s + 1) / nsub;
    }
    return part;
  };
  // Elements of a tile's face crossing k: along the mapping dimension the first (incoming) or last
  // (outgoing) subtile's face, along another dimension the N subtile faces one after the other.
  const auto face_elems = [&](int k, const Box<D>& box, bool outgoing) {
    if (nsub == 1) return kernel.face_size(k, box);
    if (k == map_i) return kernel.face_size(k, part_of(box, outgoing ? nsub - 1 : 0));
    std::size_t n = 0;
    for (Index s = 0; s < nsub; ++s) n += kernel.face_size(k, part_of(box, s));
    return n;
  };
  std::vector<std::size_t> recv_elems(layout.recv_lines.size());
  std::vector<std::size_t> send_elems(layout.send_lines.size());
  // Local faces: two slots per (k, tile coordinates except k), indexed by the producer's step
  // parity. The consumer runs one step after the producer (hyperplane grouping, and along the
  // mapping dimension), or in the same step one sub-step after it (vertical grouping, a
  // neighbouring CPU's tile).
  struct LocalFaces {
    std::array<std::int64_t, D> in_slot;
    std::array<std::int64_t, D> out_slot;
    std::array<std::int64_t, D> in_time{};  // the producer's step
    std::array<std::size_t, D> in_n{};
    std::array<std::size_t, D> out_n{};
  };
  std::vector<std::vector<LocalFaces>> local(layout.steps.size());
  std::map<std::pair<int, std::vector<Index>>, std::int64_t> slot_of;
  std::map<std::tuple<int, std::vector<Index>, Index>, std::int64_t> time_of_face;
  std::vector<std::size_t> slot_elems;
  const auto key_of = [&](int k, const Box<D>& box) {
    std::vector<Index> key;
    for (int d = 0; d < D; ++d) {
      if (d != k) key.push_back(box.lo[d]);
    }
    return std::make_pair(k, key);
  };
  for (const auto& step : layout.steps) {
    for (const auto& task : step.tasks) {
      for (int k = 0; k < D; ++k) {
        auto key = key_of(k, task.box);
        time_of_face[{k, key.second, task.box.hi[k]}] = step.time;
      }
    }
  }
  for (std::size_t s = 0; s < layout.steps.size(); ++s) {
    for (const auto& task : layout.steps[s].tasks) {
      LocalFaces lf;
      lf.in_slot.fill(-1);
      lf.out_slot.fill(-1);
      for (int k = 0; k < D; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        const std::size_t n = face_elems(k, task.box, false);
        const std::size_t on = face_elems(k, task.box, true);
        lf.in_n[kk] = n;
        lf.out_n[kk] = on;
        if (task.in_line[kk] >= 0) {
          recv_elems[static_cast<std::size_t>(task.in_line[kk])] =
              std::max(recv_elems[static_cast<std::size_t>(task.in_line[kk])], n);
        } else if (task.box.lo[k] > layout.space.lo[k]) {
          auto key = key_of(k, task.box);
          const auto producer = time_of_face.find({k, key.second, task.box.lo[k]});
          const std::int64_t gap =
              producer == time_of_face.end() ? -1 : layout.steps[s].time - producer->second;
          if (gap != 1 && !(vertical && gap == 0 && k != map_i)) {
            return fail(Errc::internal, "a local face's producer does not run just before it");
          }
          lf.in_time[kk] = producer->second;
          auto [it, fresh] = slot_of.try_emplace(key, static_cast<std::int64_t>(slot_elems.size()));
          if (fresh) slot_elems.push_back(0);
          slot_elems[static_cast<std::size_t>(it->second)] =
              std::max(slot_elems[static_cast<std::size_t>(it->second)], n);
          lf.in_slot[kk] = it->second;
        }
        if (task.out_line[kk] >= 0) {
          send_elems[static_cast<std::size_t>(task.out_line[kk])] =
              std::max(send_elems[static_cast<std::size_t>(task.out_line[kk])], on);
        } else if (task.box.hi[k] < layout.space.hi[k]) {
          auto [it, fresh] = slot_of.try_emplace(key_of(k, task.box),
                                                 static_cast<std::int64_t>(slot_elems.size()));
          if (fresh) slot_elems.push_back(0);
          slot_elems[static_cast<std::size_t>(it->second)] =
              std::max(slot_elems[static_cast<std::size_t>(it->second)], on);
          lf.out_slot[kk] = it->second;
        }
      }
      local[s].push_back(lf);
    }
  }
  std::vector<std::vector<F>> slots(2 * slot_elems.size());
  for (std::size_t x = 0; x < slot_elems.size(); ++x) {
    slots[2 * x].resize(slot_elems[x]);
    slots[2 * x + 1].resize(slot_elems[x]);
  }
  // Per thread: boundary faces and faces nobody reads, per subtile; with N > 1 two buffers for the
  // face along the mapping dimension from one subtile to the next.
  std::array<std::size_t, D> most{};
  for (const auto& s : layout.steps) {
    for (const auto& task : s.tasks) {
      for (Index p = 0; p < nsub; ++p) {
        const Box<D> part = part_of(task.box, p);
        for (int k = 0; k < D; ++k) {
          auto& m = most[static_cast<std::size_t>(k)];
          m = std::max(m, kernel.face_size(k, part));
        }
      }
    }
  }
  std::vector<std::array<std::vector<F>, D>> scratch_in(static_cast<std::size_t>(threads));
  std::vector<std::array<std::vector<F>, D>> scratch_out(static_cast<std::size_t>(threads));
  std::vector<std::array<std::vector<F>, 2>> chain(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    const auto tt = static_cast<std::size_t>(t);
    for (int k = 0; k < D; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      scratch_in[tt][kk].resize(most[kk]);
      scratch_out[tt][kk].resize(most[kk]);
    }
    if (nsub > 1) {
      for (auto& c : chain[tt]) c.resize(most[static_cast<std::size_t>(map_i)]);
    }
  }

  struct LineBuffers {
    std::array<std::vector<F>, 2> buf;
    std::array<comm::Request, 2> req;
    std::int64_t posted = 0;
  };
  std::vector<LineBuffers> recv_bufs(layout.recv_lines.size());
  std::vector<LineBuffers> send_bufs(layout.send_lines.size());
  for (std::size_t l = 0; l < recv_bufs.size(); ++l) {
    for (auto& b : recv_bufs[l].buf) b.resize(recv_elems[l]);
  }
  for (std::size_t l = 0; l < send_bufs.size(); ++l) {
    for (auto& b : send_bufs[l].buf) b.resize(send_elems[l]);
  }
  const auto post_recv = [&](std::size_t l) {
    auto& lb = recv_bufs[l];
    if (lb.posted >= static_cast<std::int64_t>(layout.recv_lines[l].regions.size())) return;
    const auto slot = static_cast<std::size_t>(lb.posted & 1);
    lb.req[slot] = detail::must(world.irecv(layout.recv_lines[l].peer, layout.recv_lines[l].tag,
                                            std::as_writable_bytes(std::span<F>(lb.buf[slot]))));
    ++lb.posted;
  };

  RankOutcome<R> outcome;
  RankReport& report = outcome.report;
  report.rank = world.rank();
  report.threads = threads;
  auto face_s = measure_face_transfer(world, layout, sizeof(F));
  if (!face_s) return Unexpected{face_s.error()};
  report.face_transfer_s = *face_s;
  report.subtiles = subtiles;
  for (std::size_t l = 0; l < recv_bufs.size(); ++l) {
    post_recv(l);
    post_recv(l);
  }
  if (auto b = world.barrier(); !b) return Unexpected{b.error()};

  Tracer tracer = options.trace ? Tracer(threads, options.epoch) : Tracer();
  const auto nt = static_cast<std::size_t>(threads);
  std::vector<PhaseTimes> phases(nt);
  std::vector<R> partial(nt);
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> pending(nt);  // (line, elems)
  std::vector<Clock::time_point> last_end(nt, Clock::now());
  std::vector<std::int64_t> sent(nt), sent_bytes(nt), received(nt);
  std::vector<double> exposed(nt);
  const double cap = report.face_transfer_s;

  const auto start_sends = [&](int t, std::int64_t step) {
    auto& list = pending[static_cast<std::size_t>(t)];
    if (list.empty()) return;
    const auto a = Clock::now();
    for (auto [l, elems] : list) {
      auto& line = layout.send_lines[l];
      auto& sb = send_bufs[l];
      const auto slot = static_cast<std::size_t>(line.next_seq++ & 1);
      sb.req[slot] = detail::must(world.isend(
          line.peer, line.tag, std::as_bytes(std::span<const F>(sb.buf[slot].data(), elems))));
      ++sent[static_cast<std::size_t>(t)];
      sent_bytes[static_cast<std::size_t>(t)] += static_cast<std::int64_t>(elems * sizeof(F));
    }
    list.clear();
    const auto b = Clock::now();
    phases[static_cast<std::size_t>(t)].send_start_s += detail::seconds(b - a);
    tracer.record(t, SpanKind::send_start, step, a, b);
  };

  // Sub-steps: each rank step expands to N + max_offset sub-steps (1 for hyperplane grouping);
  // CPU t computes subtile q - cpu_offset of its tile at sub-step q.
  const Index per_step = nsub + (vertical ? layout.max_cpu_offset : 0);
  const Index substeps = static_cast<Index>(layout.steps.size()) * per_step;
  // The faces of the tile a thread is in: set before its first subtile.
  struct TileFaces {
    std::array<std::span<const F>, D> in;
    std::array<std::span<F>, D> out;
  };
  std::vector<TileFaces> current(nt);

  const auto run_start = Clock::now();
  try {
    run_steps(threads, substeps, [&](int t, Index sub) {
      const auto tt = static_cast<std::size_t>(t);
      const auto ss = static_cast<std::size_t>(sub / per_step);
      const Index q = sub % per_step;
      const auto& step = layout.steps[ss];
      const auto now = Clock::now();
      phases[tt].sync_s += detail::seconds(now - last_end[tt]);
      if (sub > 0) tracer.record(t, SpanKind::sync, step.time, last_end[tt], now);
      if (overlap && q == 0) start_sends(t, step.time);
      const int ti = step.task_of_cpu[tt];
      const Task<D>* task = ti >= 0 ? &step.tasks[static_cast<std::size_t>(ti)] : nullptr;
      const Index offset = task && vertical ? task->cpu_offset : 0;
      if (task && q >= offset && q < offset + nsub) {
        const Index p = q - offset;
        const LocalFaces& lf = local[ss][static_cast<std::size_t>(ti)];
        TileFaces& tf = current[tt];
        const auto w0 = Clock::now();
        bool waited = false;
        if (p == 0) {
          // The tile's faces: remote ones received, local slots, or nothing (boundary, unread).
          for (int k = 0; k < D; ++k) {
            const auto kk = static_cast<std::size_t>(k);
            const std::size_t n = lf.in_n[kk];
            tf.in[kk] = {};
            if (task->in_line[kk] >= 0) {
              auto& rb = recv_bufs[static_cast<std::size_t>(task->in_line[kk])];
              const auto slot = static_cast<std::size_t>(task->in_seq[kk] & 1);
              const auto x0 = Clock::now();
              const auto info = detail::must(world.wait(rb.req[slot]));
              exposed[tt] += std::min(detail::seconds(Clock::now() - x0), cap);
              if (info.bytes != n * sizeof(F)) {
                throw detail::PipelineError(Error(Errc::internal, "a face has the wrong size"));
              }
              tf.in[kk] = std::span<const F>(rb.buf[slot].data(), n);
              ++received[tt];
              waited = true;
            } else if (lf.in_slot[kk] >= 0) {
              const auto parity = static_cast<std::size_t>(lf.in_time[kk] & 1);
              tf.in[kk] = std::span<const F>(
                  slots[2 * static_cast<std::size_t>(lf.in_slot[kk]) + parity].data(), n);
            }
            const std::size_t on = lf.out_n[kk];
            tf.out[kk] = {};
            if (task->out_line[kk] >= 0) {
              const auto l = static_cast<std::size_t>(task->out_line[kk]);
              auto& sb = send_bufs[l];
              const auto slot = static_cast<std::size_t>(task->out_seq[kk] & 1);
              if (sb.req[slot].active()) {
                detail::must(world.wait(sb.req[slot]));  // the send two faces ago used it
                waited = true;
              }
              tf.out[kk] = std::span<F>(sb.buf[slot].data(), on);
            } else if (lf.out_slot[kk] >= 0) {
              const auto parity = static_cast<std::size_t>(step.time & 1);
              tf.out[kk] = std::span<F>(
                  slots[2 * static_cast<std::size_t>(lf.out_slot[kk]) + parity].data(), on);
            }
          }
        }
        // This subtile's faces: along the mapping dimension from the previous subtile (the tile's
        // face for the first), along another dimension its part of the tile's face.
        const Box<D> part = part_of(task->box, p);
        FaceSet<const F, D> in;
        FaceSet<F, D> out;
        for (int k = 0; k < D; ++k) {
          const auto kk = static_cast<std::size_t>(k);
          const std::size_t n = kernel.face_size(k, part);
          std::size_t at = 0;  // the subtile's offset in the tile's face
          if (k != map_i) {
            for (Index r = 0; r < p; ++r) at += kernel.face_size(k, part_of(task->box, r));
          }
          if (k == map_i && p > 0) {
            in[kk] = std::span<const F>(chain[tt][static_cast<std::size_t>((p - 1) & 1)].data(), n);
          } else if (!tf.in[kk].empty()) {
            in[kk] = tf.in[kk].subspan(at, n);
          } else {
            std::span<F> b(scratch_in[tt][kk].data(), n);
            kernel.boundary_face(k, part, b);
            in[kk] = b;
          }
          if (k == map_i && p < nsub - 1) {
            out[kk] = std::span<F>(chain[tt][static_cast<std::size_t>(p & 1)].data(), n);
          } else if (!tf.out[kk].empty()) {
            out[kk] = tf.out[kk].subspan(at, n);
          } else {
            out[kk] = std::span<F>(scratch_out[tt][kk].data(), n);
          }
        }
        const auto w1 = Clock::now();
        if (waited) {
          phases[tt].wait_s += detail::seconds(w1 - w0);
          tracer.record(t, SpanKind::wait, step.time, w0, w1);
        }
        R r{};
        try {
          r = kernel.compute_tile(part, in, out);
        } catch (const std::exception& e) {
          std::string where = "(";
          for (int d = 0; d < D; ++d) where += (d ? ", " : "") + std::to_string(part.lo[d]);
          throw detail::PipelineError(
              Error(Errc::internal, "kernel failed in the tile at " + where + "): " + e.what()));
        }
        partial[tt] = K::combine(partial[tt], r);
        const auto c1 = Clock::now();
        phases[tt].compute_s += detail::seconds(c1 - w1);
        tracer.record(t, SpanKind::compute, step.time, w1, c1);
        if (p == nsub - 1) {
          for (int k = 0; k < D; ++k) {
            const auto kk = static_cast<std::size_t>(k);
            if (task->in_line[kk] >= 0) post_recv(static_cast<std::size_t>(task->in_line[kk]));
            if (task->out_line[kk] >= 0) {
              pending[tt].push_back({static_cast<std::size_t>(task->out_line[kk]), lf.out_n[kk]});
            }
          }
          if (!overlap) {
            start_sends(t, step.time);
            const auto b0 = Clock::now();
            detail::wait_task_sends(world, send_bufs, task->out_line, cap, exposed[tt]);
            const auto b1 = Clock::now();
            phases[tt].wait_s += detail::seconds(b1 - b0);
          }
        }
      }
      if (sub == substeps - 1) {
        start_sends(t, step.time);
        detail::wait_cpu_sends(world, send_bufs, layout.send_lines, t);
      }
      last_end[tt] = Clock::now();
    });
  } catch (const detail::PipelineError& e) {
    return Unexpected{e.error.on_rank(world.rank())};
  } catch (const std::exception& e) {
    return fail_at(world.rank(), Errc::internal, e.what());
  }
  report.wall_s = detail::seconds(Clock::now() - run_start);
  for (std::size_t t = 0; t < nt; ++t) {
    report.phases += phases[t];
    report.messages_sent += sent[t];
    report.bytes_sent += sent_bytes[t];
    report.messages_received += received[t];
    report.exposed_comm_s += exposed[t];
    outcome.result = K::combine(outcome.result, partial[t]);
  }
  for (const auto& s : layout.steps) {
    for (const auto& task : s.tasks) {
      ++report.tiles;
      report.points += task.box.volume();
    }
  }
  if (options.trace) outcome.spans = tracer.spans();
  return outcome;
}

}  // namespace tp::exec
