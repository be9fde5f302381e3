// Communication tunables: sync mode, protocol thresholds, ring geometry, fault bounds (plain data).
#pragma once

#include <tilepipe/comm/link.hpp>
#include <tilepipe/support/expected.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tp::comm {

/// How a waiting call learns that data has landed (docs/protocols.md, "Sync modes").
enum class SyncMode : std::uint8_t {
  poll,    ///< spin on the sequence word: lowest latency, burns the core
  block,   ///< sleep in the kernel (futex) at once: frees the core, pays a kernel wake-up
  hybrid,  ///< spin for Config::spin_ns, then block (the default)
};

/// Which transport carries messages between two ranks.
enum class TransportKind : std::uint8_t {
  automatic,  ///< shm between ranks of one host, MPI between hosts
  shm,        ///< shared memory only (every rank must be on this host)
  mpi,        ///< MPI for every peer (needs mpirun)
};

/// How the rendezvous protocol moves the payload (docs/protocols.md, "Rendezvous").
enum class RendezvousMode : std::uint8_t {
  automatic,  ///< copy below Config::cma_min_bytes, cma above (when the kernel allows it)
  cma,        ///< receiver reads the sender's buffer with process_vm_readv: one copy, no staging
  copy,       ///< pipelined through the eager slots: two copies, overlapped on two cores
};

/// Setup-time configuration of a World; every rank must use the same values. Chosen once, never
/// per message. The defaults are the measured ones of docs/benchmarks.md.
struct Config {
  /// Notification of waiting calls.
  SyncMode sync = SyncMode::hybrid;
  /// Which transport to use between ranks (launch_local worlds are always shm).
  TransportKind transport = TransportKind::automatic;
  /// Rendezvous data movement.
  RendezvousMode rendezvous = RendezvousMode::automatic;
  /// Largest payload sent inline in one 64-byte cell (bytes, 0..48).
  std::size_t short_max_bytes = 48;
  /// Largest payload sent eagerly through one slot (bytes, short_max_bytes..slot_bytes).
  /// Measured: eager beats both rendezvous modes up to 64 KiB here (docs/benchmarks.md).
  std::size_t eager_max_bytes = 64 * 1024;
  /// Size of one eager slot and of one copy-mode rendezvous fragment (bytes, multiple of 64).
  std::size_t slot_bytes = 64 * 1024;
  /// Eager slots per ordered pair of ranks (>= 2).
  std::uint32_t slots_per_channel = 8;
  /// Slots the receiver frees before it returns them to the sender as credits (1..slots).
  std::uint32_t credit_batch = 4;
  /// 64-byte cells per ordered pair of ranks (a power of two, >= 4).
  std::uint32_t cells_per_channel = 64;
  /// RendezvousMode::automatic: rendezvous messages of at least this size use cma, smaller ones
  /// copy (measured crossover near 1 MiB: the system call and page pinning cost more than the
  /// second copy below it). Ignored when the mode is cma or copy (bytes).
  std::size_t cma_min_bytes = 1024 * 1024;
  /// cma rendezvous of at least two chunks is copied cooperatively, chunk by chunk, by the
  /// receiver (process_vm_readv) and, while it is inside the library, the sender
  /// (process_vm_writev). 0: the receiver copies alone (bytes, 0 or >= 4096).
  std::size_t cma_chunk_bytes = 256 * 1024;
  /// Messages sent from World::allocate memory of at least this size take the rendezvous
  /// (one copy, split over both ranks) even below eager_max_bytes; rendezvous mode automatic
  /// only. 0: never. Measured: it beats eager's two copies from 8-16 KiB here (bytes).
  std::size_t shm_rendezvous_min_bytes = 16 * 1024;
  /// A rendezvous from World::allocate memory into World::allocate memory is memcpy'd in
  /// chunks of this size (at most half the message, whole pages) by the receiver and, while it
  /// is inside the library, the sender. 0: the receiver copies alone (bytes, 0 or >= 4096).
  /// Measured: 128 KiB splits 256 KiB-4 MiB messages best here (docs/benchmarks.md).
  std::size_t shm_chunk_bytes = 128 * 1024;
  /// hybrid: how long to spin before sleeping in the kernel (nanoseconds).
  std::chrono::nanoseconds spin_ns = std::chrono::microseconds(50);
  /// Upper bound on how long a waiting call runs after a peer died before it fails.
  std::chrono::milliseconds peer_timeout = std::chrono::seconds(10);
  /// Progress watchdog: a waiting call that has waited this long on a peer that is alive but
  /// silent (stopped, hung, livelocked) fails with Errc::timeout naming that peer, and the
  /// World is failed from then on (under MPI its destruction aborts the job, MPI_Abort). A wait
  /// on a peer that computes for longer than this is legitimate, hence the generous default.
  /// 0: off (a stopped peer then hangs the run) (milliseconds).
  std::chrono::milliseconds progress_timeout = std::chrono::seconds(60);
  /// Emulated interconnect between ranks of one host (none by default; docs/protocols.md,
  /// "Emulated link"). With a link, short payloads are at most 40 bytes and rendezvous uses cma
  /// at every size when the mode is automatic (the receiver moves the data, like a DMA engine).
  Link link;

  /// Checks ranges and consistency; names the offending field and value.
  [[nodiscard]] Status validate() const;
};

/// "poll", "block" or "hybrid".
std::string_view to_string(SyncMode mode) noexcept;
/// "auto", "shm" or "mpi".
std::string_view to_string(TransportKind kind) noexcept;
/// "auto", "cma" or "copy".
std::string_view to_string(RendezvousMode mode) noexcept;

/// Parses "poll" | "block" | "hybrid"; `what` names the option in the error.
Expected<SyncMode> parse_sync_mode(std::string_view text, std::string_view what);
/// Parses "auto" | "shm" | "mpi".
Expected<TransportKind> parse_transport(std::string_view text, std::string_view what);
/// Parses "auto" | "cma" | "copy".
Expected<RendezvousMode> parse_rendezvous(std::string_view text, std::string_view what);

}  // namespace tp::comm
