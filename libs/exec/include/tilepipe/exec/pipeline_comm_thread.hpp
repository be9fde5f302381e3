// The rank pipeline with a communication thread (seed 002 section 5.4): thread 0 of each rank
// starts every send, waits for and unpacks every incoming face (one step ahead) and computes a
// smaller row of tiles, sized so that its computation + communication matches the others'
// computation; the compute threads never call the communication library (docs/executor.md).
#pragma once

#include <tilepipe/exec/pipeline.hpp>

#include <set>

namespace tp::exec {

namespace detail {

/// The minimum of `value` over all ranks (collective; rank 0 gathers and answers).
Expected<double> allreduce_min(comm::World& world, double value);

/// Seconds of CPU work of one step's communication on this rank, as the communication thread
/// does it: start one send on every send line; (barrier: every face is on its way) wait for one
/// face on every receive line and unpack it; (barrier) complete the sends. The barriers keep the
/// time a peer takes to reach its sends out of C, which is the work, not the wait for a late
/// producer. Minimum of 7 rounds (like alpha: preemption on a shared machine only adds).
/// Collective; 0 without lines.
template <int D>
Expected<double> measure_comm_round(comm::World& world, const RankLayout<D>& layout,
                                    std::size_t elem_bytes) {
  constexpr int tag = comm::max_tag - 2;
  constexpr int reps = 7;
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
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    std::vector<comm::Request> recvs;
    std::vector<comm::Request> sends;
    for (std::size_t l = 0; l < in.size(); ++l) {
      auto q = world.irecv(layout.recv_lines[l].peer, tag, in[l]);
      if (!q) return Unexpected{q.error()};
      recvs.push_back(std::move(*q));
    }
    if (auto b = world.barrier(); !b) return Unexpected{b.error()};
    const auto a0 = Clock::now();
    for (std::size_t l = 0; l < out.size(); ++l) {
      auto q = world.isend(layout.send_lines[l].peer, tag, out[l]);
      if (!q) return Unexpected{q.error()};
      sends.push_back(std::move(*q));
    }
    double work = seconds(Clock::now() - a0);
    if (auto b = world.barrier(); !b) return Unexpected{b.error()};
    const auto a1 = Clock::now();
    for (std::size_t l = 0; l < recvs.size(); ++l) {
      if (auto w = world.wait(recvs[l]); !w) return Unexpected{w.error()};
      std::memcpy(halo[l].data(), in[l].data(), in[l].size());  // the unpack
    }
    work += seconds(Clock::now() - a1);
    if (auto b = world.barrier(); !b) return Unexpected{b.error()};
    const auto a2 = Clock::now();
    for (auto& q : sends) {
      if (auto w = world.wait(q); !w) return Unexpected{w.error()};
    }
    work += seconds(Clock::now() - a2);
    times.push_back(lines ? work : 0.0);
  }
  if (auto b = world.barrier(); !b) return Unexpected{b.error()};
  return *std::min_element(times.begin(), times.end());
}

/// The non-mapping dimension with the most CPUs (the first on ties), or -1 when m = 1.
inline int comm_thread_split_dim(const plan::Plan& plan) {
  int best = -1;
  std::int64_t most = 1;
  std::size_t f = 0;
  for (int d = 0; d < static_cast<int>(plan.space().dims()); ++d) {
    if (d == plan.map_dim()) continue;
    const auto m_k = plan.cpu_grid()[f++];
    if (m_k > most) {
      most = m_k;
      best = d;
    }
  }
  return best;
}

}  // namespace detail

template <ResidentKernel K>
Expected<RankOutcome<typename K::result_type>> run_rank_comm_thread(
    const K& kernel, const plan::Plan& plan, comm::World& world, const PipelineOptions& options) {
  constexpr int D = K::dims;
  using T = typename K::value_type;
  using R = typename K::result_type;
  using detail::Clock;
  if (auto ok = detail::check_plan_fits(plan, world, D); !ok) return Unexpected{ok.error()};
  if (auto ok = check_comm_thread(plan); !ok) return Unexpected{ok.error()};
  if (detail::has_diagonal_dependence<K>()) {
    // Extended faces of neighbouring rows overlap; unpacking one a step ahead would write halo
    // points that a compute thread reads in the same step.
    return fail(Errc::invalid_argument,
                "the communication thread needs dependences along the axes (this kernel has a "
                "diagonal one)");
  }
  auto direct_or = resolve_direct_faces(options.faces, world, false);
  if (!direct_or) return Unexpected{direct_or.error()};
  const bool direct = *direct_or;
  std::array<int, D> halo{};
  for (int d = 0; d < D; ++d) halo[static_cast<std::size_t>(d)] = halo_width<K>(d);
  const bool overlap = plan.schedule().kind() == plan::ScheduleKind::overlap;
  const int cpus = static_cast<int>(plan.cpus());
  // With m = 1 the communication thread is an extra thread that computes nothing; otherwise it is
  // CPU 0 (grid coordinates all 0) and thread c runs CPU c.
  const int first_cpu = cpus == 1 ? 1 : 0;
  const int threads = cpus + first_cpu;

  RankOutcome<R> outcome;
  RankReport& report = outcome.report;
  report.rank = world.rank();
  report.threads = threads;
  auto& ct = report.comm_thread;
  ct.on = true;

  // The share (seed 002 5.4): with the plan's equal rows, a step costs the communication thread
  // r alpha + C and the others x alpha, where its row has r and the q - 1 others x times an equal
  // width, r + (q - 1) x = q. Balance r alpha + C = x alpha gives r = 1 - C (q - 1) / (q alpha):
  // the model's W_c / alpha (docs/model.md) with q = m. Blocking overlaps nothing: r = 1.
  RowSplit split;
  split.dim = detail::comm_thread_split_dim(plan);
  double share = cpus == 1 ? 0.0 : 1.0;
  {
    auto plain = build_rank_layout<D>(plan, world.rank(), halo, false);
    if (!plain) return Unexpected{plain.error()};
    // Direct faces: every compute thread copies its own faces; the communication thread only
    // notifies and waits, so C = 0 and the rows stay equal (not measured: no copy to time).
    if (!direct) {
      auto round = detail::measure_comm_round(world, *plain, sizeof(T));
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
      const auto q = static_cast<double>(rows.size());
      if (overlap && ct.alpha_s > 0) share = 1.0 - ct.comm_round_s * (q - 1) / (q * ct.alpha_s);
      share = std::clamp(share, 0.0, 1.0);
    }
    auto agreed = detail::allreduce_min(world, share);
    if (!agreed) return Unexpected{agreed.error()};
    share = *agreed;
  }
  if (options.comm_thread_share >= 0 && cpus > 1) share = std::min(options.comm_thread_share, 1.0);
  split.share = share;
  ct.share = share;
  ct.split_dim = split.dim + 1;

  auto layout_or = build_rank_layout<D>(plan, world.rank(), halo, false, split);
  if (!layout_or) return Unexpected{layout_or.error()};
  RankLayout<D>& layout = *layout_or;
  auto rank_slab = RankSlab<T, D>::make(world, layout.slab_box, direct, D * cpus);
  if (!rank_slab) return Unexpected{rank_slab.error()};
  auto& faces = rank_slab->faces;
  const SlabView<T, D> slab = rank_slab->view;
  detail::fill_outer_halo(kernel, slab, layout.space);
  report.direct_faces = direct;

  struct LineBuffers {
    std::array<std::vector<T>, 2> buf;
    std::array<comm::Request, 2> req;
    std::int64_t posted = 0;
  };
  std::vector<LineBuffers> recv_bufs(layout.recv_lines.size());
  std::vector<LineBuffers> send_bufs(layout.send_lines.size());
  for (std::size_t l = 0; l < layout.recv_lines.size() && !direct; ++l) {
    for (auto& b : recv_bufs[l].buf) b.resize(layout.recv_lines[l].max_elems);
  }
  for (std::size_t l = 0; l < layout.send_lines.size() && !direct; ++l) {
    for (auto& b : send_bufs[l].buf) b.resize(layout.send_lines[l].max_elems);
  }
  // Only the communication thread calls these (and the World).
  const auto post_recv = [&](std::size_t l) {
    auto& line = layout.recv_lines[l];
    auto& lb = recv_bufs[l];
    if (direct || lb.posted >= static_cast<std::int64_t>(line.regions.size())) return;
    const auto slot = static_cast<std::size_t>(lb.posted & 1);
    const auto elems =
        static_cast<std::size_t>(line.regions[static_cast<std::size_t>(lb.posted)].volume());
    lb.req[slot] = detail::must(world.irecv(
        line.peer, line.tag, std::as_writable_bytes(std::span<T>(lb.buf[slot].data(), elems))));
    ++lb.posted;
  };
  auto face_s = rank_slab->connect_and_measure(world, layout);
  if (!face_s) return Unexpected{face_s.error()};
  report.face_transfer_s = *face_s;
  for (std::size_t l = 0; l < layout.recv_lines.size(); ++l) {
    post_recv(l);
    post_recv(l);
  }
  if (auto b = world.barrier(); !b) return Unexpected{b.error()};

  Tracer tracer = options.trace ? Tracer(threads, options.epoch) : Tracer();
  std::vector<PhaseTimes> phases(static_cast<std::size_t>(threads));
  std::vector<Clock::time_point> last_end(static_cast<std::size_t>(threads), Clock::now());
  // pending[t][p]: send lines thread t packed at a step of parity p. The communication thread
  // drains parity p during the next step while the packers fill the other parity; the barrier
  // between steps orders the two.
  std::vector<std::array<std::vector<std::size_t>, 2>> pending(static_cast<std::size_t>(threads));
  // done[t]: when thread t finished its tile and faces in the last compute step (read by the
  // communication thread after the barrier, to see how much of its communication was exposed).
  // Two parities: thread t writes done[t][s & 1] at step s while the communication thread reads
  // done[t][(s - 1) & 1]; the barrier orders a write before the read one step later.
  std::vector<std::array<Clock::time_point, 2>> done(static_cast<std::size_t>(threads));
  std::int64_t sent = 0, sent_bytes = 0, received = 0;
  double exposed = 0;
  Clock::time_point comm_end{};
  double comm_step_s = 0;  // the communication thread's communication in the last step
  const auto nsteps = static_cast<Index>(layout.steps.size());

  const auto span = [&](int t, SpanKind kind, std::int64_t step, Clock::time_point a,
                        Clock::time_point b) { tracer.record(t, kind, step, a, b); };
  // The communication thread: start the sends of the faces packed at a step of parity p.
  const auto start_sends = [&](int p, std::int64_t step) {
    const auto a = Clock::now();
    const auto sent_before = sent;
    for (auto& per_thread : pending) {
      for (std::size_t l : per_thread[static_cast<std::size_t>(p)]) {
        auto& line = layout.send_lines[l];
        auto& sb = send_bufs[l];
        const auto seq = line.next_seq++;
        const auto slot = static_cast<std::size_t>(seq & 1);
        const auto elems =
            static_cast<std::size_t>(line.regions[static_cast<std::size_t>(seq)].volume());
        if (direct) {
          // The compute thread wrote the face into the consumer's slab before the barrier that
          // precedes this notification; the barrier orders its stores before the notify.
          detail::must(faces->publish(line));
          ++sent;
          sent_bytes += static_cast<std::int64_t>(elems * sizeof(T));
          continue;
        }
        sb.req[slot] = detail::must(world.isend(
            line.peer, line.tag, std::as_bytes(std::span<const T>(sb.buf[slot].data(), elems))));
        ++sent;
        sent_bytes += static_cast<std::int64_t>(elems * sizeof(T));
      }
      per_thread[static_cast<std::size_t>(p)].clear();
    }
    const auto b = Clock::now();
    phases[0].send_start_s += detail::seconds(b - a);
    comm_step_s += detail::seconds(b - a);
    ct.comm_s += detail::seconds(b - a);
    if (sent != sent_before) span(0, SpanKind::send_start, step, a, b);
  };
  // The communication thread: wait for the remote faces of layout.steps[x]'s tasks, unpack them
  // into the slab halo, repost the receives; then complete every send in flight, so that a
  // compute thread may pack into either buffer of its lines at the next step.
  const auto receive_and_complete = [&](Index x, std::int64_t step) {
    const auto a = Clock::now();
    if (x < nsteps) {
      for (const auto& task : layout.steps[static_cast<std::size_t>(x)].tasks) {
        for (int k = 0; k < D; ++k) {
          const auto l = task.in_line[static_cast<std::size_t>(k)];
          if (l < 0) continue;
          auto& line = layout.recv_lines[static_cast<std::size_t>(l)];
          auto& rb = recv_bufs[static_cast<std::size_t>(l)];
          const auto seq = task.in_seq[static_cast<std::size_t>(k)];
          if (direct) {
            detail::must(faces->wait(line, seq));
            ++received;
            continue;
          }
          const auto slot = static_cast<std::size_t>(seq & 1);
          TP_ASSERT(rb.req[slot].active());
          const auto info = detail::must(world.wait(rb.req[slot]));
          const Box<D>& region = line.regions[static_cast<std::size_t>(seq)];
          if (info.bytes != static_cast<std::size_t>(region.volume()) * sizeof(T)) {
            throw detail::PipelineError(
                Error(Errc::internal, "face from rank " + std::to_string(line.peer) + " has " +
                                          std::to_string(info.bytes) + " bytes, expected " +
                                          std::to_string(region.volume() * Index{sizeof(T)})));
          }
          unpack<T, D>(
              std::span<const T>(rb.buf[slot].data(), static_cast<std::size_t>(region.volume())),
              region, slab);
          ++received;
          post_recv(static_cast<std::size_t>(l));
        }
      }
    }
    for (auto& sb : send_bufs) {
      for (auto& r : sb.req) {
        if (r.active()) detail::must(world.wait(r));
      }
    }
    const auto b = Clock::now();
    phases[0].wait_s += detail::seconds(b - a);
    comm_step_s += detail::seconds(b - a);
    ct.comm_s += detail::seconds(b - a);
    if (b != a) span(0, SpanKind::wait, step, a, b);
  };
  // A compute step of thread t: its tile, then its remote faces packed into free buffers.
  const auto compute_and_pack = [&](int t, Index s) {
    const auto tt = static_cast<std::size_t>(t);
    const auto& step = layout.steps[static_cast<std::size_t>(s)];
    const int cpu = t - first_cpu;
    if (cpu < 0 || step.task_of_cpu[static_cast<std::size_t>(cpu)] < 0) return;
    const auto& task =
        step.tasks[static_cast<std::size_t>(step.task_of_cpu[static_cast<std::size_t>(cpu)])];
    const auto a = Clock::now();
    if (!task.box.empty()) kernel.compute_tile(task.box, slab);
    const auto b = Clock::now();
    phases[tt].compute_s += detail::seconds(b - a);
    if (t == 0) ct.compute_s += detail::seconds(b - a);
    span(t, SpanKind::compute, step.time, a, b);
    for (int k = 0; k < D; ++k) {
      const auto l = task.out_line[static_cast<std::size_t>(k)];
      if (l < 0) continue;
      auto& line = layout.send_lines[static_cast<std::size_t>(l)];
      const auto seq = task.out_seq[static_cast<std::size_t>(k)];
      const auto slot = static_cast<std::size_t>(seq & 1);
      auto& sb = send_bufs[static_cast<std::size_t>(l)];
      TP_ASSERT(!sb.req[slot].active());  // completed by the communication thread last step
      if (direct) {
        faces->write(line, seq);  // straight into the consumer's slab; notified next sub-step
      } else {
        pack<T, D>(slab, line.regions[static_cast<std::size_t>(seq)], std::span<T>(sb.buf[slot]));
      }
      pending[tt][static_cast<std::size_t>(s & 1)].push_back(static_cast<std::size_t>(l));
    }
    const auto c = Clock::now();
    phases[tt].send_start_s += detail::seconds(c - b);
    if (!pending[tt][static_cast<std::size_t>(s & 1)].empty()) {
      span(t, SpanKind::send_start, step.time, b, c);
    }
  };
  // The part of the communication thread's last step that the compute threads waited for: from
  // the last compute thread's end to its own end, at most its communication in that step.
  const auto account_exposed = [&](Index s) {
    Clock::time_point last{};
    for (int t = 1; t < threads; ++t) {
      last = std::max(last, done[static_cast<std::size_t>(t)][static_cast<std::size_t>(s & 1)]);
    }
    exposed += std::min(comm_step_s, std::max(0.0, detail::seconds(comm_end - last)));
  };

  // Sub-steps. Overlap: 0 prefetches the faces of step 0; 1 + s runs step s (the communication
  // thread starts the sends packed at s - 1, computes its tile, then receives the faces of s + 1
  // while the others still compute); nsteps + 1 sends the last faces. Blocking: 0 prefetches;
  // 1 + 2s computes step s on every thread; 2 + 2s sends its faces and receives those of s + 1
  // on the communication thread while the others wait.
  const Index substeps = overlap ? nsteps + 2 : 2 * nsteps + 1;
  const auto run_start = Clock::now();
  try {
    run_steps(threads, substeps, [&](int t, Index sub) {
      const auto tt = static_cast<std::size_t>(t);
      const auto now = Clock::now();
      phases[tt].sync_s += detail::seconds(now - last_end[tt]);
      if (sub > 0) span(t, SpanKind::sync, sub, last_end[tt], now);
      if (sub == 0) {
        if (t == 0) {
          comm_step_s = 0;
          receive_and_complete(0, layout.steps[0].time);
          exposed += comm_step_s;  // the pipeline fills: nothing computes meanwhile
        }
      } else if (overlap) {
        const Index s = sub - 1;
        const std::int64_t time = s < nsteps ? layout.steps[static_cast<std::size_t>(s)].time
                                             : layout.steps.back().time + 1;
        if (t == 0) {
          if (s >= 1) account_exposed(s - 1);
          comm_step_s = 0;
          if (s >= 1) start_sends(static_cast<int>((s - 1) & 1), time);
        }
        if (s < nsteps) compute_and_pack(t, s);
        done[tt][static_cast<std::size_t>(s & 1)] = Clock::now();
        if (t == 0) {
          receive_and_complete(s + 1, time);
          comm_end = Clock::now();
        }
      } else {
        const Index s = (sub - 1) / 2;
        const std::int64_t time = layout.steps[static_cast<std::size_t>(s)].time;
        if ((sub - 1) % 2 == 0) {
          compute_and_pack(t, s);
        } else if (t == 0) {
          comm_step_s = 0;
          start_sends(static_cast<int>(s & 1), time);
          receive_and_complete(s + 1, time);
          exposed += comm_step_s;  // nothing computes meanwhile
        }
      }
      last_end[tt] = Clock::now();
    });
  } catch (const detail::PipelineError& e) {
    return Unexpected{e.error.on_rank(world.rank())};
  } catch (const std::exception& e) {
    return fail_at(world.rank(), Errc::internal, e.what());
  }
  if (overlap) account_exposed(nsteps);
  report.wall_s = detail::seconds(Clock::now() - run_start);
  for (const auto& p : phases) report.phases += p;
  report.messages_sent = sent;
  report.bytes_sent = sent_bytes;
  report.messages_received = received;
  report.exposed_comm_s = exposed;

  detail::reduce_rank_result(kernel, layout, slab, threads, outcome);
  if (options.trace) outcome.spans = tracer.spans();
  return outcome;
}

}  // namespace tp::exec
