// What a rank precomputes for a frontier kernel before its run: the size of every face its tiles
// read and write (with vertical grouping, a face across another dimension is the concatenation
// of the N subtile faces), and the double-buffered slots of the faces between its own tiles.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/pipeline_tasks.hpp>
#include <tilepipe/exec/rank_context.hpp>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

namespace tp::exec {

/// A rank's frontier faces: local slots and the sizes of remote ones.
template <int D>
struct FrontierLayout {
  /// Per task (layout.steps[s].tasks[i] -> local[s][i]): its faces across each dimension k.
  struct TaskFaces {
    std::array<std::int64_t, D> in_slot;   ///< local slot it reads, or -1 (remote, boundary)
    std::array<std::int64_t, D> out_slot;  ///< local slot it writes, or -1 (remote, unread)
    /// Which of the slot's two buffers the face read / written is in: the parity of the tile's
    /// place in its column of the rank's tiles along k (the producer's for the face read), so
    /// that a tile never writes the buffer it reads, whatever the steps between them (a
    /// block-cyclic plan's tiles of consecutive cycles on one CPU: ADR 0022).
    std::array<std::uint8_t, D> in_buffer{};
    std::array<std::uint8_t, D> out_buffer{};
    std::array<std::size_t, D> in_n{};   ///< elements of the face it reads
    std::array<std::size_t, D> out_n{};  ///< elements of the face it writes
  };
  std::vector<std::vector<TaskFaces>> local;
  std::vector<std::size_t> slot_elems;  ///< per local slot (two buffers each, by step parity)
  std::vector<std::size_t> recv_elems;  ///< per receive line: its largest face
  std::vector<std::size_t> send_elems;  ///< per send line
  std::array<std::size_t, D> most{};    ///< the largest subtile face across each dimension
};

/// Builds the frontier layout of `layout` for `kernel` with N = `nsub` subtiles along `map_dim`.
/// A local face's consumer runs one step after its producer (hyperplane grouping, and along the
/// mapping dimension), or in the same step one sub-step after it (vertical grouping, a
/// neighbouring CPU's tile); anything else is a bug in the layout (Errc::internal).
template <FrontierKernel K>
Expected<FrontierLayout<K::dims>> build_frontier_layout(const K& kernel,
                                                        const RankLayout<K::dims>& layout,
                                                        int map_dim, Index nsub, bool vertical) {
  constexpr int D = K::dims;
  const auto part_of = [&](const Box<D>& box, Index s) {
    return detail::subtile(box, map_dim, s, nsub);
  };
  // Along the mapping dimension the first (incoming) or last (outgoing) subtile's face, along
  // another dimension the N subtile faces one after the other.
  const auto face_elems = [&](int k, const Box<D>& box, bool outgoing) {
    if (nsub == 1) return kernel.face_size(k, box);
    if (k == map_dim) return kernel.face_size(k, part_of(box, outgoing ? nsub - 1 : 0));
    std::size_t n = 0;
    for (Index s = 0; s < nsub; ++s) n += kernel.face_size(k, part_of(box, s));
    return n;
  };
  const auto key_of = [&](int k, const Box<D>& box) {
    std::vector<Index> key;
    for (int d = 0; d < D; ++d) {
      if (d != k) key.push_back(box.lo[d]);
    }
    return std::make_pair(k, key);
  };
  FrontierLayout<D> out;
  out.recv_elems.resize(layout.recv_lines.size());
  out.send_elems.resize(layout.send_lines.size());
  std::map<std::pair<int, std::vector<Index>>, std::int64_t> slot_of;
  std::map<std::tuple<int, std::vector<Index>, Index>, std::int64_t> time_of_face;
  std::map<std::pair<int, std::vector<Index>>, std::vector<Index>> column;  // tiles' lo along k
  for (const auto& step : layout.steps) {
    for (const auto& task : step.tasks) {
      for (int k = 0; k < D; ++k) {
        time_of_face[{k, key_of(k, task.box).second, task.box.hi[k]}] = step.time;
        column[key_of(k, task.box)].push_back(task.box.lo[k]);
        for (Index p = 0; p < nsub; ++p) {
          auto& m = out.most[static_cast<std::size_t>(k)];
          m = std::max(m, kernel.face_size(k, part_of(task.box, p)));
        }
      }
    }
  }
  for (auto& [key, los] : column) std::sort(los.begin(), los.end());
  // The parity of a tile's place in its column along k.
  const auto place = [&](int k, const Box<D>& box) {
    const auto& los = column[key_of(k, box)];
    return static_cast<std::uint8_t>(
        (std::lower_bound(los.begin(), los.end(), box.lo[k]) - los.begin()) & 1);
  };
  const auto slot = [&](int k, const Box<D>& box, std::size_t n) {
    auto [it, fresh] =
        slot_of.try_emplace(key_of(k, box), static_cast<std::int64_t>(out.slot_elems.size()));
    if (fresh) out.slot_elems.push_back(0);
    auto& e = out.slot_elems[static_cast<std::size_t>(it->second)];
    e = std::max(e, n);
    return it->second;
  };
  for (std::size_t s = 0; s < layout.steps.size(); ++s) {
    out.local.emplace_back();
    for (const auto& task : layout.steps[s].tasks) {
      typename FrontierLayout<D>::TaskFaces f;
      f.in_slot.fill(-1);
      f.out_slot.fill(-1);
      for (int k = 0; k < D; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        f.in_n[kk] = face_elems(k, task.box, false);
        f.out_n[kk] = face_elems(k, task.box, true);
        if (task.in_line[kk] >= 0) {
          auto& e = out.recv_elems[static_cast<std::size_t>(task.in_line[kk])];
          e = std::max(e, f.in_n[kk]);
        } else if (task.box.lo[k] > layout.space.lo[k]) {
          const auto producer = time_of_face.find({k, key_of(k, task.box).second, task.box.lo[k]});
          const std::int64_t gap =
              producer == time_of_face.end() ? -1 : layout.steps[s].time - producer->second;
          // One step before it, or several (a block-cyclic plan's rows of consecutive cycles on
          // one CPU), or, with vertical grouping, a neighbouring CPU's tile in the same step.
          if (gap < 1 && !(vertical && gap == 0 && k != map_dim)) {
            return fail(Errc::internal, "a local face's producer does not run before it");
          }
          f.in_buffer[kk] = static_cast<std::uint8_t>(1 - place(k, task.box));
          f.in_slot[kk] = slot(k, task.box, f.in_n[kk]);
        }
        if (task.out_line[kk] >= 0) {
          auto& e = out.send_elems[static_cast<std::size_t>(task.out_line[kk])];
          e = std::max(e, f.out_n[kk]);
        } else if (task.box.hi[k] < layout.space.hi[k]) {
          f.out_slot[kk] = slot(k, task.box, f.out_n[kk]);
          f.out_buffer[kk] = place(k, task.box);
        }
      }
      out.local.back().push_back(f);
    }
  }
  return out;
}

}  // namespace tp::exec
