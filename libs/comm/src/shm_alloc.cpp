// World::allocate: memory in memfds that shm peers map, so a rendezvous is one user-level copy.
#include "engine.hpp"

#include <unistd.h>

namespace tp::comm::detail {

namespace {

/// Largest single allocation (bytes): far above any message, below what mmap could ever map.
constexpr std::size_t max_allocation_bytes = std::size_t{1} << 40;

}  // namespace

Expected<std::span<std::byte>> Engine::allocate(std::size_t bytes) {
  if (bytes == 0 || bytes > max_allocation_bytes) {
    return fail_at(rank_, Errc::invalid_argument,
                   "allocate(" + std::to_string(bytes) + " bytes): sizes are 1.." +
                       std::to_string(max_allocation_bytes));
  }
  const std::size_t mapped = page_round(bytes);
  auto fd = create_shared_file("tilepipe-alloc", mapped);
  if (!fd) return Unexpected{fd.error().on_rank(rank_)};
  auto map = map_shared(*fd, mapped);
  if (!map) return Unexpected{map.error().on_rank(rank_)};
  std::span<std::byte> out(map->data(), bytes);
  std::lock_guard lock(mu_);
  allocs_.push_back(SharedAlloc{std::move(*fd), std::move(*map)});
  return out;
}

bool Engine::find_alloc(const std::byte* data, std::size_t bytes, int& fd,
                        std::uint64_t& offset) const {
  const auto p = reinterpret_cast<std::uintptr_t>(data);
  for (const SharedAlloc& a : allocs_) {
    const auto base = reinterpret_cast<std::uintptr_t>(a.map.data());
    if (p >= base && p - base <= a.map.size() && bytes <= a.map.size() - (p - base)) {
      fd = a.fd.get();
      offset = p - base;
      return true;
    }
  }
  return false;
}

bool Engine::rendezvous_from_world(const std::byte* data, std::size_t bytes) const {
  int fd = -1;
  std::uint64_t offset = 0;
  return cfg_.shm_rendezvous_min_bytes != 0 && bytes >= cfg_.shm_rendezvous_min_bytes &&
         cfg_.rendezvous == RendezvousMode::automatic && find_alloc(data, bytes, fd, offset);
}

std::byte* Engine::map_peer_alloc(ShmPeer& peer, int fd, std::uint64_t offset, std::size_t bytes) {
  const Mapping* map = nullptr;
  for (const auto& [peer_fd, m] : peer.mapped) {
    if (peer_fd == fd) map = &m;
  }
  if (map == nullptr) {
    // First message from this allocation: open the peer's memfd by its /proc path and map all
    // of it (the allocation lives as long as the peer's World, so the mapping is cached).
    auto file = open_peer_file(peer.pid, fd);
    if (!file) return nullptr;
    auto size = file_size(*file);
    if (!size || *size == 0) return nullptr;
    auto m = map_shared(*file, *size);
    if (!m) return nullptr;
    peer.mapped.emplace_back(fd, std::move(*m));
    map = &peer.mapped.back().second;
  }
  if (offset > map->size() || bytes > map->size() - offset) return nullptr;
  return map->data() + offset;
}

}  // namespace tp::comm::detail
