// The single-process tile runner: M threads walk the hyperplanes of a rectangular tiling.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/rect_tiling.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/exec/slab_memory.hpp>
#include <tilepipe/exec/spin_wait.hpp>
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace tp::exec {

namespace detail {

template <int D>
std::string tile_name(const Point<D>& c) {
  std::string s = "(";
  for (int d = 0; d < D; ++d) s += (d ? ", " : "") + std::to_string(c[d]);
  return s + ")";
}

/// Runs tile(c) for every tile, hyperplane by hyperplane (tiles of one step spread round-robin
/// over the threads, a barrier per step); a throwing tile stops the run with an Error.
template <int D, class TileFn>
Status run_hyperplanes(const RectTiling<D>& tiling, int threads, TileFn&& tile) {
  const auto groups = tiling.groups();
  std::string failure;
  try {
    run_steps(threads, tiling.steps(), [&](int t, Index s) {
      const auto& g = groups[static_cast<std::size_t>(s)];
      for (std::size_t i = static_cast<std::size_t>(t); i < g.size();
           i += static_cast<std::size_t>(threads)) {
        try {
          tile(t, s, g[i]);
        } catch (const std::exception& e) {
          throw std::runtime_error("failed in tile " + tile_name<D>(g[i]) + ": " + e.what());
        }
      }
    });
  } catch (const std::system_error& e) {  // a thread that could not start (run_steps)
    return fail(Errc::system, e.what());
  } catch (const std::exception& e) {
    return fail(Errc::internal, std::string("kernel ") + e.what());
  }
  return {};
}

}  // namespace detail

/// Runs a resident kernel over `tiling` on `threads` threads in wavefront order, updating `slab`
/// in place, then reduces tile_result over all tiles. The slab must hold the space and its halo
/// (fill_halo sets the halo). Returns the result, or an Error naming the tile whose kernel threw.
template <ResidentKernel K>
Expected<typename K::result_type> run_local(const K& kernel,
                                            const SlabView<typename K::value_type, K::dims>& slab,
                                            const RectTiling<K::dims>& tiling, int threads) {
  constexpr int D = K::dims;
  using R = typename K::result_type;
  TP_EXPECTS(threads >= 1);
  Box<D> needed = tiling.space();
  for (int d = 0; d < D; ++d) needed.lo[d] -= halo_width<K>(d);
  TP_EXPECTS(slab.bounds().contains(needed));
  TP_TRY(detail::run_hyperplanes<D>(tiling, threads, [&](int, Index, const Point<D>& c) {
    kernel.compute_tile(tiling.box_of(c), slab);
  }));
  std::vector<R> partial(static_cast<std::size_t>(threads));
  const SlabView<const typename K::value_type, D> cslab = slab;
  TP_TRY(detail::run_hyperplanes<D>(tiling, threads, [&](int t, Index, const Point<D>& c) {
    auto& p = partial[static_cast<std::size_t>(t)];
    p = K::combine(p, kernel.tile_result(tiling.box_of(c), cslab));
  }));
  R total{};
  for (const R& p : partial) total = K::combine(total, p);
  return total;
}

namespace detail {

/// Face slots padded to whole cache lines, from a 64-byte boundary: neighbouring slots written by
/// different threads never share a line. Left uninitialized (every slot is written before it is
/// read): zeroing them here would fault in their pages on the calling thread before the team
/// starts, serially (0.6 ms for the 1 MB of a 30k x 30k sw pair on two threads), where the
/// threads that write them fault them in as they go, in parallel (or ahead, touch()).
template <class F>
class FaceSlots {
 public:
  FaceSlots(std::size_t count, std::size_t values) {
    constexpr std::size_t line = 64;
    const std::size_t per_line = sizeof(F) <= line && line % sizeof(F) == 0 ? line / sizeof(F) : 1;
    stride_ = (values + per_line - 1) / per_line * per_line;
    storage_.reset(new F[count * stride_ + per_line]);  // default-initialized
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.get());
    base_ = storage_.get() + ((line - address % line) % line) / sizeof(F) % per_line;
  }
  F* operator[](std::size_t i) noexcept { return base_ + i * stride_; }
  /// Faults in slot i's pages on the calling thread (its values do not matter: every slot is
  /// written before it is read).
  void touch(std::size_t i) noexcept {
    (void)touch_pages(std::as_writable_bytes(std::span<F>((*this)[i], stride_)), 1);
  }

 private:
  std::unique_ptr<F[]> storage_;
  F* base_ = nullptr;
  std::size_t stride_ = 0;
};

/// The 2-D frontier runner: rows of tiles (dimension 0) are taken one after the other by the next
/// free thread and run left to right; tile (r, j) waits only for tile (r - 1, j) (its left
/// neighbour ran before it on the same thread). No barrier per hyperplane: a slow tile delays only
/// the tiles below it, and the pipeline's start and end cost one tile per extra thread.
/// Faces: two slots per column of tiles (by row parity) and two per row (by column parity).
template <FrontierKernel K>
Expected<typename K::result_type> run_rows(const K& kernel, const RectTiling<2>& tiling,
                                           int threads) {
  using F = typename K::face_type;
  using R = typename K::result_type;
  const Index rows = tiling.count(0);
  const Index cols = tiling.count(1);
  const std::array<std::size_t, 2> slot_size{kernel.face_size(0, tiling.box_of(Point<2>{})),
                                             kernel.face_size(1, tiling.box_of(Point<2>{}))};
  FaceSlots<F> down(2 * static_cast<std::size_t>(cols), slot_size[0]);    // crossing dim 0
  FaceSlots<F> across(2 * static_cast<std::size_t>(rows), slot_size[1]);  // crossing dim 1
  // done[r]: tiles of row r finished (release after the tile's faces are written).
  std::vector<std::atomic<Index>> done(static_cast<std::size_t>(rows));
  for (auto& d : done) d.store(0, std::memory_order_relaxed);
  std::atomic<Index> next_row{0};
  std::atomic<bool> failed{false};
  std::vector<R> partial(static_cast<std::size_t>(threads));
  std::string failure;
  std::mutex failure_mutex;
  // A team with more threads than this process has CPUs sleeps at once (dedicated_spin).
  const auto spin = dedicated_spin(threads);
  const auto stop = [&] {
    failed.store(true, std::memory_order_relaxed);
    for (auto& d : done) {
      d.store(cols, std::memory_order_release);
      d.notify_all();
    }
  };
  try {
    run_steps(threads, 1, [&](int t, Index) {
      std::array<std::vector<F>, 2> scratch{std::vector<F>(slot_size[0]),
                                            std::vector<F>(slot_size[1])};
      R p{};
      for (Index r = next_row.fetch_add(1, std::memory_order_relaxed); r < rows;
           r = next_row.fetch_add(1, std::memory_order_relaxed)) {
        if (r > 0) {
          // While the row above computes its first tile: this row's own pages and the kernel's
          // tables, faulted in and built here rather than on the pipeline's critical path (the
          // second thread of a 30k x 30k protein pair started its first tile 0.5 ms late).
          const auto ru = static_cast<std::size_t>(r);
          across.touch(2 * ru);
          across.touch(2 * ru + 1);
          if (r == 1) {  // rows from 2 on find the slots of their parity touched by row r - 2
            for (std::size_t j = 0; j < static_cast<std::size_t>(cols); ++j) {
              down.touch(2 * j + 1);
            }
          }
          if constexpr (PreparedKernel<K>) {
            try {
              kernel.prepare_rows(tiling.box_of(Point<2>{r, 0}));
            } catch (const std::exception&) {  // a preparation only: the tiles will tell
            }
          }
        }
        for (Index j = 0; j < cols; ++j) {
          if (r > 0) {
            // Spin, then sleep (spin_wait.hpp): the first wait lasts one tile of the row above.
            spin_then_wait(
                done[static_cast<std::size_t>(r - 1)], [j](Index seen) { return seen > j; }, spin);
          }
          if (failed.load(std::memory_order_relaxed)) return;
          const Point<2> c{r, j};
          const Box<2> box = tiling.box_of(c);
          const std::size_t n0 = kernel.face_size(0, box), n1 = kernel.face_size(1, box);
          TP_ASSERT(n0 <= slot_size[0] && n1 <= slot_size[1]);
          FaceSet<const F, 2> in;
          FaceSet<F, 2> out;
          const auto ju = static_cast<std::size_t>(j), ru = static_cast<std::size_t>(r);
          if (r == 0) {
            const std::span<F> b(scratch[0].data(), n0);
            kernel.boundary_face(0, box, b);
            in[0] = b;
          } else {
            in[0] = std::span<const F>(down[2 * ju + static_cast<std::size_t>((r - 1) & 1)], n0);
          }
          out[0] = std::span<F>(down[2 * ju + static_cast<std::size_t>(r & 1)], n0);
          if (j == 0) {
            const std::span<F> b(scratch[1].data(), n1);
            kernel.boundary_face(1, box, b);
            in[1] = b;
          } else {
            in[1] = std::span<const F>(across[2 * ru + static_cast<std::size_t>((j - 1) & 1)], n1);
          }
          out[1] = std::span<F>(across[2 * ru + static_cast<std::size_t>(j & 1)], n1);
          try {
            p = K::combine(p, kernel.compute_tile(box, in, out));
          } catch (const std::exception& e) {
            {
              const std::lock_guard lock(failure_mutex);
              if (failure.empty()) failure = "failed in tile " + tile_name<2>(c) + ": " + e.what();
            }
            stop();
            return;
          }
          // Monotonic: never lowers the end mark that stop() set.
          auto& mine = done[ru];
          for (Index cur = mine.load(std::memory_order_relaxed);
               cur < j + 1 && !mine.compare_exchange_weak(cur, j + 1, std::memory_order_release,
                                                          std::memory_order_relaxed);) {
          }
          mine.notify_all();
        }
      }
      partial[static_cast<std::size_t>(t)] = p;
    });
  } catch (const std::system_error& e) {  // a thread that could not start (run_steps)
    return fail(Errc::system, e.what());
  } catch (const std::exception& e) {
    return fail(Errc::internal, std::string("kernel runner: ") + e.what());
  }
  if (!failure.empty()) return fail(Errc::internal, "kernel " + failure);
  R total{};
  for (const R& p : partial) total = K::combine(total, p);
  return total;
}

}  // namespace detail

/// Runs a frontier kernel over `tiling` on `threads` threads in wavefront order. Faces live in
/// double-buffered slots, one per row of tiles along each dimension (memory O(faces)); a tile at
/// the low end of dimension k gets a face from boundary_face. Returns the combined result.
/// Two dimensions: rows of tiles pipelined over the threads (detail::run_rows); others: one
/// hyperplane after the other.
template <FrontierKernel K>
Expected<typename K::result_type> run_local(const K& kernel, const RectTiling<K::dims>& tiling,
                                            int threads) {
  constexpr int D = K::dims;
  TP_EXPECTS(threads >= 1);
  if constexpr (D == 2) {
    return detail::run_rows(kernel, tiling, threads);
  } else {
    using F = typename K::face_type;
    using R = typename K::result_type;
    // Slot of the face crossing dimension k for tile c: c's coordinates without c[k], row-major.
    std::array<std::size_t, D> slot_size{};
    std::array<Index, D> slots{};
    for (int k = 0; k < D; ++k) {
      slots[k] = 1;
      for (int d = 0; d < D; ++d) slots[k] *= d == k ? 1 : tiling.count(d);
      // face_size does not decrease as extents grow, so tile 0 (the largest) bounds every face.
      slot_size[k] = kernel.face_size(k, tiling.box_of(Point<D>{}));
    }
    std::array<std::vector<F>, D> store;
    for (int k = 0; k < D; ++k) {
      store[k].resize(2 * static_cast<std::size_t>(slots[k]) * slot_size[k]);
    }
    std::vector<std::array<std::vector<F>, D>> scratch(static_cast<std::size_t>(threads));
    for (auto& s : scratch) {
      for (int k = 0; k < D; ++k) s[k].resize(slot_size[k]);
    }
    auto slot = [&](int k, const Point<D>& c, Index parity) {
      Index i = 0;
      for (int d = 0; d < D; ++d) {
        if (d != k) i = i * tiling.count(d) + c[d];
      }
      return store[k].data() + (static_cast<std::size_t>(parity * slots[k] + i)) * slot_size[k];
    };
    std::vector<R> partial(static_cast<std::size_t>(threads));
    TP_TRY(detail::run_hyperplanes<D>(tiling, threads, [&](int t, Index s, const Point<D>& c) {
      const Box<D> box = tiling.box_of(c);
      FaceSet<const F, D> in;
      FaceSet<F, D> out;
      for (int k = 0; k < D; ++k) {
        const std::size_t n = kernel.face_size(k, box);
        TP_ASSERT(n <= slot_size[k]);
        if (c[k] == 0) {
          const std::span<F> b(scratch[static_cast<std::size_t>(t)][k].data(), n);
          kernel.boundary_face(k, box, b);
          in[k] = b;
        } else {
          in[k] = std::span<const F>(slot(k, c, (s - 1) & 1), n);
        }
        out[k] = std::span<F>(slot(k, c, s & 1), n);
      }
      auto& p = partial[static_cast<std::size_t>(t)];
      p = K::combine(p, kernel.compute_tile(box, in, out));
    }));
    R total{};
    for (const R& p : partial) total = K::combine(total, p);
    return total;
  }
}

}  // namespace tp::exec
