// Running a body on every rank of a job: join the MPI job this process belongs to, or fork the
// ranks on this host; what rank 0 produced and every rank's error come back to the caller.
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/comm/world.hpp>
#include <tilepipe/support/expected.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tp::runtime {

/// How the ranks of a run come to be.
enum class LaunchMode {
  automatic,  ///< join the MPI job when started by mpirun or srun, else fork
  fork,       ///< fork the ranks on this host (shared memory between them)
  mpi,        ///< join the MPI job; an error when not started by a launcher
};

/// "auto" | "fork" | "mpi"; an error names `what` and the choices.
Expected<LaunchMode> parse_launch_mode(std::string_view text, std::string_view what);

/// True when `mode` joins an MPI job in this process (automatic under a launcher).
bool joins_mpi(LaunchMode mode);

/// The size of the MPI job this process was started in, from the launcher's environment
/// (Open MPI, MPICH/Hydra, Slurm); 0 when none says.
std::int64_t mpi_job_size();

/// This process's rank in the MPI job it was started in, from the launcher's environment; -1
/// when none says.
int mpi_job_rank();

/// The ranks of this process's MPI job on this host, from the launcher's environment (Open MPI's
/// OMPI_COMM_WORLD_LOCAL_SIZE, MPICH/Hydra's MPI_LOCALNRANKS, PMIx's PMIX_LOCAL_SIZE); 0 when
/// none says.
std::int64_t mpi_local_size();

/// `config` for a run of `threads_here` threads on this host: with the hybrid wait and at most
/// as many threads as this process may use CPUs (its affinity mask), spin_ns =
/// exec::dedicated_spin(threads_here), the local teams' spin (the default 50 us is for CPUs that
/// other threads need); otherwise `config` unchanged.
comm::Config spin_for_dedicated_cpus(comm::Config config, std::int64_t threads_here);

/// The body of a rank: rank 0 returns the bytes the caller gets back (others return anything,
/// ignored), or an Error that ends the run.
using RankBody = std::function<Expected<std::vector<std::byte>>(comm::World&)>;

/// What a run on ranks gave back to this process.
struct RanksResult {
  int rank = 0;      ///< this process's rank (0 when it forked the ranks: it was their launcher)
  bool root = true;  ///< this process holds rank 0's bytes (always after fork)
  std::vector<std::byte> bytes;  ///< rank 0's bytes (root only)
};

/// Runs `body` on `ranks` ranks (joins MPI: the job's ranks, `ranks` unused). Under MPI each
/// process returns its own rank's outcome. Forked: rank 0's bytes (at most 1 GiB) come back, and
/// the first error any rank raised (lowest rank first), with its rank; a rank killed by a signal
/// or exiting without a result is an error naming it. A task of an srun step of several tasks
/// that srun gave no MPI wire-up (`srun --mpi=none`: no PMIx or PMI in the environment) is refused
/// (Errc::invalid_argument), since each would run alone. Call from a single-threaded process when
/// it forks. Never prints. `started`, when forked, is called in this process once every rank
/// runs (comm::LaunchOptions::started); never under MPI.
Expected<RanksResult> run_ranks(int ranks, const comm::Config& config, LaunchMode mode,
                                const RankBody& body, const std::function<void()>& started = {});

}  // namespace tp::runtime
