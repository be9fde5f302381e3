// The shm channel protocol: cells, eager slots, credits, rendezvous control (docs/protocols.md).
#include "engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace tp::comm::detail {

std::byte* Engine::slot_ptr(const ChannelView& ch, std::uint64_t slot) const noexcept {
  return ch.slots + (slot % geo_.slots) * geo_.slot_bytes;
}

bool Engine::has_cell(ShmPeer& p) {
  // Message k may use cell (k-1) mod C once message k-C has been consumed.
  if (p.tx_next - 1 - p.tx_cells_seen < geo_.cells) return true;
  // acquire (seq_cst for the eventcount): pairs with the receiver's store after it finished
  // reading those cells.
  p.tx_cells_seen = p.tx.credits->cells_consumed.load(std::memory_order_seq_cst);
  return p.tx_next - 1 - p.tx_cells_seen < geo_.cells;
}

bool Engine::has_slot(ShmPeer& p) {
  if (p.tx_slot_next - p.tx_slots_seen < geo_.slots) return true;
  p.tx_slots_seen = p.tx.credits->slots_freed.load(std::memory_order_seq_cst);
  return p.tx_slot_next - p.tx_slots_seen < geo_.slots;
}

void Engine::write_cell(ShmPeer& p, CellKind kind, int tag, std::uint32_t bytes, const void* body,
                        std::size_t body_bytes) {
  Cell& c = p.tx.cells[(p.tx_next - 1) & (geo_.cells - 1)];
  c.kind = kind;
  c.tag = tag;
  c.bytes = bytes;
  copy_cell_payload(c.body, static_cast<const std::byte*>(body), body_bytes);
  if (link_ != nullptr) link_->stamp(p.world_rank, c);
  const auto seq = static_cast<std::uint32_t>(p.tx_next);
  ++p.tx_next;
  if (cfg_.sync == SyncMode::poll) {
    // release: the header, the inline payload and any slot written before become visible to the
    // receiver's load of seq. One store, in the line that carries the payload. Nobody sleeps.
    c.seq.store(seq, std::memory_order_release);
    return;
  }
  // seq_cst store, then seq_cst load of `sleepers` (Dekker against the waiter's seq_cst RMW of
  // sleepers followed by its seq_cst re-load of seq): either we see the sleeper and ring, or it
  // sees the cell. A receiver that sleeps is therefore always rung. (No fence: GCC's TSan does
  // not model atomic_thread_fence; on x86 the store becomes one xchg.)
  c.seq.store(seq, std::memory_order_seq_cst);
  if (p.block->sleepers.load(std::memory_order_seq_cst) != 0) ring(*p.block);
}

bool Engine::try_start_send(ShmPeer& p, ReqState& r, std::uint32_t index) {
  if (!has_cell(p)) return false;
  if (r.sbytes <= cfg_.short_max_bytes) {
    write_cell(p, cell_short, r.tag, static_cast<std::uint32_t>(r.sbytes), r.sbuf, r.sbytes);
    complete_send(r);
    return true;
  }
  if (r.sbytes <= cfg_.eager_max_bytes && !rendezvous_from_world(r.sbuf, r.sbytes)) {
    if (!has_slot(p)) return false;
    std::memcpy(slot_ptr(p.tx, p.tx_slot_next), r.sbuf, r.sbytes);
    ++p.tx_slot_next;
    write_cell(p, cell_eager, r.tag, static_cast<std::uint32_t>(r.sbytes), nullptr, 0);
    complete_send(r);
    return true;
  }
  // The n-th RTS of a channel uses record n mod 8; wait (queued) while that record's earlier
  // rendezvous is still running.
  const auto rec = static_cast<std::uint32_t>(p.tx_rts_count % rendezvous_records);
  if (p.tx_record_req[rec] != 0) return false;
  p.tx_record_req[rec] = index + 1;
  ++p.tx_rts_count;
  r.record = static_cast<int>(rec);
  r.local_peer = static_cast<int>(&p - peers_.data());
  coop_sends_.push_back(index);
  RtsBody rts{};
  rts.send_id = id_of(index);
  rts.total_bytes = r.sbytes;
  rts.address = reinterpret_cast<std::uint64_t>(r.sbuf);
  rts.record = rec;
  rts.shm_fd = -1;
  if (int fd = -1; find_alloc(r.sbuf, r.sbytes, fd, rts.shm_offset)) rts.shm_fd = fd;
  write_cell(p, cell_rts, r.tag, 0, &rts, sizeof(rts));
  return true;  // completes on FIN (cma, refused) or after the last fragment (copy)
}

void Engine::queue_control(ShmPeer& p, OutItem item) {
  p.ctrl.push_back(item);
  flush_out(p);
}

void Engine::flush_out(ShmPeer& p) {
  TxGuard tx(p);
  // Control traffic first: a message waiting for a rendezvous record waits for a FIN that the
  // peer may only send after our own FIN/CTS got through (head-of-line deadlock otherwise).
  if (flush_queue(p, p.ctrl)) flush_queue(p, p.out);
}

bool Engine::flush_queue(ShmPeer& p, std::deque<OutItem>& queue) {
  while (!queue.empty()) {
    OutItem& item = queue.front();
    switch (item.kind) {
      case OutItem::message: {
        if (!try_start_send(p, *reqs_[item.req], item.req)) return false;
        break;
      }
      case OutItem::cts: {
        if (!has_cell(p)) return false;
        const CtsBody body{item.a, item.b};
        write_cell(p, cell_cts, 0, 0, &body, sizeof(body));
        break;
      }
      case OutItem::fin: {
        if (!has_cell(p)) return false;
        const FinBody body{item.a};
        write_cell(p, cell_fin, 0, 0, &body, sizeof(body));
        break;
      }
      case OutItem::fragments: {
        ReqState& r = *reqs_[item.req];
        while (r.soffset < r.sbytes) {
          if (!has_cell(p) || !has_slot(p)) return false;
          const std::size_t n = std::min(geo_.slot_bytes, r.sbytes - r.soffset);
          std::memcpy(slot_ptr(p.tx, p.tx_slot_next), r.sbuf + r.soffset, n);
          ++p.tx_slot_next;
          const FragBody body{r.recv_id, r.soffset};
          write_cell(p, cell_frag, 0, static_cast<std::uint32_t>(n), &body, sizeof(body));
          r.soffset += n;
        }
        finish_rts_send(r);
        break;
      }
    }
    queue.pop_front();
  }
  return true;
}

void Engine::drain_channel(ShmPeer& p) {
  // acquire: a fast receive that owned the channel released it after its cursor updates;
  // seq_cst for the eventcount with a sleeping thread of ours (Engine::release_rx).
  if (p.rx_owned.value.load(std::memory_order_seq_cst)) return;
  const std::uint32_t mask = geo_.cells - 1;
  bool consumed = false;
  while (true) {
    const Cell& c = p.rx.cells[(p.rx_next - 1) & mask];
    // seq_cst (a plain load on x86, like acquire): pairs with the sender's release/seq_cst store
    // of seq, making the cell body and slot visible; seq_cst for the eventcount (write_cell).
    if (c.seq.load(std::memory_order_seq_cst) != static_cast<std::uint32_t>(p.rx_next)) break;
    if (link_ != nullptr && !link_->arrived(c)) break;  // still in flight on the emulated link
    handle_cell(p, c);
    ++p.rx_next;
    consumed = true;
  }
  if (consumed) return_credits(p);
}

void Engine::return_credits(ShmPeer& p) {
  // Return credits in batches: a quarter ring of cells, credit_batch slots. release (seq_cst when
  // a sender may sleep on them, as in write_cell): our reads of the cells and slots happen
  // before the sender may overwrite them.
  const auto order =
      cfg_.sync == SyncMode::poll ? std::memory_order_release : std::memory_order_seq_cst;
  bool returned = false;
  if (p.rx_next - 1 - p.rx_cells_published >= geo_.cells / 4) [[unlikely]] {
    p.rx_cells_published = p.rx_next - 1;
    p.rx.credits->cells_consumed.store(p.rx_cells_published, order);
    returned = true;
  }
  if (p.rx_slot_next - p.rx_slots_published >= cfg_.credit_batch) {
    p.rx_slots_published = p.rx_slot_next;
    p.rx.credits->slots_freed.store(p.rx_slots_published, order);
    returned = true;
  }
  if (returned && cfg_.sync != SyncMode::poll &&
      p.block->sleepers.load(std::memory_order_seq_cst) != 0) {
    ring(*p.block);
  }
}

void Engine::handle_cell(ShmPeer& p, const Cell& c) {
  switch (c.kind) {
    case cell_short:
      deliver_data(p.world_rank, c.tag, c.body, c.bytes);
      break;
    case cell_eager:
      deliver_data(p.world_rank, c.tag, slot_ptr(p.rx, p.rx_slot_next), c.bytes);
      ++p.rx_slot_next;
      break;
    case cell_rts: {
      RtsBody rts{};
      std::memcpy(&rts, c.body, sizeof(rts));
      deliver_rts(p, c.tag, rts);
      break;
    }
    case cell_cts: {
      CtsBody body{};
      std::memcpy(&body, c.body, sizeof(body));
      if (ReqState* r = find_request(body.send_id)) {
        r->recv_id = body.recv_id;
        r->soffset = 0;
        p.ctrl.push_back(OutItem{OutItem::fragments, r->index, 0, 0});
      }
      break;
    }
    case cell_fin: {
      FinBody body{};
      std::memcpy(&body, c.body, sizeof(body));
      if (ReqState* r = find_request(body.send_id)) finish_rts_send(*r);
      break;
    }
    case cell_frag: {
      FragBody body{};
      std::memcpy(&body, c.body, sizeof(body));
      const std::byte* src = slot_ptr(p.rx, p.rx_slot_next);
      ++p.rx_slot_next;
      ReqState* r = find_request(body.recv_id);
      if (r == nullptr || r->done || body.offset + c.bytes > r->rcap) break;
      std::memcpy(r->rbuf + body.offset, src, c.bytes);
      r->rgot += c.bytes;
      if (r->rgot == r->info.bytes) complete(*r);
      break;
    }
    default:
      TP_ASSERT(false && "corrupt cell kind in shared segment");
  }
}

void Engine::finish_rts_send(ReqState& r) {
  if (r.record >= 0) {
    peers_[static_cast<std::size_t>(r.local_peer)].tx_record_req[r.record] = 0;
    coop_sends_.erase(std::remove(coop_sends_.begin(), coop_sends_.end(), r.index),
                      coop_sends_.end());
    r.record = -1;
  }
  complete(r);
}

// ---- lock-free fast paths (docs/protocols.md, "Fast paths"), next to write_cell and
// return_credits so that the compiler can inline them ----

bool Engine::try_fast_send(int dest, int tag, std::span<const std::byte> data) noexcept {
  const int local = local_of_[static_cast<std::size_t>(dest)];
  if (local < 0) return false;
  ShmPeer& p = peers_[static_cast<std::size_t>(local)];
  // acquire: pairs with the release in ~TxGuard and below; the tx cursors are ours until then.
  if (p.tx_lock.value.exchange(true, std::memory_order_acquire)) return false;
  // A peer that left (its own state word, read-mostly) or a failed world: the general path
  // reports it. Queued messages go first (FIFO per pair).
  const bool ok = !failed_.load(std::memory_order_relaxed) && p.out.empty() &&
                  p.block->state.load(std::memory_order_relaxed) == rank_alive && has_cell(p);
  if (ok) {
    write_cell(p, cell_short, tag, static_cast<std::uint32_t>(data.size()), data.data(),
               data.size());
    // Refresh the credit view now, while the message is in flight, rather than when the cells
    // run out: the credit line's transfer then stays off the next message's critical path.
    if (p.tx_next - 1 - p.tx_cells_seen >= geo_.cells / 2) {
      p.tx_cells_seen = p.tx.credits->cells_consumed.load(std::memory_order_acquire);
    }
  }
  p.tx_lock.value.store(false, std::memory_order_release);
  return ok;
}

void Engine::release_rx(ShmPeer& p) noexcept {
  if (cfg_.sync == SyncMode::poll) {
    // release: our cursor updates happen before the next owner's (or drain's) reads.
    p.rx_owned.value.store(false, std::memory_order_release);
    return;
  }
  // Another thread of ours may have found the channel owned and gone to sleep with a message
  // for it still in the channel. Dekker against its eventcount (wait_until): it bumps
  // `sleepers` (seq_cst), then drains, loading rx_owned (seq_cst); we store rx_owned (seq_cst),
  // then load `sleepers`: either it sees the channel free or we see it and ring.
  p.rx_owned.value.store(false, std::memory_order_seq_cst);
  if (my_block_->sleepers.load(std::memory_order_seq_cst) != 0) ring(*my_block_);
}

bool Engine::try_fast_recv(int source, int tag, std::span<std::byte> buffer, RecvInfo& info) {
  // Only where the general path would do nothing but poll one channel: a known shm source, no
  // earlier receive or buffered message that could take this message first, no protocol work
  // (queued sends, control messages, rendezvous) that a waiting call should progress. block
  // mode sleeps at once, so it never spins here.
  if (cfg_.sync == SyncMode::block || source == rank_) return false;
  const int local = local_of_[static_cast<std::size_t>(source)];
  if (local < 0) return false;
  ShmPeer& p = peers_[static_cast<std::size_t>(local)];
  auto same_tag = [tag](int t) { return tag == any_tag ? t >= 0 : t == tag; };
  {
    std::lock_guard lock(mu_);
    // acquire: the previous owner released the channel (release) after moving the cursors.
    if (failed_ || p.departed || p.rx_owned.value.load(std::memory_order_acquire) ||
        !coop_sends_.empty() || !coop_recvs_.empty()) {
      return false;
    }
    for (const ShmPeer& q : peers_) {
      if (!q.out.empty() || !q.ctrl.empty()) return false;
    }
    for (const std::uint32_t i : posted_) {
      const ReqState& r = *reqs_[i];
      if ((r.peer == any_source || r.peer == source) &&
          (r.tag == any_tag || tag == any_tag || r.tag == tag)) {
        return false;
      }
    }
    for (const UnexpectedMsg& m : unexpected_) {
      if (m.source == source && same_tag(m.tag)) return false;
    }
    // relaxed: published to other threads by the unlock; drain_channel reads it under mu_.
    p.rx_owned.value.store(true, std::memory_order_relaxed);
  }
  // From here on this thread alone reads the channel and moves its rx cursors. The spin touches
  // only the cell line the sender writes; credits go back in batches (return_credits).
  const Cell& c = p.rx.cells[(p.rx_next - 1) & (geo_.cells - 1)];
  const auto want = static_cast<std::uint32_t>(p.rx_next);
  std::uint32_t spins = 0;
  // acquire: pairs with the sender's release (seq_cst) store of seq; makes the cell body and
  // the slot visible. This thread never sleeps, so the eventcount needs no seq_cst here.
  while (c.seq.load(std::memory_order_acquire) != want) {
    if (++spins == fast_recv_spins) {
      release_rx(p);
      return false;  // the general path takes over: liveness checks, progress, sleep
    }
    cpu_relax();
  }
  const bool is_short = c.kind == cell_short;
  if ((!is_short && c.kind != cell_eager) || !same_tag(c.tag) || c.bytes > buffer.size()) {
    // An RTS, a protocol message, another tag or a truncation: drain_channel handles it.
    release_rx(p);
    return false;
  }
  info = RecvInfo{p.world_rank, c.tag, c.bytes};
  if (is_short) {
    copy_cell_payload(buffer.data(), c.body, info.bytes);
  } else {
    std::memcpy(buffer.data(), slot_ptr(p.rx, p.rx_slot_next++), info.bytes);
  }
  ++p.rx_next;
  return_credits(p);
  release_rx(p);
  return true;
}

}  // namespace tp::comm::detail
