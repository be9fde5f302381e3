// Reduction and (de)serialization of the ranks' run reports.
#include <tilepipe/exec/run_report.hpp>
#include <tilepipe/support/assert.hpp>

#include <algorithm>
#include <cstring>

namespace tp::exec {

double RunSummary::wall_s() const {
  double w = 0;
  for (const auto& r : ranks) w = std::max(w, r.wall_s);
  return w;
}

double RunSummary::setup_s() const {
  double w = 0;
  for (const auto& r : ranks) w = std::max(w, r.setup_s);
  return w;
}

PhaseTimes RunSummary::phases() const {
  PhaseTimes p;
  for (const auto& r : ranks) p += r.phases;
  return p;
}

double RunSummary::hidden_share() const {
  double work = 0;
  double waited = 0;
  for (const auto& r : ranks) {
    // With a communication thread its measured communication time is the work; otherwise the
    // faces moved times the probed face transfer time.
    const auto faces = r.messages_received + r.messages_sent;
    if (faces == 0) continue;
    work +=
        r.comm_thread.on ? r.comm_thread.comm_s : static_cast<double>(faces) * r.face_transfer_s;
    waited += r.exposed_comm_s;
  }
  if (work <= 0) return -1;
  return std::clamp(1.0 - waited / work, 0.0, 1.0);
}

namespace {

struct Wire {
  std::int64_t rank, threads, tiles, points, sent, bytes, received, subtiles, ct_on, ct_dim, direct;
  double wall, setup, compute, send_start, wait, sync, face, exposed, ct_share, ct_alpha, ct_round,
      ct_compute, ct_comm;
};

}  // namespace

std::vector<std::byte> encode(const RankReport& r) {
  const Wire w{r.rank,
               r.threads,
               r.tiles,
               r.points,
               r.messages_sent,
               r.bytes_sent,
               r.messages_received,
               r.subtiles,
               r.comm_thread.on ? 1 : 0,
               r.comm_thread.split_dim,
               r.direct_faces ? 1 : 0,
               r.wall_s,
               r.setup_s,
               r.phases.compute_s,
               r.phases.send_start_s,
               r.phases.wait_s,
               r.phases.sync_s,
               r.face_transfer_s,
               r.exposed_comm_s,
               r.comm_thread.share,
               r.comm_thread.alpha_s,
               r.comm_thread.comm_round_s,
               r.comm_thread.compute_s,
               r.comm_thread.comm_s};
  std::vector<std::byte> out(sizeof(Wire));
  std::memcpy(out.data(), &w, sizeof(Wire));
  return out;
}

RankReport decode_report(const std::vector<std::byte>& bytes) {
  TP_EXPECTS(bytes.size() == sizeof(Wire));
  Wire w{};
  std::memcpy(&w, bytes.data(), sizeof(Wire));
  RankReport r;
  r.rank = static_cast<int>(w.rank);
  r.threads = static_cast<int>(w.threads);
  r.tiles = w.tiles;
  r.points = w.points;
  r.messages_sent = w.sent;
  r.bytes_sent = w.bytes;
  r.messages_received = w.received;
  r.subtiles = static_cast<int>(w.subtiles);
  r.direct_faces = w.direct != 0;
  r.wall_s = w.wall;
  r.setup_s = w.setup;
  r.phases = {w.compute, w.send_start, w.wait, w.sync};
  r.face_transfer_s = w.face;
  r.exposed_comm_s = w.exposed;
  r.comm_thread = {w.ct_on != 0, w.ct_share, static_cast<int>(w.ct_dim), w.ct_alpha, w.ct_round,
                   w.ct_compute, w.ct_comm};
  return r;
}

}  // namespace tp::exec
