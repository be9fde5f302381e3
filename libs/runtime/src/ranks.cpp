// run_ranks: rank 0's bytes and every rank's error cross from forked ranks to the caller through
// one shared anonymous mapping (per-rank error slots, then rank 0's bytes), never through stdio.
#include <tilepipe/comm/job_voice.hpp>
#include <tilepipe/comm/launch.hpp>
#include <tilepipe/exec/spin_wait.hpp>
#include <tilepipe/runtime/ranks.hpp>
#include <tilepipe/runtime/run_options.hpp>
#include <tilepipe/support/last_words.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

namespace tp::runtime {
namespace {

/// One rank's error as it crosses the process boundary (plain bytes, no pointers).
struct ErrorSlot {
  std::atomic<int> set{0};  // written last by the rank (release), read after it exited
  int code = 0;
  int rank = -1;
  int tile_dims = 0;
  std::int64_t tile[8] = {};
  char option[64] = {};
  char message[1024] = {};
};

/// Layout of the shared mapping: `ranks` error slots, then rank 0's byte count and bytes.
struct Channel {
  void* base = MAP_FAILED;
  std::size_t bytes = 0;
  int ranks = 0;

  ErrorSlot* slot(int r) const { return static_cast<ErrorSlot*>(base) + r; }
  std::uint64_t* length() const { return reinterpret_cast<std::uint64_t*>(slot(ranks)); }
  std::byte* payload() const { return reinterpret_cast<std::byte*>(length() + 1); }
  std::size_t capacity() const {
    return bytes - sizeof(ErrorSlot) * static_cast<std::size_t>(ranks) - sizeof(std::uint64_t);
  }
  ~Channel() {
    if (base != MAP_FAILED) ::munmap(base, bytes);
  }
};

constexpr std::size_t payload_bytes = std::size_t{1} << 30;  // reserved, touched only as written

void copy_text(char* to, std::size_t n, const std::string& text) {
  const std::size_t k = std::min(n - 1, text.size());
  std::memcpy(to, text.data(), k);
  to[k] = '\0';
}

void store_error(ErrorSlot& slot, const Error& e, int rank) {
  slot.code = static_cast<int>(e.code);
  slot.rank = e.rank >= 0 ? e.rank : rank;
  slot.tile_dims = static_cast<int>(std::min<std::size_t>(8, e.tile.size()));
  for (int d = 0; d < slot.tile_dims; ++d) slot.tile[d] = e.tile[static_cast<std::size_t>(d)];
  copy_text(slot.option, sizeof slot.option, e.option);
  copy_text(slot.message, sizeof slot.message, e.message);
  slot.set.store(1, std::memory_order_release);
}

/// The tasks of the srun step this process is one of, when srun gave them no MPI wire-up (no PMIx
/// or PMI in the environment: `srun --mpi=none`, Slurm's usual MpiDefault); else 0. (A batch
/// script, which is no step, has no SLURM_STEP_NUM_TASKS.)
std::int64_t srun_tasks_without_mpi() {
  if (comm::World::launched_by_mpi()) return 0;
  const char* text = std::getenv("SLURM_STEP_NUM_TASKS");
  if (text == nullptr) return 0;
  char* end = nullptr;
  const long long n = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && n > 1 ? n : 0;
}

Error load_error(const ErrorSlot& slot) {
  Error e(static_cast<Errc>(slot.code), slot.message);
  e.rank = slot.rank;
  e.tile.assign(slot.tile, slot.tile + slot.tile_dims);
  e.option = slot.option;
  return e;
}

}  // namespace

Expected<LaunchMode> parse_launch_mode(std::string_view text, std::string_view what) {
  if (text == "auto") return LaunchMode::automatic;
  if (text == "fork") return LaunchMode::fork;
  if (text == "mpi") return LaunchMode::mpi;
  return Unexpected{
      Error::about(std::string(what), Errc::invalid_argument,
                   "'" + std::string(text) + "' is not a launch mode (auto, fork, mpi)")};
}

namespace {

/// The first of the launcher's variables `names` that holds a whole number in [least, most]
/// (a variable that holds anything else is skipped); -1 when none does.
std::int64_t launcher_number(std::initializer_list<const char*> names, std::int64_t least,
                             std::int64_t most) {
  for (const char* v : names) {
    const char* text = std::getenv(v);
    if (text == nullptr) continue;
    char* end = nullptr;
    const long long n = std::strtoll(text, &end, 10);
    if (end != text && *end == '\0' && n >= least && n <= most) return n;
  }
  return -1;
}

}  // namespace

std::int64_t mpi_job_size() {
  return std::max<std::int64_t>(
      0, launcher_number({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}, 1,
                         INT64_MAX));
}

int mpi_job_rank() {
  return static_cast<int>(launcher_number(
      {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}, 0, (1L << 30) - 1));
}

std::int64_t mpi_local_size() {
  return std::max<std::int64_t>(
      0, launcher_number({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMIX_LOCAL_SIZE"}, 1,
                         INT64_MAX));
}

comm::Config spin_for_dedicated_cpus(comm::Config config, std::int64_t threads_here) {
  const std::chrono::nanoseconds spin = exec::dedicated_spin(threads_here);
  if (config.sync == comm::SyncMode::hybrid && spin.count() > 0) config.spin_ns = spin;
  return config;
}

bool joins_mpi(LaunchMode mode) {
  return mode == LaunchMode::mpi ||
         (mode == LaunchMode::automatic && comm::World::launched_by_mpi());
}

Expected<RanksResult> run_ranks(int ranks, const comm::Config& config, LaunchMode mode,
                                const RankBody& body, const std::function<void()>& started) {
  if (mode == LaunchMode::mpi && !comm::World::launched_by_mpi()) {
    return fail(Errc::invalid_argument,
                "the MPI launch needs the ranks started by mpirun or srun (e.g. mpirun -np 2 ...)");
  }
  if (const std::int64_t tasks = srun_tasks_without_mpi(); tasks > 0) {
    // Each task would run the whole problem alone (forking its own ranks).
    return fail(Errc::invalid_argument,
                "srun started " + std::to_string(tasks) +
                    " tasks without MPI wire-up, so each would run alone: use srun --mpi=pmix "
                    "(or MpiDefault=pmix in slurm.conf; docs/slurm.md)");
  }
  if (joins_mpi(mode)) {
    // A test hook (docs/runtime.md): TILEPIPE_FAULT_STOP_RANK=r stops rank r (SIGSTOP) before it
    // joins the job, as if it never came.
    if (const char* stop = std::getenv("TILEPIPE_FAULT_STOP_RANK");
        stop != nullptr && std::to_string(mpi_job_rank()) == stop) {
      std::raise(SIGSTOP);
    }
    auto world = comm::World::from_mpi(config);
    if (!world) {
      // Every rank fails its set-up alike, as a rule (no thread, no MPI): the lowest running rank
      // of the host returns its error at once and its failing exit ends the job; the others wait
      // their turn (and are ended meanwhile), so that the user reads one line.
      (void)comm::take_job_voice(comm::VoiceTurn::in_turn);
      return Unexpected{world.error()};
    }
    if (const std::int64_t job = mpi_job_size(); job > 0 && job != world->size()) {
      // Typically Open MPI's library under MPICH's launcher or the reverse: each rank alone.
      return fail(Errc::invalid_argument,
                  "the launcher started " + std::to_string(job) +
                      " ranks but the MPI library "
                      "sees " +
                      std::to_string(world->size()) +
                      ": start tilepipe with the launcher of the MPI it was built against");
    }
    auto out = body(*world);
    if (!out) {
      Error e = out.error().on_rank(world->rank());
      // A failure of this rank's own (not a bad input that every rank found alike) leaves peers
      // waiting for it: MPI_Finalize would wait for them in turn, so the job is aborted. MPI_Abort
      // ends every rank before this error could return: say it first, unless it only says that
      // a peer was lost (the launcher reports the peer's death; its own rank says why).
      if (!e.is_user_error()) world->abandon(e);
      // One line for the job (comm/job_voice.hpp): a timeout is seen by every rank that waits on
      // the silent peer, so the lowest running rank speaks; an error of this rank's own is said
      // at once, unless another rank already speaks for the job.
      if (world->failed() && world->aborts_when_failed() && e.code != Errc::peer_lost &&
          comm::take_job_voice(e.code == Errc::timeout ? comm::VoiceTurn::in_turn
                                                       : comm::VoiceTurn::at_once)) {
        say_last_words(e);
      }
      return Unexpected{std::move(e)};
    }
    RanksResult r{world->rank(), world->rank() == 0, {}};
    if (r.root) r.bytes = std::move(*out);
    return r;
  }
  if (config.transport == comm::TransportKind::mpi) {
    return Unexpected{Error::about("transport", Errc::invalid_argument,
                                   "mpi needs the ranks started by mpirun or srun (e.g. mpirun "
                                   "-np 2 ...); forked ranks use shared memory")};
  }
  if (ranks < 1) return fail(Errc::invalid_argument, "a run needs at least 1 rank");
  Channel ch;
  ch.ranks = ranks;
  ch.bytes =
      sizeof(ErrorSlot) * static_cast<std::size_t>(ranks) + sizeof(std::uint64_t) + payload_bytes;
  ch.base = ::mmap(nullptr, ch.bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (ch.base == MAP_FAILED) {
    return fail(Errc::system, std::string("mmap of the result channel: ") + std::strerror(errno));
  }
  for (int r = 0; r < ranks; ++r) new (ch.slot(r)) ErrorSlot();
  *ch.length() = 0;
  auto launched = comm::launch_local(
      ranks, config,
      [&](comm::World& world) -> Expected<int> {
        auto out = body(world);
        if (!out) {
          store_error(*ch.slot(world.rank()), out.error(), world.rank());
          // The launcher keeps it as well (RankEnd::error): a rank that only lost a peer is then
          // no cause of the run's end, even when it exits before the peer that died is reaped.
          return Unexpected{out.error()};
        }
        if (world.rank() == 0) {
          if (out->size() > ch.capacity()) {
            store_error(*ch.slot(0),
                        Error(Errc::out_of_range, "the result of rank 0 exceeds the 1 GiB channel"),
                        0);
            return 1;
          }
          if (!out->empty()) std::memcpy(ch.payload(), out->data(), out->size());
          *ch.length() = out->size();
        }
        return 0;
      },
      comm::LaunchOptions{.started = started});
  if (!launched) return Unexpected{launched.error()};
  // Interrupted (SIGINT/SIGTERM/SIGHUP forwarded to every rank): that is the news.
  if (launched->interrupted_by != 0) return Unexpected{*launched->failure()};
  // The cause first: an error a rank raised itself, then the rank whose own failure ended the
  // run (its death by a signal, a stop, an exception; the launcher killed the others after it,
  // so their ends are no cause), and only then the peers that noticed a lost peer.
  for (int r = 0; r < ranks; ++r) {
    const ErrorSlot& slot = *ch.slot(r);
    if (slot.set.load(std::memory_order_acquire) != 0 &&
        slot.code != static_cast<int>(Errc::peer_lost)) {
      return Unexpected{load_error(slot)};
    }
  }
  if (const int failed = launched->failed_rank(); failed >= 0) {
    const comm::RankEnd& end = launched->ranks[static_cast<std::size_t>(failed)];
    if (!end.error && end.term_signal == 0 &&
        ch.slot(failed)->set.load(std::memory_order_acquire) != 0) {
      return Unexpected{load_error(*ch.slot(failed))};
    }
    return Unexpected{*launched->failure()};
  }
  for (int r = 0; r < ranks; ++r) {
    if (ch.slot(r)->set.load(std::memory_order_acquire) != 0) {
      return Unexpected{load_error(*ch.slot(r))};
    }
  }
  RanksResult r;
  r.bytes.assign(ch.payload(), ch.payload() + *ch.length());
  return r;
}

}  // namespace tp::runtime
