// Shared-memory segment layout: header, per-rank control blocks, per-pair channels (cells + slots).
//
// One segment serves the ranks of one host. All structs are 64-byte aligned so that data written
// by different processes never shares a cache line (no false sharing between writer roles).
#pragma once

#include <tilepipe/comm/config.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tp::comm::detail {

inline constexpr std::size_t cache_line = 64;
inline constexpr std::uint64_t segment_magic = 0x7470636f6d6d3031ULL;  // "tpcomm01"

/// Segment header, written once by the creator before any other rank maps the segment.
///
/// | offset | field        | meaning                                 | writer  |
/// |-------:|--------------|-----------------------------------------|---------|
/// |      0 | magic        | segment_magic                            | creator |
/// |      8 | ranks        | number of ranks sharing the segment      | creator |
/// |     12 | cells        | cells per channel                        | creator |
/// |     16 | slots        | slots per channel                        | creator |
/// |     20 | (pad)        |                                          |         |
/// |     24 | slot_bytes   | bytes per slot                           | creator |
/// |     32 | channel_bytes| bytes per channel                        | creator |
/// |     40-63 | (pad)     |                                          |         |
/// --- cache line boundary (64) ---
struct alignas(cache_line) SegmentHeader {
  std::uint64_t magic;
  std::uint32_t ranks;
  std::uint32_t cells;
  std::uint32_t slots;
  std::uint32_t pad0;
  std::uint64_t slot_bytes;
  std::uint64_t channel_bytes;
};
static_assert(sizeof(SegmentHeader) == cache_line);

/// Rank states in RankBlock::state.
enum RankState : std::uint32_t { rank_starting = 0, rank_alive = 1, rank_departed = 2 };

/// Per-rank control block: two lines, split by writer so that senders ringing the doorbell never
/// invalidate the line the owner writes, and vice versa.
///
/// | offset | field    | meaning                                                | writer      |
/// |-------:|----------|--------------------------------------------------------|-------------|
/// |      0 | bell     | futex word: bumped by anyone who makes progress possible | any peer  |
/// |   4-63 | (pad)    |                                                        |             |
/// --- cache line boundary (64) ---
/// |     64 | sleepers | threads of the owner sleeping (or about to) on `bell`   | owner       |
/// |     68 | state    | RankState                                               | owner       |
/// |     72 | pid      | owner's process id (for pidfd liveness and CMA)         | owner       |
/// |  76-127| (pad)    |                                                        |             |
/// --- cache line boundary (128) ---
struct alignas(cache_line) RankBlock {
  std::atomic<std::uint32_t> bell;
  char pad0[cache_line - sizeof(std::atomic<std::uint32_t>)];
  std::atomic<std::uint32_t> sleepers;
  std::atomic<std::uint32_t> state;
  std::atomic<std::int32_t> pid;
  char pad1[cache_line - 3 * sizeof(std::uint32_t)];
};
static_assert(sizeof(RankBlock) == 2 * cache_line);

/// Cell kinds (Cell::kind).
enum CellKind : std::uint8_t {
  cell_short = 1,  ///< payload inline (bytes <= 48)
  cell_eager = 2,  ///< payload in the channel's next slot
  cell_rts = 3,    ///< rendezvous request to send (RtsBody)
  cell_cts = 4,    ///< clear to send, copy mode (CtsBody), receiver -> sender
  cell_fin = 5,    ///< rendezvous done (FinBody), receiver -> sender
  cell_frag = 6,   ///< copy-mode fragment in the next slot (FragBody)
};

/// One message header, one cache line. The sender fills every field, then stores `seq` with
/// release order; the receiver polls `seq` with acquire order, so a matching seq makes the other
/// 60 bytes (and, for eager/frag, the slot) visible. Cell i of a channel carries messages
/// i+1, i+1+C, i+1+2C, ... (C = cells per channel), so seq also tells which lap is present.
///
/// | offset | field   | meaning                                             |
/// |-------:|---------|-----------------------------------------------------|
/// |      0 | seq     | message number (1-based, mod 2^32); written last    |
/// |      4 | kind    | CellKind                                            |
/// |    5-7 | (pad)   |                                                     |
/// |      8 | tag     | message tag (negative: library-internal)            |
/// |     12 | bytes   | short/eager/frag payload bytes                      |
/// |  16-63 | body    | short payload, or RtsBody/CtsBody/FinBody/FragBody  |
/// --- cache line boundary (64) ---
struct alignas(cache_line) Cell {
  std::atomic<std::uint32_t> seq;
  std::uint8_t kind;
  std::uint8_t pad[3];
  std::int32_t tag;
  std::uint32_t bytes;
  std::byte body[48];
};
static_assert(sizeof(Cell) == cache_line);
inline constexpr std::size_t cell_payload_bytes = sizeof(Cell::body);

/// Rendezvous request: the sender's request id, size and address (for process_vm_readv), and,
/// when the buffer lies in memory from World::allocate, where peers find it mapped.
///
/// | offset | field       | meaning                                                      |
/// |-------:|-------------|--------------------------------------------------------------|
/// |      0 | send_id     | sender's request id (echoed in CTS/FIN)                      |
/// |      8 | total_bytes | message bytes                                                |
/// |     16 | address     | sender's buffer (its address space)                          |
/// |     24 | record      | RendezvousRecord index in this channel                       |
/// |     28 | shm_fd      | sender's memfd holding the buffer (World::allocate), or -1   |
/// |     32 | shm_offset  | the buffer's offset in that memfd                            |
/// The sender's pid (for process_vm_readv and /proc/<pid>/fd) is the peer's, from its RankBlock.
/// 40 bytes: an emulated link keeps the last 8 bytes of the cell body for its arrival stamp.
struct RtsBody {
  std::uint64_t send_id;
  std::uint64_t total_bytes;
  std::uint64_t address;
  std::uint32_t record;
  std::int32_t shm_fd;
  std::uint64_t shm_offset;
};
/// Clear to send (copy mode): which receive request the fragments are for.
struct CtsBody {
  std::uint64_t send_id;
  std::uint64_t recv_id;
};
/// Rendezvous finished (cma mode, or a receive that refused the message).
struct FinBody {
  std::uint64_t send_id;
};
/// Copy-mode fragment: destination request and byte offset.
struct FragBody {
  std::uint64_t recv_id;
  std::uint64_t offset;
};
static_assert(sizeof(RtsBody) <= cell_payload_bytes && sizeof(CtsBody) <= cell_payload_bytes);
static_assert(sizeof(RtsBody) == 40);

/// Credits a receiver returns to the sender of a channel; one line written only by the receiver
/// (release stores, in batches), read by the sender (acquire loads) when it runs out of credits.
///
/// | offset | field          | meaning                                     | writer   |
/// |-------:|----------------|---------------------------------------------|----------|
/// |      0 | cells_consumed | cells the receiver has finished reading      | receiver |
/// |      8 | slots_freed    | slots the receiver has finished reading      | receiver |
/// |  16-63 | (pad)          |                                             |          |
/// --- cache line boundary (64) ---, then RendezvousRecord[8], Cell[cells],
/// slots[slots][slot_bytes]
struct alignas(cache_line) ChannelCredits {
  std::atomic<std::uint64_t> cells_consumed;
  std::atomic<std::uint64_t> slots_freed;
  char pad[cache_line - 2 * sizeof(std::uint64_t)];
};
static_assert(sizeof(ChannelCredits) == cache_line);

/// Rendezvous records per channel (cooperative cma: both ranks copy chunks of one message).
inline constexpr std::uint32_t rendezvous_records = 8;

/// Record states (RendezvousRecord::state).
enum RecordState : std::uint32_t { record_idle = 0, record_open = 1 };

/// Shared state of one cooperative rendezvous (cma, or mapped World::allocate memory: then
/// both ranks memcpy through their mappings of the two buffers). The sender picks record (n mod 8)
/// for its n-th RTS on the channel and reuses it only after that send's FIN. The receiver fills the
/// destination, then opens the record (release); from then on both ranks claim chunks from the
/// two ends of `claims` (CAS: the lower world rank of the pair from the front, the higher from
/// the back, so each core copies the same half of a buffer every time and, in a ping-pong, finds
/// it in its own cache) and copy them with process_vm_readv / memcpy (receiver) or
/// process_vm_writev / memcpy (sender, only while it is inside the library), counting
/// chunks_done (release). The receiver completes when chunks_done == chunks (acquire), closes
/// the record and sends FIN. A sender busy elsewhere leaves every chunk to the receiver, so
/// nobody ever waits for the other.
///
/// | offset | field       | meaning                                          | writer        |
/// |-------:|-------------|--------------------------------------------------|---------------|
/// |      0 | state       | RecordState                                      | receiver      |
/// |      4 | failed      | chunks whose copy failed                         | both (RMW)    |
/// |      8 | claims      | low 32 bits: next front chunk; high: back end    | both (CAS)    |
/// |     16 | chunks_done | chunks copied (or failed)                        | both (RMW)    |
/// |     20 | chunks      | number of chunks                                 | receiver      |
/// |     24 | recv_pid    | receiver's pid (for process_vm_writev)           | receiver      |
/// |     28 | recv_fd     | receiver's memfd holding recv_addr, or -1 (cma)  | receiver      |
/// |     32 | chunk_bytes | bytes per chunk (the last one may be shorter)    | receiver      |
/// |     40 | recv_addr   | receiver's buffer                                | receiver      |
/// |     48 | total_bytes | message bytes                                    | receiver      |
/// |     56 | recv_offset | recv_addr's offset in recv_fd                    | receiver      |
/// --- cache line boundary (64) ---
struct alignas(cache_line) RendezvousRecord {
  std::atomic<std::uint32_t> state;
  std::atomic<std::uint32_t> failed;
  std::atomic<std::uint64_t> claims;
  std::atomic<std::uint32_t> chunks_done;
  std::uint32_t chunks;
  std::int32_t recv_pid;
  std::int32_t recv_fd;
  std::uint64_t chunk_bytes;
  std::uint64_t recv_addr;
  std::uint64_t total_bytes;
  std::uint64_t recv_offset;
};
static_assert(sizeof(RendezvousRecord) == cache_line);

/// Claims the next chunk of an open record from the front (ascending) or the back (descending);
/// false when none is left. acq_rel CAS: each chunk goes to exactly one rank.
inline bool claim_chunk(RendezvousRecord& rec, bool from_front, std::uint32_t& chunk) noexcept {
  std::uint64_t cur = rec.claims.load(std::memory_order_relaxed);
  while (true) {
    const auto front = static_cast<std::uint32_t>(cur);
    const auto back = static_cast<std::uint32_t>(cur >> 32);
    if (front >= back) return false;
    const std::uint64_t next = from_front ? cur + 1 : cur - (std::uint64_t{1} << 32);
    if (rec.claims.compare_exchange_weak(cur, next, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
      chunk = from_front ? front : back - 1;
      return true;
    }
  }
}

/// Byte offsets of the parts of a segment for a given geometry.
struct SegmentGeometry {
  std::uint32_t ranks = 0;
  std::uint32_t cells = 0;
  std::uint32_t slots = 0;
  std::size_t slot_bytes = 0;

  [[nodiscard]] std::size_t channel_bytes() const noexcept {
    return sizeof(ChannelCredits) + rendezvous_records * sizeof(RendezvousRecord) +
           std::size_t{cells} * sizeof(Cell) + std::size_t{slots} * slot_bytes;
  }
  [[nodiscard]] std::size_t rank_blocks_offset() const noexcept { return sizeof(SegmentHeader); }
  [[nodiscard]] std::size_t channels_offset() const noexcept {
    return rank_blocks_offset() + std::size_t{ranks} * sizeof(RankBlock);
  }
  /// Channel carrying messages from `src` to `dst` (local indices; src == dst unused).
  [[nodiscard]] std::size_t channel_offset(std::uint32_t src, std::uint32_t dst) const noexcept {
    return channels_offset() + (std::size_t{dst} * ranks + src) * channel_bytes();
  }
  [[nodiscard]] std::size_t total_bytes() const noexcept {
    return channels_offset() + std::size_t{ranks} * ranks * channel_bytes();
  }
};

/// Views of one channel inside a mapped segment.
struct ChannelView {
  ChannelCredits* credits = nullptr;
  RendezvousRecord* records = nullptr;
  Cell* cells = nullptr;
  std::byte* slots = nullptr;
};

}  // namespace tp::comm::detail
