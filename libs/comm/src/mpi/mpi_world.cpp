// World::from_mpi: MPI init, host split (MPI_Comm_split_type SHARED), shm segment among host ranks.
#include "../engine.hpp"
#include "mpi_net.hpp"
#include "mpi_watchdog.hpp"

#include <unistd.h>

#include <mpi.h>

namespace tp::comm {

namespace {

[[noreturn]] void abort_mpi() {
  MPI_Abort(MPI_COMM_WORLD, 1);
  ::_exit(1);  // MPI_Abort returns only if the MPI library is broken
}

void finalize_mpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) MPI_Finalize();
}

#define TP_MPI_TRY(call)                                                        \
  do {                                                                          \
    const int tp_mpi_rc_ = (call);                                              \
    if (tp_mpi_rc_ != MPI_SUCCESS) {                                            \
      return fail_at(rank, Errc::system,                                        \
                     detail::mpi_error_text(#call, tp_mpi_rc_).substr(0, 200)); \
    }                                                                           \
  } while (0)

/// What host rank 0 tells the others about the segment.
struct SegmentDescriptor {
  std::uint64_t bytes;
  std::int32_t pid;
  std::int32_t fd;
};

}  // namespace

Expected<World> World::from_mpi(const Config& config) {
  TP_TRY(config.validate());
  int rank = -1;
  // A rank that never comes (stopped or hung before or during MPI_Init) keeps the others in
  // MPI_Init or a collective below, out of the progress watchdog's sight: the set-up as a whole
  // gets the progress timeout too.
  const detail::MpiWatchdog watchdog(config.progress_timeout, "the MPI job's set-up");
  if (!watchdog.started()) {
    return fail_at(detail::launcher_rank(), Errc::system,
                   "cannot start the set-up watchdog thread: " + watchdog.why_not());
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  bool we_initialized = false;
  if (initialized == 0) {
    int provided = 0;
    TP_MPI_TRY(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
    we_initialized = true;
    if (provided < MPI_THREAD_SERIALIZED) {
      return fail(Errc::system, "MPI provides thread level " + std::to_string(provided) +
                                    "; tilepipe needs MPI_THREAD_SERIALIZED or better");
    }
  }
  MPI_Comm comm = MPI_COMM_NULL;
  TP_MPI_TRY(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  TP_MPI_TRY(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int size = 0;
  TP_MPI_TRY(MPI_Comm_rank(comm, &rank));
  TP_MPI_TRY(MPI_Comm_size(comm, &size));

  std::vector<int> local_ranks;
  detail::Mapping segment;
  if (config.transport != TransportKind::mpi) {
    MPI_Comm host = MPI_COMM_NULL;
    TP_MPI_TRY(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host));
    int host_size = 0;
    int host_rank = 0;
    TP_MPI_TRY(MPI_Comm_size(host, &host_size));
    TP_MPI_TRY(MPI_Comm_rank(host, &host_rank));
    if (config.transport == TransportKind::shm && host_size != size) {
      MPI_Comm_free(&host);
      return fail_at(rank, Errc::invalid_argument,
                     "transport shm needs every rank on one host (" + std::to_string(host_size) +
                         " of " + std::to_string(size) + " are here)");
    }
    if (host_size > 1) {
      local_ranks.resize(static_cast<std::size_t>(host_size));
      TP_MPI_TRY(MPI_Allgather(&rank, 1, MPI_INT, local_ranks.data(), 1, MPI_INT, host));
      const auto geo = detail::geometry_for(config, host_size);
      SegmentDescriptor d{detail::page_round(geo.total_bytes()),
                          static_cast<std::int32_t>(::getpid()), -1};
      detail::Fd fd;
      Status made;
      if (host_rank == 0) {
        auto f = detail::create_shared_file("tilepipe-comm", d.bytes);
        if (f) {
          fd = std::move(*f);
          d.fd = fd.get();
        } else {
          made = Unexpected{f.error()};
        }
      }
      TP_MPI_TRY(MPI_Bcast(&d, sizeof(d), MPI_BYTE, 0, host));
      if (d.fd < 0) {
        MPI_Comm_free(&host);
        if (!made) return Unexpected{made.error()};
        return fail_at(rank, Errc::system,
                       "host rank 0 could not "
                       "create the shared segment");
      }
      if (host_rank != 0) {
        auto f = detail::open_peer_file(d.pid, d.fd);
        if (!f) return Unexpected{f.error().on_rank(rank)};
        fd = std::move(*f);
      }
      auto map = detail::map_shared(fd, d.bytes);
      if (!map) return Unexpected{map.error().on_rank(rank)};
      segment = std::move(*map);
      if (host_rank == 0) detail::init_segment(segment.data(), geo);
      // Everyone has opened the memfd (and the header is written) after this barrier; the
      // descriptors close at scope exit, so nothing outlives the processes.
      TP_MPI_TRY(MPI_Barrier(host));
    }
    MPI_Comm_free(&host);
  }
  std::unique_ptr<detail::Net> net;
  if (static_cast<int>(local_ranks.size()) < size)
    net = std::make_unique<detail::MpiNet>(comm, config.progress_timeout);
  else
    MPI_Comm_free(&comm);
  auto engine = detail::Engine::create(config, rank, size, std::move(segment),
                                       std::move(local_ranks), std::move(net));
  if (!engine) return Unexpected{engine.error()};
  if (we_initialized) {
    (*engine)->set_on_destroy(&finalize_mpi);
    (*engine)->set_on_abort(&abort_mpi);
  }
  return World(std::move(*engine));
}

}  // namespace tp::comm
