// What a rank measured while running its tiles: phase times, counts, and their reduction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tp::exec {

/// Seconds spent per phase, summed over a rank's compute threads.
struct PhaseTimes {
  double compute_s = 0;     ///< inside the kernel's compute_tile
  double send_start_s = 0;  ///< packing faces and starting sends (isend)
  double wait_s = 0;        ///< waiting for faces to arrive or sends to complete, unpacking
  double sync_s = 0;        ///< intra-node barriers (one per step, or per sub-step when vertical)

  PhaseTimes& operator+=(const PhaseTimes& o) {
    compute_s += o.compute_s;
    send_start_s += o.send_start_s;
    wait_s += o.wait_s;
    sync_s += o.sync_s;
    return *this;
  }
};

/// One rank's account of a run.
struct RankReport {
  int rank = 0;
  int threads = 1;
  double wall_s = 0;  ///< from the first step to the last, on this rank
  /// The rank's set-up before its first step: layout, slab (mapped and first touched), faces
  /// connected and measured, probes; on this rank.
  double setup_s = 0;
  PhaseTimes phases;               ///< summed over threads
  std::int64_t tiles = 0;          ///< tiles computed
  std::int64_t points = 0;         ///< iteration points computed
  std::int64_t messages_sent = 0;  ///< faces sent to other ranks
  std::int64_t bytes_sent = 0;     ///< their payload bytes
  std::int64_t messages_received = 0;
  double face_transfer_s = 0;  ///< measured time to move one face to a neighbour (0: none)
  /// Communication the CPUs did wait for: each wait for a face (or for a blocking send) counts
  /// at most face_transfer_s; the rest of a longer wait is idle time (the producer was not done).
  /// With a communication thread: per step, the part of its communication after the last compute
  /// thread finished (all of it while nothing computes: blocking, pipeline fill, last sends).
  double exposed_comm_s = 0;
  int subtiles = 1;  ///< N of vertical grouping (1 for hyperplane)
  /// Faces went straight into the neighbours' slabs (FaceMode::direct), not through messages.
  bool direct_faces = false;
  /// The communication thread (--comm-thread, seed 002 5.4); all zero when it was off.
  struct CommThread {
    bool on = false;
    /// Its compute share: the width of its row of tiles over an equal row's (0: an extra thread
    /// that computes nothing, m = 1), the same on every rank.
    double share = 0;
    int split_dim = 0;        ///< 1-based dimension along which the rows were re-cut (0: none)
    double alpha_s = 0;       ///< measured time of one tile of the plan (equal share)
    double comm_round_s = 0;  ///< measured communication work per step (C), this rank
    double compute_s = 0;     ///< the comm thread's time in compute_tile during the run
    double comm_s = 0;        ///< its time starting sends, waiting for faces, unpacking
  } comm_thread;
};

/// The reports of all ranks and what follows from them.
struct RunSummary {
  std::vector<RankReport> ranks;

  /// The slowest rank's wall time.
  [[nodiscard]] double wall_s() const;
  /// The slowest rank's set-up (RankReport::setup_s).
  [[nodiscard]] double setup_s() const;
  /// Phase times summed over every thread of every rank.
  [[nodiscard]] PhaseTimes phases() const;
  /// Share of the communication work hidden behind computation, in [0, 1]:
  /// 1 - sum(exposed_comm_s) / sum((faces received + sent) x face_transfer_s), or with a
  /// communication thread 1 - sum(exposed_comm_s) / sum(comm_thread.comm_s). -1 when there was no
  /// communication work.
  [[nodiscard]] double hidden_share() const;
};

/// Serializes a report into bytes (to gather reports on rank 0) and back.
std::vector<std::byte> encode(const RankReport& report);
RankReport decode_report(const std::vector<std::byte>& bytes);

}  // namespace tp::exec
