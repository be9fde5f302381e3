// Building the simulated ranks from a plan: each rank's rows of tiles, steps, faces and their
// sizes per step (in closed form through RankShape), per-node overrides, the network's ports and
// torus links. The event loop that runs them is simulator.cpp.
#include <tilepipe/support/assert.hpp>

#include "simulator.hpp"

#include <algorithm>
#include <string>

namespace tp::sim::detail {

Status Simulator::set_up() {
  overlap_ = plan_.schedule().kind() == ScheduleKind::overlap;
  vertical_ = plan_.schedule().grouping().kind() == GroupingKind::vertical;
  comm_thread_ = options_.model.comm_thread;
  const int n = plan_.space().dims();
  const int i = plan_.map_dim();
  const auto counts = plan_.tile_space().counts();
  const auto& w = plan_.tiling().tile_extents();
  const auto& extent = plan_.space().extents();
  const auto ii = static_cast<std::size_t>(i);
  z_ = counts[ii];
  h_full_ = static_cast<double>(w[ii]);
  h_last_ = static_cast<double>(extent[ii] - (z_ - 1) * w[ii]);
  nsub_ = vertical_ ? std::max<std::int64_t>(1, prediction_.step.subtiles) : 1;
  const model::ComputeCost& cc = machine_.compute_for(options_.model.kernel);
  elem_ = cc.element_bytes;
  if (comm_thread_ && plan_.cpus() > 1 && prediction_.step.alpha.count() > 0) {
    ct_share_ = prediction_.step.comm_thread_comp / prediction_.step.alpha;
  }
  std::vector<int> dim_of;
  for (int d = 0; d < n; ++d) {
    if (d != i) dim_of.push_back(d);
  }
  factors_ = static_cast<int>(dim_of.size());
  m_ = plan_.cpu_grid();
  depth_.assign(static_cast<std::size_t>(factors_), 0);
  for (int f = 0; f < factors_; ++f) {
    const auto fu = static_cast<std::size_t>(f);
    for (const auto& d : plan_.deps().vectors()) {
      depth_[fu] = std::max(depth_[fu], d[static_cast<std::size_t>(dim_of[fu])]);
    }
    if (plan_.mesh()[fu] == 1) depth_[fu] = 0;
  }

  const std::int64_t nodes = plan_.nodes();
  // The block mapping's ranks in closed form; the block-cyclic mapping's (ADR 0018) tabulated
  // from their rows of tiles.
  if (plan_.is_cyclic() || options_.enumerate_rows) {
    std::vector<bool> faces(static_cast<std::size_t>(factors_));
    for (int f = 0; f < factors_; ++f)
      faces[static_cast<std::size_t>(f)] = depth_[static_cast<std::size_t>(f)] > 0;
    tables_.reserve(static_cast<std::size_t>(nodes));
    for (std::int64_t r = 0; r < nodes; ++r) {
      auto table = build_step_table(plan_, r, dim_of, faces);
      if (!table) return Unexpected{table.error()};
      tables_.push_back(std::move(*table));
    }
  }
  std::vector<double> scale(static_cast<std::size_t>(nodes), 1.0);
  for (const auto& o : machine_.network.nodes) {
    if (o.node >= nodes) {
      return fail(Errc::invalid_argument, "the machine file's network.nodes names node " +
                                              std::to_string(o.node) + " but the plan has " +
                                              std::to_string(nodes) + " nodes (0.." +
                                              std::to_string(nodes - 1) + ")");
    }
    scale[static_cast<std::size_t>(o.node)] = o.compute_scale;
  }
  ranks_.resize(static_cast<std::size_t>(nodes));
  for (std::int64_t r = 0; r < nodes; ++r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    const auto node = plan_.node_coords(r);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(factors_));
    std::vector<double> width(static_cast<std::size_t>(factors_));
    rank.sends.assign(static_cast<std::size_t>(factors_), false);
    rank.receives.assign(static_cast<std::size_t>(factors_), false);
    bool idle = false;  // no row of tiles reaches it (ADR 0010): no steps, no faces
    for (int f = 0; f < factors_; ++f) {
      const auto fu = static_cast<std::size_t>(f);
      const auto d = static_cast<std::size_t>(dim_of[fu]);
      const std::int64_t first = node[fu] * m_[fu];
      rows[fu] = std::min(m_[fu], counts[d] - first);
      if (rows[fu] < 1) {
        idle = true;
        rows[fu] = 1;
        width[fu] = 1;
        continue;
      }
      width[fu] = static_cast<double>(std::min(w[d], extent[d] - first * w[d]));
      // The successor along f has tiles when its first row exists (block mapping).
      rank.sends[fu] =
          depth_[fu] > 0 && node[fu] + 1 < plan_.mesh()[fu] && (node[fu] + 1) * m_[fu] < counts[d];
      rank.receives[fu] = depth_[fu] > 0 && node[fu] > 0;
    }
    if (idle) {
      std::fill(rank.sends.begin(), rank.sends.end(), false);
      std::fill(rank.receives.begin(), rank.receives.end(), false);
    }
    auto it = shapes_.find(rows);
    if (it == shapes_.end()) it = shapes_.emplace(rows, RankShape(rows)).first;
    rank.shape = &it->second;
    rank.steps = idle ? 0 : vertical_ ? z_ : z_ + rank.shape->depth();
    if (!tables_.empty()) {
      const StepTable& table = tables_[static_cast<std::size_t>(r)];
      rank.table = &table;
      rank.steps = table.steps;
      for (int f = 0; f < factors_; ++f) {
        const auto fu = static_cast<std::size_t>(f);
        rank.sends[fu] = rank.receives[fu] = false;
        for (const StepRun& run : table.runs) {
          rank.sends[fu] = rank.sends[fu] || run.senders[fu] > 0;
          rank.receives[fu] = rank.receives[fu] || run.receivers[fu] > 0;
        }
      }
    }
    rank.area = 1;
    for (double x : width) rank.area *= x;
    rank.face_area.assign(static_cast<std::size_t>(factors_), 0);
    for (int f = 0; f < factors_; ++f) {
      const auto fu = static_cast<std::size_t>(f);
      rank.face_area[fu] = rank.area / width[fu] * static_cast<double>(depth_[fu]);
    }
    rank.scale = scale[static_cast<std::size_t>(r)];
    rank.inbox.resize(static_cast<std::size_t>(factors_));
    rank.result.rank = r;
    rank.result.steps = rank.steps;
    rank.step = comm_thread_ ? -1 : 0;
    total_steps_ += rank.steps;
    if (total_steps_ > max_rank_steps) {
      return fail(Errc::invalid_argument,
                  "the plan is beyond the simulator's limits: more than " +
                      std::to_string(max_rank_steps) +
                      " rank steps (nodes x time steps); use taller tiles or fewer nodes");
    }
  }
  if (options_.spans) {
    if (total_steps_ > max_span_rank_steps) {
      return fail(Errc::invalid_argument,
                  "the schedule's spans are kept for at most " +
                      std::to_string(max_span_rank_steps) + " rank steps; this plan has " +
                      std::to_string(total_steps_) + " (fewer nodes or taller tiles)");
    }
    spans_.resize(static_cast<std::size_t>(nodes));
  }
  const model::Hosts& hosts = machine_.network.hosts;
  sharing_ = hosts.shared();
  if (sharing_) {
    if (comm_thread_) {
      return fail(Errc::invalid_argument,
                  "the machine file's network.hosts (ranks sharing cores) is not simulated with "
                  "a communication thread");
    }
    hosts_.assign(
        static_cast<std::size_t>((nodes + hosts.ranks_per_host - 1) / hosts.ranks_per_host),
        Host{});
    // Threads sit on cores (k x cpus + t) mod cores < min(cores, threads of a host).
    const std::int64_t used = std::min(hosts.cores, hosts.ranks_per_host * plan_.cpus());
    for (Host& h : hosts_) h.computing.assign(static_cast<std::size_t>(used), 0);
  }
  set_up_network();
  if (torus_) {
    std::int64_t size = 1;
    for (auto t : torus_dims_) size *= t;
    if (size < nodes) {
      std::string shape;
      for (auto t : torus_dims_) shape += (shape.empty() ? "" : "x") + std::to_string(t);
      return fail(Errc::invalid_argument,
                  "the machine file's torus " + shape + " has " + std::to_string(size) +
                      " nodes, fewer than the plan's " + std::to_string(nodes));
    }
  }
  return {};
}

void Simulator::set_up_network() {
  const model::Network& net = machine_.network;
  const std::int64_t nodes = plan_.nodes();
  // Ports: per node one out and one in (serial, queued), or one per mesh factor (parallel).
  const std::int64_t per_node =
      2 * (machine_.send_mode == model::SendMode::parallel ? std::max(1, factors_) : 1);
  res_.assign(static_cast<std::size_t>(nodes * per_node), Resource{});
  for (std::int64_t r = 0; r < nodes; ++r) {
    double bw = machine_.link.bandwidth_bytes_per_s;
    for (const auto& o : net.nodes) {
      if (o.node == r && o.bandwidth_bytes_per_s > 0) bw = o.bandwidth_bytes_per_s;
    }
    for (std::int64_t p = 0; p < per_node; ++p) {
      res_[static_cast<std::size_t>(r * per_node + p)].bw = bw;
    }
  }
  torus_ = net.topology == model::Topology::torus;
  if (torus_) {
    torus_dims_ = net.torus;
    torus_strides_.assign(torus_dims_.size(), 1);
    std::int64_t size = 1;
    for (std::size_t d = torus_dims_.size(); d-- > 0;) {
      torus_strides_[d] = size;
      size *= torus_dims_[d];
    }
    link_base_ = static_cast<std::int64_t>(res_.size());
    const auto links =
        static_cast<std::size_t>(size * 2 * static_cast<std::int64_t>(torus_dims_.size()));
    res_.resize(res_.size() + links, Resource{0, net.link_bandwidth_bytes_per_s});
  }
}

double Simulator::height(const Rank& r, std::int64_t s) const {
  if (r.table != nullptr) return r.table->run_of(s).full ? h_full_ : h_last_;
  if (vertical_) return s == z_ - 1 ? h_last_ : h_full_;
  // The largest active tile: any active tile short of the last one has the full height.
  const std::int64_t hi_o = std::min(r.shape->depth(), s);
  return s - hi_o < z_ - 1 ? h_full_ : h_last_;
}

double Simulator::compute_time(const Rank& r, std::int64_t s) const {
  const model::ComputeCost& cc = machine_.compute_for(options_.model.kernel);
  const auto g = static_cast<std::int64_t>(height(r, s) * r.area);
  const Seconds alpha = cc.tile_time(std::max<std::int64_t>(1, g));
  // Hyperplane grouping: the rank's CPUs meet at the step barrier, so its step computes as long
  // as the slowest of their tiles (the model's t_comp, docs/model.md "The step barrier").
  const Seconds step = vertical_ || comm_thread_
                           ? alpha
                           : model::slowest_of_tiles(alpha, machine_.tile_spread, plan_.cpus());
  return step.count() * r.scale;
}

std::int64_t Simulator::senders(const Rank& r, int f, std::int64_t s) const {
  if (!r.sends[static_cast<std::size_t>(f)] || s < 0 || s >= r.steps) return 0;
  if (r.table != nullptr) return r.table->run_of(s).senders[static_cast<std::size_t>(f)];
  if (vertical_) return r.shape->others(f);
  const std::int64_t c = m_[static_cast<std::size_t>(f)] - 1;  // the last row along f
  return r.shape->others_with_offset(f, s - z_ + 1 - c, s - c);
}

std::int64_t Simulator::receivers(const Rank& r, int f, std::int64_t s) const {
  if (!r.receives[static_cast<std::size_t>(f)] || s < 0 || s >= r.steps) return 0;
  if (r.table != nullptr) return r.table->run_of(s).receivers[static_cast<std::size_t>(f)];
  if (vertical_) return r.shape->others(f);
  return r.shape->others_with_offset(f, s - z_ + 1, s);  // the first row along f
}

}  // namespace tp::sim::detail
