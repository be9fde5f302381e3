// A rank's steps tabulated from its rows of tiles (the block-cyclic mapping, ADR 0018).
#include <tilepipe/support/assert.hpp>

#include "step_table.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace tp::sim::detail {

const StepRun& StepTable::run_of(std::int64_t s) const {
  TP_EXPECTS(s >= 0 && s < steps);
  auto it = std::upper_bound(runs.begin(), runs.end(), s,
                             [](std::int64_t v, const StepRun& r) { return v < r.first_step; });
  return *std::prev(it);
}

std::int64_t StepTable::time_of_step(std::int64_t s) const {
  const StepRun& r = run_of(s);
  return r.time + (s - r.first_step);
}

std::int64_t StepTable::step_of_time(std::int64_t t) const {
  auto it = std::upper_bound(runs.begin(), runs.end(), t,
                             [](std::int64_t v, const StepRun& r) { return v < r.time; });
  TP_ASSERT(it != runs.begin());
  const StepRun& r = *std::prev(it);
  TP_ASSERT(t < r.time + r.len);
  return r.first_step + (t - r.time);
}

namespace {

/// Changes of the counts at one plan time.
struct Delta {
  std::int64_t active = 0;
  std::int64_t full = 0;
  std::vector<std::int64_t> senders;
  std::vector<std::int64_t> receivers;
};

}  // namespace

Expected<StepTable> build_step_table(const plan::Plan& plan, std::int64_t rank,
                                     const std::vector<int>& dim_of,
                                     const std::vector<bool>& faces) {
  const int factors = static_cast<int>(dim_of.size());
  const auto fs = static_cast<std::size_t>(factors);
  const int i = plan.map_dim();
  const auto counts = plan.tile_space().counts();
  const std::int64_t z = counts[static_cast<std::size_t>(i)];
  const auto node = plan.node_coords(rank);
  const auto& mesh = plan.mesh();
  const auto& m = plan.cpu_grid();
  StepTable table;
  table.dst.assign(fs, -1);
  table.gap.assign(fs, 0);
  table.rows.assign(fs, 0);
  // The rank's rows per factor: (row index j, CPU coordinate c), every cycle.
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> rows(fs);
  for (std::size_t f = 0; f < fs; ++f) {
    const std::int64_t count = counts[static_cast<std::size_t>(dim_of[f])];
    const std::int64_t period = mesh[f] * m[f];
    for (std::int64_t first = node[f] * m[f]; first < count; first += period) {
      for (std::int64_t c = 0; c < m[f] && first + c < count; ++c)
        rows[f].push_back({first + c, c});
    }
    if (rows[f].empty()) return table;  // an idle rank: no row of tiles reaches it
    table.rows[f] = std::min(m[f], count - node[f] * m[f]);
    auto succ = node;
    succ[f] = (node[f] + 1) % mesh[f];
    table.dst[f] = plan.rank_of(succ);
  }
  const auto internal = [](const std::string& what) {
    return fail(Errc::internal,
                "the simulator's step table of a cyclic plan: " + what + " (a simulator bug)");
  };
  std::map<std::int64_t, Delta> deltas;
  const auto delta_at = [&](std::int64_t t) -> Delta& {
    Delta& d = deltas[t];
    d.senders.resize(fs, 0);
    d.receivers.resize(fs, 0);
    return d;
  };
  std::vector<bool> gap_known(fs, false);
  std::vector<std::size_t> at(fs, 0);
  plan::Index tile(counts.size(), 0);
  while (true) {
    for (std::size_t f = 0; f < fs; ++f) {
      tile[static_cast<std::size_t>(dim_of[f])] = rows[f][at[f]].first;
    }
    tile[static_cast<std::size_t>(i)] = 0;
    const std::int64_t t0 = plan.time_of(tile);
    tile[static_cast<std::size_t>(i)] = z - 1;
    if (plan.time_of(tile) != t0 + z - 1) return internal("a row's tiles are not consecutive");
    tile[static_cast<std::size_t>(i)] = 0;
    Delta& begin = delta_at(t0);
    ++begin.active;
    if (z > 1) {
      ++begin.full;
      --delta_at(t0 + z - 1).full;
    }
    Delta& end = delta_at(t0 + z);
    --end.active;
    for (std::size_t f = 0; f < fs; ++f) {
      if (!faces[f] || mesh[f] == 1) continue;
      const auto d = static_cast<std::size_t>(dim_of[f]);
      const auto [j, c] = rows[f][at[f]];
      if (c == m[f] - 1 && j + 1 < counts[d]) {  // the last row of the node in its cycle
        auto succ = tile;
        ++succ[d];
        const std::int64_t gap = plan.time_of(succ) - t0;
        if (gap_known[f] && gap != table.gap[f]) return internal("two gaps across one factor");
        table.gap[f] = gap;
        gap_known[f] = true;
        ++delta_at(t0).senders[f];
        --delta_at(t0 + z).senders[f];
      }
      if (c == 0 && j > 0) {
        ++delta_at(t0).receivers[f];
        --delta_at(t0 + z).receivers[f];
      }
    }
    std::size_t f = fs;
    while (f > 0 && at[f - 1] + 1 == rows[f - 1].size()) at[--f] = 0;
    if (f == 0) break;
    ++at[f - 1];
  }
  StepRun run;
  run.senders.assign(fs, 0);
  run.receivers.assign(fs, 0);
  std::int64_t active = 0, full = 0;
  for (auto it = deltas.begin(); it != deltas.end(); ++it) {
    active += it->second.active;
    full += it->second.full;
    for (std::size_t f = 0; f < fs; ++f) {
      run.senders[f] += it->second.senders[f];
      run.receivers[f] += it->second.receivers[f];
    }
    const auto next = std::next(it);
    if (active == 0 || next == deltas.end()) continue;
    run.first_step = table.steps;
    run.time = it->first;
    run.len = next->first - it->first;
    run.full = full > 0;
    table.runs.push_back(run);
    table.steps += run.len;
  }
  return table;
}

}  // namespace tp::sim::detail
