// The rank pipeline for frontier kernels (only faces travel, e.g. Smith-Waterman): a rank runs its
// tiles with hyperplane grouping, faces between its own tiles in double-buffered slots, faces to
// and from other ranks through tp::comm written and read in place (docs/executor.md).
#pragma once

#include <tilepipe/exec/pipeline.hpp>

#include <map>

namespace tp::exec {

/// Runs rank world.rank()'s tiles of `plan` for a frontier kernel (hyperplane grouping only: the
/// tiles of a vertical group would need their faces cut into subtile faces). Same contract as
/// the resident run_rank.
template <FrontierKernel K>
Expected<RankOutcome<typename K::result_type>> run_rank(const K& kernel, const plan::Plan& plan,
                                                        comm::World& world,
                                                        const PipelineOptions& options) {
  constexpr int D = K::dims;
  using F = typename K::face_type;
  using R = typename K::result_type;
  using detail::Clock;
  if (auto ok = detail::check_plan_fits(plan, world, D); !ok) return Unexpected{ok.error()};
  if (plan.schedule().grouping().kind() != plan::GroupingKind::hyperplane) {
    return fail(Errc::invalid_argument,
                "frontier kernels run with hyperplane grouping only (vertical grouping would cut "
                "their faces into subtile faces)");
  }
  const bool overlap = plan.schedule().kind() == plan::ScheduleKind::overlap;
  const int threads = static_cast<int>(plan.cpus());
  std::array<int, D> halo{};
  halo.fill(1);
  auto layout_or = build_rank_layout<D>(plan, world.rank(), halo, false);
  if (!layout_or) return Unexpected{layout_or.error()};
  RankLayout<D>& layout = *layout_or;

  // Face sizes come from the kernel, per line the largest of its tiles.
  const auto face_elems = [&](int k, const Box<D>& box) { return kernel.face_size(k, box); };
  std::vector<std::size_t> recv_elems(layout.recv_lines.size());
  std::vector<std::size_t> send_elems(layout.send_lines.size());
  // Local faces: two slots per (k, tile coordinates except k), indexed by the producer's step
  // parity; the consumer runs exactly one step after the producer on the same rank.
  struct LocalFaces {
    std::array<std::int64_t, D> in_slot;
    std::array<std::int64_t, D> out_slot;
    std::array<std::size_t, D> in_n{};
    std::array<std::size_t, D> out_n{};
  };
  std::vector<std::vector<LocalFaces>> local(layout.steps.size());
  std::map<std::pair<int, std::vector<Index>>, std::int64_t> slot_of;
  std::vector<std::size_t> slot_elems;
  const auto key_of = [&](int k, const Box<D>& box) {
    std::vector<Index> key;
    for (int d = 0; d < D; ++d) {
      if (d != k) key.push_back(box.lo[d]);
    }
    return std::make_pair(k, key);
  };
  for (std::size_t s = 0; s < layout.steps.size(); ++s) {
    for (const auto& task : layout.steps[s].tasks) {
      LocalFaces lf;
      lf.in_slot.fill(-1);
      lf.out_slot.fill(-1);
      for (int k = 0; k < D; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        const std::size_t n = face_elems(k, task.box);
        lf.in_n[kk] = n;
        lf.out_n[kk] = n;
        if (task.in_line[kk] >= 0) {
          recv_elems[static_cast<std::size_t>(task.in_line[kk])] =
              std::max(recv_elems[static_cast<std::size_t>(task.in_line[kk])], n);
        } else if (task.box.lo[k] > layout.space.lo[k]) {
          auto [it, fresh] = slot_of.try_emplace(key_of(k, task.box),
                                                 static_cast<std::int64_t>(slot_elems.size()));
          if (fresh) slot_elems.push_back(0);
          slot_elems[static_cast<std::size_t>(it->second)] =
              std::max(slot_elems[static_cast<std::size_t>(it->second)], n);
          lf.in_slot[kk] = it->second;
        }
        if (task.out_line[kk] >= 0) {
          send_elems[static_cast<std::size_t>(task.out_line[kk])] =
              std::max(send_elems[static_cast<std::size_t>(task.out_line[kk])], n);
        } else if (task.box.hi[k] < layout.space.hi[k]) {
          auto [it, fresh] = slot_of.try_emplace(key_of(k, task.box),
                                                 static_cast<std::int64_t>(slot_elems.size()));
          if (fresh) slot_elems.push_back(0);
          slot_elems[static_cast<std::size_t>(it->second)] =
              std::max(slot_elems[static_cast<std::size_t>(it->second)], n);
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
  std::vector<std::array<std::vector<F>, D>> scratch_in(static_cast<std::size_t>(threads));
  std::vector<std::array<std::vector<F>, D>> scratch_out(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    for (int k = 0; k < D; ++k) {
      std::size_t most = 0;
      for (const auto& s : layout.steps) {
        for (const auto& task : s.tasks) most = std::max(most, face_elems(k, task.box));
      }
      scratch_in[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)].resize(most);
      scratch_out[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)].resize(most);
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

  const auto run_start = Clock::now();
  try {
    run_steps(threads, static_cast<Index>(layout.steps.size()), [&](int t, Index s) {
      const auto tt = static_cast<std::size_t>(t);
      const auto ss = static_cast<std::size_t>(s);
      const auto now = Clock::now();
      phases[tt].sync_s += detail::seconds(now - last_end[tt]);
      if (s > 0) tracer.record(t, SpanKind::sync, layout.steps[ss].time, last_end[tt], now);
      const auto& step = layout.steps[ss];
      if (overlap) start_sends(t, step.time);
      const int ti = step.task_of_cpu[tt];
      if (ti >= 0) {
        const Task<D>& task = step.tasks[static_cast<std::size_t>(ti)];
        const LocalFaces& lf = local[ss][static_cast<std::size_t>(ti)];
        FaceSet<const F, D> in;
        FaceSet<F, D> out;
        const auto w0 = Clock::now();
        bool waited = false;
        for (int k = 0; k < D; ++k) {
          const auto kk = static_cast<std::size_t>(k);
          const std::size_t n = lf.in_n[kk];
          if (task.in_line[kk] >= 0) {
            auto& rb = recv_bufs[static_cast<std::size_t>(task.in_line[kk])];
            const auto slot = static_cast<std::size_t>(task.in_seq[kk] & 1);
            const auto x0 = Clock::now();
            const auto info = detail::must(world.wait(rb.req[slot]));
            exposed[tt] += std::min(detail::seconds(Clock::now() - x0), cap);
            if (info.bytes != n * sizeof(F)) {
              throw detail::PipelineError(Error(Errc::internal, "a face has the wrong size"));
            }
            in[kk] = std::span<const F>(rb.buf[slot].data(), n);
            ++received[tt];
            waited = true;
          } else if (lf.in_slot[kk] >= 0) {
            // Written by the producer one step earlier: parity of the previous step.
            const auto parity = static_cast<std::size_t>((step.time - 1) & 1);
            in[kk] = std::span<const F>(
                slots[2 * static_cast<std::size_t>(lf.in_slot[kk]) + parity].data(), n);
          } else {
            std::span<F> b(scratch_in[tt][kk].data(), n);
            kernel.boundary_face(k, task.box, b);
            in[kk] = b;
          }
          const std::size_t on = lf.out_n[kk];
          if (task.out_line[kk] >= 0) {
            const auto l = static_cast<std::size_t>(task.out_line[kk]);
            auto& sb = send_bufs[l];
            const auto slot = static_cast<std::size_t>(task.out_seq[kk] & 1);
            if (sb.req[slot].active()) {
              detail::must(world.wait(sb.req[slot]));  // the send two faces ago used it
              waited = true;
            }
            out[kk] = std::span<F>(sb.buf[slot].data(), on);
          } else if (lf.out_slot[kk] >= 0) {
            const auto parity = static_cast<std::size_t>(step.time & 1);
            out[kk] = std::span<F>(
                slots[2 * static_cast<std::size_t>(lf.out_slot[kk]) + parity].data(), on);
          } else {
            out[kk] = std::span<F>(scratch_out[tt][kk].data(), on);
          }
        }
        const auto w1 = Clock::now();
        if (waited) {
          phases[tt].wait_s += detail::seconds(w1 - w0);
          tracer.record(t, SpanKind::wait, step.time, w0, w1);
        }
        R r{};
        try {
          r = kernel.compute_tile(task.box, in, out);
        } catch (const std::exception& e) {
          std::string where = "(";
          for (int d = 0; d < D; ++d) where += (d ? ", " : "") + std::to_string(task.box.lo[d]);
          throw detail::PipelineError(
              Error(Errc::internal, "kernel failed in the tile at " + where + "): " + e.what()));
        }
        partial[tt] = K::combine(partial[tt], r);
        const auto c1 = Clock::now();
        phases[tt].compute_s += detail::seconds(c1 - w1);
        tracer.record(t, SpanKind::compute, step.time, w1, c1);
        for (int k = 0; k < D; ++k) {
          const auto kk = static_cast<std::size_t>(k);
          if (task.in_line[kk] >= 0) post_recv(static_cast<std::size_t>(task.in_line[kk]));
          if (task.out_line[kk] >= 0) {
            pending[tt].push_back({static_cast<std::size_t>(task.out_line[kk]), lf.out_n[kk]});
          }
        }
        if (!overlap) {
          start_sends(t, step.time);
          const auto b0 = Clock::now();
          for (int k = 0; k < D; ++k) {
            const auto l = task.out_line[static_cast<std::size_t>(k)];
            if (l < 0) continue;
            for (auto& q : send_bufs[static_cast<std::size_t>(l)].req) {
              if (!q.active()) continue;
              const auto q0 = Clock::now();
              detail::must(world.wait(q));
              exposed[tt] += std::min(detail::seconds(Clock::now() - q0), cap);
            }
          }
          const auto b1 = Clock::now();
          phases[tt].wait_s += detail::seconds(b1 - b0);
        }
      }
      if (s == static_cast<Index>(layout.steps.size()) - 1) {
        start_sends(t, step.time);
        for (std::size_t l = 0; l < send_bufs.size(); ++l) {
          if (layout.send_lines[l].cpu != t) continue;
          for (auto& q : send_bufs[l].req) {
            if (q.active()) detail::must(world.wait(q));
          }
        }
      }
      last_end[tt] = Clock::now();
    });
  } catch (const detail::PipelineError& e) {
    return Unexpected{e.error};
  } catch (const std::exception& e) {
    return fail(Errc::internal,
                std::string("[rank ") + std::to_string(world.rank()) + "] " + e.what());
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
