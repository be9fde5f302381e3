// One-sided regions: memfd per rank, mapped by the shm peers, MPI window for the others.
#include "engine.hpp"

#include <unistd.h>

#include <cstring>
#include <optional>

namespace tp::comm::detail {

namespace {

/// What every rank tells the others about its part of a region.
struct RegionDescriptor {
  std::uint64_t bytes;
  std::int32_t pid;
  std::int32_t fd;
};

std::string rank_prefix(int rank) {
  return "[rank " + std::to_string(rank) + "] ";
}

}  // namespace

Expected<std::span<std::byte>> Engine::create_region(std::size_t bytes, std::uint32_t& id) {
  const std::size_t header = page_round(1);
  auto state = std::make_unique<RegionState>();
  auto fd = create_shared_file("tilepipe-region", header + page_round(bytes));
  if (!fd) return fail(fd.error().code, rank_prefix(rank_) + fd.error().message);
  auto map = map_shared(*fd, header + page_round(bytes));
  if (!map) return fail(map.error().code, rank_prefix(rank_) + map.error().message);
  state->local = std::move(*map);
  state->bytes = bytes;
  state->sizes.assign(static_cast<std::size_t>(size_), 0);
  state->peer_maps.resize(static_cast<std::size_t>(size_));

  // All-to-all exchange of descriptors on an internal tag (FIFO per pair keeps calls apart).
  const RegionDescriptor mine{bytes, static_cast<std::int32_t>(::getpid()), fd->get()};
  std::vector<RegionDescriptor> all(static_cast<std::size_t>(size_));
  std::vector<Request> pending;
  for (int w = 0; w < size_; ++w) {
    if (w == rank_) continue;
    auto rq = irecv(w, tag_region, std::as_writable_bytes(std::span(&all[std::size_t(w)], 1)));
    if (!rq) return Unexpected{rq.error()};
    pending.push_back(std::move(*rq));
  }
  for (int w = 0; w < size_; ++w) {
    if (w == rank_) continue;
    TP_TRY(send(w, tag_region, std::as_bytes(std::span(&mine, 1))));
  }
  for (auto& rq : pending) {
    auto got = wait(rq);
    if (!got) return Unexpected{got.error()};
  }
  all[static_cast<std::size_t>(rank_)] = mine;
  for (int w = 0; w < size_; ++w) {
    const auto& d = all[static_cast<std::size_t>(w)];
    state->sizes[static_cast<std::size_t>(w)] = d.bytes;
    if (w == rank_ || local_of_[static_cast<std::size_t>(w)] < 0) continue;
    auto pfd = open_peer_file(d.pid, d.fd);
    if (!pfd) return fail(pfd.error().code, rank_prefix(rank_) + pfd.error().message);
    auto pmap = map_shared(*pfd, header + page_round(d.bytes));
    if (!pmap) return fail(pmap.error().code, rank_prefix(rank_) + pmap.error().message);
    state->peer_maps[static_cast<std::size_t>(w)] = std::move(*pmap);
  }
  if (net_ != nullptr) {
    std::lock_guard lock(mu_);
    auto win = net_->create_window(state->local.data() + header, bytes);
    if (!win) return fail(win.error().code, rank_prefix(rank_) + win.error().message);
    state->net_window = *win;
  }
  // Every peer has opened our memfd once the barrier is passed; `fd` may close then.
  TP_TRY(barrier());
  std::lock_guard lock(mu_);
  id = static_cast<std::uint32_t>(regions_.size());
  std::span<std::byte> local(state->local.data() + header, bytes);
  regions_.push_back(std::move(state));
  return local;
}

Status Engine::put(std::uint32_t region, int target, std::size_t offset,
                   std::span<const std::byte> data, bool notify) {
  RegionState* rs = nullptr;
  {
    std::lock_guard lock(mu_);
    if (region >= regions_.size()) {
      return fail(Errc::invalid_argument, rank_prefix(rank_) + "put: region " +
                                              std::to_string(region) +
                                              " does not exist (this world has " +
                                              std::to_string(regions_.size()) + " regions)");
    }
    rs = regions_[region].get();
  }
  if (target < 0 || target >= size_) {
    return fail(Errc::invalid_argument, rank_prefix(rank_) + "put to rank " +
                                            std::to_string(target) + ": ranks are 0.." +
                                            std::to_string(size_ - 1));
  }
  const std::size_t cap = rs->sizes[static_cast<std::size_t>(target)];
  if (offset > cap || data.size() > cap - offset) {
    return fail(Errc::out_of_range,
                rank_prefix(rank_) + "put of " + std::to_string(data.size()) + " bytes at offset " +
                    std::to_string(offset) + " into rank " + std::to_string(target) + "'s region " +
                    std::to_string(region) + " of " + std::to_string(cap) + " bytes");
  }
  const std::size_t header = page_round(1);
  const int local = local_of_[static_cast<std::size_t>(target)];
  if (link_ != nullptr && local >= 0 && target != rank_) {
    return put_over_link(*rs, region, target, offset, data, notify);
  }
  if (target == rank_ || local >= 0) {
    std::byte* base =
        target == rank_ ? rs->local.data() : rs->peer_maps[static_cast<std::size_t>(target)].data();
    if (!data.empty()) std::memcpy(base + header + offset, data.data(), data.size());
    if (notify) {
      auto* h = reinterpret_cast<RegionHeader*>(base);
      // seq_cst RMW (release would do for the data): the data written above is visible to an
      // owner that loads the new count; seq_cst also orders it before the sleepers load below.
      h->count.fetch_add(1, std::memory_order_seq_cst);
      RankBlock* block =
          target == rank_ ? my_block_ : peers_[static_cast<std::size_t>(local)].block;
      if (block != nullptr && cfg_.sync != SyncMode::poll &&
          block->sleepers.load(std::memory_order_seq_cst) != 0) {
        ring(*block);
      }
    }
    return {};
  }
  std::lock_guard lock(mu_);
  auto s = net_->put(rs->net_window, target, offset, data.data(), data.size(), notify);
  if (!s) return fail(s.error().code, rank_prefix(rank_) + s.error().message);
  return {};
}

Expected<std::uint64_t> Engine::notifications(std::uint32_t region) {
  std::lock_guard lock(mu_);
  if (region >= regions_.size()) {
    return fail(Errc::invalid_argument,
                rank_prefix(rank_) + "region " + std::to_string(region) + " does not exist");
  }
  RegionState& rs = *regions_[region];
  std::uint64_t n =
      reinterpret_cast<RegionHeader*>(rs.local.data())->count.load(std::memory_order_seq_cst);
  if (link_ != nullptr) n += link_->notices(region);
  if (rs.net_window >= 0) {
    auto m = net_->notifications(rs.net_window);
    if (!m) return fail(m.error().code, rank_prefix(rank_) + m.error().message);
    n += *m;
  }
  return n;
}

}  // namespace tp::comm::detail
