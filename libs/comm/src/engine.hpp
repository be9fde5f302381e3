// Engine: the state behind a World: request pool, matching, shm channels, waits, regions.
#pragma once

#include "link.hpp"
#include "net.hpp"
#include "shm_layout.hpp"
#include "sys.hpp"

#include <tilepipe/comm/world.hpp>

#include <chrono>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace tp::comm::detail {

/// Library-internal tags (user tags are >= 0).
inline constexpr int tag_barrier_base = -40;  ///< -40 .. -9: dissemination barrier rounds
inline constexpr int tag_region = -2;         ///< region descriptors
inline constexpr int tag_reduce = -50;        ///< World::allreduce_min
inline constexpr int tag_gather = -51;        ///< World::gather
inline constexpr int min_internal_tag = -64;

/// Engine::wait_until's `awaited` for waits that the progress watchdog does not bound.
inline constexpr int no_watchdog = -2;

/// One isend/irecv in the pool. Guarded by Engine::mu_.
struct ReqState {
  std::uint32_t generation = 1;
  bool in_use = false;
  bool done = false;
  bool is_send = false;
  bool has_error = false;
  Error error;
  int peer = -1;  ///< send: destination; recv: source filter (any_source allowed)
  int tag = 0;    ///< send: tag; recv: tag filter (any_tag allowed)
  const std::byte* sbuf = nullptr;
  std::size_t sbytes = 0;
  std::size_t soffset = 0;    ///< copy-mode rendezvous: bytes already sent as fragments
  std::uint64_t recv_id = 0;  ///< copy-mode rendezvous: the receiver's request id
  std::byte* rbuf = nullptr;
  std::size_t rcap = 0;
  std::size_t rgot = 0;  ///< copy-mode rendezvous: bytes received so far
  RecvInfo info;
  std::uint32_t index = 0;           ///< own position in the pool
  int record = -1;                   ///< send: RendezvousRecord index while an RTS is outstanding
  int local_peer = -1;               ///< send with a record / cooperative receive: the shm peer
  RendezvousRecord* coop = nullptr;  ///< cooperative cma receive: the open record
  const std::byte* coop_src = nullptr;  ///< cooperative receive from World memory: our mapping
  std::uint64_t coop_send_id = 0;
  std::uint64_t coop_address = 0;
  int coop_pid = 0;
  int coop_error = 0;
  int net_handle = -1;  ///< MPI request handle while the transfer runs in the backend
};

/// Work queued for one shm peer because the channel had no credits (kept in order).
struct OutItem {
  enum Kind : std::uint8_t { message, cts, fin, fragments } kind = message;
  std::uint32_t req = 0;
  std::uint64_t a = 0;
  std::uint64_t b = 0;
};

/// A message that arrived before a matching receive was posted.
struct UnexpectedMsg {
  int source = -1;
  int tag = 0;
  std::size_t bytes = 0;
  std::vector<std::byte> data;  ///< short/eager/self payload
  bool is_rts = false;
  RtsBody rts{};
  bool is_net = false;
  int net_message = -1;
};

/// Spin-loop hint. Deliberately not PAUSE: under KVM, pause-loop exiting turns a PAUSE-heavy
/// spin into VM exits (measured here: cache-line one-way 84 ns without PAUSE, ~600 ns with it).
/// A compiler barrier keeps the loop honest without it.
inline void cpu_relax() noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

/// Polls of one cell before a fast receive hands over to the general wait (liveness checks,
/// progress of other channels, hybrid sleep): a few microseconds of a hot loop.
inline constexpr std::uint32_t fast_recv_spins = 1U << 13;

/// memcpy of at most one cell payload (48 B) without a library call: fixed-size moves, the
/// last one overlapping, so a short message costs a few register moves on either side.
inline void copy_cell_payload(std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8) std::memcpy(dst + i, src + i, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

/// A flag that can sit in a std::vector element: moving copies the value (vectors of peers are
/// only resized at setup, before any thread shares them).
struct MovableFlag {
  std::atomic<bool> value{false};
  MovableFlag() = default;
  MovableFlag(MovableFlag&& o) noexcept : value(o.value.load(std::memory_order_relaxed)) {}
  MovableFlag& operator=(MovableFlag&& o) noexcept {
    value.store(o.value.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return *this;
  }
};

/// A peer reached through the shared segment, with this rank's private cursor state.
struct ShmPeer {
  int world_rank = -1;
  RankBlock* block = nullptr;
  ChannelView tx;                   ///< me -> peer (in the peer's inbox area)
  ChannelView rx;                   ///< peer -> me
  std::uint64_t tx_next = 1;        ///< next message number to write
  std::uint64_t tx_slot_next = 0;   ///< next slot number to fill
  std::uint64_t tx_cells_seen = 0;  ///< last cells_consumed read from the receiver
  std::uint64_t tx_slots_seen = 0;  ///< last slots_freed read from the receiver
  std::uint64_t rx_next = 1;
  std::uint64_t rx_slot_next = 0;
  std::uint64_t rx_cells_published = 0;
  std::uint64_t rx_slots_published = 0;
  /// Set (under Engine::mu_) while a fast receive reads the rx cells without the lock; the rx_*
  /// cursors then belong to that thread, and progress() leaves the channel alone. Cleared with
  /// release by the owner, so the next drain (acquire) sees its cursor updates.
  MovableFlag rx_owned;
  /// Spin lock over the tx side (tx_* cursors, `out`, writes of cells and slots): taken inside
  /// Engine::mu_ by the general path and alone by the fast send, which never waits for it.
  MovableFlag tx_lock;
  std::deque<OutItem> out;   ///< messages waiting for credits or a rendezvous record, in order
  std::deque<OutItem> ctrl;  ///< CTS, FIN, fragments: never stuck behind a waiting message
  std::uint64_t tx_rts_count = 0;  ///< RTS sent on this channel (picks the record)
  std::uint32_t tx_record_req[rendezvous_records] = {};  ///< request index + 1 using each record
  /// The peer's World::allocate memfds this rank has mapped, by the peer's descriptor number.
  std::vector<std::pair<int, Mapping>> mapped;
  int pid = 0;
  Fd pidfd;
  bool departed = false;
};

/// Holds a peer's tx_lock (spinning: holders never wait for anything while holding it).
class TxGuard {
 public:
  explicit TxGuard(ShmPeer& p) noexcept;
  ~TxGuard();
  TxGuard(const TxGuard&) = delete;
  TxGuard& operator=(const TxGuard&) = delete;

 private:
  ShmPeer& p_;
};

/// Memory from World::allocate: a memfd that the shm peers map on first use (they open it
/// through /proc/<pid>/fd/<fd>, so the descriptor stays open as long as the World).
struct SharedAlloc {
  Fd fd;
  Mapping map;
};

/// One exposed region: this rank's memory and the mappings of the shm peers' parts.
struct RegionState {
  Mapping local;                      ///< header pages (counters) + data
  std::size_t bytes = 0;              ///< this rank's data bytes
  std::vector<std::size_t> sizes;     ///< data bytes of every rank
  std::vector<std::size_t> counters;  ///< notification counters of every rank
  std::vector<Mapping> peer_maps;     ///< by world rank; empty for self and net peers
  int net_window = -1;
};

/// The pages in front of a region's data: the shm notification counters, counter c on cache
/// line c (its notifiers RMW it with seq_cst, the owner loads it with seq_cst; one line each, so
/// that producers of different counters never share a line).
struct alignas(cache_line) RegionHeader {
  std::atomic<std::uint64_t> count;
};

/// Bytes in front of the data of a region part with `counters` counters (page-rounded).
std::size_t region_header_bytes(std::size_t counters) noexcept;

class Engine {
 public:
  /// A World over the shared segment `segment` (created by the launcher or by from_mpi).
  /// `local_ranks` lists the world ranks in the segment by local index; `net` carries the rest.
  static Expected<std::unique_ptr<Engine>> create(const Config& config, int rank, int size,
                                                  Mapping segment, std::vector<int> local_ranks,
                                                  std::unique_ptr<Net> net);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const Config& config() const noexcept { return cfg_; }
  [[nodiscard]] std::string_view transport_to(int peer) const noexcept;
  [[nodiscard]] RendezvousMode rendezvous_mode() const noexcept { return rndv_; }

  Expected<Request> isend(int dest, int tag, std::span<const std::byte> data);
  Expected<Request> irecv(int source, int tag, std::span<std::byte> buffer);
  Expected<bool> test(Request& request, RecvInfo* info);
  Expected<RecvInfo> wait(Request& request);
  Status barrier();
  Status send(int dest, int tag, std::span<const std::byte> data);
  Expected<std::span<std::byte>> create_region(std::size_t bytes, std::size_t counters,
                                               std::uint32_t& id);
  Status put(std::uint32_t region, int target, std::size_t offset, std::span<const std::byte> data,
             bool notify);
  std::optional<std::span<std::byte>> peer_memory(std::uint32_t region, int target);
  Status notify(std::uint32_t region, int target, std::size_t counter);
  Expected<std::uint64_t> notifications(std::uint32_t region, std::size_t counter);
  Expected<std::uint64_t> wait_notifications(std::uint32_t region, std::uint64_t count,
                                             std::size_t counter, int source);
  /// The lock-free part of send: a short message written straight into a free cell of an shm
  /// peer; false when the general path must send it.
  bool try_fast_send(int dest, int tag, std::span<const std::byte> data) noexcept;
  Expected<RecvInfo> recv(int source, int tag, std::span<std::byte> buffer);
  Expected<std::span<std::byte>> allocate(std::size_t bytes);
  /// Called before MPI is finalized (the Net goes away with the Engine).
  void set_on_destroy(void (*fn)()) noexcept { on_destroy_ = fn; }
  /// Called instead of the on_destroy hook when the world failed (a lost peer, the progress
  /// watchdog): under MPI, MPI_Abort, since MPI_Finalize would wait for the failed peer.
  void set_on_abort(void (*fn)()) noexcept { on_abort_ = fn; }
  [[nodiscard]] bool aborts_when_failed() const noexcept { return on_abort_ != nullptr; }
  [[nodiscard]] bool failed() const noexcept { return failed_.load(); }
  /// Fails the world with `error` unless it failed already (World::abandon).
  void abandon(const Error& error);

 private:
  Engine(const Config& config, int rank, int size);

  // Requests (engine.cpp).
  std::uint32_t alloc_request();
  void release_request(std::uint32_t index);
  ReqState* find_request(std::uint64_t id);
  std::uint64_t id_of(std::uint32_t index) const;
  void complete(ReqState& r);
  void complete_error(ReqState& r, Error error);
  Expected<Request> post_send(int dest, int tag, std::span<const std::byte> data);
  Expected<Request> post_recv(int source, int tag, std::span<std::byte> buffer);
  Status check_request(const Request& request) const;
  Expected<RecvInfo> take_result(Request& request);
  void cancel_locked(std::uint32_t index);
  /// The lock-free receive of a short/eager message from one shm peer (docs/protocols.md,
  /// "Fast paths"); false when the general path must handle the receive.
  bool try_fast_recv(int source, int tag, std::span<std::byte> buffer, RecvInfo& info);
  /// Ends a fast receive's ownership of `p`'s rx side; wakes our sleeping threads if any.
  void release_rx(ShmPeer& p) noexcept;

  // Matching (engine.cpp).
  bool matches(const ReqState& r, int source, int tag) const noexcept;
  ReqState* match_posted(int source, int tag);
  void deliver_data(int source, int tag, const std::byte* data, std::size_t bytes);
  void deliver_rts(ShmPeer& peer, int tag, const RtsBody& rts);
  void deliver_net(const NetIncoming& in);
  void start_rendezvous(ReqState& r, ShmPeer& peer, int tag, const RtsBody& rts);
  void advance_coop_recv(ReqState& r);
  void advance_coop_sends();
  void finish_rts_send(ReqState& r);
  void accept_net(ReqState& r, const NetIncoming& in);
  Error truncation_error(int source, int tag, std::size_t bytes, std::size_t capacity) const;

  // Progress and waits (engine.cpp).
  void progress();
  void check_liveness(bool force);
  Status request_failure(const ReqState& r) const;
  /// Progresses until done() (called under the lock) returns a Status, spinning and/or sleeping
  /// as the sync mode says; returns that Status, or the world's failure. A wait on `awaited`
  /// (a rank, or any_source) longer than Config::progress_timeout fails the world (stall_error);
  /// no_watchdog: bounded by its caller.
  template <class Done>
  Status wait_until(Done&& done, int awaited);
  /// The progress watchdog's error for a wait on `awaited`; marks the world failed.
  Error stall(int awaited);

  // Emulated link (link_engine.cpp).
  Status setup_link();
  /// True when a message from `p` is published but still in flight on the emulated link (a
  /// peer that departed after sending it has not lost it: it arrives later).
  bool in_flight_on_link(const ShmPeer& p) const noexcept;
  /// A short or eager send just published: complete it now, or with a link once the link has
  /// pushed its bytes (max(start, free) + bytes / bandwidth), like a DMA engine reading them.
  void complete_send(ReqState& r);
  /// Completes the held sends whose link time has passed (called by progress()).
  void complete_link_sends();
  // Regions (region.cpp).
  Expected<RegionState*> find_region(std::uint32_t region, const char* what);
  /// Adds one to `target`'s counter `counter` of `rs`, ordered after this thread's earlier stores
  /// (put data and direct stores into peer_memory alike): the one place a notification is made.
  /// With an emulated link the notification to a peer travels as a message charged `bytes`
  /// (the put's data), so it becomes visible at the link's arrival time.
  Status bump_notification(std::uint32_t region, RegionState& rs, int target, std::size_t counter,
                           std::size_t bytes);
  /// This rank's counter `counter` of `rs` (shm and self notifications, the link's and the
  /// network's). Called under the lock.
  Expected<std::uint64_t> read_notifications(std::uint32_t region, RegionState& rs,
                                             std::size_t counter);
  // World::allocate memory (shm_alloc.cpp).
  /// If [data, data+bytes) lies in one of our allocations: its memfd and the offset in it.
  bool find_alloc(const std::byte* data, std::size_t bytes, int& fd, std::uint64_t& offset) const;
  /// True when a message of `bytes` from `data` takes the World-memory rendezvous although it
  /// would fit eager (Config::shm_rendezvous_min_bytes).
  bool rendezvous_from_world(const std::byte* data, std::size_t bytes) const;
  /// `bytes` at `offset` of `peer`'s allocation `fd`, mapped here (cached); null on failure.
  std::byte* map_peer_alloc(ShmPeer& peer, int fd, std::uint64_t offset, std::size_t bytes);
  /// Opens `rts`'s record for a cooperative copy in chunks (recv_fd < 0: cma).
  void open_coop_record(ReqState& r, ShmPeer& peer, const RtsBody& rts, std::size_t chunk_bytes,
                        int recv_fd, std::uint64_t recv_offset);

  // shm channels (shm_channel.cpp).
  bool has_cell(ShmPeer& p);
  bool has_slot(ShmPeer& p);
  void write_cell(ShmPeer& p, CellKind kind, int tag, std::uint32_t bytes, const void* body,
                  std::size_t body_bytes);
  void ring(RankBlock& block) noexcept;
  bool try_start_send(ShmPeer& p, ReqState& r, std::uint32_t index);
  void queue_control(ShmPeer& p, OutItem item);
  void flush_out(ShmPeer& p);
  bool flush_queue(ShmPeer& p, std::deque<OutItem>& queue);
  void drain_channel(ShmPeer& p);
  void return_credits(ShmPeer& p);
  void handle_cell(ShmPeer& p, const Cell& cell);
  std::byte* slot_ptr(const ChannelView& ch, std::uint64_t slot) const noexcept;

  Config cfg_;
  int rank_ = 0;
  int size_ = 0;
  RendezvousMode rndv_ = RendezvousMode::cma;
  bool cma_ok_ = true;

  Mapping segment_;
  SegmentGeometry geo_;
  RankBlock* my_block_ = nullptr;
  std::vector<int> local_of_;   ///< world rank -> local index in the segment, -1 if net
  std::vector<ShmPeer> peers_;  ///< by local index (own index unused)
  int my_local_ = -1;
  std::unique_ptr<Net> net_;
  std::unique_ptr<LinkEmulator> link_;  ///< null unless Config::link is enabled (link.cpp)

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<ReqState>> reqs_;
  std::vector<std::uint32_t> free_reqs_;
  std::vector<std::uint32_t> posted_;      ///< posted receives, in posting order
  std::vector<std::uint32_t> coop_recvs_;  ///< cooperative cma receives still copying
  std::vector<std::uint32_t> coop_sends_;  ///< sends whose RTS holds a rendezvous record
  std::list<UnexpectedMsg> unexpected_;
  std::vector<std::unique_ptr<RegionState>> regions_;
  std::vector<SharedAlloc> allocs_;
  std::atomic<bool> failed_{false};  ///< atomic: the fast send reads it without mu_
  Error failure_;
  std::chrono::steady_clock::time_point next_liveness_check_{};
  std::chrono::nanoseconds liveness_interval_{};
  std::uint32_t liveness_calls_ = 0;
  void (*on_destroy_)() = nullptr;
  void (*on_abort_)() = nullptr;

  friend class tp::comm::Request;
};

/// Builds the shm part of a segment header for `config` and `ranks` (launcher and from_mpi).
SegmentGeometry geometry_for(const Config& config, int ranks) noexcept;
/// Writes the header of a freshly created (zero-filled) segment.
void init_segment(std::byte* base, const SegmentGeometry& geo) noexcept;

}  // namespace tp::comm::detail
