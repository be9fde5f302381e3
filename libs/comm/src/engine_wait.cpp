// Engine waits: peer liveness and the progress watchdog, the wait loop of every sync mode, test,
// wait, notification waits, cancellation, the barrier and the blocking send and receive; the
// destructor (it waits for the protocol messages still queued).
#include "engine.hpp"

#include <tilepipe/comm/job_voice.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

namespace tp::comm::detail {

Engine::~Engine() {
  // A failed world under MPI: freeing windows and MPI_Finalize are collective and would wait for
  // the failed peer; the hook aborts the job instead (it does not return).
  if (failed_ && on_abort_ != nullptr) on_abort_();
  // Protocol messages still queued for peers (a FIN or CTS the ring had no credit for) must go
  // out before we depart, or a peer's send would wait for them forever.
  const auto deadline = std::chrono::steady_clock::now() + cfg_.peer_timeout;
  if (!failed_) {
    (void)wait_until(
        [&]() -> std::optional<Status> {
          bool pending = false;
          for (std::size_t i = 0; i < peers_.size(); ++i) {
            if (static_cast<int>(i) != my_local_ && !peers_[i].departed &&
                (!peers_[i].out.empty() || !peers_[i].ctrl.empty())) {
              pending = true;
            }
          }
          if (!pending || std::chrono::steady_clock::now() > deadline) return Status{};
          return std::nullopt;
        },
        no_watchdog);
  }
  if (my_block_ != nullptr) {
    my_block_->state.store(rank_departed, std::memory_order_release);
    for (auto& p : peers_) {
      if (p.block != nullptr) ring(*p.block);
    }
  }
  regions_.clear();
  net_.reset();
  if (on_destroy_ != nullptr) on_destroy_();
}

void Engine::check_liveness(bool force) {
  // The clock costs ~45 ns: look at it only on every 32nd call unless forced (after a sleep).
  if (!force && (++liveness_calls_ & 31U) != 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_liveness_check_) return;
  next_liveness_check_ = now + liveness_interval_;
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    ShmPeer& p = peers_[i];
    if (static_cast<int>(i) == my_local_ || p.departed) continue;
    if (p.block->state.load(std::memory_order_acquire) == rank_departed) {
      p.departed = true;
      continue;
    }
    if (process_exited(p.pidfd.get(), p.pid)) {
      // Re-read: it may have departed cleanly between the two loads.
      p.departed = true;
      if (p.block->state.load(std::memory_order_acquire) != rank_departed && !failed_) {
        failed_ = true;
        failure_ = Error::at(
            rank_, Errc::peer_lost,
            "rank " + std::to_string(p.world_rank) + " (pid " + std::to_string(p.pid) + ") died");
      }
    }
  }
}

Status Engine::request_failure(const ReqState& r) const {
  if (failed_) return Unexpected{failure_};
  auto departed = [&](int world) {
    const int l = local_of_[static_cast<std::size_t>(world)];
    return l >= 0 && peers_[static_cast<std::size_t>(l)].departed &&
           !in_flight_on_link(peers_[static_cast<std::size_t>(l)]);
  };
  if (r.peer == any_source) {
    for (int w = 0; w < size_; ++w) {
      if (w != rank_ && !departed(w)) return {};
    }
    if (size_ == 1) return {};
    return fail_at(rank_, Errc::peer_lost, "receive from any rank: every other rank has exited");
  }
  if (r.peer != rank_ && departed(r.peer)) {
    return fail_at(rank_, Errc::peer_lost,
                   std::string(r.is_send ? "send to" : "receive from") + " rank " +
                       std::to_string(r.peer) +
                       ": that rank exited before the message was matched");
  }
  return {};
}

void Engine::ring(RankBlock& block) noexcept {
  block.bell.fetch_add(1, std::memory_order_release);
  futex_wake_all(block.bell);
}

Error Engine::stall(int awaited) {
  auto name = [&](int world, int pid) {
    return "rank " + std::to_string(world) + (pid > 0 ? " (pid " + std::to_string(pid) + ")" : "");
  };
  std::string who = "any rank";
  if (awaited >= 0 && awaited < size_) {
    const int l = local_of_[static_cast<std::size_t>(awaited)];
    who = name(awaited, l >= 0 ? peers_[static_cast<std::size_t>(l)].pid : 0);
  }
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g",
                std::chrono::duration<double>(cfg_.progress_timeout).count());
  std::string text = "no progress from " + who + " for " + seconds + " s (progress timeout)";
  // The peer waited on may itself wait on a stopped one: name a stopped shm peer when there is.
  std::string stopped;
  for (std::size_t i = 0; i < peers_.size() && stopped.empty(); ++i) {
    const ShmPeer& p = peers_[i];
    if (static_cast<int>(i) != my_local_ && !p.departed && p.pid > 0 && process_stopped(p.pid)) {
      stopped = name(p.world_rank, p.pid);
    }
  }
  // Under a launcher (MPI peers, whose pids the world does not know): a stopped rank of this host.
  if (stopped.empty() && on_abort_ != nullptr) stopped = stopped_job_sibling();
  text += stopped.empty() ? ": it is alive but silent (hung?)" : ": " + stopped + " is stopped";
  Error e = Error::at(rank_, Errc::timeout, std::move(text));
  std::lock_guard lock(mu_);
  if (!failed_) {
    failure_ = e;
    failed_ = true;
  }
  return e;
}

void Engine::abandon(const Error& error) {
  std::lock_guard lock(mu_);
  if (!failed_) {
    failure_ = error.on_rank(rank_);
    failed_ = true;
  }
}

template <class Done>
Status Engine::wait_until(Done&& done, int awaited) {
  using clock = std::chrono::steady_clock;
  const bool can_block = cfg_.sync != SyncMode::poll && my_block_ != nullptr;
  const bool spin_first = cfg_.sync == SyncMode::hybrid;
  // Progress watchdog: the wait's start is taken at its first clock read (never on the latency
  // path of a wait that completes at once).
  const bool watched = awaited != no_watchdog && cfg_.progress_timeout.count() > 0;
  clock::time_point started{};
  const auto stalled = [&](clock::time_point now) {
    if (!watched) return false;
    if (started == clock::time_point{}) started = now;
    return now - started > cfg_.progress_timeout;
  };
  // Clock reads cost ~45 ns here, more than a cache-line transfer: the hot loop reads the clock
  // (liveness, hybrid spin deadline) only every 64 iterations and never before the first poll.
  clock::time_point spin_deadline{};
  std::uint64_t iter = 0;
  std::uint64_t polls = 0;
  while (true) {
    {
      std::lock_guard lock(mu_);
      check_liveness(false);
      progress();
      if (std::optional<Status> s = done()) return std::move(*s);
      if (failed_) return Unexpected{failure_};
    }
    ++iter;
    if (!can_block) {
      cpu_relax();
      // Without a futex to sleep on (a world with only MPI peers) give other threads a turn.
      if (my_block_ == nullptr && iter % 256 == 0) std::this_thread::yield();
      if (++polls % 4096 == 0 && stalled(clock::now())) return Unexpected{stall(awaited)};
      continue;
    }
    if (spin_first) {
      if (iter == 1) {
        spin_deadline = clock::now() + cfg_.spin_ns;
        continue;
      }
      if (iter % 64 != 0) {
        cpu_relax();
        continue;
      }
      const auto now = clock::now();
      if (stalled(now)) return Unexpected{stall(awaited)};
      if (now < spin_deadline) {
        cpu_relax();
        continue;
      }
    }
    // Eventcount sleep (docs/protocols.md, "Sync modes"): announce the sleeper with a seq_cst
    // RMW, then read the bell, then re-check. A sender publishes its cell, issues a seq_cst
    // fence and reads `sleepers`; by the fences, either it sees us and rings, or our re-check
    // sees its cell. A wake-up is therefore never lost; the timeout only bounds liveness checks.
    my_block_->sleepers.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seen = my_block_->bell.load(std::memory_order_seq_cst);
    std::optional<Status> result;
    std::chrono::nanoseconds timeout = liveness_interval_;
    {
      std::lock_guard lock(mu_);
      check_liveness(true);
      if (link_ != nullptr) link_->clear_next_due();
      progress();
      result = done();
      // Emulated link: sleep until the earliest message in flight arrives (hybrid: until spin_ns
      // before it, then poll across it), never spin through the flight time.
      if (link_ != nullptr) {
        timeout =
            link_->sleep_time(timeout, spin_first ? cfg_.spin_ns : std::chrono::nanoseconds(0));
      }
    }
    if (!result && timeout.count() > 0) futex_wait(my_block_->bell, seen, timeout);
    my_block_->sleepers.fetch_sub(1, std::memory_order_relaxed);
    if (result) return std::move(*result);
    if (stalled(clock::now())) return Unexpected{stall(awaited)};
    iter = 0;  // hybrid: spin again after a wake-up, the data is probably there
  }
}

Expected<bool> Engine::test(Request& request, RecvInfo* info) {
  std::lock_guard lock(mu_);
  TP_TRY(check_request(request));
  check_liveness(false);
  progress();
  ReqState& r = *reqs_[request.index_];
  if (!r.done) {
    Status f = request_failure(r);
    if (!f) {
      cancel_locked(request.index_);
      complete_error(r, f.error());
    } else {
      return false;
    }
  }
  auto res = take_result(request);
  if (!res) return Unexpected{res.error()};
  if (info != nullptr) *info = *res;
  return true;
}

Expected<RecvInfo> Engine::wait(Request& request) {
  int peer = any_source;
  {
    std::lock_guard lock(mu_);
    TP_TRY(check_request(request));
    peer = reqs_[request.index_]->peer;
  }
  const std::uint32_t index = request.index_;
  // The result is taken inside done(), under the lock that saw the completion: one lock round
  // less on the latency path.
  std::optional<Expected<RecvInfo>> result;
  Status s = wait_until(
      [&]() -> std::optional<Status> {
        ReqState& r = *reqs_[index];
        if (!r.done) {
          Status f = request_failure(r);
          if (f) return std::nullopt;
          cancel_locked(index);
          complete_error(r, f.error());
        }
        result.emplace(take_result(request));
        return Status{};
      },
      peer);
  if (result) return std::move(*result);
  std::lock_guard lock(mu_);
  cancel_locked(index);
  if (!reqs_[index]->done) complete_error(*reqs_[index], s.error());
  return take_result(request);
}

Expected<std::uint64_t> Engine::wait_notifications(std::uint32_t region, std::uint64_t count,
                                                   std::size_t counter, int source) {
  TP_TRY(notifications(region, counter));
  const int source_local =
      source >= 0 && source < size_ ? local_of_[static_cast<std::size_t>(source)] : -1;
  std::uint64_t seen = 0;
  Status s = wait_until(
      [&]() -> std::optional<Status> {
        auto n = read_notifications(region, *regions_[region], counter);
        if (!n) return Status{Unexpected{n.error()}};
        seen = *n;
        if (seen >= count) return Status{};
        // A notifier that exited cleanly (after an error of its own) will never notify again.
        if (source_local >= 0 && source != rank_ &&
            peers_[static_cast<std::size_t>(source_local)].departed) {
          return Status{fail_at(rank_, Errc::peer_lost,
                                "rank " + std::to_string(source) +
                                    " exited before notifying (counter " + std::to_string(counter) +
                                    " at " + std::to_string(seen) + " of " + std::to_string(count) +
                                    ")")};
        }
        return std::nullopt;
      },
      source >= 0 && source < size_ ? source : any_source);
  if (!s) return Unexpected{s.error()};
  return seen;
}

void Engine::cancel_locked(std::uint32_t index) {
  ReqState& r = *reqs_[index];
  // A cooperative receive must not return while its sender may still write into the buffer:
  // copy the remaining chunks ourselves and wait out a chunk the sender is copying (bounded by
  // one chunk, or by the sender's death).
  while (r.coop != nullptr) {
    advance_coop_recv(r);
    if (r.coop != nullptr) {
      const ShmPeer& p = peers_[static_cast<std::size_t>(r.local_peer)];
      // A failed world (a lost peer, the progress watchdog on a stopped sender) ends the rank:
      // no chunk is waited for any more.
      if (failed_ || process_exited(p.pidfd.get(), p.pid)) {
        r.coop->state.store(record_idle, std::memory_order_relaxed);
        coop_recvs_.erase(std::remove(coop_recvs_.begin(), coop_recvs_.end(), index),
                          coop_recvs_.end());
        r.coop = nullptr;
      }
    }
  }
  posted_.erase(std::remove(posted_.begin(), posted_.end(), index), posted_.end());
  for (auto& p : peers_) {
    TxGuard tx(p);
    for (auto* q : {&p.out, &p.ctrl}) {
      for (auto it = q->begin(); it != q->end();) {
        const bool mine =
            (it->kind == OutItem::message || it->kind == OutItem::fragments) && it->req == index;
        it = mine ? q->erase(it) : it + 1;
      }
    }
  }
}

Status Engine::barrier() {
  // Dissemination barrier: ceil(log2 n) rounds of zero-byte messages on internal tags.
  int round = 0;
  for (int k = 1; k < size_; k *= 2, ++round) {
    const int tag = tag_barrier_base + round;
    auto rq = irecv((rank_ - k + size_) % size_, tag, {});
    if (!rq) return Unexpected{rq.error()};
    TP_TRY(send((rank_ + k) % size_, tag, {}));
    auto got = wait(*rq);
    if (!got) return Unexpected{got.error()};
  }
  return {};
}

Expected<RecvInfo> Engine::recv(int source, int tag, std::span<std::byte> buffer) {
  // The fast receive reads cells directly: not with an emulated link (arrival stamps).
  if (link_ == nullptr && source >= 0 && source < size_ &&
      (tag == any_tag || (tag >= 0 && tag <= max_tag))) {
    RecvInfo info;
    if (try_fast_recv(source, tag, buffer, info)) return info;
  }
  auto rq = irecv(source, tag, buffer);
  if (!rq) return Unexpected{rq.error()};
  return wait(*rq);
}

Status Engine::send(int dest, int tag, std::span<const std::byte> data) {
  // Fast path (never with an emulated link, whose sends need a stamp and a held completion): a
  // short message to an shm peer with nothing queued ahead of it and a free cell is written
  // without the World's lock (the channel's tx lock only); eager messages with credits at hand
  // complete under the lock without a request. Both: one cell write.
  if (link_ == nullptr && dest >= 0 && dest < size_ && dest != rank_ && tag >= min_internal_tag &&
      tag <= max_tag && data.size() <= cfg_.eager_max_bytes) {
    if (data.size() <= cfg_.short_max_bytes && try_fast_send(dest, tag, data)) return {};
    const int local = local_of_[static_cast<std::size_t>(dest)];
    if (local >= 0) {
      std::lock_guard lock(mu_);
      ShmPeer& p = peers_[static_cast<std::size_t>(local)];
      TxGuard tx(p);
      if (!failed_ && !p.departed && p.out.empty() && has_cell(p)) {
        if (data.size() <= cfg_.short_max_bytes) {
          write_cell(p, cell_short, tag, static_cast<std::uint32_t>(data.size()), data.data(),
                     data.size());
          return {};
        }
        if (!rendezvous_from_world(data.data(), data.size()) && has_slot(p)) {
          std::memcpy(slot_ptr(p.tx, p.tx_slot_next), data.data(), data.size());
          ++p.tx_slot_next;
          write_cell(p, cell_eager, tag, static_cast<std::uint32_t>(data.size()), nullptr, 0);
          return {};
        }
      }
    }
  }
  auto rq = isend(dest, tag, data);
  if (!rq) return Unexpected{rq.error()};
  auto got = wait(*rq);
  if (!got) return Unexpected{got.error()};
  return {};
}

}  // namespace tp::comm::detail
