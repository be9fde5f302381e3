// Zero-copy resident faces (the seeds' zero-copy): every rank's slab lives in a tp::comm region
// that its shared-memory neighbours map; a producer copies a face once, from its slab straight
// into the consumer's slab halo, then bumps the consumer's counter for that line
// (docs/executor.md, "Copies").
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/face_transport.hpp>
#include <tilepipe/exec/pipeline_tasks.hpp>
#include <tilepipe/exec/probes.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/exec/slab_memory.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace tp::exec {

/// Whether a resident run sends its faces directly: `mode` resolved against the world (direct
/// needs every other rank mapped over shared memory) and the kernel (axis dependences only: the
/// extended faces of a diagonal dependence overlap, so two producers would store the same corner
/// points while a consumer reads them). Every rank gets the same answer. An Error (bad input)
/// when `direct` was asked for and cannot run.
inline Expected<bool> resolve_direct_faces(FaceMode mode, const comm::World& world, bool diagonal) {
  if (mode == FaceMode::copy) return false;
  const char* why = nullptr;
  std::string detail;
  if (diagonal) {
    why = "needs dependences along the axes (this kernel has a diagonal one)";
  } else if (world.config().link.enabled) {
    // Direct stores bypass the emulated link: only a message can be charged its bytes.
    why = "cannot be charged to an emulated link: faces must travel as messages";
  } else {
    for (int p = 0; p < world.size(); ++p) {
      if (p != world.rank() && world.transport_to(p) != "shm") {
        why = "needs every rank on shared memory";
        detail = " (rank " + std::to_string(world.rank()) + " reaches rank " + std::to_string(p) +
                 " over " + std::string(world.transport_to(p)) + ")";
        break;
      }
    }
  }
  if (why == nullptr) return world.size() > 1;
  if (mode == FaceMode::automatic) return false;
  return Unexpected{
      Error::about("faces", Errc::invalid_argument, std::string("direct ") + why + detail)};
}

/// A rank's slab in a region, and the shared-memory neighbours' slabs it writes faces into.
/// Region layout per rank: a header of whole pages holding the number of the slab's parts
/// (std::uint64_t) and their Boxes, then the parts one after another (each row-major elements;
/// ADR 0028).
/// Counters: counter `tag` counts the faces of the receive line with that tag (one producer per
/// line, so a consumer with several neighbours knows which face arrived); counter
/// `probe_base + tag` counts the probe faces of measure_transfer.
template <class T, int D>
class DirectFaces {
 public:
  /// Collective: the region for this rank's slab, parts over `part_slabs`, room for `capacity`
  /// elements (>= the parts' volume; 0: exactly it); `tags` bounds the line tags (k * cpus + cpu
  /// < D * cpus). The slab is zero-filled, by `threads` threads.
  static Expected<DirectFaces> create(comm::World& world, const std::vector<Box<D>>& part_slabs,
                                      int tags, int threads = 1, Index capacity = 0) {
    DirectFaces f;
    f.world_ = &world;
    f.probe_base_ = static_cast<std::size_t>(tags);
    Index volume = 0;
    for (const Box<D>& b : part_slabs) volume += b.volume();
    TP_EXPECTS(capacity == 0 || capacity >= volume);
    const std::size_t bytes = static_cast<std::size_t>(std::max(capacity, volume)) * sizeof(T);
    const std::size_t header = header_bytes(part_slabs.size());
    f.header_ = header;
    auto region = world.create_region(header + bytes, 2 * f.probe_base_);
    if (!region) return Unexpected{region.error()};
    f.region_ = *region;
    // Touch every page now, as the zero-initialised vector of copied faces does: the region's
    // memory is zero-filled lazily, and page faults inside compute_tile would be timed. The
    // rank's threads share the work (a serial fill costs a second at 20000 x 20000 doubles).
    zero_parallel(f.region_.local(), threads);
    f.slab_ = write_header(f.region_.local().data(), header, part_slabs);
    f.peers_.resize(static_cast<std::size_t>(world.size()));
    return f;
  }

  /// This rank's slab (in the region).
  [[nodiscard]] const RankSlab<T, D>& slab() const noexcept { return slab_; }
  /// Elements the region's slab memory holds.
  [[nodiscard]] Index capacity() const noexcept {
    return static_cast<Index>((region_.local().size() - header_) / sizeof(T));
  }

  /// This rank's region as the slab over other parts (volume <= capacity(), a header of the same
  /// size: the same memory, its elements reinterpreted; ADR 0026), connected to no peer yet.
  /// Writes the parts into the region's header, where the peers' connect reads them: call it
  /// when no peer connects (between sweeps, after a barrier), then connect on every rank
  /// (connect_shared). Faces keep arriving on the same counters: a consumer counts on from
  /// notifications().
  [[nodiscard]] DirectFaces over(const std::vector<Box<D>>& part_slabs) const {
    Index volume = 0;
    for (const Box<D>& b : part_slabs) volume += b.volume();
    TP_EXPECTS(volume <= capacity() && header_bytes(part_slabs.size()) == header_);
    DirectFaces f;
    f.world_ = world_;
    f.probe_base_ = probe_base_;
    f.region_ = region_;
    f.header_ = header_;
    f.slab_ = write_header(f.region_.local().data(), header_, part_slabs);
    f.peers_.resize(peers_.size());
    return f;
  }

  /// Faces of receive line `line` notified so far (over every slab of the region: over()).
  Expected<Index> notifications(const FaceLine<D>& line) {
    auto n = world_->notifications(region_, counter_of(line));
    if (!n) return Unexpected{n.error()};
    return static_cast<Index>(*n);
  }

  /// Looks up the slab of every peer this rank sends to; call after a barrier that follows
  /// create on every rank (the peers' boxes are written by then).
  Status connect(const std::vector<FaceLine<D>>& send_lines) {
    for (const auto& line : send_lines) {
      auto& peer = peers_[static_cast<std::size_t>(line.peer)];
      if (peer.connected) continue;
      auto mem = world_->peer_memory(region_, line.peer);
      const auto not_mapped = [&] {
        return fail_at(
            world_->rank(), Errc::internal,
            "rank " + std::to_string(line.peer) + "'s slab is not mapped for direct faces");
      };
      std::uint64_t count = 0;
      if (!mem || mem->size() < sizeof count) return not_mapped();
      std::memcpy(&count, mem->data(), sizeof count);
      if (count > (mem->size() - sizeof count) / sizeof(Box<D>)) return not_mapped();
      std::vector<Box<D>> boxes(count);
      if (count > 0) std::memcpy(boxes.data(), mem->data() + sizeof count, count * sizeof(Box<D>));
      std::size_t bytes = header_bytes(count);
      for (const Box<D>& b : boxes) bytes += static_cast<std::size_t>(b.volume()) * sizeof(T);
      if (mem->size() < bytes) {
        return fail_at(world_->rank(), Errc::internal,
                       "rank " + std::to_string(line.peer) + "'s slab is truncated");
      }
      peer.slab = views(mem->data() + header_bytes(count), boxes);
      peer.connected = true;
    }
    for (const auto& line : send_lines) {
      const auto& peer = peers_[static_cast<std::size_t>(line.peer)];
      for (const auto& r : line.regions) {
        const SlabView<T, D>* found = peer.part_holding(r);
        if (found == nullptr) {
          return fail_at(world_->rank(), Errc::internal,
                         "a face does not lie in rank " + std::to_string(line.peer) + "'s slab");
        }
        const SlabView<T, D>& view = *found;
        // Map the consumer's pages under the face into this process now (a read of one element
        // per page; shared memory pages map writable), not at the first send.
        constexpr auto per_page = static_cast<Index>(4096 / sizeof(T));
        for_each_row(r, [&](const Point<D>& first) {
          const Index n = r.extent(D - 1);
          for (Index j = 0; j < n; j += per_page) {
            (void)*static_cast<const volatile T*>(view.at(first) + j);
          }
          (void)*static_cast<const volatile T*>(view.at(first) + n - 1);
        });
      }
    }
    return {};
  }

  /// Producer: copies face `seq` of `line` from this rank's slab into the consumer's slab halo
  /// (the same points). No library call: any thread may write while another publishes.
  /// Returns the bytes copied.
  std::size_t write(const FaceLine<D>& line, Index seq) const {
    const auto s = static_cast<std::size_t>(seq);
    const Box<D>& region = line.regions[s];
    const SlabView<const T, D> from = slab_.part(static_cast<std::size_t>(line.parts[s]));
    copy_region<T, D>(from, region,
                      *peers_[static_cast<std::size_t>(line.peer)].part_holding(region));
    return static_cast<std::size_t>(region.volume()) * sizeof(T);
  }

  /// Producer: notifies the consumer's counter for `line` (the next face of the line has been
  /// written, by this thread or by one ordered before it, e.g. through a barrier).
  Status publish(const FaceLine<D>& line, std::size_t counter_base = 0) {
    return world_->notify(region_, line.peer, counter_base + counter_of(line));
  }

  /// write + publish: the face is in the consumer's memory and announced on return.
  Expected<std::size_t> send(const FaceLine<D>& line, Index seq, std::size_t counter_base = 0) {
    const std::size_t bytes = write(line, seq);
    if (auto s = publish(line, counter_base); !s) return Unexpected{s.error()};
    return bytes;
  }

  /// Consumer: waits until face `seq` of `line` is in this rank's slab halo (fails when the
  /// producer dies or exits first, within the peer timeout).
  Status wait(const FaceLine<D>& line, Index seq, std::size_t counter_base = 0) {
    auto seen = world_->wait_notifications(region_, static_cast<std::uint64_t>(seq + 1),
                                           counter_base + counter_of(line), line.peer);
    if (!seen) return Unexpected{seen.error()};
    return {};
  }

  /// Collective, after over() on every rank: connects (every box is written after the barrier);
  /// the probe counters keep the first slab's measurement.
  Status connect_shared(const RankLayout<D>& layout) {
    if (auto b = world_->barrier(); !b) return Unexpected{b.error()};
    return connect(layout.send_lines);
  }

  /// Collective, after create on every rank: connects (connect) and measures the seconds one
  /// direct face takes to reach a neighbour (copy + notification + the consumer seeing it; the
  /// probe rounds of measure_face_rounds on the probe counters). The probe writes the producers'
  /// (not yet computed) face 0 into the consumers' halos; the run's face 0 overwrites it before
  /// its notification.
  Expected<double> connect_and_measure(const RankLayout<D>& layout) {
    if (auto b = world_->barrier(); !b) return Unexpected{b.error()};  // every box is written
    if (auto c = connect(layout.send_lines); !c) return Unexpected{c.error()};
    const auto start = [&](int) -> Status {
      for (const auto& line : layout.send_lines) {
        if (auto s = send(line, 0, probe_base_); !s) return Unexpected{s.error()};
      }
      return {};
    };
    const auto await = [&](int round) -> Status {
      for (const auto& line : layout.recv_lines) TP_TRY(wait(line, round, probe_base_));
      return {};
    };
    return measure_face_rounds(*world_, layout.recv_lines.size(), start, await);
  }

 private:
  /// A peer's slab as this rank sees it (mapped by connect).
  struct Peer {
    RankSlab<T, D> slab;
    bool connected = false;
    /// The part whose bounds hold `region` (one does for every face region); O(parts).
    [[nodiscard]] const SlabView<T, D>* part_holding(const Box<D>& region) const noexcept {
      for (const auto& v : slab.parts()) {
        if (v.bounds().contains(region)) return &v;
      }
      return nullptr;
    }
  };

  /// The slab starts whole pages into the region (page-aligned rows; the part count and boxes in
  /// front).
  static constexpr std::size_t header_bytes(std::size_t parts) noexcept {
    constexpr std::size_t page = 4096;
    return (sizeof(std::uint64_t) + parts * sizeof(Box<D>) + page - 1) / page * page;
  }

  /// Writes the part count and `boxes` at the region's start `base` (where the peers' connect
  /// reads them); the slab's views, `header` bytes on.
  static RankSlab<T, D> write_header(std::byte* base, std::size_t header,
                                     const std::vector<Box<D>>& boxes) {
    const std::uint64_t count = boxes.size();
    std::memcpy(base, &count, sizeof count);
    if (count > 0) std::memcpy(base + sizeof count, boxes.data(), boxes.size() * sizeof(Box<D>));
    return views(base + header, boxes);
  }

  /// Views of parts over `boxes`, one after another from `at`.
  static RankSlab<T, D> views(std::byte* at, const std::vector<Box<D>>& boxes) {
    std::vector<SlabView<T, D>> parts;
    for (const Box<D>& b : boxes) {
      parts.emplace_back(reinterpret_cast<T*>(at), b);
      at += static_cast<std::size_t>(b.volume()) * sizeof(T);
    }
    return RankSlab<T, D>(std::move(parts));
  }

  static std::size_t counter_of(const FaceLine<D>& line) {
    return static_cast<std::size_t>(line.tag);
  }

  comm::World* world_ = nullptr;
  comm::Region region_;
  RankSlab<T, D> slab_;
  std::vector<Peer> peers_;  ///< by rank; not connected for ranks this rank does not send to
  std::size_t probe_base_ = 0;
  std::size_t header_ = 0;  ///< bytes in front of the slab (header_bytes of the parts)
};

}  // namespace tp::exec
