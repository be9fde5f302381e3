// The rank pipeline: one rank of a plan runs its tiles on its CPU threads, exchanging faces with
// neighbour ranks through tp::comm, with the blocking or the overlapping (pipelined) schedule and
// hyperplane or vertical grouping (seed 000 section 4, seed 002 sections 4-5, docs/executor.md).
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/direct_faces.hpp>
#include <tilepipe/exec/face_transport.hpp>
#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/pipeline_tasks.hpp>
#include <tilepipe/exec/run_report.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/exec/trace.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tp::exec {

/// How a rank runs its share of a plan.
struct PipelineOptions {
  /// Subtiles per tile for vertical grouping (seed 002 formula (7)); 0 = sqrt(alpha / t_sync_in)
  /// with alpha and t_sync_in measured on this rank before the run.
  int subtiles = 0;
  /// One thread does all the rank's communication and computes a smaller share of the tiles
  /// (seed 002 section 5.4; pipeline_comm_thread.hpp). Hyperplane grouping only.
  bool comm_thread = false;
  /// With comm_thread: the communication thread's share in [0, 1] instead of the measured one
  /// (tests, experiments); negative = measure.
  double comm_thread_share = -1;
  /// How resident faces reach a neighbour rank (direct: one copy straight into its slab).
  FaceMode faces = FaceMode::automatic;
  /// Record spans for a Chrome trace.
  bool trace = false;
  /// Time zero of the trace (the same on every rank of a host).
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
};

/// What one rank produced: its share of the result, its report and (if traced) its spans.
template <class R>
struct RankOutcome {
  R result{};
  RankReport report;
  std::vector<Span> spans;
};

namespace detail {

using Clock = std::chrono::steady_clock;

inline double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// Turns an Expected failure inside a worker thread into an exception run_steps propagates.
struct PipelineError : std::runtime_error {
  explicit PipelineError(Error e) : std::runtime_error(e.message), error(std::move(e)) {}
  Error error;
};

template <class T>
T must(Expected<T> e) {
  if (!e) throw PipelineError(e.error());
  return std::move(*e);
}
inline void must(Status s) {
  if (!s) throw PipelineError(s.error());
}

/// Blocking schedule: waits for the sends a task started on its outgoing lines (`out_line`, -1
/// where none), adding each wait, capped at one face's transfer time `cap`, to `exposed`.
template <class Lines, class OutLines>
void wait_task_sends(comm::World& world, Lines& send_bufs, const OutLines& out_line, double cap,
                     double& exposed) {
  for (const int l : out_line) {
    if (l < 0) continue;
    for (auto& r : send_bufs[static_cast<std::size_t>(l)].req) {
      if (!r.active()) continue;
      const auto s0 = Clock::now();
      must(world.wait(r));
      exposed += std::min(seconds(Clock::now() - s0), cap);
    }
  }
}

/// End of a CPU's run: waits for every send still active on the send lines it owns.
template <class Lines, class SendLines>
void wait_cpu_sends(comm::World& world, Lines& send_bufs, const SendLines& send_lines, int cpu) {
  for (std::size_t l = 0; l < send_bufs.size(); ++l) {
    if (send_lines[l].cpu != cpu) continue;
    for (auto& r : send_bufs[l].req) {
      if (r.active()) must(world.wait(r));
    }
  }
}

/// Fills the halo layers of the slab that lie outside the space (index 0 layers) with the
/// kernel's boundary values; O(surface), unlike a scan of the whole slab.
template <ResidentKernel K>
void fill_outer_halo(const K& kernel, const SlabView<typename K::value_type, K::dims>& slab,
                     const Box<K::dims>& space) {
  constexpr int D = K::dims;
  for (int d = 0; d < D; ++d) {
    if (slab.bounds().lo[d] >= space.lo[d]) continue;
    Box<D> layer = slab.bounds();
    layer.hi[d] = space.lo[d];
    for_each_row(layer, [&](const Point<D>& first) {
      Point<D> p = first;
      for (Index j = 0; j < layer.extent(D - 1); ++j) {
        p[D - 1] = first[D - 1] + j;
        *slab.at(p) = kernel.boundary_value(p);
      }
    });
  }
}

/// Seconds one barrier round of `threads` threads takes (t_sync_in), median of a few batches.
double measure_barrier_s(int threads);

/// Why a plan cannot run with a kernel of `dims` dimensions on `world`, or success.
inline Status check_plan_fits(const plan::Plan& plan, const comm::World& world, int dims) {
  if (plan.space().dims() != dims) {
    return fail(Errc::invalid_argument, "the plan has " + std::to_string(plan.space().dims()) +
                                            " dimensions but the kernel has " +
                                            std::to_string(dims));
  }
  if (world.size() != plan.nodes()) {
    return fail(Errc::invalid_argument, "the plan has " + std::to_string(plan.nodes()) +
                                            " nodes but the world has " +
                                            std::to_string(world.size()) + " ranks");
  }
  return {};
}

/// True when a dependence of K has more than one non-zero component.
template <class K>
constexpr bool has_diagonal_dependence() {
  for (const auto& dep : K::deps) {
    int nonzero = 0;
    for (const auto c : dep) nonzero += c != 0 ? 1 : 0;
    if (nonzero > 1) return true;
  }
  return false;
}

/// The rank's share of a resident kernel's result over the tiles of `layout`, reduced on
/// `threads` threads (not timed), with the tile and point counts into the outcome's report.
template <ResidentKernel K, class Outcome>
void reduce_rank_result(const K& kernel, const RankLayout<K::dims>& layout,
                        const SlabView<typename K::value_type, K::dims>& slab, int threads,
                        Outcome& outcome) {
  using R = typename K::result_type;
  std::vector<R> partial(static_cast<std::size_t>(threads));
  const SlabView<const typename K::value_type, K::dims> cslab = slab;
  std::vector<const Task<K::dims>*> all;
  for (const auto& s : layout.steps) {
    for (const auto& task : s.tasks) all.push_back(&task);
  }
  run_steps(threads, 1, [&](int t, Index) {
    auto& p = partial[static_cast<std::size_t>(t)];
    for (std::size_t x = static_cast<std::size_t>(t); x < all.size();
         x += static_cast<std::size_t>(threads)) {
      p = K::combine(p, kernel.tile_result(all[x]->box, cslab));
    }
  });
  for (const R& p : partial) outcome.result = K::combine(outcome.result, p);
  for (const auto* task : all) {
    ++outcome.report.tiles;
    outcome.report.points += task->box.volume();
  }
}

}  // namespace detail

/// Why `plan` cannot run with a communication thread (vertical grouping), or success.
Status check_comm_thread(const plan::Plan& plan);

/// run_rank with PipelineOptions::comm_thread (pipeline_comm_thread.hpp).
template <ResidentKernel K>
Expected<RankOutcome<typename K::result_type>> run_rank_comm_thread(const K& kernel,
                                                                    const plan::Plan& plan,
                                                                    comm::World& world,
                                                                    const PipelineOptions& options);

/// Runs rank world.rank()'s tiles of `plan` for a resident kernel. Every rank of the world must
/// call it with the same plan (world.size() == plan.nodes()) and options. Returns this rank's
/// share of the result (combine the shares of all ranks for the total), or an Error: a peer that
/// died, a kernel that threw (naming the tile), a transport failure.
template <ResidentKernel K>
Expected<RankOutcome<typename K::result_type>> run_rank(const K& kernel, const plan::Plan& plan,
                                                        comm::World& world,
                                                        const PipelineOptions& options) {
  constexpr int D = K::dims;
  constexpr bool diagonal = detail::has_diagonal_dependence<K>();
  if (options.comm_thread) return run_rank_comm_thread(kernel, plan, world, options);
  auto direct_or = resolve_direct_faces(options.faces, world, diagonal);
  if (!direct_or) return Unexpected{direct_or.error()};
  using T = typename K::value_type;
  using R = typename K::result_type;
  using detail::Clock;
  if (auto ok = detail::check_plan_fits(plan, world, D); !ok) return Unexpected{ok.error()};
  const bool direct = *direct_or;
  std::array<int, D> halo{};
  for (int d = 0; d < D; ++d) halo[static_cast<std::size_t>(d)] = halo_width<K>(d);
  const bool vertical = plan.schedule().grouping().kind() == plan::GroupingKind::vertical;
  const bool overlap = plan.schedule().kind() == plan::ScheduleKind::overlap;
  const int threads = static_cast<int>(plan.cpus());

  auto layout_or = build_rank_layout<D>(plan, world.rank(), halo, diagonal);
  if (!layout_or) return Unexpected{layout_or.error()};
  RankLayout<D>& layout = *layout_or;

  // The rank's slab: its tiles and the halo below them, boundary layers filled. With direct
  // faces it lives in a region that the neighbours write their faces into.
  auto rank_slab = RankSlab<T, D>::make(world, layout.slab_box, direct, D * threads);
  if (!rank_slab) return Unexpected{rank_slab.error()};
  auto& faces = rank_slab->faces;
  const SlabView<T, D> slab = rank_slab->view;
  detail::fill_outer_halo(kernel, slab, layout.space);

  // Copied faces: two buffers per line (double buffering: a face in flight while the next is
  // packed). Direct faces need none.
  struct LineBuffers {
    std::array<std::vector<T>, 2> buf;
    std::array<comm::Request, 2> req;
    std::int64_t posted = 0;  // receive lines: irecvs posted so far
  };
  std::vector<LineBuffers> recv_bufs(layout.recv_lines.size());
  std::vector<LineBuffers> send_bufs(layout.send_lines.size());
  for (std::size_t l = 0; l < layout.recv_lines.size() && !direct; ++l) {
    for (auto& b : recv_bufs[l].buf) b.resize(layout.recv_lines[l].max_elems);
  }
  for (std::size_t l = 0; l < layout.send_lines.size() && !direct; ++l) {
    for (auto& b : send_bufs[l].buf) b.resize(layout.send_lines[l].max_elems);
  }
  const auto as_bytes = [](std::span<T> s) { return std::as_writable_bytes(s); };
  const auto post_recv = [&](std::size_t l) {
    auto& line = layout.recv_lines[l];
    auto& lb = recv_bufs[l];
    if (direct || lb.posted >= static_cast<std::int64_t>(line.regions.size())) return;
    const auto slot = static_cast<std::size_t>(lb.posted & 1);
    const auto elems =
        static_cast<std::size_t>(line.regions[static_cast<std::size_t>(lb.posted)].volume());
    lb.req[slot] = detail::must(
        world.irecv(line.peer, line.tag, as_bytes(std::span<T>(lb.buf[slot].data(), elems))));
    ++lb.posted;
  };

  // Measurements before the run: one face exchange per neighbour (for the hidden share) and, for
  // vertical grouping, alpha and t_sync_in to choose N (seed 002 formula (7)).
  RankOutcome<R> outcome;
  RankReport& report = outcome.report;
  report.rank = world.rank();
  report.threads = threads;
  report.direct_faces = direct;
  auto face_s = rank_slab->connect_and_measure(world, layout);
  if (!face_s) return Unexpected{face_s.error()};
  report.face_transfer_s = *face_s;
  int subtiles = 1;
  if (vertical) {
    subtiles = options.subtiles;
    if (subtiles <= 0) {
      const double t_sync_in = threads > 1 ? detail::measure_barrier_s(threads) : 0.0;
      const double alpha = measure_tile_seconds(kernel, layout.typical_tile);
      subtiles = t_sync_in > 0 ? static_cast<int>(std::lround(std::sqrt(alpha / t_sync_in))) : 1;
    }
    subtiles = static_cast<int>(std::clamp<Index>(subtiles, 1, layout.min_map_extent));
  }
  report.subtiles = subtiles;

  for (std::size_t l = 0; l < layout.recv_lines.size(); ++l) {
    post_recv(l);
    post_recv(l);
  }
  if (auto b = world.barrier(); !b) return Unexpected{b.error()};

  Tracer tracer = options.trace ? Tracer(threads, options.epoch) : Tracer();
  std::vector<PhaseTimes> phases(static_cast<std::size_t>(threads));
  std::vector<std::vector<std::size_t>> pending(static_cast<std::size_t>(threads));
  std::vector<Clock::time_point> last_end(static_cast<std::size_t>(threads), Clock::now());
  std::vector<double> exposed(static_cast<std::size_t>(threads));
  const double face_s_cap = report.face_transfer_s;
  std::vector<std::int64_t> sent(static_cast<std::size_t>(threads)),
      sent_bytes(static_cast<std::size_t>(threads)), received(static_cast<std::size_t>(threads));

  // Sub-steps: each rank step expands to subtiles + max_offset sub-steps (1 for hyperplane).
  const Index per_step = subtiles + (vertical ? layout.max_cpu_offset : 0);
  const Index substeps = static_cast<Index>(layout.steps.size()) * per_step;

  const auto span = [&](int t, SpanKind kind, std::int64_t step, Clock::time_point a,
                        Clock::time_point b) { tracer.record(t, kind, step, a, b); };
  // Starts the sends packed at this thread's previous step (overlap) or right now (blocking).
  const auto start_sends = [&](int t, std::int64_t step) {
    auto& list = pending[static_cast<std::size_t>(t)];
    if (list.empty()) return;
    const auto a = Clock::now();
    for (std::size_t l : list) {
      auto& line = layout.send_lines[l];
      auto& sb = send_bufs[l];
      const auto seq = line.next_seq++;
      const auto slot = static_cast<std::size_t>(seq & 1);
      const auto elems =
          static_cast<std::size_t>(line.regions[static_cast<std::size_t>(seq)].volume());
      sb.req[slot] = detail::must(world.isend(
          line.peer, line.tag, std::as_bytes(std::span<const T>(sb.buf[slot].data(), elems))));
      ++sent[static_cast<std::size_t>(t)];
      sent_bytes[static_cast<std::size_t>(t)] += static_cast<std::int64_t>(elems * sizeof(T));
    }
    list.clear();
    const auto b = Clock::now();
    phases[static_cast<std::size_t>(t)].send_start_s += detail::seconds(b - a);
    span(t, SpanKind::send_start, step, a, b);
  };
  // Packs a finished tile's faces for remote consumers (waiting first for the send that used the
  // same buffer two faces ago), then queues them. Direct faces: packs them straight into the
  // consumers' slabs and notifies; they are sent on return.
  const auto pack_faces = [&](int t, const Task<D>& task, std::int64_t step) {
    const auto a = Clock::now();
    double waited = 0;
    for (int k = 0; k < D; ++k) {
      const auto l = task.out_line[static_cast<std::size_t>(k)];
      if (l < 0) continue;
      auto& line = layout.send_lines[static_cast<std::size_t>(l)];
      const auto seq = task.out_seq[static_cast<std::size_t>(k)];
      if (direct) {
        const auto bytes = detail::must(faces->send(line, seq));
        ++sent[static_cast<std::size_t>(t)];
        sent_bytes[static_cast<std::size_t>(t)] += static_cast<std::int64_t>(bytes);
        continue;
      }
      auto& sb = send_bufs[static_cast<std::size_t>(l)];
      const auto slot = static_cast<std::size_t>(seq & 1);
      if (sb.req[slot].active()) {
        const auto w0 = Clock::now();
        detail::must(world.wait(sb.req[slot]));
        waited += detail::seconds(Clock::now() - w0);
      }
      const Box<D>& region = line.regions[static_cast<std::size_t>(seq)];
      pack<T, D>(slab, region, std::span<T>(sb.buf[slot]));
      pending[static_cast<std::size_t>(t)].push_back(static_cast<std::size_t>(l));
    }
    const auto b = Clock::now();
    phases[static_cast<std::size_t>(t)].wait_s += waited;
    phases[static_cast<std::size_t>(t)].send_start_s += detail::seconds(b - a) - waited;
    if (b != a) span(t, SpanKind::send_start, step, a, b);
  };
  // Waits for a task's remote faces, unpacks them into the slab halo, reposts the receives.
  const auto receive_faces = [&](int t, const Task<D>& task, std::int64_t step) {
    const auto a = Clock::now();
    bool any = false;
    for (int k = 0; k < D; ++k) {
      const auto l = task.in_line[static_cast<std::size_t>(k)];
      if (l < 0) continue;
      any = true;
      auto& line = layout.recv_lines[static_cast<std::size_t>(l)];
      const auto seq = task.in_seq[static_cast<std::size_t>(k)];
      if (direct) {
        const auto w0 = Clock::now();
        detail::must(faces->wait(line, seq));
        exposed[static_cast<std::size_t>(t)] +=
            std::min(detail::seconds(Clock::now() - w0), face_s_cap);
        ++received[static_cast<std::size_t>(t)];
        continue;
      }
      auto& rb = recv_bufs[static_cast<std::size_t>(l)];
      const auto slot = static_cast<std::size_t>(seq & 1);
      TP_ASSERT(rb.req[slot].active());
      const auto w0 = Clock::now();
      const auto info = detail::must(world.wait(rb.req[slot]));
      exposed[static_cast<std::size_t>(t)] +=
          std::min(detail::seconds(Clock::now() - w0), face_s_cap);
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
      ++received[static_cast<std::size_t>(t)];
      post_recv(static_cast<std::size_t>(l));
    }
    if (!any) return;
    const auto b = Clock::now();
    phases[static_cast<std::size_t>(t)].wait_s += detail::seconds(b - a);
    span(t, SpanKind::wait, step, a, b);
  };

  const auto run_start = Clock::now();
  try {
    run_steps(threads, substeps, [&](int t, Index sub) {
      const auto tt = static_cast<std::size_t>(t);
      const auto now = Clock::now();
      phases[tt].sync_s += detail::seconds(now - last_end[tt]);
      if (sub > 0) span(t, SpanKind::sync, sub / per_step, last_end[tt], now);
      const auto step_index = static_cast<std::size_t>(sub / per_step);
      const Index q = sub % per_step;
      const auto& step = layout.steps[step_index];
      const auto global_step = step.time;
      const Task<D>* task = step.task_of_cpu[tt] >= 0
                                ? &step.tasks[static_cast<std::size_t>(step.task_of_cpu[tt])]
                                : nullptr;
      const Index offset = task ? (vertical ? task->cpu_offset : 0) : 0;
      if (q == 0 && overlap) start_sends(t, global_step);
      if (task && q == offset) receive_faces(t, *task, global_step);
      if (task && q >= offset && q < offset + subtiles) {
        Box<D> part = task->box;
        if (vertical && subtiles > 1) {
          const int i = plan.map_dim();
          const Index len = task->box.extent(i);
          const Index s = q - offset;
          part.lo[i] = task->box.lo[i] + len * s / subtiles;
          part.hi[i] = task->box.lo[i] + len * (s + 1) / subtiles;
        }
        const auto a = Clock::now();
        if (!part.empty()) kernel.compute_tile(part, slab);
        const auto b = Clock::now();
        phases[tt].compute_s += detail::seconds(b - a);
        span(t, SpanKind::compute, global_step, a, b);
        if (q == offset + subtiles - 1) {
          pack_faces(t, *task, global_step);
          if (!overlap && !direct) {
            start_sends(t, global_step);
            // Blocking schedule: the sends complete before the next tile starts.
            const auto w0 = Clock::now();
            detail::wait_task_sends(world, send_bufs, task->out_line, face_s_cap, exposed[tt]);
            const auto w1 = Clock::now();
            phases[tt].wait_s += detail::seconds(w1 - w0);
            span(t, SpanKind::wait, global_step, w0, w1);
          }
        }
      }
      if (sub == substeps - 1) {
        start_sends(t, global_step);
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
  for (int t = 0; t < threads; ++t) {
    report.phases += phases[static_cast<std::size_t>(t)];
    report.messages_sent += sent[static_cast<std::size_t>(t)];
    report.bytes_sent += sent_bytes[static_cast<std::size_t>(t)];
    report.messages_received += received[static_cast<std::size_t>(t)];
    report.exposed_comm_s += exposed[static_cast<std::size_t>(t)];
  }

  // The rank's share of the result, over its tiles, on its threads (not timed).
  detail::reduce_rank_result(kernel, layout, slab, threads, outcome);
  if (options.trace) outcome.spans = tracer.spans();
  return outcome;
}

}  // namespace tp::exec

#include <tilepipe/exec/pipeline_comm_thread.hpp>
