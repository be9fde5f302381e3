// The simulator's state: ranks, batches of faces, network resources and events, and the class
// that builds them from a plan (simulator_setup.cpp) and runs the event loop (simulator.cpp).
// Semantics: docs/model.md, "Simulation".
#pragma once

#include <tilepipe/sim/simulate.hpp>

#include "rank_shape.hpp"
#include "step_table.hpp"

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <vector>

namespace tp::sim::detail {

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
inline Stamp later(const Stamp& a, const Stamp& b) {
  return b.t > a.t ? b : a;
}

inline Stamp plus_overhead(Stamp s, double dt) {
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
  const RankShape* shape = nullptr;
  const StepTable* table = nullptr;  ///< tabulated steps (cyclic plans), else the closed form
  std::int64_t steps = 0;            ///< S_r
  std::vector<bool> sends;           ///< per factor: has a successor rank it sends faces to
  std::vector<bool> receives;        ///< per factor: has a predecessor rank
  std::vector<double> face_area;     ///< per factor: points of a face per unit of tile height
  double area = 1;                   ///< points of its largest tile per unit of tile height
  double scale = 1;                  ///< compute_scale of a per-node override
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
  // A shared host's computation of the current step (Simulator::sharing_).
  Stamp job_start;          ///< when it started (after any wake-up)
  double job_work = 0;      ///< its tiles' length on cores of its own (shared)
  double job_barriers = 0;  ///< the barriers between its sub-steps (after the tiles, unshared)
  double job_c_full = 0;    ///< one full tile's time (RankResult::compute)
  double remaining = 0;     ///< of job_work, while computing
  bool job_sends = false;   ///< the job is the step's sends (one thread's, on its core)
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

/// What an event does.
enum class EventKind : std::uint8_t {
  step,           ///< rank `id` begins its step
  hop,            ///< batch `id` reaches its next hop
  compute_start,  ///< rank `id` starts its step's tiles on a shared host
  compute_end,    ///< host `id`'s next computation ends (if `version` is still the host's)
};

struct Event {
  double t;
  std::uint64_t seq;
  std::int64_t id;
  EventKind kind;
  std::uint64_t version = 0;  ///< compute_end: the host's version when it was scheduled
};

/// A host whose cores its ranks' threads share (model::Hosts): thread t of the host's k-th rank
/// lives on core (k x cpus + t) mod cores, each core shared equally by the threads computing on
/// it, and a rank's step progresses at the pace of its slowest thread (its step barrier).
struct Host {
  std::vector<std::int64_t> active;  ///< ranks computing, in start order
  std::vector<int> computing;        ///< per core: threads computing on it
  double last = 0;                   ///< when `remaining` of the active ranks was last updated
  std::uint64_t version = 0;         ///< bumped at every change; older compute_end events are void
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
  void push(double t, std::int64_t id, EventKind kind, std::uint64_t version = 0);
  /// Starts the sends of step s of rank `id` from `from`; returns the CPU time they take
  /// (t_start per message or per queue, + t_sync when any).
  double start_sends(std::int64_t id, std::int64_t s, const Stamp& from);
  void begin_step(std::int64_t id);
  /// The overlap step's sends done at `cpu`: the end, or the wait for the step's inputs.
  void sent(std::int64_t id, const Stamp& cpu);
  /// A shared host's job of `work` seconds for rank `id` from `at` (sends: its thread 0 only).
  void start_job(std::int64_t id, const Stamp& at, double work, bool sends);
  void try_inputs(std::int64_t id);
  void finish_step(std::int64_t id, const Stamp& inputs);
  /// The step's tiles computed at `end` (c_full: one full tile's time): its sends (blocking), the
  /// next step.
  void computed(std::int64_t id, Stamp end, double c_full);
  // Shared hosts (processor sharing).
  /// The active computations' progress up to now.
  void host_advance(Host& h);
  /// The pace of rank `id`'s computation on its host now (1: cores of its own).
  [[nodiscard]] double pace(const Host& h, std::int64_t id) const;
  /// Calls f(core, threads of rank `id` on it) for each core of its host that its threads use.
  template <class F>
  void for_each_core(std::int64_t id, F&& f) const;
  /// A thread of rank `id` that slept is woken at `at`: the wake-up (Hosts::wake) moves it on.
  void wake_up(std::int64_t id, std::int64_t step, Stamp& at);
  /// Adds (+1) or removes (-1) rank `id`'s threads from its host's cores.
  void occupy(Host& h, std::int64_t id, int sign);
  /// Schedules the host's next compute_end (voiding older ones).
  void host_schedule(std::int64_t host);
  void compute_start(std::int64_t id);
  void compute_end(std::int64_t host);
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

  bool sharing_ = false;  ///< ranks share hosts' cores (Machine::network.hosts)
  std::vector<Host> hosts_;
  std::vector<std::int64_t> ended_;  ///< compute_end's scratch: the ranks whose tiles ended
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
  std::map<std::vector<std::int64_t>, RankShape> shapes_;
  std::vector<StepTable> tables_;  ///< per rank, when its steps are tabulated
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
}  // namespace tp::sim::detail
