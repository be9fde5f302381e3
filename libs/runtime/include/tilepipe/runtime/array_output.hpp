// A run's computed array into an .npy file: every rank's values (the boxes of points it
// computed: one, or one per cycle of a block-cyclic plan) reach rank 0, which writes them at their
// places in the file.
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/rank_context.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/support/npy.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
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

/// Writes `bytes`, the values of the boxes whose bounds `lo` and `hi` hold (D each, one box after
/// another; RankOutcome::values_lo), box after box, at their places in `writer`'s array.
template <class T, int D>
Status write_boxes(const NpyWriter& writer, std::span<const exec::Index> lo,
                   std::span<const exec::Index> hi, std::span<const std::byte> bytes,
                   const plan::Index& size) {
  if (lo.size() != hi.size() || lo.size() % D != 0) {
    return fail(Errc::internal, "a rank's boxes have malformed bounds");
  }
  std::size_t at = 0;
  for (std::size_t b = 0; b < lo.size() / D; ++b) {
    exec::Box<D> box;
    for (int d = 0; d < D; ++d) {
      box.lo[d] = lo[b * D + static_cast<std::size_t>(d)];
      box.hi[d] = hi[b * D + static_cast<std::size_t>(d)];
    }
    const auto n = static_cast<std::size_t>(box.volume()) * sizeof(T);
    if (at + n > bytes.size()) return fail(Errc::internal, "a rank's values do not fill its boxes");
    TP_TRY((write_box<T, D>(writer, box, bytes.subspan(at, n), size)));
    at += n;
  }
  if (at != bytes.size()) return fail(Errc::internal, "a rank's values do not fill its boxes");
  return {};
}

/// Collective after the run: rank 0 writes its own values, then each other rank's in rank order
/// (the count of its boxes, their bounds, then its values in pieces); `writer` is rank 0's (null
/// elsewhere). Memory on rank 0: one other rank's values at a time.
template <class T, int D, class Outcome>
Status write_array(comm::World& world, const Outcome& mine, const NpyWriter* writer,
                   const plan::Index& size) {
  if (world.rank() != 0) {
    const std::int64_t count = static_cast<std::int64_t>(mine.values_lo.size() / D);
    TP_TRY(world.send(0, array_tag, std::as_bytes(std::span(&count, 1))));
    std::vector<exec::Index> bounds(mine.values_lo);
    bounds.insert(bounds.end(), mine.values_hi.begin(), mine.values_hi.end());
    if (count > 0) TP_TRY(world.send(0, array_tag, std::as_bytes(std::span(bounds))));
    const std::span<const std::byte> all(mine.values);
    for (std::size_t at = 0; at < all.size(); at += array_piece_bytes) {
      TP_TRY(
          world.send(0, array_tag, all.subspan(at, std::min(array_piece_bytes, all.size() - at))));
    }
    return {};
  }
  TP_TRY((write_boxes<T, D>(*writer, mine.values_lo, mine.values_hi, mine.values, size)));
  std::vector<exec::Index> bounds;
  std::vector<std::byte> theirs;
  for (int r = 1; r < world.size(); ++r) {
    std::int64_t count = 0;
    auto got = world.recv(r, array_tag, std::as_writable_bytes(std::span(&count, 1)));
    if (!got) return Unexpected{got.error()};
    if (got->bytes != sizeof count || count < 0) {
      return fail(Errc::internal, "a malformed box count from a rank");
    }
    bounds.resize(static_cast<std::size_t>(count) * 2 * D);
    if (count > 0) {
      got = world.recv(r, array_tag, std::as_writable_bytes(std::span(bounds)));
      if (!got) return Unexpected{got.error()};
      if (got->bytes != bounds.size() * sizeof(exec::Index)) {
        return fail(Errc::internal, "malformed boxes from a rank");
      }
    }
    const std::span<const exec::Index> all(bounds);
    const auto half = bounds.size() / 2;
    std::size_t volume = 0;
    for (std::size_t b = 0; b < static_cast<std::size_t>(count); ++b) {
      exec::Box<D> box;
      for (int d = 0; d < D; ++d) {
        box.lo[d] = all[b * D + static_cast<std::size_t>(d)];
        box.hi[d] = all[half + b * D + static_cast<std::size_t>(d)];
      }
      volume += static_cast<std::size_t>(box.volume());
    }
    theirs.resize(volume * sizeof(T));
    const std::span<std::byte> into(theirs);
    for (std::size_t at = 0; at < into.size(); at += array_piece_bytes) {
      auto piece =
          world.recv(r, array_tag, into.subspan(at, std::min(array_piece_bytes, into.size() - at)));
      if (!piece) return Unexpected{piece.error()};
      if (piece->bytes != std::min(array_piece_bytes, into.size() - at)) {
        return fail(Errc::internal, "a rank's values came short");
      }
    }
    TP_TRY((write_boxes<T, D>(*writer, all.first(half), all.subspan(half), theirs, size)));
  }
  return {};
}

}  // namespace tp::runtime::detail
