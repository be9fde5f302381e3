// What a rank precomputes before running a plan: its tasks per time step, the face lines it
// receives and sends (one stream of faces per neighbour row), and the boxes of every face.
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>
#include <vector>

namespace tp::exec {

/// One tile a rank runs: its box, its CPU and where its remote faces come from and go to.
template <int D>
struct Task {
  Box<D> box;
  int cpu = 0;                    ///< row-major index in the node's CPU grid
  Index cpu_offset = 0;           ///< sum of the CPU grid coordinates: the subtile skew (vertical)
  std::array<int, D> in_line;     ///< receive line feeding the face across dimension k, or -1
  std::array<int, D> out_line;    ///< send line taking the face across dimension k, or -1
  std::array<Index, D> in_seq{};  ///< position of this face in its line
  std::array<Index, D> out_seq{};
};

/// A stream of faces between this rank and one neighbour for one row of tiles, in time order.
template <int D>
struct FaceLine {
  int peer = 0;  ///< the other rank
  int tag = 0;   ///< k * cpus + CPU index of the receiving tile
  int cpu = 0;   ///< the thread of this rank that owns the line
  std::size_t max_elems = 0;
  std::vector<Box<D>> regions;  ///< the slab region of each face, in sequence order
  Index next_seq = 0;           ///< send lines: the next face to start
};

/// The tasks of one time step of the plan on this rank.
template <int D>
struct StepTasks {
  std::int64_t time = 0;
  std::vector<Task<D>> tasks;
  std::vector<int> task_of_cpu;  ///< index into tasks for each CPU, or -1
};

/// Everything a rank needs to run its share of a plan.
template <int D>
struct RankLayout {
  Box<D> space;     ///< the iteration space, half-open, from 1
  Box<D> slab_box;  ///< this rank's tiles plus the halo below them
  std::vector<StepTasks<D>> steps;
  std::vector<FaceLine<D>> recv_lines;
  std::vector<FaceLine<D>> send_lines;
  Index max_cpu_offset = 0;
  Box<D> typical_tile;       ///< the first tile's box (for measuring alpha)
  Index min_map_extent = 1;  ///< the shortest tile extent along the mapping dimension
};

namespace detail {

template <int D>
Box<D> half_open_box(const plan::Plan& p, const plan::Index& tile) {
  const auto b = plan::tile_box(p.space(), p.tiling(), tile);
  Box<D> out;
  for (int d = 0; d < D; ++d) {
    out.lo[d] = b.lo[static_cast<std::size_t>(d)];
    out.hi[d] = b.hi[static_cast<std::size_t>(d)] + 1;
  }
  return out;
}

}  // namespace detail

/// Builds rank `rank`'s layout. `halo[d]` is the kernel's halo width along d. Faces crossing
/// dimension k are the halo[k] layers at the tile's high end, extended below by the halo in the
/// other dimensions when a dependence has several non-zero components (so that corner values
/// travel through the faces).
template <int D>
Expected<RankLayout<D>> build_rank_layout(const plan::Plan& plan, int rank,
                                          const std::array<int, D>& halo, bool extend_faces) {
  if (!plan.tiling().is_rectangular()) {
    return fail(Errc::invalid_argument,
                "the executor runs rectangular tiles only (a general tiling matrix was given)");
  }
  RankLayout<D> layout;
  for (int d = 0; d < D; ++d) {
    layout.space.lo[d] = 1;
    layout.space.hi[d] = plan.space().extent(d) + 1;
  }
  const int i = plan.map_dim();
  const auto my_node = plan.node_coords(rank);
  const auto counts = plan.tile_space().counts();
  const auto tiles = plan.tiles_of(rank);
  if (tiles.empty()) return fail(Errc::internal, "rank " + std::to_string(rank) + " has no tiles");

  std::map<std::pair<int, int>, int> recv_index;  // (k, cpu) -> line
  std::map<std::pair<int, int>, int> send_index;
  Box<D> rank_box = detail::half_open_box<D>(plan, tiles.front());
  layout.typical_tile = rank_box;
  layout.min_map_extent = rank_box.extent(i);
  const auto region_of = [&](const Box<D>& box, int k, bool outgoing) {
    Box<D> r = outgoing ? outgoing_face<D>(box, k, halo[static_cast<std::size_t>(k)])
                        : incoming_face<D>(box, k, halo[static_cast<std::size_t>(k)]);
    if (extend_faces) {
      for (int d = 0; d < D; ++d) {
        if (d != k) r.lo[d] -= halo[static_cast<std::size_t>(d)];
      }
    }
    return r;
  };

  for (const auto& tile : tiles) {
    const std::int64_t time = plan.time_of(tile);
    if (layout.steps.empty() || layout.steps.back().time != time) {
      layout.steps.push_back(
          {time, {}, std::vector<int>(static_cast<std::size_t>(plan.cpus()), -1)});
    }
    Task<D> task;
    task.box = detail::half_open_box<D>(plan, tile);
    task.in_line.fill(-1);
    task.out_line.fill(-1);
    const auto cpu_coords = plan.cpu_of(tile);
    task.cpu = static_cast<int>(plan.cpu_index(cpu_coords));
    for (auto c : cpu_coords) task.cpu_offset += c;
    layout.max_cpu_offset = std::max(layout.max_cpu_offset, task.cpu_offset);
    layout.min_map_extent = std::min(layout.min_map_extent, task.box.extent(i));
    for (int d = 0; d < D; ++d) {
      rank_box.lo[d] = std::min(rank_box.lo[d], task.box.lo[d]);
      rank_box.hi[d] = std::max(rank_box.hi[d], task.box.hi[d]);
    }
    for (int k = 0; k < D; ++k) {
      if (k == i) continue;  // along the mapping dimension every neighbour is on this CPU
      const auto kk = static_cast<std::size_t>(k);
      if (tile[kk] > 0) {
        auto pred = tile;
        --pred[kk];
        const auto node = plan.node_of(pred);
        if (node != my_node) {
          const auto key = std::make_pair(k, task.cpu);
          auto [it, fresh] =
              recv_index.try_emplace(key, static_cast<int>(layout.recv_lines.size()));
          if (fresh) {
            FaceLine<D> line;
            line.peer = static_cast<int>(plan.rank_of(node));
            line.tag = k * static_cast<int>(plan.cpus()) + task.cpu;
            line.cpu = task.cpu;
            layout.recv_lines.push_back(std::move(line));
          }
          auto& line = layout.recv_lines[static_cast<std::size_t>(it->second)];
          task.in_line[kk] = it->second;
          task.in_seq[kk] = static_cast<Index>(line.regions.size());
          line.regions.push_back(region_of(task.box, k, false));
          line.max_elems =
              std::max(line.max_elems, static_cast<std::size_t>(line.regions.back().volume()));
        }
      }
      if (tile[kk] + 1 < counts[kk]) {
        auto succ = tile;
        ++succ[kk];
        const auto node = plan.node_of(succ);
        if (node != my_node) {
          const auto key = std::make_pair(k, task.cpu);
          auto [it, fresh] =
              send_index.try_emplace(key, static_cast<int>(layout.send_lines.size()));
          if (fresh) {
            FaceLine<D> line;
            line.peer = static_cast<int>(plan.rank_of(node));
            line.tag = k * static_cast<int>(plan.cpus()) +
                       static_cast<int>(plan.cpu_index(plan.cpu_of(succ)));
            line.cpu = task.cpu;
            layout.send_lines.push_back(std::move(line));
          }
          auto& line = layout.send_lines[static_cast<std::size_t>(it->second)];
          task.out_line[kk] = it->second;
          task.out_seq[kk] = static_cast<Index>(line.regions.size());
          line.regions.push_back(region_of(task.box, k, true));
          line.max_elems =
              std::max(line.max_elems, static_cast<std::size_t>(line.regions.back().volume()));
        }
      }
    }
    auto& step = layout.steps.back();
    TP_ASSERT(step.task_of_cpu[static_cast<std::size_t>(task.cpu)] < 0);
    step.task_of_cpu[static_cast<std::size_t>(task.cpu)] = static_cast<int>(step.tasks.size());
    step.tasks.push_back(task);
  }
  layout.slab_box = rank_box;
  for (int d = 0; d < D; ++d) layout.slab_box.lo[d] -= halo[static_cast<std::size_t>(d)];
  return layout;
}

/// Seconds one face takes to reach a neighbour: every rank sends one face of each of its send
/// lines and receives one on each receive line at once; median over repetitions of the round
/// time divided by the faces received. Collective; 0 when the rank has no neighbour.
template <int D>
Expected<double> measure_face_transfer(comm::World& world, const RankLayout<D>& layout,
                                       std::size_t elem_bytes);

/// Seconds a resident kernel takes for a tile of `box`'s extents (min of 3 runs on a scratch
/// slab at the space's corner, boundary values around it): alpha of seed 002 formula (6).
template <ResidentKernel K>
double measure_tile_seconds(const K& kernel, const Box<K::dims>& box);

}  // namespace tp::exec

#include <tilepipe/exec/pipeline_probes.hpp>
