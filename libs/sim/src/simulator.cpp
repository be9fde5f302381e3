// The event loop of the simulator: ranks advance step by step (one event per rank step, every
// tile of a step costing the same), faces travel as one batch per rank, step and direction over
// the ports and links of the network in time order; the critical path's hand-overs.
// Semantics: docs/model.md, "Simulation".
#include <tilepipe/support/assert.hpp>

#include "simulator.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace tp::sim::detail {

void Simulator::push(double t, std::int64_t id, EventKind kind, std::uint64_t version) {
  queue_.push(Event{t, seq_++, id, kind, version});
}

double Simulator::start_sends(std::int64_t id, std::int64_t s, const Stamp& from) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  const double t_start = machine_.t_start.count();
  const bool queued = machine_.send_mode == model::SendMode::queued;
  const auto node = plan_.node_coords(id);
  double cpu = 0;
  double copy = 0;  // the CPU's copy of the faces so far (Machine::cpu_copy_bytes_per_s)
  const bool copies = !comm_thread_ && machine_.cpu_copy_bytes_per_s > 0;
  std::int64_t started = 0;
  for (int f = 0; f < factors_; ++f) {
    const std::int64_t n = senders(r, f, s);
    if (n == 0) continue;
    // One thread (the corner CPU, or the communication thread for all) starts its messages
    // one after another; a queue starts them all at once.
    started += comm_thread_ ? n : 1;
    cpu = queued ? t_start : t_start * static_cast<double>(started);
    const double ready = from.t + cpu;
    std::int64_t b = 0;
    if (free_batches_.empty()) {
      b = static_cast<std::int64_t>(batches_.size());
      batches_.emplace_back();
    } else {
      b = free_batches_.back();
      free_batches_.pop_back();
    }
    Batch& x = batches_[static_cast<std::size_t>(b)];
    x.src = id;
    x.f = f;
    x.live = true;
    x.send_step = s;
    if (r.table != nullptr) {  // the wrap from the last node to node 0 included
      const auto fu = static_cast<std::size_t>(f);
      x.dst = r.table->dst[fu];
      x.recv_step = ranks_[static_cast<std::size_t>(x.dst)].table->step_of_time(
          r.table->time_of_step(s) + r.table->gap[fu]);
    } else {
      auto succ = node;
      ++succ[static_cast<std::size_t>(f)];
      x.dst = plan_.rank_of(succ);
      x.recv_step = vertical_ ? s : s - (m_[static_cast<std::size_t>(f)] - 1);
    }
    const double msg =
        r.face_area[static_cast<std::size_t>(f)] * height(r, s) * static_cast<double>(elem_);
    x.bytes = msg * static_cast<double>(n);
    if (copies) copy += x.bytes / machine_.cpu_copy_bytes_per_s;
    x.ready = ready;
    x.path = from.path;
    x.path.overhead += cpu;
    x.stage = 0;
    x.pos = id;
    x.prev_end = ready + copy;  // the faces are in when the sender's copy of them is done
    ++r.pending;
    r.result.messages_sent += n;
    r.result.bytes_sent += static_cast<std::int64_t>(x.bytes);
    push(ready, b, EventKind::hop);
  }
  if (started == 0) return 0;
  // The copy is the transfer itself (its flight through the network counts it as well): the
  // faces arrive no earlier than it ends, and the sending CPU goes on only after it (docs/model.md,
  // "What the CPU pays, what overlaps"). On a shared host the caller runs it as work on the
  // sending thread's core.
  cpu += copy;
  span(id, s, SpanKind::send_start, from.t, from.t + cpu);
  if (overlap_) span(id, s, SpanKind::sync, from.t + cpu, from.t + cpu + machine_.t_sync.count());
  return cpu + machine_.t_sync.count();
}

void Simulator::span(std::int64_t id, std::int64_t step, SpanKind kind, double begin, double end) {
  if (spans_.empty() || !(end > begin)) return;
  spans_[static_cast<std::size_t>(id)].push_back(
      SimSpan{id, step, kind, Seconds{begin}, Seconds{end}});
}

void Simulator::begin_step(std::int64_t id) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  const std::int64_t s = r.step;
  ++steps_done_;
  double cpu = 0;
  if (overlap_ && s >= 1) {  // the faces of the previous step leave now
    cpu = start_sends(id, s - 1, r.begin);
    r.result.overhead += Seconds{cpu};
    if (sharing_ && cpu > 0) {
      start_job(id, r.begin, cpu, true);
      return;
    }
  }
  sent(id, plus_overhead(r.begin, cpu));
}

void Simulator::sent(std::int64_t id, const Stamp& cpu) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  r.cpu = cpu;
  if (r.step == r.steps) {  // the end: every send must arrive
    --steps_done_;
    if (r.pending == 0) {
      done(id, later(r.cpu, r.last_arrival));
    } else {
      r.phase = Rank::Phase::sends;
    }
    return;
  }
  r.phase = Rank::Phase::inputs;  // the CPU is free for its tile from here
  try_inputs(id);
}

void Simulator::start_job(std::int64_t id, const Stamp& at, double work, bool sends) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  r.job_start = at;
  r.job_work = work;
  r.job_barriers = 0;
  r.job_sends = sends;
  push(at.t, id, EventKind::compute_start);
}

void Simulator::try_inputs(std::int64_t id) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  const std::int64_t need = comm_thread_ ? r.step + 1 : r.step;
  for (int f = 0; f < factors_; ++f) {
    if (receivers(r, f, need) == 0) continue;
    const auto& box = r.inbox[static_cast<std::size_t>(f)];
    if (box.empty()) return;
    TP_ASSERT(box.front().step >= need);
    if (box.front().step != need) return;
  }
  Stamp inputs;
  for (int f = 0; f < factors_; ++f) {
    if (receivers(r, f, need) == 0) continue;
    auto& box = r.inbox[static_cast<std::size_t>(f)];
    inputs = later(inputs, box.front().at);
    box.pop_front();
  }
  finish_step(id, inputs);
}

void Simulator::finish_step(std::int64_t id, const Stamp& inputs) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  const std::int64_t s = r.step;
  r.phase = Rank::Phase::ready;
  if (s < 0) {  // the comm thread's prefetch of step 0's faces
    r.begin = later(r.begin, inputs);
    r.step = 0;
    push(r.begin.t, id, EventKind::step);
    return;
  }
  const double c_full = compute_time(r, s);
  if (!r.started) {
    r.started = true;
    r.result.first_start = Seconds{std::max(r.cpu.t, inputs.t)};
  }
  if (comm_thread_) {
    // Thread 0 started the sends (in r.cpu) and computes its share; the others compute the rest;
    // the step ends when both are done and the next step's faces are in (seed 002 5.4).
    const double m = static_cast<double>(plan_.cpus());
    const double c0 = m > 1 ? ct_share_ * c_full : 0;
    const double cw = m > 1 ? (m * c_full - c0) / (m - 1) : c_full;
    Stamp a = r.cpu;
    a.t += c0;
    a.path.compute += c0;
    Stamp b = r.begin;
    b.t += cw;
    b.path.compute += cw;
    const Stamp end = later(later(a, b), inputs);
    const bool comm_bound = a.t > b.t;
    span(id, s, SpanKind::compute, comm_bound ? r.cpu.t : r.begin.t, std::max(a.t, b.t));
    span(id, s, SpanKind::wait, std::max(a.t, b.t), inputs.t);
    r.result.compute += Seconds{comm_bound ? c0 : cw};
    if (!comm_bound) r.result.overhead -= Seconds{r.cpu.t - r.begin.t};
    r.begin = end;
    ++r.step;
    push(end.t, id, EventKind::step);
    return;
  }
  // Substeps: N subtiles + the skew D of vertical grouping, a barrier (t_sync_in) between them.
  const double subs = static_cast<double>(nsub_ + (vertical_ ? r.shape->depth() : 0));
  const double c = c_full / static_cast<double>(nsub_);
  const double t_in = machine_.t_sync_in.count();
  Stamp end = later(r.cpu, inputs);
  span(id, s, SpanKind::wait, r.cpu.t, inputs.t);
  if (sharing_) {
    // A thread that slept on the faces loses the wake-up; then the host's cores are shared.
    if (inputs.t > r.cpu.t) wake_up(id, s, end);
    start_job(id, end, subs * c, false);
    r.job_barriers = (subs - 1) * t_in;
    r.job_c_full = c_full;
    return;
  }
  span(id, s, SpanKind::compute, end.t, end.t + subs * c + (subs - 1) * t_in);
  end.t += subs * c + (subs - 1) * t_in;
  end.path.compute += subs * c;
  end.path.overhead += (subs - 1) * t_in;
  r.result.overhead += Seconds{(subs - 1) * t_in};
  computed(id, end, c_full);
}

void Simulator::computed(std::int64_t id, Stamp end, double c_full) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  const std::int64_t s = r.step;
  r.result.compute += Seconds{c_full};
  if (!overlap_) {  // blocking: the faces leave now and the thread waits until they arrived
    r.last_arrival = Stamp{};
    const double cpu = start_sends(id, s, end);
    if (r.pending > 0) {  // it sent faces (their CPU time may be 0)
      r.result.overhead += Seconds{cpu};
      r.cpu = end;
      const double send_cpu = cpu - machine_.t_sync.count();
      if (sharing_ && send_cpu > 0) {  // on its core first (compute_end), then the wait
        r.send_cpu = 0;
        r.phase = Rank::Phase::ready;
        start_job(id, end, send_cpu, true);
      } else {
        r.send_cpu = send_cpu;
        r.phase = Rank::Phase::sends;
      }
      return;
    }
  }
  r.begin = end;
  ++r.step;
  push(end.t, id, EventKind::step);
}

void Simulator::resolve_sends(std::int64_t id) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  if (r.step == r.steps) {
    done(id, later(r.cpu, r.last_arrival));
    return;
  }
  // Blocking: max(computed + starts, arrived) + t_sync (+ the wake-up of a shared host's rank
  // that slept on its sends).
  Stamp end = later(plus_overhead(r.cpu, r.send_cpu), r.last_arrival);
  span(id, r.step, SpanKind::wait, r.cpu.t + r.send_cpu, r.last_arrival.t);
  if (sharing_ && r.last_arrival.t > r.cpu.t + r.send_cpu) wake_up(id, r.step, end);
  span(id, r.step, SpanKind::sync, end.t, end.t + machine_.t_sync.count());
  end = plus_overhead(end, machine_.t_sync.count());
  r.phase = Rank::Phase::ready;
  r.begin = end;
  ++r.step;
  push(end.t, id, EventKind::step);
}

void Simulator::host_advance(Host& h) {
  const double dt = t_now_ - h.last;
  if (dt > 0) {
    for (const std::int64_t id : h.active) {
      ranks_[static_cast<std::size_t>(id)].remaining -= dt * pace(h, id);
    }
  }
  h.last = t_now_;
}

void Simulator::wake_up(std::int64_t id, std::int64_t step, Stamp& at) {
  const double wake = machine_.network.hosts.wake.count();
  span(id, step, SpanKind::sync, at.t, at.t + wake);
  at = plus_overhead(at, wake);
  ranks_[static_cast<std::size_t>(id)].result.overhead += Seconds{wake};
}

template <class F>
void Simulator::for_each_core(std::int64_t id, F&& f) const {
  const model::Hosts& hosts = machine_.network.hosts;
  const std::int64_t cpus = plan_.cpus();
  const std::int64_t first = id % hosts.ranks_per_host * cpus;
  if (ranks_[static_cast<std::size_t>(id)].job_sends) {  // thread 0 sends
    f(static_cast<std::size_t>(first % hosts.cores), 1);
    return;
  }
  for (std::int64_t t = 0; t < std::min(cpus, hosts.cores); ++t) {
    // Threads t, t + cores, ... of the rank share core (first + t) mod cores.
    f(static_cast<std::size_t>((first + t) % hosts.cores),
      static_cast<int>((cpus - t + hosts.cores - 1) / hosts.cores));
  }
}

void Simulator::occupy(Host& h, std::int64_t id, int sign) {
  for_each_core(id, [&](std::size_t core, int threads) { h.computing[core] += sign * threads; });
}

double Simulator::pace(const Host& h, std::int64_t id) const {
  // The slowest of its threads: on a core with n computing threads, each thread goes at 1 / n.
  int most = 1;
  for_each_core(id, [&](std::size_t core, int) { most = std::max(most, h.computing[core]); });
  return 1.0 / static_cast<double>(most);
}

void Simulator::host_schedule(std::int64_t host) {
  Host& h = hosts_[static_cast<std::size_t>(host)];
  ++h.version;
  if (h.active.empty()) return;
  double first = std::numeric_limits<double>::infinity();
  for (const std::int64_t id : h.active) {
    first = std::min(first,
                     std::max(0.0, ranks_[static_cast<std::size_t>(id)].remaining) / pace(h, id));
  }
  push(t_now_ + first, host, EventKind::compute_end, h.version);
}

void Simulator::compute_start(std::int64_t id) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  const std::int64_t host = id / machine_.network.hosts.ranks_per_host;
  Host& h = hosts_[static_cast<std::size_t>(host)];
  host_advance(h);
  r.remaining = r.job_work;
  h.active.push_back(id);
  occupy(h, id, +1);
  host_schedule(host);
}

void Simulator::compute_end(std::int64_t host) {
  Host& h = hosts_[static_cast<std::size_t>(host)];
  host_advance(h);
  // Every computation within rounding of its end ends now (the one scheduled, and any tie).
  std::vector<std::int64_t>& ended = ended_;
  ended.clear();
  std::erase_if(h.active, [&](std::int64_t id) {
    const Rank& r = ranks_[static_cast<std::size_t>(id)];
    if (r.remaining > 1e-9 * r.job_work) return false;
    ended.push_back(id);
    return true;
  });
  for (const std::int64_t id : ended) occupy(h, id, -1);
  host_schedule(host);
  for (const std::int64_t id : ended) {
    Rank& r = ranks_[static_cast<std::size_t>(id)];
    if (r.job_sends) {
      r.job_sends = false;
      Stamp at = r.job_start;
      at.path.overhead += t_now_ - at.t;
      at.t = t_now_;
      if (overlap_) {
        sent(id, at);
      } else {
        r.cpu = at;
        r.phase = Rank::Phase::sends;
        if (r.pending == 0) resolve_sends(id);
      }
      continue;
    }
    Stamp end = r.job_start;
    const double elapsed = t_now_ - end.t;
    // The tiles, stretched by the sharing, then the barriers between sub-steps (unshared, as
    // on cores of its own).
    end.t = t_now_ + r.job_barriers;
    end.path.compute += elapsed;
    end.path.overhead += r.job_barriers;
    r.result.overhead += Seconds{r.job_barriers};
    span(id, r.step, SpanKind::compute, r.job_start.t, end.t);
    // The step barrier: the threads that arrived first slept; the last one's wakes them.
    if (plan_.cpus() > 1) wake_up(id, r.step, end);
    // The rank's compute figure: the time its threads took, sharing the cores.
    computed(id, end, r.job_work > 0 ? r.job_c_full * elapsed / r.job_work : r.job_c_full);
  }
}

std::int64_t Simulator::torus_next(std::int64_t pos, std::int64_t dst, int* link) const {
  // Dimension-order routing along the shorter way round (ties: the positive direction).
  const int dims = static_cast<int>(torus_dims_.size());
  for (int d = 0; d < dims; ++d) {
    const auto du = static_cast<std::size_t>(d);
    const std::int64_t t = torus_dims_[du];
    const std::int64_t a = pos / torus_strides_[du] % t;
    const std::int64_t b = dst / torus_strides_[du] % t;
    if (a == b) continue;
    const std::int64_t forward = ((b - a) % t + t) % t;
    const bool plus = forward <= t - forward;
    const std::int64_t next = plus ? (a + 1) % t : (a + t - 1) % t;
    *link = 2 * d + (plus ? 0 : 1);
    return pos + (next - a) * torus_strides_[du];
  }
  return pos;
}

void Simulator::hop(std::int64_t b) {
  Batch& x = batches_[static_cast<std::size_t>(b)];
  const bool parallel = machine_.send_mode == model::SendMode::parallel;
  const std::int64_t per_node = 2 * (parallel ? std::max(1, factors_) : 1);
  const std::int64_t port = parallel ? 2 * x.f : 0;
  std::size_t res = 0;
  const double t = t_now_;  // when the batch's head reaches this hop
  double extra = 0;
  if (x.stage == 0) {
    res = static_cast<std::size_t>(x.src * per_node + port);
    x.stage = torus_ ? 1 : 2;
  } else if (x.stage == 1) {
    int link = 0;
    const std::int64_t next = torus_next(x.pos, x.dst, &link);
    if (next == x.pos) {
      x.stage = 2;
      hop(b);
      return;
    }
    res = static_cast<std::size_t>(
        link_base_ + x.pos * 2 * static_cast<std::int64_t>(torus_dims_.size()) + link);
    x.pos = next;
    extra = machine_.network.hop_latency.count();
  } else {
    res = static_cast<std::size_t>(x.dst * per_node + port + 1);
    x.stage = 3;
  }
  Resource& r = res_[res];
  const double start = std::max(t, r.free);
  const double end = std::max(start + x.bytes / r.bw, x.prev_end);
  r.free = end;
  x.prev_end = end;
  if (x.stage == 3) {
    deliver(b, end + machine_.link.latency.count());
  } else {
    push(start + extra, b, EventKind::hop);
  }
}

void Simulator::deliver(std::int64_t b, double arrival) {
  batches_[static_cast<std::size_t>(b)].live = false;
  const Batch x = batches_[static_cast<std::size_t>(b)];
  free_batches_.push_back(b);
  Stamp at{arrival, x.path};  // the sender's own chain: its send completed
  at.path.network += arrival - x.ready;
  ++at.path.messages;
  Rank& src = ranks_[static_cast<std::size_t>(x.src)];
  --src.pending;
  src.last_arrival = later(src.last_arrival, at);
  if (src.pending == 0 && src.phase == Rank::Phase::sends) resolve_sends(x.src);
  Rank& dst = ranks_[static_cast<std::size_t>(x.dst)];
  auto& box = dst.inbox[static_cast<std::size_t>(x.f)];
  TP_ASSERT(box.empty() || box.back().step < x.recv_step);
  Stamp to = at;  // the receiver's: the chain moves on to it
  to.path.handover = static_cast<std::int64_t>(handovers_.size());
  handovers_.push_back(
      Handover{x.src, x.send_step, x.dst, x.recv_step, x.ready, arrival, x.path.handover});
  box.push_back(Arrival{x.recv_step, to});
  if (dst.phase == Rank::Phase::inputs) try_inputs(x.dst);
}

void Simulator::done(std::int64_t id, const Stamp& at) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  r.phase = Rank::Phase::done;
  r.begin = at;
  r.result.finish = Seconds{at.t};
  ++finished_;
}

template <class F>
void Simulator::for_each_live_path(F&& f) {
  for (Rank& r : ranks_) {
    f(r.begin.path);
    f(r.cpu.path);
    f(r.last_arrival.path);
    for (auto& box : r.inbox) {
      for (Arrival& a : box) f(a.at.path);
    }
  }
  for (Batch& x : batches_) {
    if (x.live) f(x.path);
  }
}

void Simulator::collect_handovers() {
  constexpr std::int64_t unreached = -1, reached = -2;
  std::vector<std::int64_t> index(handovers_.size(), unreached);
  for_each_live_path([&](const Path& p) {
    for (std::int64_t h = p.handover; h >= 0 && index[static_cast<std::size_t>(h)] == unreached;
         h = handovers_[static_cast<std::size_t>(h)].prev) {
      index[static_cast<std::size_t>(h)] = reached;
    }
  });
  // Compact in order: a kept record's prev is kept and lower, so it is renumbered first.
  std::size_t kept = 0;
  for (std::size_t h = 0; h < handovers_.size(); ++h) {
    if (index[h] != reached) continue;
    Handover x = handovers_[h];
    if (x.prev >= 0) x.prev = index[static_cast<std::size_t>(x.prev)];
    index[h] = static_cast<std::int64_t>(kept);
    handovers_[kept++] = x;
  }
  handovers_.resize(kept);
  for_each_live_path([&](Path& p) {
    if (p.handover >= 0) p.handover = index[static_cast<std::size_t>(p.handover)];
  });
  next_collect_ = std::max(2 * kept, std::size_t{1} << 16);
}

std::vector<PathSegment> Simulator::segments_of(const Path& p, std::int64_t end_rank,
                                                double end) const {
  std::vector<const Handover*> links;
  for (std::int64_t h = p.handover; h >= 0; h = handovers_[static_cast<std::size_t>(h)].prev) {
    links.push_back(&handovers_[static_cast<std::size_t>(h)]);
  }
  std::reverse(links.begin(), links.end());
  std::vector<PathSegment> out;
  PathSegment seg{links.empty() ? end_rank : links.front()->src, 0, 0, Seconds{0}, Seconds{0}};
  for (const Handover* h : links) {
    seg.last_step = h->src_step;
    seg.end = Seconds{h->ready};
    out.push_back(seg);
    seg = PathSegment{h->dst, h->dst_step, 0, Seconds{h->arrival}, Seconds{0}};
  }
  seg.last_step = ranks_[static_cast<std::size_t>(end_rank)].steps - 1;
  seg.end = Seconds{end};
  out.push_back(seg);
  return out;
}

Expected<SimResult> Simulator::run() {
  TP_TRY(set_up());
  for (std::int64_t r = 0; r < plan_.nodes(); ++r) {
    ranks_[static_cast<std::size_t>(r)].begin = Stamp{0, {}};
    push(0, r, EventKind::step);
  }
  const std::int64_t report_every = 1 << 16;
  while (!queue_.empty()) {
    const Event e = queue_.top();
    queue_.pop();
    t_now_ = e.t;
    ++events_;
    switch (e.kind) {
      case EventKind::hop:
        hop(e.id);
        break;
      case EventKind::step: {
        Rank& r = ranks_[static_cast<std::size_t>(e.id)];
        if (r.step < 0) {
          r.phase = Rank::Phase::inputs;
          try_inputs(e.id);
        } else {
          begin_step(e.id);
        }
        break;
      }
      case EventKind::compute_start:
        compute_start(e.id);
        break;
      case EventKind::compute_end:
        if (e.version == hosts_[static_cast<std::size_t>(e.id)].version) compute_end(e.id);
        break;
    }
    if (handovers_.size() >= next_collect_) collect_handovers();
    if (options_.progress && events_ % report_every == 0) {
      options_.progress(static_cast<double>(steps_done_) / static_cast<double>(total_steps_));
    }
  }
  if (finished_ != plan_.nodes()) {
    return fail(Errc::internal, "the simulation stopped with " +
                                    std::to_string(plan_.nodes() - finished_) +
                                    " rank(s) waiting for faces that never come (a simulator bug)");
  }
  SimResult out;
  out.subtiles = nsub_;
  out.rank_steps = total_steps_;
  out.events = events_;
  std::int64_t last = 0;
  for (const Rank& r : ranks_) {
    if (r.result.finish > out.simulated) {
      out.simulated = r.result.finish;
      last = r.result.rank;
    }
  }
  for (Rank& r : ranks_) {
    r.result.busy = r.result.compute + r.result.overhead;
    r.result.idle = out.simulated - r.result.busy;
    out.ranks.push_back(r.result);
  }
  const Path& p = ranks_[static_cast<std::size_t>(last)].begin.path;
  out.critical_path = CriticalPath{Seconds{p.compute},
                                   Seconds{p.overhead},
                                   Seconds{p.network},
                                   p.messages,
                                   last,
                                   segments_of(p, last, out.simulated.count())};
  out.spans = std::move(spans_);
  if (options_.progress) options_.progress(1.0);
  return out;
}

}  // namespace tp::sim::detail
