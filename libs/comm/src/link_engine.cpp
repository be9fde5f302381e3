// The Engine's emulated-link pieces: setup and put (docs/protocols.md, "Emulated link").
#include "engine.hpp"

#include <algorithm>
#include <cstring>

namespace tp::comm::detail {

Status Engine::setup_link() {
  if (!cfg_.link.enabled) return {};
  for (int w = 0; w < size_; ++w) {
    if (w != rank_ && local_of_[static_cast<std::size_t>(w)] < 0) {
      Error e = Error::about(
          "link", Errc::invalid_argument,
          to_string(cfg_.link) +
              ": the link is emulated between ranks of one host (shared memory), but rank " +
              std::to_string(w) + " is reached through MPI");
      return Unexpected{e.on_rank(rank_)};
    }
  }
  // The arrival stamp takes the last 8 bytes of a cell's body; rendezvous data is then moved by
  // the receiver alone (cma), as a DMA engine would, once the RTS has arrived.
  cfg_.short_max_bytes = std::min(cfg_.short_max_bytes, link_stamp_offset);
  if (cfg_.rendezvous == RendezvousMode::automatic) cfg_.cma_min_bytes = 0;
  link_ = std::make_unique<LinkEmulator>(cfg_.link, size_);
  return {};
}

void Engine::complete_send(ReqState& r) {
  if (link_ == nullptr || link_->last_done_ns() <= link_now_ns()) {
    complete(r);
    return;
  }
  link_->hold_send(id_of(r.index), link_->last_done_ns());
}

void Engine::complete_link_sends() {
  link_->release_due([this](std::uint64_t id) {
    // A request that failed (or was waited out) meanwhile is gone or reused: the id says so.
    if (ReqState* r = find_request(id); r != nullptr && !r->done) complete(*r);
  });
}

bool Engine::in_flight_on_link(const ShmPeer& p) const noexcept {
  if (link_ == nullptr || p.rx.cells == nullptr) return false;
  const Cell& c = p.rx.cells[(p.rx_next - 1) & (geo_.cells - 1)];
  return c.seq.load(std::memory_order_acquire) == static_cast<std::uint32_t>(p.rx_next);
}

}  // namespace tp::comm::detail
