// The receiving side of the shm rendezvous and the cooperative copy of its chunks by both ranks
// (docs/protocols.md, "Rendezvous"): RTS handling, World-memory and cma copies, chunk claims.
#include "engine.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace tp::comm::detail {

void Engine::open_coop_record(ReqState& r, ShmPeer& peer, const RtsBody& rts,
                              std::size_t chunk_bytes, int recv_fd, std::uint64_t recv_offset) {
  RendezvousRecord& rec = peer.rx.records[rts.record];
  rec.chunk_bytes = chunk_bytes;
  rec.chunks = static_cast<std::uint32_t>((rts.total_bytes + chunk_bytes - 1) / chunk_bytes);
  rec.recv_addr = reinterpret_cast<std::uint64_t>(r.rbuf);
  rec.recv_pid = static_cast<std::int32_t>(::getpid());
  rec.total_bytes = rts.total_bytes;
  rec.recv_fd = recv_fd;
  rec.recv_offset = recv_offset;
  rec.claims.store(std::uint64_t{rec.chunks} << 32, std::memory_order_relaxed);
  rec.chunks_done.store(0, std::memory_order_relaxed);
  rec.failed.store(0, std::memory_order_relaxed);
  // release: the fields above are visible to a sender that sees the record open (acquire).
  rec.state.store(record_open, std::memory_order_release);
  r.coop = &rec;
  r.coop_send_id = rts.send_id;
  r.coop_address = rts.address;
  r.coop_pid = peer.pid;
  r.local_peer = static_cast<int>(&peer - peers_.data());
  coop_recvs_.push_back(r.index);
  advance_coop_recv(r);
}

void Engine::start_rendezvous(ReqState& r, ShmPeer& peer, int tag, const RtsBody& rts) {
  r.info = RecvInfo{peer.world_rank, tag, rts.total_bytes};
  if (rts.total_bytes > r.rcap) {
    complete_error(r, truncation_error(peer.world_rank, tag, rts.total_bytes, r.rcap));
    queue_control(peer, OutItem{OutItem::fin, 0, rts.send_id, 0});
    return;
  }
  // The sender's buffer is World::allocate memory: read it through our mapping of its memfd,
  // one user-level copy; when our buffer is World memory too, the sender (while inside the
  // library) copies chunks into it at the same time.
  const std::byte* mapped = nullptr;
  if (rts.shm_fd >= 0 && cfg_.rendezvous == RendezvousMode::automatic) {
    mapped = map_peer_alloc(peer, rts.shm_fd, rts.shm_offset, rts.total_bytes);
  }
  if (mapped != nullptr) {
    int recv_fd = -1;
    std::uint64_t recv_offset = 0;
    if (cfg_.shm_chunk_bytes != 0 && find_alloc(r.rbuf, rts.total_bytes, recv_fd, recv_offset)) {
      // At least two chunks (whole pages), so that both cores copy even a message smaller
      // than two shm_chunk_bytes: a receiver alone pulls every line out of the other's cache.
      const std::size_t half = (rts.total_bytes / 2 + 4095) / 4096 * 4096;
      r.coop_src = mapped;
      open_coop_record(r, peer, rts, std::min(cfg_.shm_chunk_bytes, half), recv_fd, recv_offset);
      return;
    }
    std::memcpy(r.rbuf, mapped, rts.total_bytes);
    complete(r);
    queue_control(peer, OutItem{OutItem::fin, 0, rts.send_id, 0});
    return;
  }
  // automatic: copy below cma_min_bytes (two user-space copies on two cores beat a system call
  // with page pinning there), cma above; cma/copy modes apply to every size.
  const bool use_cma = cma_ok_ && (cfg_.rendezvous != RendezvousMode::automatic ||
                                   rts.total_bytes >= cfg_.cma_min_bytes);
  if (use_cma && cfg_.cma_chunk_bytes != 0 && rts.total_bytes >= 2 * cfg_.cma_chunk_bytes) {
    // Cooperative cma: open the sender's record and copy chunks; the sender helps while it
    // is inside the library (advance_coop_sends), otherwise we copy everything ourselves.
    open_coop_record(r, peer, rts, cfg_.cma_chunk_bytes, -1, 0);
    return;
  }
  if (use_cma) {
    const int err = read_peer_memory(peer.pid, rts.address, r.rbuf, rts.total_bytes);
    if (err == 0) {
      complete(r);
      queue_control(peer, OutItem{OutItem::fin, 0, rts.send_id, 0});
      return;
    }
    if (err != EPERM && err != ENOSYS && err != EACCES) {
      complete_error(r, Error::at(rank_, Errc::peer_lost,
                                  "rendezvous from rank " + std::to_string(peer.world_rank) + ": " +
                                      errno_text("process_vm_readv", err)));
      queue_control(peer, OutItem{OutItem::fin, 0, rts.send_id, 0});
      return;
    }
    cma_ok_ = false;  // the kernel refuses cross-memory attach here: copy mode from now on
    rndv_ = RendezvousMode::copy;
  }
  r.rgot = 0;
  queue_control(peer, OutItem{OutItem::cts, 0, rts.send_id, id_of(r.index)});
}

void Engine::advance_coop_recv(ReqState& r) {
  RendezvousRecord& rec = *r.coop;
  // Claim chunks from our end of the record until none is left (claim_chunk).
  const bool front = rank_ < peers_[static_cast<std::size_t>(r.local_peer)].world_rank;
  std::uint32_t c = 0;
  while (claim_chunk(rec, front, c)) {
    const std::uint64_t off = std::uint64_t{c} * rec.chunk_bytes;
    const std::size_t n = std::min<std::uint64_t>(rec.chunk_bytes, rec.total_bytes - off);
    int err = 0;
    if (r.coop_src != nullptr) {
      std::memcpy(r.rbuf + off, r.coop_src + off, n);
    } else {
      err = read_peer_memory(r.coop_pid, r.coop_address + off, r.rbuf + off, n);
    }
    if (err != 0) {
      r.coop_error = err;
      rec.failed.fetch_add(1, std::memory_order_relaxed);
    }
    rec.chunks_done.fetch_add(1, std::memory_order_release);
  }
  // acquire: the sender's chunks, counted with release, are in our buffer. seq_cst: the sender
  // that counts the last chunk then reads our `sleepers` (advance_coop_sends): either it sees a
  // sleeper and rings, or our re-check after announcing the sleep sees its count.
  if (rec.chunks_done.load(std::memory_order_seq_cst) != rec.chunks) return;
  const bool failed = rec.failed.load(std::memory_order_relaxed) != 0;
  rec.state.store(record_idle, std::memory_order_relaxed);  // ordered before the FIN cell
  coop_recvs_.erase(std::remove(coop_recvs_.begin(), coop_recvs_.end(), r.index),
                    coop_recvs_.end());
  r.coop = nullptr;
  r.coop_src = nullptr;
  ShmPeer& peer = peers_[static_cast<std::size_t>(r.local_peer)];
  if (failed) {
    complete_error(r, Error::at(rank_, Errc::peer_lost,
                                "rendezvous from rank " + std::to_string(peer.world_rank) +
                                    ": cross-memory attach failed (" +
                                    errno_text("process_vm_readv/writev", r.coop_error) + ")"));
  } else {
    complete(r);
  }
  queue_control(peer, OutItem{OutItem::fin, 0, r.coop_send_id, 0});
}

void Engine::advance_coop_sends() {
  for (std::size_t k = 0; k < coop_sends_.size(); ++k) {
    ReqState& r = *reqs_[coop_sends_[k]];
    ShmPeer& peer = peers_[static_cast<std::size_t>(r.local_peer)];
    RendezvousRecord& rec = peer.tx.records[r.record];
    // acquire: the receiver's destination fields were written before it opened the record.
    if (rec.state.load(std::memory_order_acquire) != record_open) continue;
    // Destination in World memory: write through our mapping of it (no chunk is claimed if it
    // cannot be mapped, the receiver then copies them all).
    std::byte* dst = nullptr;
    if (rec.recv_fd >= 0) {
      dst = map_peer_alloc(peer, rec.recv_fd, rec.recv_offset, rec.total_bytes);
      if (dst == nullptr) continue;
    }
    std::uint32_t c = 0;
    while (claim_chunk(rec, rank_ < peer.world_rank, c)) {
      const std::uint64_t off = std::uint64_t{c} * rec.chunk_bytes;
      const std::size_t n = std::min<std::uint64_t>(rec.chunk_bytes, rec.total_bytes - off);
      if (dst != nullptr) {
        std::memcpy(dst + off, r.sbuf + off, n);
      } else if (write_peer_memory(rec.recv_pid, rec.recv_addr + off, r.sbuf + off, n) != 0) {
        rec.failed.fetch_add(1, std::memory_order_relaxed);
      }
      // seq_cst (release would do for the data): ordered before the load of `sleepers` below.
      const std::uint32_t done = rec.chunks_done.fetch_add(1, std::memory_order_seq_cst) + 1;
      // The receiver completes when every chunk is counted; if it sleeps in a wait (hybrid after
      // its spin, or block) and we counted the last chunk, nothing else would wake it: ring.
      if (done == rec.chunks && cfg_.sync != SyncMode::poll &&
          peer.block->sleepers.load(std::memory_order_seq_cst) != 0) {
        ring(*peer.block);
      }
    }
  }
}

}  // namespace tp::comm::detail
