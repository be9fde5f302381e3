// Engine core: setup, the request pool, tag matching, delivery and progress (the waits, the
// liveness and progress watchdogs and the blocking calls are in engine_wait.cpp).
#include "engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

namespace tp::comm::detail {

TxGuard::TxGuard(ShmPeer& p) noexcept : p_(p) {
  // acquire/release: the tx cursors and queues move between the holders in order.
  while (p_.tx_lock.value.exchange(true, std::memory_order_acquire)) cpu_relax();
}

TxGuard::~TxGuard() {
  p_.tx_lock.value.store(false, std::memory_order_release);
}

SegmentGeometry geometry_for(const Config& config, int ranks) noexcept {
  SegmentGeometry g;
  g.ranks = static_cast<std::uint32_t>(ranks);
  g.cells = config.cells_per_channel;
  g.slots = config.slots_per_channel;
  g.slot_bytes = config.slot_bytes;
  return g;
}

void init_segment(std::byte* base, const SegmentGeometry& geo) noexcept {
  auto* h = reinterpret_cast<SegmentHeader*>(base);
  h->magic = segment_magic;
  h->ranks = geo.ranks;
  h->cells = geo.cells;
  h->slots = geo.slots;
  h->slot_bytes = geo.slot_bytes;
  h->channel_bytes = geo.channel_bytes();
}

Engine::Engine(const Config& config, int rank, int size) : cfg_(config), rank_(rank), size_(size) {
  liveness_interval_ = std::clamp<std::chrono::nanoseconds>(
      cfg_.peer_timeout / 10, std::chrono::milliseconds(1), std::chrono::milliseconds(100));
}

Expected<std::unique_ptr<Engine>> Engine::create(const Config& config, int rank, int size,
                                                 Mapping segment, std::vector<int> local_ranks,
                                                 std::unique_ptr<Net> net) {
  TP_TRY(config.validate());
  std::unique_ptr<Engine> e(new Engine(config, rank, size));
  e->net_ = std::move(net);
  e->local_of_.assign(static_cast<std::size_t>(size), -1);
  e->rndv_ = config.rendezvous;
  e->cma_ok_ = e->rndv_ != RendezvousMode::copy;
  if (!local_ranks.empty()) {
    auto* header = reinterpret_cast<SegmentHeader*>(segment.data());
    if (header->magic != segment_magic || header->ranks != local_ranks.size()) {
      return fail_at(rank, Errc::internal, "shared segment header does not match");
    }
    e->geo_ = geometry_for(config, static_cast<int>(local_ranks.size()));
    if (e->geo_.channel_bytes() != header->channel_bytes) {
      return fail_at(rank, Errc::invalid_argument,
                     "ranks were started with different comm configurations");
    }
    e->segment_ = std::move(segment);
    std::byte* base = e->segment_.data();
    const auto n = static_cast<std::uint32_t>(local_ranks.size());
    e->peers_.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      e->local_of_[static_cast<std::size_t>(local_ranks[i])] = static_cast<int>(i);
      if (local_ranks[i] == rank) e->my_local_ = static_cast<int>(i);
    }
    TP_ASSERT(e->my_local_ >= 0);
    const auto me = static_cast<std::uint32_t>(e->my_local_);
    auto* blocks = reinterpret_cast<RankBlock*>(base + e->geo_.rank_blocks_offset());
    e->my_block_ = &blocks[me];
    auto view = [&](std::uint32_t src, std::uint32_t dst) {
      std::byte* c = base + e->geo_.channel_offset(src, dst);
      ChannelView v;
      v.credits = reinterpret_cast<ChannelCredits*>(c);
      c += sizeof(ChannelCredits);
      v.records = reinterpret_cast<RendezvousRecord*>(c);
      c += rendezvous_records * sizeof(RendezvousRecord);
      v.cells = reinterpret_cast<Cell*>(c);
      v.slots = c + std::size_t{e->geo_.cells} * sizeof(Cell);
      return v;
    };
    for (std::uint32_t i = 0; i < n; ++i) {
      ShmPeer& p = e->peers_[i];
      p.world_rank = local_ranks[i];
      p.block = &blocks[i];
      if (i == me) continue;
      p.tx = view(me, i);
      p.rx = view(i, me);
    }
    // Startup handshake: publish our pid, then wait (bounded) until every local peer has.
    e->my_block_->pid.store(static_cast<std::int32_t>(::getpid()), std::memory_order_relaxed);
    e->my_block_->state.store(rank_alive, std::memory_order_release);
    const auto deadline = std::chrono::steady_clock::now() + config.peer_timeout;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (i == me) continue;
      ShmPeer& p = e->peers_[i];
      while (p.block->state.load(std::memory_order_acquire) == rank_starting) {
        if (std::chrono::steady_clock::now() > deadline) {
          return fail_at(rank, Errc::peer_lost,
                         "rank " + std::to_string(p.world_rank) + " did not start within " +
                             std::to_string(config.peer_timeout.count()) + " ms");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      p.pid = p.block->pid.load(std::memory_order_relaxed);
      p.pidfd = Fd(open_pidfd(p.pid));
    }
  }
  TP_TRY(e->setup_link());
  e->next_liveness_check_ = std::chrono::steady_clock::now() + e->liveness_interval_;
  return e;
}

std::string_view Engine::transport_to(int peer) const noexcept {
  if (peer == rank_) return "self";
  if (peer < 0 || peer >= size_) return "none";
  return local_of_[static_cast<std::size_t>(peer)] >= 0 ? "shm" : "mpi";
}

// ---- request pool ----

std::uint32_t Engine::alloc_request() {
  std::uint32_t index = 0;
  if (!free_reqs_.empty()) {
    index = free_reqs_.back();
    free_reqs_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(reqs_.size());
    reqs_.push_back(std::make_unique<ReqState>());
  }
  ReqState& r = *reqs_[index];
  const std::uint32_t gen = r.generation;
  r = ReqState{};
  r.generation = gen;
  r.index = index;
  r.in_use = true;
  return index;
}

void Engine::release_request(std::uint32_t index) {
  ReqState& r = *reqs_[index];
  r.in_use = false;
  ++r.generation;
  free_reqs_.push_back(index);
}

std::uint64_t Engine::id_of(std::uint32_t index) const {
  return (std::uint64_t{reqs_[index]->generation} << 32) | index;
}

ReqState* Engine::find_request(std::uint64_t id) {
  const auto index = static_cast<std::uint32_t>(id & 0xffffffffU);
  if (index >= reqs_.size()) return nullptr;
  ReqState& r = *reqs_[index];
  if (!r.in_use || r.generation != static_cast<std::uint32_t>(id >> 32)) return nullptr;
  return &r;
}

void Engine::complete(ReqState& r) {
  r.done = true;
  // Another thread of this process may sleep waiting for exactly this request.
  if (my_block_ != nullptr && cfg_.sync != SyncMode::poll &&
      my_block_->sleepers.load(std::memory_order_relaxed) != 0) {
    ring(*my_block_);
  }
}

void Engine::complete_error(ReqState& r, Error error) {
  r.has_error = true;
  r.error = std::move(error);
  complete(r);
}

Error Engine::truncation_error(int source, int tag, std::size_t bytes, std::size_t capacity) const {
  return Error::at(rank_, Errc::out_of_range,
                   "message of " + std::to_string(bytes) + " bytes from rank " +
                       std::to_string(source) + " (tag " + std::to_string(tag) +
                       ") does not fit the receive buffer of " + std::to_string(capacity) +
                       " bytes");
}

Status Engine::check_request(const Request& request) const {
  if (request.engine_ != this || request.index_ >= reqs_.size() || !reqs_[request.index_]->in_use ||
      reqs_[request.index_]->generation != request.generation_) {
    return fail_at(rank_, Errc::invalid_argument, "request is not active in this world");
  }
  return {};
}

Expected<RecvInfo> Engine::take_result(Request& request) {
  ReqState& r = *reqs_[request.index_];
  RecvInfo info = r.info;
  const bool err = r.has_error;
  Error e = err ? r.error : Error{};
  release_request(request.index_);
  request.engine_ = nullptr;
  if (err) return Unexpected{std::move(e)};
  return info;
}

// ---- posting ----

Expected<Request> Engine::isend(int dest, int tag, std::span<const std::byte> data) {
  if (dest < 0 || dest >= size_) {
    return fail_at(
        rank_, Errc::invalid_argument,
        "send to rank " + std::to_string(dest) + ": ranks are 0.." + std::to_string(size_ - 1));
  }
  if (tag < min_internal_tag || tag > max_tag) {
    return fail_at(rank_, Errc::invalid_argument,
                   "send tag " + std::to_string(tag) + ": tags are 0.." + std::to_string(max_tag));
  }
  std::lock_guard lock(mu_);
  return post_send(dest, tag, data);
}

Expected<Request> Engine::irecv(int source, int tag, std::span<std::byte> buffer) {
  if (source != any_source && (source < 0 || source >= size_)) {
    return fail_at(rank_, Errc::invalid_argument,
                   "receive from rank " + std::to_string(source) + ": ranks are 0.." +
                       std::to_string(size_ - 1) + " or any_source");
  }
  if (tag != any_tag && (tag < min_internal_tag || tag > max_tag)) {
    return fail_at(rank_, Errc::invalid_argument,
                   "receive tag " + std::to_string(tag) + ": tags are 0.." +
                       std::to_string(max_tag) + " or any_tag");
  }
  std::lock_guard lock(mu_);
  return post_recv(source, tag, buffer);
}

Expected<Request> Engine::post_send(int dest, int tag, std::span<const std::byte> data) {
  if (failed_) return Unexpected{failure_};
  const std::uint32_t index = alloc_request();
  ReqState& r = *reqs_[index];
  r.is_send = true;
  r.peer = dest;
  r.tag = tag;
  r.sbuf = data.data();
  r.sbytes = data.size();
  Request handle(this, index, r.generation);
  if (dest == rank_) {
    deliver_data(rank_, tag, data.data(), data.size());
    complete(r);
    return handle;
  }
  const int local = local_of_[static_cast<std::size_t>(dest)];
  if (local >= 0) {
    ShmPeer& p = peers_[static_cast<std::size_t>(local)];
    if (p.departed) {
      complete_error(r,
                     Error::at(rank_, Errc::peer_lost,
                               "send to rank " + std::to_string(dest) + ": that rank has exited"));
      return handle;
    }
    TxGuard tx(p);
    if (!p.out.empty() || !try_start_send(p, r, index)) {
      p.out.push_back(OutItem{OutItem::message, index, 0, 0});
    }
    return handle;
  }
  TP_ASSERT(net_ != nullptr);
  auto h = net_->isend(dest, tag, data.data(), data.size());
  if (!h) {
    complete_error(r, h.error().on_rank(rank_));
  } else {
    r.net_handle = *h;
  }
  return handle;
}

Expected<Request> Engine::post_recv(int source, int tag, std::span<std::byte> buffer) {
  if (failed_) return Unexpected{failure_};
  const std::uint32_t index = alloc_request();
  ReqState& r = *reqs_[index];
  r.peer = source;
  r.tag = tag;
  r.rbuf = buffer.data();
  r.rcap = buffer.size();
  Request handle(this, index, r.generation);
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
    if (!matches(r, it->source, it->tag)) continue;
    UnexpectedMsg m = std::move(*it);
    unexpected_.erase(it);
    r.info = RecvInfo{m.source, m.tag, m.bytes};
    if (m.is_rts) {
      ShmPeer& p = peers_[static_cast<std::size_t>(local_of_[static_cast<std::size_t>(m.source)])];
      start_rendezvous(r, p, m.tag, m.rts);
    } else if (m.is_net) {
      accept_net(r, NetIncoming{m.source, m.tag, m.bytes, m.net_message});
    } else if (m.bytes > r.rcap) {
      complete_error(r, truncation_error(m.source, m.tag, m.bytes, r.rcap));
    } else {
      if (m.bytes > 0) std::memcpy(r.rbuf, m.data.data(), m.bytes);
      complete(r);
    }
    return handle;
  }
  posted_.push_back(index);
  return handle;
}

// ---- matching ----

bool Engine::matches(const ReqState& r, int source, int tag) const noexcept {
  if (r.peer != any_source && r.peer != source) return false;
  if (r.tag == any_tag) return tag >= 0;  // any_tag never matches library-internal traffic
  return r.tag == tag;
}

ReqState* Engine::match_posted(int source, int tag) {
  for (auto it = posted_.begin(); it != posted_.end(); ++it) {
    ReqState& r = *reqs_[*it];
    if (matches(r, source, tag)) {
      posted_.erase(it);
      r.info = RecvInfo{source, tag, 0};
      return &r;
    }
  }
  return nullptr;
}

void Engine::deliver_data(int source, int tag, const std::byte* data, std::size_t bytes) {
  if (tag == tag_link_put) {  // a put's notification, delivered at its arrival time
    link_->on_put_notice(data, bytes);
    return;
  }
  if (ReqState* r = match_posted(source, tag)) {
    r->info.bytes = bytes;
    if (bytes > r->rcap) {
      complete_error(*r, truncation_error(source, tag, bytes, r->rcap));
      return;
    }
    if (bytes > 0) std::memcpy(r->rbuf, data, bytes);
    complete(*r);
    return;
  }
  UnexpectedMsg m;
  m.source = source;
  m.tag = tag;
  m.bytes = bytes;
  m.data.assign(data, data + bytes);
  unexpected_.push_back(std::move(m));
}

void Engine::deliver_rts(ShmPeer& peer, int tag, const RtsBody& rts) {
  if (ReqState* r = match_posted(peer.world_rank, tag)) {
    start_rendezvous(*r, peer, tag, rts);
    return;
  }
  UnexpectedMsg m;
  m.source = peer.world_rank;
  m.tag = tag;
  m.bytes = rts.total_bytes;
  m.is_rts = true;
  m.rts = rts;
  unexpected_.push_back(std::move(m));
}

void Engine::deliver_net(const NetIncoming& in) {
  if (ReqState* r = match_posted(in.source, in.tag)) {
    accept_net(*r, in);
    return;
  }
  UnexpectedMsg m;
  m.source = in.source;
  m.tag = in.tag;
  m.bytes = in.bytes;
  m.is_net = true;
  m.net_message = in.message;
  unexpected_.push_back(std::move(m));
}

void Engine::accept_net(ReqState& r, const NetIncoming& in) {
  r.info = RecvInfo{in.source, in.tag, in.bytes};
  if (in.bytes > r.rcap) {
    auto s = net_->discard(in.message, in.bytes);
    complete_error(r, s ? truncation_error(in.source, in.tag, in.bytes, r.rcap) : s.error());
    return;
  }
  auto h = net_->receive(in.message, r.rbuf, in.bytes);
  if (!h) {
    complete_error(r, h.error().on_rank(rank_));
    return;
  }
  r.net_handle = *h;
}

// ---- progress and waits ----

void Engine::progress() {
  if (link_ != nullptr) complete_link_sends();
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    if (static_cast<int>(i) == my_local_) continue;
    ShmPeer& p = peers_[i];
    drain_channel(p);
    if (!p.out.empty() || !p.ctrl.empty()) flush_out(p);
  }
  if (!coop_sends_.empty()) advance_coop_sends();
  for (std::size_t k = coop_recvs_.size(); k-- > 0;) {
    if (k < coop_recvs_.size()) advance_coop_recv(*reqs_[coop_recvs_[k]]);
  }
  if (net_ == nullptr) return;
  NetIncoming in;
  while (true) {
    auto got = net_->probe(in);
    if (!got) {
      failed_ = true;
      failure_ = got.error().on_rank(rank_);
      return;
    }
    if (!*got) break;
    deliver_net(in);
  }
  for (auto& rp : reqs_) {
    ReqState& r = *rp;
    if (!r.in_use || r.done || r.net_handle < 0) continue;
    auto t = net_->test(r.net_handle);
    if (!t) {
      r.net_handle = -1;
      complete_error(r, t.error().on_rank(rank_));
    } else if (*t) {
      r.net_handle = -1;
      complete(r);
    }
  }
}

}  // namespace tp::comm::detail
