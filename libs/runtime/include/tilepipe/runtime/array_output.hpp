// A run's computed array into an .npy file: every rank's values (the box of points it computed)
// reach rank 0, which writes them at their places in the file.
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/rank_context.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/support/npy.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace tp::runtime::detail {

/// The tag of the array's messages (after the run: no face is in flight any more).
inline constexpr int array_tag = comm::max_tag;
/// Values travel in pieces of at most this many bytes.
inline constexpr std::size_t array_piece_bytes = std::size_t{64} << 20;

/// Writes `bytes`, the values of `box` in row-major order, at their places in `writer`'s array of
/// extents `size` (the space 1..size[d]).
template <class T, int D>
Status write_box(const NpyWriter& writer, const exec::Box<D>& box, std::span<const std::byte> bytes,
                 const plan::Index& size) {
  if (bytes.size() != static_cast<std::size_t>(box.volume()) * sizeof(T)) {
    return fail(Errc::internal, "a rank's values do not fill its box");
  }
  const auto row = static_cast<std::size_t>(box.extent(D - 1)) * sizeof(T);
  std::size_t at = 0;
  Status st;
  exec::for_each_row(box, [&](const exec::Point<D>& p) {
    if (!st) return;
    std::int64_t offset = 0;
    for (int d = 0; d < D; ++d) offset = offset * size[static_cast<std::size_t>(d)] + (p[d] - 1);
    st = writer.write(offset, bytes.subspan(at, row));
    at += row;
  });
  return st;
}

/// Collective after the run: rank 0 writes its own values, then each other rank's in rank order
/// (its box, then its values in pieces); `writer` is rank 0's (null elsewhere). Memory on rank 0:
/// one other rank's values at a time.
template <class T, int D, class Outcome>
Status write_array(comm::World& world, const Outcome& mine, const NpyWriter* writer,
                   const plan::Index& size) {
  const auto box_of = [](const std::vector<exec::Index>& lo, const std::vector<exec::Index>& hi) {
    exec::Box<D> b;
    for (int d = 0; d < D; ++d) {
      b.lo[d] = lo[static_cast<std::size_t>(d)];
      b.hi[d] = hi[static_cast<std::size_t>(d)];
    }
    return b;
  };
  if (world.rank() != 0) {
    std::array<exec::Index, 2 * D> bounds{};
    std::copy(mine.values_lo.begin(), mine.values_lo.end(), bounds.begin());
    std::copy(mine.values_hi.begin(), mine.values_hi.end(), bounds.begin() + D);
    TP_TRY(world.send(0, array_tag, std::as_bytes(std::span(bounds))));
    const std::span<const std::byte> all(mine.values);
    for (std::size_t at = 0; at < all.size(); at += array_piece_bytes) {
      TP_TRY(
          world.send(0, array_tag, all.subspan(at, std::min(array_piece_bytes, all.size() - at))));
    }
    return {};
  }
  TP_TRY((write_box<T, D>(*writer, box_of(mine.values_lo, mine.values_hi), mine.values, size)));
  std::vector<std::byte> theirs;
  for (int r = 1; r < world.size(); ++r) {
    std::array<exec::Index, 2 * D> bounds{};
    auto got = world.recv(r, array_tag, std::as_writable_bytes(std::span(bounds)));
    if (!got) return Unexpected{got.error()};
    if (got->bytes != sizeof bounds) return fail(Errc::internal, "a malformed box from a rank");
    const exec::Box<D> box =
        box_of({bounds.begin(), bounds.begin() + D}, {bounds.begin() + D, bounds.end()});
    theirs.resize(static_cast<std::size_t>(box.volume()) * sizeof(T));
    const std::span<std::byte> into(theirs);
    for (std::size_t at = 0; at < into.size(); at += array_piece_bytes) {
      auto piece =
          world.recv(r, array_tag, into.subspan(at, std::min(array_piece_bytes, into.size() - at)));
      if (!piece) return Unexpected{piece.error()};
      if (piece->bytes != std::min(array_piece_bytes, into.size() - at)) {
        return fail(Errc::internal, "a rank's values came short");
      }
    }
    TP_TRY((write_box<T, D>(*writer, box, theirs, size)));
  }
  return {};
}

}  // namespace tp::runtime::detail
