// tp::comm::World: SPMD ranks with two-sided (send/recv, isend/irecv) and one-sided (put)
// messaging.
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/support/expected.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

namespace tp::comm {

namespace detail {
class Engine;
}  // namespace detail

/// Receive from any rank (irecv/recv `source`).
inline constexpr int any_source = -1;
/// Receive any user tag (irecv/recv `tag`).
inline constexpr int any_tag = -1;
/// Most notification counters one rank's part of a region may have (World::create_region).
inline constexpr std::size_t max_region_counters = 1024;
/// Largest user tag; user tags are 0..max_tag (negative tags are reserved for the library).
inline constexpr int max_tag = (1 << 20) - 1;

/// What a completed receive got.
struct RecvInfo {
  int source = -1;        ///< sending rank
  int tag = -1;           ///< the message's tag
  std::size_t bytes = 0;  ///< payload bytes written into the receive buffer
};

/// A non-blocking operation in flight. Move-only; complete it with World::wait or World::test.
/// Destroying an incomplete Request waits for it (errors are dropped): prefer an explicit wait.
/// A Request may be used by one thread at a time.
class Request {
 public:
  Request() = default;
  Request(Request&& other) noexcept;
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  /// True while the request refers to an operation that has not been waited for.
  [[nodiscard]] bool active() const noexcept { return engine_ != nullptr; }

 private:
  friend class World;
  friend class detail::Engine;
  Request(detail::Engine* engine, std::uint32_t index, std::uint32_t generation) noexcept
      : engine_(engine), index_(index), generation_(generation) {}
  detail::Engine* engine_ = nullptr;
  std::uint32_t index_ = 0;
  std::uint32_t generation_ = 0;
};

/// A memory region that every rank exposed collectively (World::create_region). Copyable handle.
class Region {
 public:
  Region() = default;
  /// This rank's part of the region (bytes that peers put into); valid while the World lives.
  [[nodiscard]] std::span<std::byte> local() const noexcept { return local_; }
  /// Region identifier, the same on every rank.
  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }

 private:
  friend class World;
  Region(std::uint32_t id, std::span<std::byte> local) noexcept : id_(id), local_(local) {}
  std::uint32_t id_ = UINT32_MAX;
  std::span<std::byte> local_;
};

/// A world of `size()` ranks (MPI's COMM_WORLD). Obtain one from launch_local() or
/// World::from_mpi(). Thread safety: every member may be called concurrently from several threads
/// of one process (calls are serialised by one lock per World, waits run outside it); messages
/// between two ranks with the same tag are matched in the order their send calls entered the World.
class World {
 public:
  World(World&&) noexcept;
  World& operator=(World&&) noexcept;
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  /// Marks this rank as departed (peers waiting on it get an error, not a hang) and unmaps.
  ~World();

  /// Joins the MPI job this process was started in (calls MPI_Init_thread if needed; the World
  /// finalizes MPI if it initialised it). Ranks on one host use shared memory among themselves
  /// unless config.transport says otherwise. Collective over MPI_COMM_WORLD.
  static Expected<World> from_mpi(const Config& config);
  /// True when this process runs under mpirun/mpiexec (and MPI support was built).
  static bool launched_by_mpi() noexcept;

  /// This rank, 0..size()-1.
  [[nodiscard]] int rank() const noexcept;
  /// Number of ranks.
  [[nodiscard]] int size() const noexcept;
  /// The configuration in force (validated).
  [[nodiscard]] const Config& config() const noexcept;
  /// "shm", "mpi" or "self": the transport that carries messages to `peer`.
  [[nodiscard]] std::string_view transport_to(int peer) const noexcept;
  /// The rendezvous mode actually used (automatic resolved at setup).
  [[nodiscard]] RendezvousMode rendezvous_mode() const noexcept;

  /// True once the world has failed: a peer lost, the progress watchdog, or abandon(). Every
  /// later call fails with the first failure. Thread-safe.
  [[nodiscard]] bool failed() const noexcept;
  /// Fails the world with `error` (unless it failed already): this rank cannot go on with its
  /// peers (under MPI its destruction then aborts the job instead of waiting in MPI_Finalize for
  /// peers that wait for it). Thread-safe.
  void abandon(const Error& error);
  /// True when destroying a failed world aborts the whole job (MPI_Abort: a World that
  /// initialised MPI), so that no error this rank returns would reach its caller.
  [[nodiscard]] bool aborts_when_failed() const noexcept;

  /// Starts sending `data` to `dest` with `tag` (0..max_tag). `data` must stay valid and unchanged
  /// until the request completes.
  Expected<Request> isend(int dest, int tag, std::span<const std::byte> data);
  /// Starts receiving into `buffer` from `source` (or any_source) with `tag` (or any_tag). A
  /// longer message completes the request with an error naming both sizes; nothing is written.
  Expected<Request> irecv(int source, int tag, std::span<std::byte> buffer);
  /// Progresses and reports whether `request` completed; on completion the request becomes
  /// inactive and `info` (if given) receives what a receive got. Errors complete the request too.
  Expected<bool> test(Request& request, RecvInfo* info = nullptr);
  /// Blocks until `request` completes (sync mode of the config); fails when a peer it depends
  /// on dies (within config.peer_timeout). Returns the receive's info (zeros for a send).
  Expected<RecvInfo> wait(Request& request);

  /// Blocking send: isend + wait.
  Status send(int dest, int tag, std::span<const std::byte> data);
  /// Blocking receive: irecv + wait.
  Expected<RecvInfo> recv(int source, int tag, std::span<std::byte> buffer);
  /// Returns when every rank has entered the barrier.
  Status barrier();
  /// Collective: the least `value` over all ranks, on every rank (rank 0 gathers and answers, on a
  /// library tag: user messages in flight are not disturbed).
  Expected<double> allreduce_min(double value);
  /// Collective: every rank's `blob` (sizes may differ) on rank 0, in rank order; the other ranks
  /// get an empty vector. On a library tag.
  Expected<std::vector<std::vector<std::byte>>> gather(std::span<const std::byte> blob);

  /// Collective: every rank exposes `bytes` bytes (may differ per rank) that peers can put into,
  /// with `counters` notification counters (1..max_region_counters, may differ per rank).
  /// The memory is zero-filled, page-aligned and lives until the World is destroyed.
  Expected<Region> create_region(std::size_t bytes, std::size_t counters = 1);
  /// Writes `data` at `offset` of `target`'s part of `region`; when `notify`, then adds one to
  /// the target's notification counter 0 (ordered after the data). Complete on return: the data
  /// is visible to the target once it has seen the notification.
  Status put(const Region& region, int target, std::size_t offset, std::span<const std::byte> data,
             bool notify = true);
  /// `target`'s part of `region` mapped into this process (a shm peer): stores into it land in
  /// the target's region.local() directly; make them visible with notify(). nullopt for this
  /// rank itself (use region.local()), for peers reached over MPI and for an unknown region.
  [[nodiscard]] std::optional<std::span<std::byte>> peer_memory(const Region& region,
                                                                int target) const;
  /// Adds one to `target`'s notification counter `counter` of `region`, ordered after every
  /// store this thread made before (into peer_memory or by put): a target that sees the new count
  /// sees those stores. The same counter bump as put's. Over MPI only counter 0 exists.
  Status notify(const Region& region, int target, std::size_t counter = 0);
  /// Notifications received so far on this rank's counter `counter` of `region` (monotonic).
  Expected<std::uint64_t> notifications(const Region& region, std::size_t counter = 0);
  /// Waits until this rank's counter `counter` of `region` reaches `count`; data put or stored
  /// before those notifications is then visible in region.local(). Returns the counter. With a
  /// `source` rank, fails (peer_lost) when that rank exits before the count is reached; any
  /// death of a shm peer ends the wait within config.peer_timeout either way.
  Expected<std::uint64_t> wait_notifications(const Region& region, std::uint64_t count,
                                             std::size_t counter = 0, int source = any_source);

  /// Memory that this rank's shared-memory peers can address (like MPI_Alloc_mem): a rendezvous
  /// message sent from it is one user-level memcpy by the receiver, split with the sender when
  /// the receive buffer is such memory too (docs/protocols.md). `bytes` in 1..2^40; zero-filled,
  /// page-aligned; freed when the World is destroyed. Thread-safe.
  Expected<std::span<std::byte>> allocate(std::size_t bytes);

  /// Internal: the launcher and from_mpi build Worlds from an engine.
  explicit World(std::unique_ptr<detail::Engine> engine) noexcept;

 private:
  std::unique_ptr<detail::Engine> engine_;
};

}  // namespace tp::comm
