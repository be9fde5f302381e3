// World and Request: the public API, forwarding to the Engine; Config validation and parsing.
#include "engine.hpp"

#include <tilepipe/comm/world.hpp>

#include <cstdlib>

namespace tp::comm {

namespace {

Status check_user_tag(int tag, bool allow_any, std::string_view what) {
  if ((allow_any && tag == any_tag) || (tag >= 0 && tag <= max_tag)) return {};
  return fail(Errc::invalid_argument, std::string(what) + " tag " + std::to_string(tag) +
                                          ": tags are 0.." + std::to_string(max_tag) +
                                          (allow_any ? " or any_tag" : ""));
}

}  // namespace

Status Config::validate() const {
  auto bad = [](std::string field, std::string why) {
    return fail(Errc::invalid_argument, "comm config: " + field + " " + why);
  };
  if (short_max_bytes > detail::cell_payload_bytes) {
    return bad("short_max_bytes " + std::to_string(short_max_bytes),
               "exceeds the " + std::to_string(detail::cell_payload_bytes) + " bytes of a cell");
  }
  if (slot_bytes < 64 || slot_bytes % 64 != 0 || slot_bytes > (std::size_t{1} << 30)) {
    return bad("slot_bytes " + std::to_string(slot_bytes), "must be a multiple of 64 in 64..1GiB");
  }
  if (eager_max_bytes < short_max_bytes || eager_max_bytes > slot_bytes) {
    return bad("eager_max_bytes " + std::to_string(eager_max_bytes),
               "must be in short_max_bytes.." + std::to_string(slot_bytes) + " (slot_bytes)");
  }
  if (slots_per_channel < 2 || slots_per_channel > 4096) {
    return bad("slots_per_channel " + std::to_string(slots_per_channel), "must be in 2..4096");
  }
  if (credit_batch < 1 || credit_batch > slots_per_channel) {
    return bad("credit_batch " + std::to_string(credit_batch),
               "must be in 1.." + std::to_string(slots_per_channel) + " (slots_per_channel)");
  }
  if (cells_per_channel < 4 || cells_per_channel > 65536 ||
      (cells_per_channel & (cells_per_channel - 1)) != 0) {
    return bad("cells_per_channel " + std::to_string(cells_per_channel),
               "must be a power of two in 4..65536");
  }
  if (cma_chunk_bytes != 0 && cma_chunk_bytes < 4096) {
    return bad("cma_chunk_bytes " + std::to_string(cma_chunk_bytes), "must be 0 or >= 4096");
  }
  if (shm_chunk_bytes != 0 && shm_chunk_bytes < 4096) {
    return bad("shm_chunk_bytes " + std::to_string(shm_chunk_bytes), "must be 0 or >= 4096");
  }
  if (spin_ns.count() < 0) return bad("spin_ns", "must be >= 0");
  if (link.enabled && (link.latency.count() < 0 || link.bandwidth_bytes_per_s < 0)) {
    return bad("link " + to_string(link), "must have latency >= 0 and bandwidth >= 0");
  }
  if (peer_timeout.count() < 1) {
    return bad("peer_timeout " + std::to_string(peer_timeout.count()) + " ms", "must be >= 1 ms");
  }
  if (progress_timeout.count() < 0) {
    return bad("progress_timeout " + std::to_string(progress_timeout.count()) + " ms",
               "must be >= 0 ms (0: off)");
  }
  return {};
}

std::string_view to_string(SyncMode mode) noexcept {
  switch (mode) {
    case SyncMode::poll:
      return "poll";
    case SyncMode::block:
      return "block";
    case SyncMode::hybrid:
      return "hybrid";
  }
  return "?";
}

std::string_view to_string(TransportKind kind) noexcept {
  switch (kind) {
    case TransportKind::automatic:
      return "auto";
    case TransportKind::shm:
      return "shm";
    case TransportKind::mpi:
      return "mpi";
  }
  return "?";
}

std::string_view to_string(RendezvousMode mode) noexcept {
  switch (mode) {
    case RendezvousMode::automatic:
      return "auto";
    case RendezvousMode::cma:
      return "cma";
    case RendezvousMode::copy:
      return "copy";
  }
  return "?";
}

Expected<SyncMode> parse_sync_mode(std::string_view text, std::string_view what) {
  for (auto m : {SyncMode::poll, SyncMode::block, SyncMode::hybrid}) {
    if (text == to_string(m)) return m;
  }
  return fail(Errc::invalid_argument, std::string(what) + ": '" + std::string(text) +
                                          "' is not a sync mode (poll, block, hybrid)");
}

Expected<TransportKind> parse_transport(std::string_view text, std::string_view what) {
  for (auto m : {TransportKind::automatic, TransportKind::shm, TransportKind::mpi}) {
    if (text == to_string(m)) return m;
  }
  return fail(Errc::invalid_argument, std::string(what) + ": '" + std::string(text) +
                                          "' is not a transport (auto, shm, mpi)");
}

Expected<RendezvousMode> parse_rendezvous(std::string_view text, std::string_view what) {
  for (auto m : {RendezvousMode::automatic, RendezvousMode::cma, RendezvousMode::copy}) {
    if (text == to_string(m)) return m;
  }
  return fail(Errc::invalid_argument, std::string(what) + ": '" + std::string(text) +
                                          "' is not a rendezvous mode (auto, cma, copy)");
}

// ---- Request ----

Request::Request(Request&& other) noexcept
    : engine_(other.engine_), index_(other.index_), generation_(other.generation_) {
  other.engine_ = nullptr;
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    if (engine_ != nullptr) (void)engine_->wait(*this);
    engine_ = other.engine_;
    index_ = other.index_;
    generation_ = other.generation_;
    other.engine_ = nullptr;
  }
  return *this;
}

Request::~Request() {
  if (engine_ != nullptr) (void)engine_->wait(*this);
}

// ---- World ----

World::World(std::unique_ptr<detail::Engine> engine) noexcept : engine_(std::move(engine)) {}
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;
World::~World() = default;

bool World::launched_by_mpi() noexcept {
#ifdef TILEPIPE_COMM_HAVE_MPI
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(v) != nullptr) return true;
  }
#endif
  return false;
}

#ifndef TILEPIPE_COMM_HAVE_MPI
Expected<World> World::from_mpi(const Config&) {
  return fail(
      Errc::invalid_argument,
      "this tilepipe was built without MPI (TILEPIPE_ENABLE_MPI=OFF): use the shm launcher");
}
#endif

int World::rank() const noexcept {
  return engine_->rank();
}
int World::size() const noexcept {
  return engine_->size();
}
const Config& World::config() const noexcept {
  return engine_->config();
}
std::string_view World::transport_to(int peer) const noexcept {
  return engine_->transport_to(peer);
}
RendezvousMode World::rendezvous_mode() const noexcept {
  return engine_->rendezvous_mode();
}
bool World::failed() const noexcept {
  return engine_->failed();
}
void World::abandon(const Error& error) {
  engine_->abandon(error);
}
bool World::aborts_when_failed() const noexcept {
  return engine_->aborts_when_failed();
}

Expected<Request> World::isend(int dest, int tag, std::span<const std::byte> data) {
  TP_TRY(check_user_tag(tag, false, "send"));
  return engine_->isend(dest, tag, data);
}

Expected<Request> World::irecv(int source, int tag, std::span<std::byte> buffer) {
  TP_TRY(check_user_tag(tag, true, "receive"));
  return engine_->irecv(source, tag, buffer);
}

Expected<bool> World::test(Request& request, RecvInfo* info) {
  return engine_->test(request, info);
}

Expected<RecvInfo> World::wait(Request& request) {
  return engine_->wait(request);
}

Status World::send(int dest, int tag, std::span<const std::byte> data) {
  if (tag < 0 || tag > max_tag) return check_user_tag(tag, false, "send");
  return engine_->send(dest, tag, data);
}

Expected<RecvInfo> World::recv(int source, int tag, std::span<std::byte> buffer) {
  if (tag != any_tag && (tag < 0 || tag > max_tag)) {
    return Unexpected{check_user_tag(tag, true, "receive").error()};
  }
  return engine_->recv(source, tag, buffer);
}

Status World::barrier() {
  return engine_->barrier();
}

Expected<Region> World::create_region(std::size_t bytes, std::size_t counters) {
  std::uint32_t id = 0;
  auto local = engine_->create_region(bytes, counters, id);
  if (!local) return Unexpected{local.error()};
  return Region(id, *local);
}

Status World::put(const Region& region, int target, std::size_t offset,
                  std::span<const std::byte> data, bool notify) {
  return engine_->put(region.id_, target, offset, data, notify);
}

std::optional<std::span<std::byte>> World::peer_memory(const Region& region, int target) const {
  return engine_->peer_memory(region.id_, target);
}

Status World::notify(const Region& region, int target, std::size_t counter) {
  return engine_->notify(region.id_, target, counter);
}

Expected<std::span<std::byte>> World::allocate(std::size_t bytes) {
  return engine_->allocate(bytes);
}

Expected<std::uint64_t> World::notifications(const Region& region, std::size_t counter) {
  return engine_->notifications(region.id_, counter);
}

Expected<std::uint64_t> World::wait_notifications(const Region& region, std::uint64_t count,
                                                  std::size_t counter, int source) {
  return engine_->wait_notifications(region.id_, count, counter, source);
}

}  // namespace tp::comm
