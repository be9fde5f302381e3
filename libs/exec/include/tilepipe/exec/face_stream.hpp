// Face streams: how a rank's faces travel along its face lines, chosen once at setup. Messages
// (MessageLines: two buffers per line, receives posted ahead, sends queued and started together)
// serve frontier kernels directly and resident kernels through CopiedFaces (pack/unpack around
// them); DirectStream writes resident faces straight into the consumer's slab and notifies it.
// The pipelines' loops call one interface (await, emit, start, complete) and never test the mode.
#pragma once

#include <tilepipe/exec/direct_faces.hpp>
#include <tilepipe/exec/probes.hpp>
#include <tilepipe/exec/rank_context.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/exec/slab_memory.hpp>

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace tp::exec::detail {

/// Faces of element type E copied through messages along a rank's receive and send lines (one
/// stream of faces per neighbour row, in sequence order). Each line has two buffers: face s uses
/// buffer s mod 2, so one face is in flight while the next is filled. Thread safety: a line is
/// used by one thread at a time (the barrier between steps orders the rest); start(q) by one
/// thread per queue.
template <class E>
class MessageLines {
 public:
  /// `recv_elems[l]` / `send_elems[l]`: the largest face of line l, in elements. `queues`:
  /// how many start queues (e.g. one per thread).
  template <int D>
  MessageLines(comm::World& world, const RankLayout<D>& layout,
               const std::vector<std::size_t>& recv_elems,
               const std::vector<std::size_t>& send_elems, int queues)
      : world_(&world), queues_(static_cast<std::size_t>(queues)) {
    const auto shape = [](const std::vector<FaceLine<D>>& from, const std::vector<std::size_t>& n,
                          std::vector<Line>& to) {
      to.resize(from.size());
      for (std::size_t l = 0; l < from.size(); ++l) {
        to[l].peer = from[l].peer;
        to[l].tag = from[l].tag;
        to[l].faces = static_cast<Index>(from[l].regions.size());
        for (auto& b : to[l].buf) b.resize(n[l]);
      }
    };
    shape(layout.recv_lines, recv_elems, recv_);
    shape(layout.send_lines, send_elems, send_);
  }

  /// Every line starts its faces again from the first (a new sweep over the same lines); every
  /// face of the last one must have been received and every send completed.
  void restart() {
    for (auto& in : recv_) in.posted = 0;
  }
  /// Posts the first two receives of every receive line.
  void post_all() {
    for (std::size_t l = 0; l < recv_.size(); ++l) {
      post(l);
      post(l);
    }
  }
  /// The measured transfer time of one face: at most this much of a wait counts as exposed.
  void set_cap(double cap_s) noexcept { cap_ = cap_s; }

  /// Waits for face `seq` of receive line l, `elems` elements; it stays readable until
  /// release(l).
  std::span<const E> await(std::size_t l, Index seq, std::size_t elems, ThreadRecord& rec) {
    Line& in = recv_[l];
    auto& req = in.req[static_cast<std::size_t>(seq & 1)];
    TP_ASSERT(req.active());
    const auto w0 = Clock::now();
    const auto info = must(world_->wait(req));
    rec.exposed(w0, cap_);
    if (info.bytes != elems * sizeof(E)) {
      throw PipelineError(
          Error(Errc::internal, "face " + std::to_string(seq) + " from rank " +
                                    std::to_string(in.peer) + " has " + std::to_string(info.bytes) +
                                    " bytes, expected " + std::to_string(elems * sizeof(E))));
    }
    ++rec.received;
    return {in.buf[static_cast<std::size_t>(seq & 1)].data(), elems};
  }
  /// The oldest face of line l has been read: its buffer takes the next receive.
  void release(std::size_t l) { post(l); }

  /// The buffer of face `seq` of send line l (`elems` elements), once the send that used it two
  /// faces ago has completed; adds the seconds waited for that to `waited`.
  std::span<E> acquire(std::size_t l, Index seq, std::size_t elems, double& waited) {
    Line& out = send_[l];
    auto& req = out.req[static_cast<std::size_t>(seq & 1)];
    if (req.active()) {
      const auto w0 = Clock::now();
      must(world_->wait(req));
      waited += seconds(Clock::now() - w0);
    }
    return {out.buf[static_cast<std::size_t>(seq & 1)].data(), elems};
  }
  /// Queues the acquired face `seq` of line l on queue q, to be sent by start(q).
  void queue(int q, std::size_t l, Index seq, std::size_t elems) {
    queues_[static_cast<std::size_t>(q)].push_back({l, seq, elems});
  }
  /// Starts (isend) every face queued on q, in queue order; false when there was none.
  bool start(int q, ThreadRecord& rec) {
    auto& list = queues_[static_cast<std::size_t>(q)];
    if (list.empty()) return false;
    for (const Queued& f : list) {
      Line& out = send_[f.line];
      const auto slot = static_cast<std::size_t>(f.seq & 1);
      out.req[slot] = must(world_->isend(
          out.peer, out.tag, std::as_bytes(std::span<const E>(out.buf[slot].data(), f.elems))));
      ++rec.sent;
      rec.sent_bytes += static_cast<std::int64_t>(f.elems * sizeof(E));
    }
    list.clear();
    return true;
  }
  /// Waits for the sends in flight on send line l; with `rec`, each wait counts as exposed (the
  /// blocking schedule pays its transfers).
  void complete(std::size_t l, ThreadRecord* rec) {
    for (auto& r : send_[l].req) {
      if (!r.active()) continue;
      const auto w0 = Clock::now();
      must(world_->wait(r));
      if (rec != nullptr) rec->exposed(w0, cap_);
    }
  }

 private:
  struct Line {
    int peer = 0;
    int tag = 0;
    Index faces = 0;   ///< faces the line carries in the run
    Index posted = 0;  ///< receive lines: receives posted so far
    std::array<std::vector<E>, 2> buf;
    std::array<comm::Request, 2> req;
  };
  struct Queued {
    std::size_t line;
    Index seq;
    std::size_t elems;
  };

  void post(std::size_t l) {
    Line& in = recv_[l];
    if (in.posted >= in.faces) return;
    auto& b = in.buf[static_cast<std::size_t>(in.posted & 1)];
    in.req[static_cast<std::size_t>(in.posted & 1)] =
        must(world_->irecv(in.peer, in.tag, std::as_writable_bytes(std::span<E>(b))));
    ++in.posted;
  }

  comm::World* world_;
  std::vector<Line> recv_;
  std::vector<Line> send_;
  std::vector<std::vector<Queued>> queues_;
  double cap_ = 0;
};

/// A resident kernel's faces between ranks and its slab, whichever way the faces travel.
template <class T, int D>
class ResidentFaces {
 public:
  virtual ~ResidentFaces() = default;
  /// The rank's slab: one part per box of its points, with the halo below it (ADR 0028).
  [[nodiscard]] const RankSlab<T, D>& slab() const noexcept { return slab_; }
  /// Elements the slab's memory holds (>= the parts' volume).
  [[nodiscard]] virtual Index capacity() const noexcept = 0;
  /// Collective, before the run: connects to the neighbours and measures one face's transfer
  /// time the way the run moves faces (RankReport::face_transfer_s; also the exposure cap).
  /// A stream made by sharing() connects only and returns the measurement of the one it shares.
  virtual Expected<double> connect_and_measure() = 0;
  /// Collective (every rank, between sweeps, after a barrier; ADR 0026): a face stream for
  /// another layout of this rank (a mirrored role, ADR 0024) over this stream's slab memory
  /// (slab_volume(layout) <= capacity(); one part: mirrored plans are block plans): its slab holds
  /// whatever this one's left, reinterpreted over the new box. The layout must outlive it. Connect
  /// it (connect_and_measure) before its first sweep; use one of the two at a time.
  virtual std::unique_ptr<ResidentFaces> sharing(const RankLayout<D>& layout, int queues,
                                                 bool eager) const = 0;
  /// Makes the first faces of every receive line receivable.
  virtual void post_all() = 0;
  /// Sweep `sweep` (0-based) of a run starts; every face of the previous one has arrived and left.
  virtual void begin_sweep(int sweep) = 0;
  /// Face `seq` of receive line l is in the slab halo on return.
  virtual void await(std::size_t l, Index seq, ThreadRecord& rec) = 0;
  /// Face `seq` of send line l leaves the slab (a finished tile's face): into a free buffer,
  /// queued on q; or written into the consumer's slab, announced at once (eager) or queued.
  /// Returns the seconds it waited for a free buffer.
  virtual double emit(std::size_t l, Index seq, int q, ThreadRecord& rec) = 0;
  /// Starts the faces queued on q; false when there was none.
  virtual bool start(int q, ThreadRecord& rec) = 0;
  /// Waits for the transfers in flight on send line l (rec: exposure accounting, or null).
  virtual void complete(std::size_t l, ThreadRecord* rec) = 0;

 protected:
  RankSlab<T, D> slab_;
};

/// Resident faces through messages: packed into a line buffer, sent, unpacked into the halo.
template <class T, int D>
class CopiedFaces final : public ResidentFaces<T, D> {
 public:
  /// `threads`: the rank's threads, which touch the slab's pages first (SlabMemory);
  /// `capacity`: elements of the slab's storage (>= the parts' volume; 0: exactly it).
  CopiedFaces(comm::World& world, const RankLayout<D>& layout, int queues, int threads,
              Index capacity = 0)
      : CopiedFaces(
            world, layout, queues,
            std::make_shared<SlabMemory>(
                static_cast<std::size_t>(std::max(capacity, slab_volume(layout))) * sizeof(T),
                threads),
            std::nullopt) {}
  [[nodiscard]] Index capacity() const noexcept override {
    return static_cast<Index>(storage_->size() / sizeof(T));
  }
  Expected<double> connect_and_measure() override {
    if (measured_) {
      lines_.set_cap(*measured_);
      return *measured_;
    }
    auto s = measure_face_transfer(*world_, *layout_, sizeof(T));
    if (s) {
      lines_.set_cap(*s);
      measured_ = *s;
    }
    return s;
  }
  std::unique_ptr<ResidentFaces<T, D>> sharing(const RankLayout<D>& layout, int queues,
                                               bool) const override {
    return std::unique_ptr<ResidentFaces<T, D>>(
        new CopiedFaces(*world_, layout, queues, storage_, measured_.value_or(0.0)));
  }
  void post_all() override { lines_.post_all(); }
  void begin_sweep(int) override { lines_.restart(); }
  void await(std::size_t l, Index seq, ThreadRecord& rec) override {
    const auto& line = layout_->recv_lines[l];
    const Box<D>& region = line.regions[static_cast<std::size_t>(seq)];
    unpack<T, D>(
        lines_.await(l, seq, static_cast<std::size_t>(region.volume()), rec), region,
        this->slab_.part(static_cast<std::size_t>(line.parts[static_cast<std::size_t>(seq)])));
    lines_.release(l);
  }
  double emit(std::size_t l, Index seq, int q, ThreadRecord&) override {
    const auto& line = layout_->send_lines[l];
    const Box<D>& region = line.regions[static_cast<std::size_t>(seq)];
    const auto n = static_cast<std::size_t>(region.volume());
    double waited = 0;
    const SlabView<const T, D> from =
        this->slab_.part(static_cast<std::size_t>(line.parts[static_cast<std::size_t>(seq)]));
    pack<T, D>(from, region, lines_.acquire(l, seq, n, waited));
    lines_.queue(q, l, seq, n);
    return waited;
  }
  bool start(int q, ThreadRecord& rec) override { return lines_.start(q, rec); }
  void complete(std::size_t l, ThreadRecord* rec) override { lines_.complete(l, rec); }

 private:
  CopiedFaces(comm::World& world, const RankLayout<D>& layout, int queues,
              std::shared_ptr<SlabMemory> storage, std::optional<double> measured)
      : world_(&world),
        layout_(&layout),
        storage_(std::move(storage)),
        lines_(world, layout, max_elems(layout.recv_lines), max_elems(layout.send_lines), queues),
        measured_(measured) {
    TP_EXPECTS(static_cast<Index>(storage_->size() / sizeof(T)) >= slab_volume(layout));
    std::vector<SlabView<T, D>> parts;
    T* at = storage_->as<T>();
    for (const Box<D>& b : layout.part_slabs) {
      parts.emplace_back(at, b);
      at += b.volume();
    }
    this->slab_ = RankSlab<T, D>(std::move(parts));
  }
  static std::vector<std::size_t> max_elems(const std::vector<FaceLine<D>>& lines) {
    std::vector<std::size_t> n;
    for (const auto& line : lines) n.push_back(line.max_elems);
    return n;
  }
  comm::World* world_;
  const RankLayout<D>* layout_;
  std::shared_ptr<SlabMemory> storage_;  ///< shared with the streams made by sharing()
  MessageLines<T> lines_;
  std::optional<double> measured_;  ///< one face's transfer time, once measured
};

/// Resident faces written straight into the consumer's slab (one copy), then a notification.
/// Eager: emit notifies at once; otherwise start(q) notifies (a communication thread's calls).
template <class T, int D>
class DirectStream final : public ResidentFaces<T, D> {
 public:
  /// `shared`: faces over the slab memory of another stream (sharing()), connected without a
  /// measurement, `cap_s` that stream's.
  DirectStream(DirectFaces<T, D> faces, const RankLayout<D>& layout, int queues, bool eager,
               bool shared = false, double cap_s = 0)
      : faces_(std::move(faces)),
        layout_(&layout),
        queues_(static_cast<std::size_t>(queues)),
        eager_(eager),
        shared_(shared),
        cap_(cap_s),
        base_(layout.recv_lines.size(), 0) {
    this->slab_ = faces_.slab();
  }
  [[nodiscard]] Index capacity() const noexcept override { return faces_.capacity(); }
  Expected<double> connect_and_measure() override {
    if (shared_) {
      if (auto c = faces_.connect_shared(*layout_); !c) return Unexpected{c.error()};
      return cap_;
    }
    auto s = faces_.connect_and_measure(*layout_);
    if (s) cap_ = *s;
    return s;
  }
  std::unique_ptr<ResidentFaces<T, D>> sharing(const RankLayout<D>& layout, int queues,
                                               bool eager) const override {
    return std::make_unique<DirectStream>(faces_.over(layout.part_slabs), layout, queues, eager,
                                          true, cap_);
  }
  void post_all() override {}
  // The consumer's counters keep counting over the sweeps (and over the streams that share the
  // region): a sweep's faces are those after the count at its start (every face of the sweep
  // before has been awaited, and no producer has started this one).
  void begin_sweep(int) override {
    for (std::size_t l = 0; l < base_.size(); ++l) {
      base_[l] = must(faces_.notifications(layout_->recv_lines[l]));
    }
  }
  void await(std::size_t l, Index seq, ThreadRecord& rec) override {
    const auto w0 = Clock::now();
    must(faces_.wait(layout_->recv_lines[l], base_[l] + seq));
    rec.exposed(w0, cap_);
    ++rec.received;
  }
  double emit(std::size_t l, Index seq, int q, ThreadRecord& rec) override {
    faces_.write(layout_->send_lines[l], seq);
    queues_[static_cast<std::size_t>(q)].push_back({l, seq});
    if (eager_) start(q, rec);
    return 0;
  }
  bool start(int q, ThreadRecord& rec) override {
    auto& list = queues_[static_cast<std::size_t>(q)];
    if (list.empty()) return false;
    for (const auto& [l, seq] : list) {
      const auto& line = layout_->send_lines[l];
      must(faces_.publish(line));
      ++rec.sent;
      rec.sent_bytes += line.regions[static_cast<std::size_t>(seq)].volume() *
                        static_cast<std::int64_t>(sizeof(T));
    }
    list.clear();
    return true;
  }
  void complete(std::size_t, ThreadRecord*) override {}  // a notified face is complete

 private:
  DirectFaces<T, D> faces_;
  const RankLayout<D>* layout_;
  std::vector<std::vector<std::pair<std::size_t, Index>>> queues_;
  bool eager_;
  bool shared_;
  double cap_;
  std::vector<Index> base_;  ///< per receive line: its faces notified before this sweep
};

/// Collective: the rank's slab and its face stream for `layout`, direct or copied (every rank
/// must pass the same `direct`, resolve_direct_faces). `cpus`: the plan's CPUs per node (line
/// tags are k * cpus + cpu); `queues`: start queues; `eager`: direct faces are announced by emit;
/// `capacity`: elements of the slab's memory (>= the parts' volume; 0: exactly it), room for
/// the layouts that will share it (ResidentFaces::sharing). The slab is zero-filled, its pages
/// touched by `cpus` threads.
template <class T, int D>
Expected<std::unique_ptr<ResidentFaces<T, D>>> make_resident_faces(comm::World& world,
                                                                   const RankLayout<D>& layout,
                                                                   bool direct, int cpus,
                                                                   int queues, bool eager,
                                                                   Index capacity = 0) {
  std::unique_ptr<ResidentFaces<T, D>> out;
  if (direct) {
    auto f = DirectFaces<T, D>::create(world, layout.part_slabs, D * cpus, cpus, capacity);
    if (!f) return Unexpected{f.error()};
    out = std::make_unique<DirectStream<T, D>>(std::move(*f), layout, queues, eager);
  } else {
    out = std::make_unique<CopiedFaces<T, D>>(world, layout, queues, cpus, capacity);
  }
  return out;
}

}  // namespace tp::exec::detail
