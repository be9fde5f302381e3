// Collectives for a resident kernel's after_sweep hook: every rank's box on every rank, rank 0's
// array to every rank, and values to and from every other rank (sweep3d's octant sums and
// sources).
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/support/assert.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace tp::exec {

/// Values travel in pieces of at most this many bytes.
inline constexpr std::size_t exchange_piece_bytes = std::size_t{64} << 20;

namespace detail {

inline Status send_pieces(comm::World& world, int dest, int tag, std::span<const std::byte> all) {
  for (std::size_t at = 0; at < all.size(); at += exchange_piece_bytes) {
    TP_TRY(world.send(dest, tag, all.subspan(at, std::min(exchange_piece_bytes, all.size() - at))));
  }
  return {};
}

inline Status recv_pieces(comm::World& world, int source, int tag, std::span<std::byte> into) {
  for (std::size_t at = 0; at < into.size(); at += exchange_piece_bytes) {
    const std::size_t n = std::min(exchange_piece_bytes, into.size() - at);
    auto got = world.recv(source, tag, into.subspan(at, n));
    if (!got) return Unexpected{got.error()};
    if (got->bytes != n) return fail(Errc::internal, "a rank's values came short");
  }
  return {};
}

}  // namespace detail

/// Collective: rank 0's `data` into every other rank's `data` (the same size on every rank).
template <class T>
Status broadcast_values(comm::World& world, std::span<T> data, int tag) {
  if (world.rank() != 0) return detail::recv_pieces(world, 0, tag, std::as_writable_bytes(data));
  for (int r = 1; r < world.size(); ++r) {
    TP_TRY(detail::send_pieces(world, r, tag, std::as_bytes(std::span<const T>(data))));
  }
  return {};
}

/// Collective: every rank's box, on every rank (indexed by rank).
template <int D>
Expected<std::vector<Box<D>>> all_boxes(comm::World& world, const Box<D>& mine, int tag) {
  std::vector<Index> bounds(static_cast<std::size_t>(2 * D * world.size()));
  const auto put = [&](int r, const Box<D>& b) {
    auto at = bounds.begin() + 2 * D * r;
    std::copy(b.lo.begin(), b.lo.end(), at);
    std::copy(b.hi.begin(), b.hi.end(), at + D);
  };
  put(world.rank(), mine);
  if (world.rank() != 0) {
    TP_TRY(
        world.send(0, tag, std::as_bytes(std::span(bounds).subspan(2 * D * world.rank(), 2 * D))));
  } else {
    for (int r = 1; r < world.size(); ++r) {
      auto got =
          world.recv(r, tag, std::as_writable_bytes(std::span(bounds).subspan(2 * D * r, 2 * D)));
      if (!got) return Unexpected{got.error()};
      if (got->bytes != 2 * D * sizeof(Index))
        return fail(Errc::internal, "a malformed box from a rank");
    }
  }
  TP_TRY(broadcast_values<Index>(world, std::span<Index>(bounds), tag));
  std::vector<Box<D>> boxes(static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r) {
    auto at = bounds.begin() + 2 * D * r;
    std::copy(at, at + D, boxes[static_cast<std::size_t>(r)].lo.begin());
    std::copy(at + D, at + 2 * D, boxes[static_cast<std::size_t>(r)].hi.begin());
  }
  return boxes;
}

/// Collective: every rank's boxes (any number per rank, none included), on every rank (indexed
/// by rank, each rank's in its order).
template <int D>
Expected<std::vector<std::vector<Box<D>>>> all_box_lists(comm::World& world,
                                                         std::span<const Box<D>> mine, int tag) {
  // The counts first (as one-dimensional boxes [0, count)), then every box's bounds.
  Box<1> count;
  count.lo[0] = 0;
  count.hi[0] = static_cast<Index>(mine.size());
  auto counts = all_boxes<1>(world, count, tag);
  if (!counts) return Unexpected{counts.error()};
  std::vector<std::size_t> first(static_cast<std::size_t>(world.size()) + 1, 0);
  for (std::size_t r = 0; r < counts->size(); ++r) {
    first[r + 1] = first[r] + static_cast<std::size_t>((*counts)[r].hi[0]);
  }
  std::vector<Index> bounds(2 * D * first.back());
  const auto me = static_cast<std::size_t>(world.rank());
  for (std::size_t b = 0; b < mine.size(); ++b) {
    auto at = bounds.begin() + static_cast<std::ptrdiff_t>(2 * D * (first[me] + b));
    std::copy(mine[b].lo.begin(), mine[b].lo.end(), at);
    std::copy(mine[b].hi.begin(), mine[b].hi.end(), at + D);
  }
  const auto of = [&](std::size_t r) {
    return std::span<Index>(bounds).subspan(2 * D * first[r], 2 * D * (first[r + 1] - first[r]));
  };
  if (world.rank() != 0) {
    if (!mine.empty()) TP_TRY(world.send(0, tag, std::as_bytes(of(me))));
  } else {
    for (std::size_t r = 1; r < counts->size(); ++r) {
      if (first[r + 1] == first[r]) continue;
      auto got = world.recv(static_cast<int>(r), tag, std::as_writable_bytes(of(r)));
      if (!got) return Unexpected{got.error()};
      if (got->bytes != of(r).size_bytes())
        return fail(Errc::internal, "malformed boxes from a rank");
    }
  }
  if (!bounds.empty()) TP_TRY(broadcast_values<Index>(world, std::span<Index>(bounds), tag));
  std::vector<std::vector<Box<D>>> lists(counts->size());
  for (std::size_t r = 0; r < lists.size(); ++r) {
    for (std::size_t b = first[r]; b < first[r + 1]; ++b) {
      Box<D> box;
      auto at = bounds.begin() + static_cast<std::ptrdiff_t>(2 * D * b);
      std::copy(at, at + D, box.lo.begin());
      std::copy(at + D, at + 2 * D, box.hi.begin());
      lists[r].push_back(box);
    }
  }
  return lists;
}

/// Collective: this rank sends to[r] to every other rank r (nothing when empty) and receives
/// from[r] (its size, known to both sides, says how much; nothing when empty); to[rank()] and
/// from[rank()] are left alone. Sends start first (isend), then the receives run, then the sends
/// complete: no order among the ranks is needed.
template <class T>
Status exchange_values(comm::World& world, const std::vector<std::vector<T>>& to,
                       std::vector<std::vector<T>>& from, int tag) {
  const auto n = static_cast<std::size_t>(world.size());
  TP_EXPECTS(to.size() == n && from.size() == n);
  std::vector<comm::Request> sends;
  for (int r = 0; r < world.size(); ++r) {
    const auto all = std::as_bytes(std::span<const T>(to[static_cast<std::size_t>(r)]));
    if (r == world.rank() || all.empty()) continue;
    for (std::size_t at = 0; at < all.size(); at += exchange_piece_bytes) {
      auto q =
          world.isend(r, tag, all.subspan(at, std::min(exchange_piece_bytes, all.size() - at)));
      if (!q) return Unexpected{q.error()};
      sends.push_back(std::move(*q));
    }
  }
  for (int r = 0; r < world.size(); ++r) {
    auto& into = from[static_cast<std::size_t>(r)];
    if (r == world.rank() || into.empty()) continue;
    TP_TRY(detail::recv_pieces(world, r, tag, std::as_writable_bytes(std::span<T>(into))));
  }
  for (auto& q : sends) {
    auto done = world.wait(q);
    if (!done) return Unexpected{done.error()};
  }
  return {};
}

}  // namespace tp::exec
