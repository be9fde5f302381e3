// The rank pipeline with a communication thread (seed 002 section 5.4): thread 0 of each rank
// starts every send, waits for and unpacks every incoming face (one step ahead) and computes a
// smaller row of tiles, sized so that its computation + communication matches the others'
// computation; the compute threads never call the communication library (docs/executor.md).
#pragma once

#include <tilepipe/exec/pipeline.hpp>

#include <set>

namespace tp::exec {

namespace detail {

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
  using detail::Clock;
  TP_TRY(detail::check_plan_fits(plan, world, D));
  TP_TRY(check_comm_thread(plan));
  if (has_diagonal_dependence<K>()) {
    // Extended faces of neighbouring rows overlap; unpacking one a step ahead would write halo
    // points that a compute thread reads in the same step.
    return Unexpected{Error::about("comm_thread", Errc::invalid_argument,
                                   "needs dependences along the axes (this kernel has a "
                                   "diagonal one)")};
  }
  auto direct = resolve_direct_faces(options.faces, world, false);
  if (!direct) return Unexpected{direct.error()};
  std::array<int, D> halo{};
  for (int d = 0; d < D; ++d) halo[static_cast<std::size_t>(d)] = halo_width<K>(d);
  const bool overlap = plan.schedule().kind() == plan::ScheduleKind::overlap;
  const int cpus = static_cast<int>(plan.cpus());
  // With m = 1 the communication thread is an extra thread that computes nothing; otherwise it is
  // CPU 0 (grid coordinates all 0) and thread c runs CPU c.
  const int first_cpu = cpus == 1 ? 1 : 0;
  const int threads = cpus + first_cpu;
  auto outcome = detail::start_outcome<typename K::result_type>(world, threads);
  RankReport& report = outcome.report;
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
    if (!*direct) {
      auto round = measure_comm_round(world, *plain, sizeof(T));
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
    auto agreed = world.allreduce_min(share);
    if (!agreed) return Unexpected{agreed.error()};
    share = *agreed;
  }
  if (options.comm_thread_share >= 0 && cpus > 1) share = std::min(options.comm_thread_share, 1.0);
  split.share = share;
  ct.share = share;
  ct.split_dim = split.dim + 1;

  auto layout_or = build_rank_layout<D>(plan, world.rank(), halo, false, split);
  if (!layout_or) return Unexpected{layout_or.error()};
  const RankLayout<D>& layout = *layout_or;
  // Start queues 2t + p: the faces thread t finished at a step of parity p. The communication
  // thread starts parity p during the next step while the others fill the other parity; the
  // barrier between steps orders the two. Direct faces are announced by it too (not eager).
  auto faces_or =
      detail::make_resident_faces<T, D>(world, layout, *direct, cpus, 2 * threads, false);
  if (!faces_or) return Unexpected{faces_or.error()};
  detail::ResidentFaces<T, D>& faces = **faces_or;
  const SlabView<T, D> slab = faces.slab();
  fill_outer_halo(kernel, slab, layout.space);
  report.direct_faces = *direct;
  auto face_s = faces.connect_and_measure();
  if (!face_s) return Unexpected{face_s.error()};
  report.face_transfer_s = *face_s;
  faces.post_all();
  TP_TRY(world.barrier());

  detail::ThreadRecords records(threads, options);
  // done[t][p]: when thread t finished its tile and faces at the last step of parity p (read by
  // the communication thread one step later, after the barrier that orders the write before).
  std::vector<std::array<Clock::time_point, 2>> done(static_cast<std::size_t>(threads));
  double exposed = 0;
  Clock::time_point comm_end{};
  double comm_step_s = 0;  // the communication thread's communication in the current step
  const auto nsteps = static_cast<Index>(layout.steps.size());
  const auto comm_span = [&](SpanKind kind, std::int64_t step, Clock::time_point a) {
    const auto b = Clock::now();
    comm_step_s += detail::seconds(b - a);
    ct.comm_s += detail::seconds(b - a);
    records[0].account(kind, step, a, b);
  };
  // The communication thread: start the faces packed at a step of parity p.
  const auto start_sends = [&](Index p, std::int64_t step) {
    const auto a = Clock::now();
    bool any = false;
    for (int t = 0; t < threads; ++t)
      any = faces.start(2 * t + static_cast<int>(p), records[0]) || any;
    if (any) comm_span(SpanKind::send_start, step, a);
  };
  // The communication thread: the remote faces of layout.steps[x] into the slab halo, then every
  // send in flight complete, so that a compute thread may pack into either buffer next step.
  const auto receive_and_complete = [&](Index x, std::int64_t step) {
    const auto a = Clock::now();
    if (x < nsteps) {
      for (const auto& task : layout.steps[static_cast<std::size_t>(x)].tasks) {
        for (int k = 0; k < D; ++k) {
          const auto l = task.in_line[static_cast<std::size_t>(k)];
          if (l >= 0) {
            faces.await(static_cast<std::size_t>(l), task.in_seq[static_cast<std::size_t>(k)],
                        records[0]);
          }
        }
      }
    }
    for (std::size_t l = 0; l < layout.send_lines.size(); ++l) faces.complete(l, nullptr);
    comm_span(SpanKind::wait, step, a);
  };
  // A compute step of thread t: its tile, then its remote faces packed into free buffers.
  const auto compute_and_pack = [&](int t, Index s) {
    const auto& step = layout.steps[static_cast<std::size_t>(s)];
    const int cpu = t - first_cpu;
    if (cpu < 0 || step.task_of_cpu[static_cast<std::size_t>(cpu)] < 0) return;
    const auto& task =
        step.tasks[static_cast<std::size_t>(step.task_of_cpu[static_cast<std::size_t>(cpu)])];
    detail::ThreadRecord& rec = records[t];
    const auto a = Clock::now();
    if (!task.box.empty())
      detail::kernel_call(task.box, [&] { kernel.compute_tile(task.box, slab); });
    const auto b = Clock::now();
    rec.account(SpanKind::compute, step.time, a, b);
    if (t == 0) ct.compute_s += detail::seconds(b - a);
    bool any = false;
    for (int k = 0; k < D; ++k) {
      const auto l = task.out_line[static_cast<std::size_t>(k)];
      if (l < 0) continue;
      faces.emit(static_cast<std::size_t>(l), task.out_seq[static_cast<std::size_t>(k)],
                 2 * t + static_cast<int>(s & 1), rec);
      any = true;
    }
    const auto c = Clock::now();
    rec.phases.send_start_s += detail::seconds(c - b);
    if (any) rec.trace(SpanKind::send_start, step.time, b, c);
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
  records.start();
  TP_TRY(detail::run_guarded(world.rank(), threads, substeps, [&](int t, Index sub) {
    records[t].begin(sub, sub);
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
        if (s >= 1) start_sends((s - 1) & 1, time);
      }
      if (s < nsteps) compute_and_pack(t, s);
      done[static_cast<std::size_t>(t)][static_cast<std::size_t>(s & 1)] = Clock::now();
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
        start_sends(s & 1, time);
        receive_and_complete(s + 1, time);
        exposed += comm_step_s;  // nothing computes meanwhile
      }
    }
    records[t].end();
  }));
  if (overlap) account_exposed(nsteps);
  records.finish(outcome);
  report.exposed_comm_s = exposed;  // per step, as above (not per face)
  TP_TRY(detail::reduce_rank_result(kernel, layout, slab, threads, world.rank(), outcome));
  return outcome;
}

}  // namespace tp::exec
