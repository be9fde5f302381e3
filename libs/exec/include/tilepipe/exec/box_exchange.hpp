// Collectives for a resident kernel's after_sweep hook: every rank's box of values reaches rank 0,
// and rank 0's array reaches every rank (sweep3d's octant sums and source iterations).
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

/// Collective: every rank passes its box and the box's values (row-major, box.volume() of them);
/// rank 0 calls take(box, values) for its own, then for each other rank's in rank order (memory on
/// rank 0: one other rank's values at a time). `tag` must not be in use by anything else in
/// flight (between the sweeps of a run, faces are not).
template <class T, int D, class Take>
Status gather_boxes(comm::World& world, const Box<D>& mine, std::span<const T> values, int tag,
                    Take&& take) {
  TP_EXPECTS(static_cast<Index>(values.size()) == mine.volume());
  if (world.rank() != 0) {
    std::array<Index, 2 * D> bounds{};
    std::copy(mine.lo.begin(), mine.lo.end(), bounds.begin());
    std::copy(mine.hi.begin(), mine.hi.end(), bounds.begin() + D);
    TP_TRY(world.send(0, tag, std::as_bytes(std::span(bounds))));
    return detail::send_pieces(world, 0, tag, std::as_bytes(values));
  }
  TP_TRY(take(mine, values));
  std::vector<T> theirs;
  for (int r = 1; r < world.size(); ++r) {
    std::array<Index, 2 * D> bounds{};
    auto got = world.recv(r, tag, std::as_writable_bytes(std::span(bounds)));
    if (!got) return Unexpected{got.error()};
    if (got->bytes != sizeof bounds) return fail(Errc::internal, "a malformed box from a rank");
    Box<D> box;
    std::copy(bounds.begin(), bounds.begin() + D, box.lo.begin());
    std::copy(bounds.begin() + D, bounds.end(), box.hi.begin());
    theirs.resize(static_cast<std::size_t>(box.volume()));
    TP_TRY(detail::recv_pieces(world, r, tag, std::as_writable_bytes(std::span<T>(theirs))));
    TP_TRY(take(box, std::span<const T>(theirs)));
  }
  return {};
}

/// Collective: rank 0's `data` into every other rank's `data` (the same size on every rank).
template <class T>
Status broadcast_values(comm::World& world, std::span<T> data, int tag) {
  if (world.rank() != 0) return detail::recv_pieces(world, 0, tag, std::as_writable_bytes(data));
  for (int r = 1; r < world.size(); ++r) {
    TP_TRY(detail::send_pieces(world, r, tag, std::as_bytes(std::span<const T>(data))));
  }
  return {};
}

}  // namespace tp::exec
