// MpiWatchdog: bounds the blocking MPI calls that no progress watchdog can see into (MPI_Init,
// the world's set-up collectives, MPI_Finalize) by Config::progress_timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace tp::comm::detail {

/// While alive, a thread waits `timeout`; if the watchdog is still alive then (a peer never came
/// to the collective: stopped, hung), it hands the error (naming `phase` and a stopped rank of
/// this host, if there is one) to the last-words sink and aborts the job: MPI_Abort once MPI is
/// initialised, else _exit(1) (the launcher ends a job one of whose ranks failed), with SIGALRM
/// 10 s later as the backstop should the abort itself hang. A zero timeout watches nothing.
class MpiWatchdog {
 public:
  MpiWatchdog(std::chrono::milliseconds timeout, const char* phase);
  /// Disarms and joins the thread.
  ~MpiWatchdog();
  MpiWatchdog(const MpiWatchdog&) = delete;
  MpiWatchdog& operator=(const MpiWatchdog&) = delete;

  /// False when the watchdog thread could not start (the caller then fails its set-up).
  [[nodiscard]] bool started() const noexcept { return why_not_.empty(); }
  /// Why the thread did not start ("Resource temporarily unavailable"), or "".
  [[nodiscard]] const std::string& why_not() const noexcept { return why_not_; }

 private:
  [[noreturn]] void expire();

  std::chrono::milliseconds timeout_;
  const char* phase_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string why_not_;
  std::thread thread_;
};

/// This process's rank in the MPI job from the launcher's environment (Open MPI, MPICH/Hydra,
/// PMIx, Slurm), or -1.
int launcher_rank() noexcept;

}  // namespace tp::comm::detail
