// The event loop of the simulator: ranks advance step by step (one event per rank step, every
// tile of a step costing the same), faces travel as one batch per rank, step and direction over
// the ports and links of the network in time order. Semantics: docs/model.md, "Simulation".
#include <tilepipe/sim/simulate.hpp>
#include <tilepipe/support/assert.hpp>

#include "rank_shape.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <string>

namespace tp::sim {

namespace {

using plan::GroupingKind;
using plan::ScheduleKind;

constexpr double never = -std::numeric_limits<double>::infinity();

/// The parts of a chain of dependences ending at some time (CriticalPath in doubles).
struct Path {
  double compute = 0;
  double overhead = 0;
  double network = 0;
  std::int64_t messages = 0;
  std::int64_t handover = -1;  ///< the last face handed from rank to rank on it (-1: none)
};

/// A face handed from one rank to the next on some chain: the critical path's links, kept while a
/// live chain refers to them (Simulator::collect_handovers).
struct Handover {
  std::int64_t src = 0;
  std::int64_t src_step = 0;  ///< the sender's step whose faces these are
  std::int64_t dst = 0;
  std::int64_t dst_step = 0;  ///< the receiver's step that needs them
  double ready = 0;           ///< when they were ready to leave
  double arrival = 0;
  std::int64_t prev = -1;  ///< the sender's chain's previous hand-over (always < this one's index)
};

/// A time and the chain that led to it.
struct Stamp {
  double t = never;
  Path path;
};

/// The later of two stamps (the first on ties).
Stamp later(const Stamp& a, const Stamp& b) {
  return b.t > a.t ? b : a;
}

Stamp plus_overhead(Stamp s, double dt) {
  s.t += dt;
  s.path.overhead += dt;
  return s;
}

/// Faces that arrived for a step of the receiving rank.
struct Arrival {
  std::int64_t step = 0;
  Stamp at;
};

/// One rank's fixed geometry and its state in the simulation.
struct Rank {
  const detail::RankShape* shape = nullptr;
  std::int64_t steps = 0;         ///< S_r
  std::vector<bool> sends;        ///< per factor: has a successor rank it sends faces to
  std::vector<bool> receives;     ///< per factor: has a predecessor rank
  std::vector<double> face_area;  ///< per factor: points of a face per unit of tile height
  double area = 1;                ///< points of its largest tile per unit of tile height
  double scale = 1;               ///< compute_scale of a per-node override
  // State.
  enum class Phase { ready, inputs, sends, done } phase = Phase::ready;
  std::int64_t step = 0;     ///< current step (-1: the comm thread's prefetch; steps: the end)
  Stamp begin;               ///< when the current step began
  Stamp cpu;                 ///< blocking: the computation done; final: the CPU done
  double send_cpu = 0;       ///< blocking: the CPU part of the step's sends (before t_sync)
  std::int64_t pending = 0;  ///< own batches not yet arrived
  Stamp last_arrival;        ///< of own batches since the last wait on them
  std::vector<std::deque<Arrival>> inbox;  ///< per factor, in step order
  RankResult result;
  bool started = false;
};

/// A batch: the faces one rank sends in one step across one mesh dimension (one message per
/// sending CPU), travelling together through the ports and links of the network.
struct Batch {
  std::int64_t src = 0;
  std::int64_t dst = 0;
  int f = 0;
  std::int64_t send_step = 0;
  std::int64_t recv_step = 0;
  double bytes = 0;
  double ready = 0;
  Path path;             ///< the sender's chain at `ready`
  int stage = 0;         ///< 0: the sender's port; 1: torus links; 2: the receiver's port
  std::int64_t pos = 0;  ///< current torus node
  double prev_end = 0;   ///< when the previous hop finished transmitting (cut-through)
  bool live = false;     ///< in flight (false: in the free list)
};

/// A link or port: a FIFO server of bandwidth `bw`.
struct Resource {
  double free = 0;
  double bw = 1;
};

struct Event {
  double t;
  std::uint64_t seq;
  std::int64_t id;
  bool hop;  ///< false: rank `id` begins its step; true: batch `id` reaches its next hop
};
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.t != b.t ? a.t > b.t : a.seq > b.seq;
  }
};

class Simulator {
 public:
  Simulator(const plan::Plan& plan, const model::Machine& machine, const SimOptions& options,
            const model::Prediction& prediction)
      : plan_(plan), machine_(machine), options_(options), prediction_(prediction) {}

  Expected<SimResult> run();

 private:
  Status set_up();
  void set_up_network();
  // Per-step geometry.
  [[nodiscard]] double height(const Rank& r, std::int64_t s) const;
  [[nodiscard]] double compute_time(const Rank& r, std::int64_t s) const;
  [[nodiscard]] std::int64_t senders(const Rank& r, int f, std::int64_t s) const;
  [[nodiscard]] std::int64_t receivers(const Rank& r, int f, std::int64_t s) const;
  // Event handling.
  void push(double t, std::int64_t id, bool hop);
  /// Starts the sends of step s of rank `id` from `from`; returns the CPU time they take
  /// (t_start per message or per queue, + t_sync when any).
  double start_sends(std::int64_t id, std::int64_t s, const Stamp& from);
  void begin_step(std::int64_t id);
  void try_inputs(std::int64_t id);
  void finish_step(std::int64_t id, const Stamp& inputs);
  void resolve_sends(std::int64_t id);
  void hop(std::int64_t b);
  void deliver(std::int64_t b, double arrival);
  void done(std::int64_t id, const Stamp& at);
  /// Records a span of rank `id` when spans are kept and the span is not empty.
  void span(std::int64_t id, std::int64_t step, SpanKind kind, double begin, double end);
  /// Calls f(Path&) on every chain the simulation can still extend.
  template <class F>
  void for_each_live_path(F&& f);
  /// Drops the hand-overs no live chain refers to (mark and compact; amortized O(1) each).
  void collect_handovers();
  [[nodiscard]] std::vector<PathSegment> segments_of(const Path& p, std::int64_t end_rank,
                                                     double end) const;
  [[nodiscard]] std::int64_t torus_next(std::int64_t pos, std::int64_t dst, int* link) const;

  const plan::Plan& plan_;
  const model::Machine& machine_;
  const SimOptions& options_;
  const model::Prediction& prediction_;

  bool overlap_ = true;
  bool vertical_ = false;
  bool comm_thread_ = false;
  int factors_ = 0;
  std::int64_t z_ = 1;  ///< tiles along the mapping dimension
  double h_full_ = 1, h_last_ = 1;
  std::int64_t nsub_ = 1;
  std::vector<std::int64_t> m_;      ///< CPU grid per factor
  std::vector<std::int64_t> depth_;  ///< face depth per factor (0: no faces)
  std::int64_t elem_ = 8;
  double ct_share_ = 0;  ///< comm thread: its share of a full tile's work per step
  std::map<std::vector<std::int64_t>, detail::RankShape> shapes_;
  std::vector<Rank> ranks_;
  std::vector<Batch> batches_;
  std::vector<std::int64_t> free_batches_;
  std::vector<Handover> handovers_;
  std::vector<std::vector<SimSpan>> spans_;  ///< per rank, when SimOptions::spans
  std::size_t next_collect_ = std::size_t{1} << 16;
  std::vector<Resource> res_;
  bool torus_ = false;
  std::vector<std::int64_t> torus_dims_;
  std::vector<std::int64_t> torus_strides_;  ///< row-major: node = sum coordinate_d x stride_d
  std::int64_t link_base_ = 0;
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  std::uint64_t seq_ = 0;
  std::int64_t total_steps_ = 0;
  std::int64_t steps_done_ = 0;
  std::int64_t events_ = 0;
  std::int64_t finished_ = 0;
  double t_now_ = 0;  ///< the time of the event being handled
};

Status Simulator::set_up() {
  overlap_ = plan_.schedule().kind() == ScheduleKind::overlap;
  vertical_ = plan_.schedule().grouping().kind() == GroupingKind::vertical;
  comm_thread_ = options_.model.comm_thread;
  const int n = plan_.space().dims();
  const int i = plan_.map_dim();
  const auto counts = plan_.tile_space().counts();
  const auto& w = plan_.tiling().tile_extents();
  const auto& extent = plan_.space().extents();
  const auto ii = static_cast<std::size_t>(i);
  z_ = counts[ii];
  h_full_ = static_cast<double>(w[ii]);
  h_last_ = static_cast<double>(extent[ii] - (z_ - 1) * w[ii]);
  nsub_ = vertical_ ? std::max<std::int64_t>(1, prediction_.step.subtiles) : 1;
  const model::ComputeCost& cc = machine_.compute_for(options_.model.kernel);
  elem_ = cc.element_bytes;
  if (comm_thread_ && plan_.cpus() > 1 && prediction_.step.alpha.count() > 0) {
    ct_share_ = prediction_.step.comm_thread_comp / prediction_.step.alpha;
  }
  std::vector<int> dim_of;
  for (int d = 0; d < n; ++d) {
    if (d != i) dim_of.push_back(d);
  }
  factors_ = static_cast<int>(dim_of.size());
  m_ = plan_.cpu_grid();
  depth_.assign(static_cast<std::size_t>(factors_), 0);
  for (int f = 0; f < factors_; ++f) {
    const auto fu = static_cast<std::size_t>(f);
    for (const auto& d : plan_.deps().vectors()) {
      depth_[fu] = std::max(depth_[fu], d[static_cast<std::size_t>(dim_of[fu])]);
    }
    if (plan_.mesh()[fu] == 1) depth_[fu] = 0;
  }

  const std::int64_t nodes = plan_.nodes();
  std::vector<double> scale(static_cast<std::size_t>(nodes), 1.0);
  for (const auto& o : machine_.network.nodes) {
    if (o.node >= nodes) {
      return fail(Errc::invalid_argument, "the machine file's network.nodes names node " +
                                              std::to_string(o.node) + " but the plan has " +
                                              std::to_string(nodes) + " nodes (0.." +
                                              std::to_string(nodes - 1) + ")");
    }
    scale[static_cast<std::size_t>(o.node)] = o.compute_scale;
  }
  ranks_.resize(static_cast<std::size_t>(nodes));
  for (std::int64_t r = 0; r < nodes; ++r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    const auto node = plan_.node_coords(r);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(factors_));
    std::vector<double> width(static_cast<std::size_t>(factors_));
    rank.sends.assign(static_cast<std::size_t>(factors_), false);
    rank.receives.assign(static_cast<std::size_t>(factors_), false);
    bool idle = false;  // no row of tiles reaches it (ADR 0010): no steps, no faces
    for (int f = 0; f < factors_; ++f) {
      const auto fu = static_cast<std::size_t>(f);
      const auto d = static_cast<std::size_t>(dim_of[fu]);
      const std::int64_t first = node[fu] * m_[fu];
      rows[fu] = std::min(m_[fu], counts[d] - first);
      if (rows[fu] < 1) {
        idle = true;
        rows[fu] = 1;
        width[fu] = 1;
        continue;
      }
      width[fu] = static_cast<double>(std::min(w[d], extent[d] - first * w[d]));
      // The successor along f has tiles when its first row exists (block mapping).
      rank.sends[fu] =
          depth_[fu] > 0 && node[fu] + 1 < plan_.mesh()[fu] && (node[fu] + 1) * m_[fu] < counts[d];
      rank.receives[fu] = depth_[fu] > 0 && node[fu] > 0;
    }
    if (idle) {
      std::fill(rank.sends.begin(), rank.sends.end(), false);
      std::fill(rank.receives.begin(), rank.receives.end(), false);
    }
    auto it = shapes_.find(rows);
    if (it == shapes_.end()) it = shapes_.emplace(rows, detail::RankShape(rows)).first;
    rank.shape = &it->second;
    rank.steps = idle ? 0 : vertical_ ? z_ : z_ + rank.shape->depth();
    rank.area = 1;
    for (double x : width) rank.area *= x;
    rank.face_area.assign(static_cast<std::size_t>(factors_), 0);
    for (int f = 0; f < factors_; ++f) {
      const auto fu = static_cast<std::size_t>(f);
      rank.face_area[fu] = rank.area / width[fu] * static_cast<double>(depth_[fu]);
    }
    rank.scale = scale[static_cast<std::size_t>(r)];
    rank.inbox.resize(static_cast<std::size_t>(factors_));
    rank.result.rank = r;
    rank.result.steps = rank.steps;
    rank.step = comm_thread_ ? -1 : 0;
    total_steps_ += rank.steps;
    if (total_steps_ > max_rank_steps) {
      return fail(Errc::invalid_argument,
                  "the plan is beyond the simulator's limits: more than " +
                      std::to_string(max_rank_steps) +
                      " rank steps (nodes x time steps); use taller tiles or fewer nodes");
    }
  }
  if (options_.spans) {
    if (total_steps_ > max_span_rank_steps) {
      return fail(Errc::invalid_argument,
                  "the schedule's spans are kept for at most " +
                      std::to_string(max_span_rank_steps) + " rank steps; this plan has " +
                      std::to_string(total_steps_) + " (fewer nodes or taller tiles)");
    }
    spans_.resize(static_cast<std::size_t>(nodes));
  }
  set_up_network();
  if (torus_) {
    std::int64_t size = 1;
    for (auto t : torus_dims_) size *= t;
    if (size < nodes) {
      std::string shape;
      for (auto t : torus_dims_) shape += (shape.empty() ? "" : "x") + std::to_string(t);
      return fail(Errc::invalid_argument,
                  "the machine file's torus " + shape + " has " + std::to_string(size) +
                      " nodes, fewer than the plan's " + std::to_string(nodes));
    }
  }
  return {};
}

void Simulator::set_up_network() {
  const model::Network& net = machine_.network;
  const std::int64_t nodes = plan_.nodes();
  // Ports: per node one out and one in (serial, queued), or one per mesh factor (parallel).
  const std::int64_t per_node =
      2 * (machine_.send_mode == model::SendMode::parallel ? std::max(1, factors_) : 1);
  res_.assign(static_cast<std::size_t>(nodes * per_node), Resource{});
  for (std::int64_t r = 0; r < nodes; ++r) {
    double bw = machine_.link.bandwidth_bytes_per_s;
    for (const auto& o : net.nodes) {
      if (o.node == r && o.bandwidth_bytes_per_s > 0) bw = o.bandwidth_bytes_per_s;
    }
    for (std::int64_t p = 0; p < per_node; ++p) {
      res_[static_cast<std::size_t>(r * per_node + p)].bw = bw;
    }
  }
  torus_ = net.topology == model::Topology::torus;
  if (torus_) {
    torus_dims_ = net.torus;
    torus_strides_.assign(torus_dims_.size(), 1);
    std::int64_t size = 1;
    for (std::size_t d = torus_dims_.size(); d-- > 0;) {
      torus_strides_[d] = size;
      size *= torus_dims_[d];
    }
    link_base_ = static_cast<std::int64_t>(res_.size());
    const auto links =
        static_cast<std::size_t>(size * 2 * static_cast<std::int64_t>(torus_dims_.size()));
    res_.resize(res_.size() + links, Resource{0, net.link_bandwidth_bytes_per_s});
  }
}

double Simulator::height(const Rank& r, std::int64_t s) const {
  if (vertical_) return s == z_ - 1 ? h_last_ : h_full_;
  // The largest active tile: any active tile short of the last one has the full height.
  const std::int64_t hi_o = std::min(r.shape->depth(), s);
  return s - hi_o < z_ - 1 ? h_full_ : h_last_;
}

double Simulator::compute_time(const Rank& r, std::int64_t s) const {
  const model::ComputeCost& cc = machine_.compute_for(options_.model.kernel);
  const auto g = static_cast<std::int64_t>(height(r, s) * r.area);
  return cc.tile_time(std::max<std::int64_t>(1, g)).count() * r.scale;
}

std::int64_t Simulator::senders(const Rank& r, int f, std::int64_t s) const {
  if (!r.sends[static_cast<std::size_t>(f)] || s < 0 || s >= r.steps) return 0;
  if (vertical_) return r.shape->others(f);
  const std::int64_t c = m_[static_cast<std::size_t>(f)] - 1;  // the last row along f
  return r.shape->others_with_offset(f, s - z_ + 1 - c, s - c);
}

std::int64_t Simulator::receivers(const Rank& r, int f, std::int64_t s) const {
  if (!r.receives[static_cast<std::size_t>(f)] || s < 0 || s >= r.steps) return 0;
  if (vertical_) return r.shape->others(f);
  return r.shape->others_with_offset(f, s - z_ + 1, s);  // the first row along f
}

void Simulator::push(double t, std::int64_t id, bool hop) {
  queue_.push(Event{t, seq_++, id, hop});
}

double Simulator::start_sends(std::int64_t id, std::int64_t s, const Stamp& from) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  const double t_start = machine_.t_start.count();
  const bool queued = machine_.send_mode == model::SendMode::queued;
  const auto node = plan_.node_coords(id);
  double cpu = 0;
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
    auto succ = node;
    ++succ[static_cast<std::size_t>(f)];
    x.src = id;
    x.dst = plan_.rank_of(succ);
    x.f = f;
    x.live = true;
    x.send_step = s;
    x.recv_step = vertical_ ? s : s - (m_[static_cast<std::size_t>(f)] - 1);
    const double msg =
        r.face_area[static_cast<std::size_t>(f)] * height(r, s) * static_cast<double>(elem_);
    x.bytes = msg * static_cast<double>(n);
    x.ready = ready;
    x.path = from.path;
    x.path.overhead += cpu;
    x.stage = 0;
    x.pos = id;
    x.prev_end = ready;
    ++r.pending;
    r.result.messages_sent += n;
    r.result.bytes_sent += static_cast<std::int64_t>(x.bytes);
    push(ready, b, true);
  }
  if (started == 0) return 0;
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
  }
  if (s == r.steps) {  // the end: every send must arrive
    --steps_done_;
    r.cpu = plus_overhead(r.begin, cpu);
    if (r.pending == 0) {
      done(id, later(r.cpu, r.last_arrival));
    } else {
      r.phase = Rank::Phase::sends;
    }
    return;
  }
  r.cpu = plus_overhead(r.begin, cpu);  // the CPU is free for its tile from here
  r.phase = Rank::Phase::inputs;
  try_inputs(id);
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
    push(r.begin.t, id, false);
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
    push(end.t, id, false);
    return;
  }
  // Substeps: N subtiles + the skew D of vertical grouping, a barrier (t_sync_in) between them.
  const double subs = static_cast<double>(nsub_ + (vertical_ ? r.shape->depth() : 0));
  const double c = c_full / static_cast<double>(nsub_);
  const double t_in = machine_.t_sync_in.count();
  Stamp end = later(r.cpu, inputs);
  span(id, s, SpanKind::wait, r.cpu.t, inputs.t);
  span(id, s, SpanKind::compute, end.t, end.t + subs * c + (subs - 1) * t_in);
  end.t += subs * c + (subs - 1) * t_in;
  end.path.compute += subs * c;
  end.path.overhead += (subs - 1) * t_in;
  r.result.compute += Seconds{c_full};
  r.result.overhead += Seconds{(subs - 1) * t_in};
  if (!overlap_) {  // blocking: the faces leave now and the thread waits until they arrived
    r.last_arrival = Stamp{};
    const double cpu = start_sends(id, s, end);
    if (cpu > 0) {
      r.result.overhead += Seconds{cpu};
      r.send_cpu = cpu - machine_.t_sync.count();
      r.cpu = end;
      r.phase = Rank::Phase::sends;
      return;
    }
  }
  r.begin = end;
  ++r.step;
  push(end.t, id, false);
}

void Simulator::resolve_sends(std::int64_t id) {
  Rank& r = ranks_[static_cast<std::size_t>(id)];
  if (r.step == r.steps) {
    done(id, later(r.cpu, r.last_arrival));
    return;
  }
  // Blocking: max(computed + starts, arrived) + t_sync.
  Stamp end = later(plus_overhead(r.cpu, r.send_cpu), r.last_arrival);
  span(id, r.step, SpanKind::wait, r.cpu.t + r.send_cpu, r.last_arrival.t);
  span(id, r.step, SpanKind::sync, end.t, end.t + machine_.t_sync.count());
  end = plus_overhead(end, machine_.t_sync.count());
  r.phase = Rank::Phase::ready;
  r.begin = end;
  ++r.step;
  push(end.t, id, false);
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
    push(start + extra, b, true);
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
    push(0, r, false);
  }
  const std::int64_t report_every = 1 << 16;
  while (!queue_.empty()) {
    const Event e = queue_.top();
    queue_.pop();
    t_now_ = e.t;
    ++events_;
    if (e.hop) {
      hop(e.id);
    } else {
      Rank& r = ranks_[static_cast<std::size_t>(e.id)];
      if (r.step < 0) {
        r.phase = Rank::Phase::inputs;
        try_inputs(e.id);
      } else {
        begin_step(e.id);
      }
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

}  // namespace

Expected<SimResult> simulate(const plan::Plan& plan, const model::Machine& machine,
                             const SimOptions& options) {
  if (plan.is_cyclic()) {
    // ADR 0018: the simulator's rank shapes are the block mapping's (one row per CPU).
    return fail(
        Errc::invalid_argument,
        "the simulator does not model the block-cyclic mapping yet (cyclic factors " +
            [&] {
              std::string s;
              for (auto c : plan.cyclic()) s += (s.empty() ? "" : "x") + std::to_string(c);
              return s;
            }() +
            "); simulate a cyclic factor of 1");
  }
  auto prediction = model::predict(plan, machine, options.model);
  if (!prediction) return Unexpected{prediction.error()};
  Simulator sim(plan, machine, options, *prediction);
  return sim.run();
}

}  // namespace tp::sim
