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
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace tp::exec {

/// One tile a rank runs: its box, its CPU and where its remote faces come from and go to.
template <int D>
struct Task {
  Box<D> box;
  int cpu = 0;                    ///< row-major index in the node's CPU grid
  Index cpu_offset = 0;           ///< sum of the CPU grid coordinates: the subtile skew (vertical)
  int part = 0;                   ///< the part of the rank's slab that holds the box and its halo
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
  std::vector<int> parts;       ///< the part of this rank's slab that holds each region
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
  Box<D> space;  ///< the iteration space, half-open, from 1
  /// The boxes of points the rank computes, disjoint, in row-major order of their corners: its
  /// tiles' bounding box for a block plan, one per cycle vector for a block-cyclic one (ADR
  /// 0018), none for an idle rank. Part p of the slab holds parts[p] and the halo below it,
  /// part_slabs[p] (ADR 0028): the slab holds the rank's own rows only.
  std::vector<Box<D>> parts;
  std::vector<Box<D>> part_slabs;
  std::vector<StepTasks<D>> steps;
  std::vector<FaceLine<D>> recv_lines;
  std::vector<FaceLine<D>> send_lines;
  Index max_cpu_offset = 0;
  Box<D> typical_tile;       ///< the first tile's box (for measuring alpha)
  Index min_map_extent = 1;  ///< the shortest tile extent along the mapping dimension
};

/// The points of `layout`'s slab: its parts with the halo below each (ADR 0028).
template <int D>
Index slab_volume(const RankLayout<D>& layout) {
  Index n = 0;
  for (const Box<D>& b : layout.part_slabs) n += b.volume();
  return n;
}

namespace detail {

/// Disjoint boxes that `parts` (non-empty ones; empty ones are skipped) tile exactly, in row-major
/// order of their corners: the product over the dimensions of the merged intervals the parts
/// cover (intervals that meet or overlap join). nullopt where the parts do not tile that product
/// (their volumes differ); none for no non-empty part. O(P log P) for P parts.
template <int D>
std::optional<std::vector<Box<D>>> product_boxes(const std::vector<Box<D>>& parts) {
  std::array<std::vector<std::pair<Index, Index>>, D> spans;
  Index parts_volume = 0;
  for (const Box<D>& b : parts) {
    if (b.empty()) continue;
    parts_volume += b.volume();
    for (int d = 0; d < D; ++d) spans[d].emplace_back(b.lo[d], b.hi[d]);
  }
  if (parts_volume == 0) return std::vector<Box<D>>{};
  for (auto& v : spans) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<Index, Index>> merged;
    for (const auto& [lo, hi] : v) {
      if (!merged.empty() && lo <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, hi);
      } else {
        merged.emplace_back(lo, hi);
      }
    }
    v = std::move(merged);
  }
  std::vector<Box<D>> boxes;
  std::array<std::size_t, D> at{};
  Index volume = 0;
  for (;;) {
    Box<D> b;
    for (int d = 0; d < D; ++d) {
      b.lo[d] = spans[d][at[d]].first;
      b.hi[d] = spans[d][at[d]].second;
    }
    volume += b.volume();
    boxes.push_back(b);
    int d = D - 1;
    while (d >= 0 && ++at[d] == spans[d].size()) at[d--] = 0;
    if (d < 0) break;
  }
  if (volume != parts_volume) return std::nullopt;
  return boxes;
}

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

/// A re-partition of every node's CPU rows along one non-mapping dimension (the communication
/// thread's smaller share, docs/executor.md): node boundaries stay the plan's; inside a node, the
/// row with CPU coordinate 0 along `dim` gets `share` times an equal row's width, the other rows
/// split the rest evenly. dim < 0: the plan's boxes unchanged.
struct RowSplit {
  int dim = -1;       ///< 0-based split dimension k (m_k > 1), or -1
  double share = 1;   ///< row 0's width over W / q (W: the node's width along k, q: its rows)
  int min_width = 1;  ///< every row keeps at least this many points (>= the halo along k)
};

/// The q + 1 boundaries of q rows over [lo, hi) under `split` (row 0 first): row 0 has
/// round(share * W / q) points clamped to [min_width, W - (q - 1) min_width], the others the rest
/// as evenly as possible (the first ones one point more). Deterministic: every rank computes the
/// same bounds from the same inputs. Precondition: q >= 1, hi - lo >= q * min_width.
inline std::vector<Index> split_row_bounds(Index lo, Index hi, Index q, const RowSplit& split) {
  TP_EXPECTS(q >= 1 && hi - lo >= q * split.min_width);
  std::vector<Index> b(static_cast<std::size_t>(q + 1));
  b.front() = lo;
  b.back() = hi;
  if (q == 1) return b;
  const Index width = hi - lo;
  const double equal = static_cast<double>(width) / static_cast<double>(q);
  const Index first = std::clamp<Index>(std::llround(split.share * equal), split.min_width,
                                        width - (q - 1) * split.min_width);
  const Index rest = width - first;
  b[1] = lo + first;
  for (Index r = 1; r < q; ++r) {
    const Index w = rest / (q - 1) + (r - 1 < rest % (q - 1) ? 1 : 0);
    b[static_cast<std::size_t>(r + 1)] = b[static_cast<std::size_t>(r)] + w;
  }
  TP_ASSERT(b.back() == hi);
  return b;
}

/// The box of `tile` (half-open) after `split`: along split.dim the tile's row of its node takes
/// the split's bounds; the plan's box otherwise (and when the node's width cannot give every row
/// min_width points).
template <int D>
Box<D> split_tile_box(const plan::Plan& plan, const plan::Index& tile, const RowSplit& split) {
  Box<D> box = detail::half_open_box<D>(plan, tile);
  if (split.dim < 0) return box;
  const int k = split.dim;
  const auto kk = static_cast<std::size_t>(k);
  const auto factor = static_cast<std::size_t>(k - (k > plan.map_dim() ? 1 : 0));
  const Index m_k = plan.cpu_grid()[factor];
  const Index count = plan.tile_space().counts()[kk];
  const Index first = tile[kk] / m_k * m_k;
  const Index last = std::min(count - 1, first + m_k - 1);
  auto lo_tile = tile;
  auto hi_tile = tile;
  lo_tile[kk] = first;
  hi_tile[kk] = last;
  const Index lo = detail::half_open_box<D>(plan, lo_tile).lo[k];
  const Index hi = detail::half_open_box<D>(plan, hi_tile).hi[k];
  const Index q = last - first + 1;
  if (hi - lo < q * split.min_width) return box;
  const auto b = split_row_bounds(lo, hi, q, split);
  box.lo[k] = b[static_cast<std::size_t>(tile[kk] - first)];
  box.hi[k] = b[static_cast<std::size_t>(tile[kk] - first + 1)];
  return box;
}

/// The non-mapping dimension with the most CPUs (the first on ties), or -1 when m = 1.
inline int comm_thread_split_dim(const plan::Plan& plan) {
  int best = -1;
  std::int64_t most = 1;
  std::size_t f = 0;
  for (int d = 0; d < static_cast<int>(plan.space().dims()); ++d) {
    if (d == plan.map_dim()) continue;
    const auto m_k = plan.cpu_grid()[f++];
    if (m_k > most) {
      most = m_k;
      best = d;
    }
  }
  return best;
}

/// Builds rank `rank`'s layout (empty for a rank without tiles, Plan::idle_nodes). `halo[d]` is the
/// kernel's halo width along d. Faces crossing dimension k are the halo[k] layers at the tile's
/// high end, extended below by the halo in the other dimensions when a dependence has several
/// non-zero components (so that corner values travel through the faces). Tile boxes are the plan's,
/// re-partitioned by `split` if given.
template <int D>
Expected<RankLayout<D>> build_rank_layout(const plan::Plan& plan, int rank,
                                          const std::array<int, D>& halo, bool extend_faces,
                                          const RowSplit& split = {}) {
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
  if (tiles.empty()) {
    // An idle rank (fewer rows of tiles than nodes): no steps, no lines and a slab of no part;
    // it still joins every collective of the run. Its typical tile is tile 0's.
    layout.typical_tile = detail::half_open_box<D>(plan, plan::Index(D, 0));
    layout.min_map_extent = layout.typical_tile.extent(plan.map_dim());
    return layout;
  }

  std::map<std::pair<int, int>, int> recv_index;  // (k, cpu) -> line
  std::map<std::pair<int, int>, int> send_index;
  layout.typical_tile = split_tile_box<D>(plan, tiles.front(), split);
  layout.min_map_extent = layout.typical_tile.extent(i);
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
    task.box = split_tile_box<D>(plan, tile, split);
    task.in_line.fill(-1);
    task.out_line.fill(-1);
    const auto cpu_coords = plan.cpu_of(tile);
    task.cpu = static_cast<int>(plan.cpu_index(cpu_coords));
    for (auto c : cpu_coords) task.cpu_offset += c;
    layout.max_cpu_offset = std::max(layout.max_cpu_offset, task.cpu_offset);
    layout.min_map_extent = std::min(layout.min_map_extent, task.box.extent(i));
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
  // The slab's parts (ADR 0028): the boxes the tiles tile (one per cycle vector), each with the
  // halo below it. A part is a product of one merged interval per dimension; a tile's part is
  // found from the interval holding its corner in each dimension.
  std::vector<Box<D>> boxes;
  for (const auto& step : layout.steps) {
    for (const auto& task : step.tasks) boxes.push_back(task.box);
  }
  auto parts = detail::product_boxes<D>(boxes);
  TP_ASSERT(parts.has_value() && !parts->empty());  // the tiles are a product of intervals
  layout.parts = std::move(*parts);
  std::array<std::vector<Index>, D> starts;  // per dimension, the intervals' low ends, ascending
  for (const Box<D>& part : layout.parts) {
    Box<D> slab = part;
    for (int d = 0; d < D; ++d) {
      slab.lo[d] -= halo[static_cast<std::size_t>(d)];
      auto& v = starts[static_cast<std::size_t>(d)];
      if (std::find(v.begin(), v.end(), part.lo[d]) == v.end()) v.push_back(part.lo[d]);
    }
    layout.part_slabs.push_back(slab);
  }
  for (auto& v : starts) std::sort(v.begin(), v.end());
  for (auto& step : layout.steps) {
    for (auto& task : step.tasks) {
      std::size_t at = 0;
      for (int d = 0; d < D; ++d) {
        const auto& v = starts[static_cast<std::size_t>(d)];
        const auto x = std::upper_bound(v.begin(), v.end(), task.box.lo[d]) - v.begin() - 1;
        at = at * v.size() + static_cast<std::size_t>(x);
      }
      task.part = static_cast<int>(at);
      TP_ASSERT(layout.parts[at].contains(task.box));
      for (int k = 0; k < D; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        if (task.in_line[kk] >= 0) {
          auto& line = layout.recv_lines[static_cast<std::size_t>(task.in_line[kk])];
          line.parts.resize(line.regions.size());
          line.parts[static_cast<std::size_t>(task.in_seq[kk])] = task.part;
        }
        if (task.out_line[kk] >= 0) {
          auto& line = layout.send_lines[static_cast<std::size_t>(task.out_line[kk])];
          line.parts.resize(line.regions.size());
          line.parts[static_cast<std::size_t>(task.out_seq[kk])] = task.part;
        }
      }
    }
  }
  return layout;
}

/// The points of rank `rank`'s slab (build_rank_layout's part_slabs without a RowSplit, summed)
/// for a kernel with halo widths `halo` (one per dimension): along each dimension the rank's
/// rows of tiles merge into intervals, each with the halo below it, and the parts are their
/// product. 0 for an idle rank. O(tiles along the dimensions) (ADR 0028: the door's memory
/// estimate).
inline Index slab_points(const plan::Plan& plan, std::int64_t rank, std::span<const int> halo) {
  const int dims = static_cast<int>(plan.space().dims());
  TP_EXPECTS(static_cast<int>(halo.size()) == dims);
  const auto node = plan.node_coords(rank);
  const auto counts = plan.tile_space().counts();
  Index points = 1;
  std::size_t f = 0;
  for (int d = 0; d < dims; ++d) {
    const auto dd = static_cast<std::size_t>(d);
    const bool mapped = d == plan.map_dim();
    plan::Index tile(static_cast<std::size_t>(dims), 0);
    Index length = 0;
    Index intervals = 0;
    Index last_hi = 0;
    for (Index j = 0; j < counts[dd]; ++j) {
      tile[dd] = j;
      if (!mapped && plan.node_of(tile)[f] != node[f]) continue;
      const auto b = plan::tile_box(plan.space(), plan.tiling(), tile);
      const Index lo = b.lo[dd];
      const Index hi = b.hi[dd] + 1;
      if (hi <= lo) continue;
      if (intervals == 0 || lo != last_hi) ++intervals;
      length += hi - lo;
      last_hi = hi;
    }
    if (!mapped) ++f;
    points *= length + intervals * halo[dd];
  }
  return points;
}

}  // namespace tp::exec
