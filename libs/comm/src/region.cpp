// One-sided regions: memfd per rank, mapped by the shm peers, MPI window for the others.
#include "engine.hpp"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <optional>

namespace tp::comm::detail {

namespace {

/// What every rank tells the others about its part of a region.
struct RegionDescriptor {
  std::uint64_t bytes;
  std::uint64_t counters;
  std::int32_t pid;
  std::int32_t fd;
};

std::atomic<std::uint64_t>& counter_at(std::byte* base, std::size_t counter) noexcept {
  return reinterpret_cast<RegionHeader*>(base + counter * cache_line)->count;
}

}  // namespace

std::size_t region_header_bytes(std::size_t counters) noexcept {
  return page_round(counters * cache_line);
}

Expected<std::span<std::byte>> Engine::create_region(std::size_t bytes, std::size_t counters,
                                                     std::uint32_t& id) {
  if (counters < 1 || counters > max_region_counters) {
    return fail_at(rank_, Errc::invalid_argument,
                   "a region has 1.." + std::to_string(max_region_counters) +
                       " notification counters, not " + std::to_string(counters));
  }
  const std::size_t header = region_header_bytes(counters);
  auto state = std::make_unique<RegionState>();
  auto fd = create_shared_file("tilepipe-region", header + page_round(bytes));
  if (!fd) return Unexpected{fd.error().on_rank(rank_)};
  auto map = map_shared(*fd, header + page_round(bytes));
  if (!map) return Unexpected{map.error().on_rank(rank_)};
  state->local = std::move(*map);
  state->bytes = bytes;
  state->sizes.assign(static_cast<std::size_t>(size_), 0);
  state->counters.assign(static_cast<std::size_t>(size_), 0);
  state->peer_maps.resize(static_cast<std::size_t>(size_));

  // All-to-all exchange of descriptors on an internal tag (FIFO per pair keeps calls apart).
  const RegionDescriptor mine{bytes, counters, static_cast<std::int32_t>(::getpid()), fd->get()};
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
    state->counters[static_cast<std::size_t>(w)] = d.counters;
    if (w == rank_ || local_of_[static_cast<std::size_t>(w)] < 0) continue;
    auto pfd = open_peer_file(d.pid, d.fd);
    if (!pfd) {
      Error e = pfd.error();
      if (e.code == Errc::peer_lost) {  // an aborting job: the rank that saw why says it
        e.message = "rank " + std::to_string(w) + " (pid " + std::to_string(d.pid) +
                    ") ended before this rank mapped its shared region: " + e.message;
      }
      return Unexpected{e.on_rank(rank_)};
    }
    auto pmap = map_shared(*pfd, region_header_bytes(d.counters) + page_round(d.bytes));
    if (!pmap) return Unexpected{pmap.error().on_rank(rank_)};
    state->peer_maps[static_cast<std::size_t>(w)] = std::move(*pmap);
  }
  if (net_ != nullptr) {
    std::lock_guard lock(mu_);
    auto win = net_->create_window(state->local.data() + header, bytes);
    if (!win) return Unexpected{win.error().on_rank(rank_)};
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

Expected<RegionState*> Engine::find_region(std::uint32_t region, const char* what) {
  std::lock_guard lock(mu_);
  if (region >= regions_.size()) {
    return fail_at(rank_, Errc::invalid_argument,
                   std::string(what) + ": region " + std::to_string(region) +
                       " does not exist (this world has " + std::to_string(regions_.size()) +
                       " regions)");
  }
  return regions_[region].get();
}

Status Engine::bump_notification(std::uint32_t region, RegionState& rs, int target,
                                 std::size_t counter, std::size_t bytes) {
  const int local = local_of_[static_cast<std::size_t>(target)];
  if (link_ != nullptr && target != rank_ && local >= 0) {
    // The notice is a message on the emulated link, charged the bytes it announces.
    const LinkPutNotice notice{region, static_cast<std::uint32_t>(counter), bytes};
    return send(target, tag_link_put, std::as_bytes(std::span(&notice, 1)));
  }
  if (target == rank_ || local >= 0) {
    std::byte* base =
        target == rank_ ? rs.local.data() : rs.peer_maps[static_cast<std::size_t>(target)].data();
    // seq_cst RMW (release would do for the data): the stores this thread made before (put data
    // or direct stores into peer_memory) are visible to an owner that loads the new count;
    // seq_cst also orders it before the sleepers load below.
    counter_at(base, counter).fetch_add(1, std::memory_order_seq_cst);
    RankBlock* block = target == rank_ ? my_block_ : peers_[static_cast<std::size_t>(local)].block;
    if (block != nullptr && cfg_.sync != SyncMode::poll &&
        block->sleepers.load(std::memory_order_seq_cst) != 0) {
      ring(*block);
    }
    return {};
  }
  if (counter != 0) {
    return fail_at(rank_, Errc::invalid_argument,
                   "notify counter " + std::to_string(counter) + " of rank " +
                       std::to_string(target) +
                       ": over the network only counter 0 exists (rank is not on shared memory)");
  }
  std::lock_guard lock(mu_);
  auto s = net_->put(rs.net_window, target, 0, nullptr, 0, true);
  if (!s) return Unexpected{s.error().on_rank(rank_)};
  return {};
}

Status Engine::put(std::uint32_t region, int target, std::size_t offset,
                   std::span<const std::byte> data, bool notify) {
  auto found = find_region(region, "put");
  if (!found) return Unexpected{found.error()};
  RegionState* rs = *found;
  if (target < 0 || target >= size_) {
    return fail_at(
        rank_, Errc::invalid_argument,
        "put to rank " + std::to_string(target) + ": ranks are 0.." + std::to_string(size_ - 1));
  }
  const std::size_t cap = rs->sizes[static_cast<std::size_t>(target)];
  if (offset > cap || data.size() > cap - offset) {
    return fail_at(rank_, Errc::out_of_range,
                   "put of " + std::to_string(data.size()) + " bytes at offset " +
                       std::to_string(offset) + " into rank " + std::to_string(target) +
                       "'s region " + std::to_string(region) + " of " + std::to_string(cap) +
                       " bytes");
  }
  if (auto mem = peer_memory(region, target); target == rank_ || mem) {
    std::byte* dst = target == rank_
                         ? rs->local.data() + region_header_bytes(rs->counters[std::size_t(rank_)])
                         : mem->data();
    if (!data.empty()) std::memcpy(dst + offset, data.data(), data.size());
    if (notify) return bump_notification(region, *rs, target, 0, data.size());
    if (link_ != nullptr && target != rank_) {
      // The bytes land at once (nobody reads them before a notification) but occupy the link.
      std::lock_guard lock(mu_);
      (void)link_->depart(target, data.size());
    }
    return {};
  }
  std::lock_guard lock(mu_);
  auto s = net_->put(rs->net_window, target, offset, data.data(), data.size(), notify);
  if (!s) return Unexpected{s.error().on_rank(rank_)};
  return {};
}

std::optional<std::span<std::byte>> Engine::peer_memory(std::uint32_t region, int target) {
  if (target < 0 || target >= size_ || target == rank_) return std::nullopt;
  if (local_of_[static_cast<std::size_t>(target)] < 0) return std::nullopt;
  auto found = find_region(region, "peer_memory");
  if (!found) return std::nullopt;
  RegionState& rs = **found;
  const auto t = static_cast<std::size_t>(target);
  return std::span<std::byte>(rs.peer_maps[t].data() + region_header_bytes(rs.counters[t]),
                              rs.sizes[t]);
}

Status Engine::notify(std::uint32_t region, int target, std::size_t counter) {
  auto found = find_region(region, "notify");
  if (!found) return Unexpected{found.error()};
  if (target < 0 || target >= size_) {
    return fail_at(
        rank_, Errc::invalid_argument,
        "notify rank " + std::to_string(target) + ": ranks are 0.." + std::to_string(size_ - 1));
  }
  const std::size_t have = (*found)->counters[static_cast<std::size_t>(target)];
  if (counter >= have) {
    return fail_at(rank_, Errc::out_of_range,
                   "notify counter " + std::to_string(counter) + " of rank " +
                       std::to_string(target) + ": its part of region " + std::to_string(region) +
                       " has " + std::to_string(have) + " counters");
  }
  return bump_notification(region, **found, target, counter, 0);
}

Expected<std::uint64_t> Engine::read_notifications(std::uint32_t region, RegionState& rs,
                                                   std::size_t counter) {
  std::uint64_t n = counter_at(rs.local.data(), counter).load(std::memory_order_seq_cst);
  if (link_ != nullptr) n += link_->notices(region, counter);
  if (rs.net_window >= 0 && counter == 0) {
    auto m = net_->notifications(rs.net_window);
    if (!m) return Unexpected{m.error().on_rank(rank_)};
    n += *m;
  }
  return n;
}

Expected<std::uint64_t> Engine::notifications(std::uint32_t region, std::size_t counter) {
  auto found = find_region(region, "notifications");
  if (!found) return Unexpected{found.error()};
  const std::size_t have = (*found)->counters[static_cast<std::size_t>(rank_)];
  if (counter >= have) {
    return fail_at(rank_, Errc::out_of_range,
                   "notification counter " + std::to_string(counter) + " of region " +
                       std::to_string(region) + ": this rank has " + std::to_string(have) +
                       " counters");
  }
  std::lock_guard lock(mu_);
  return read_notifications(region, **found, counter);
}

}  // namespace tp::comm::detail
