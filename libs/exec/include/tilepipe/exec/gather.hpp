// Collects every rank's outcome on rank 0: the combined result, all reports, all spans.
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/pipeline.hpp>
#include <tilepipe/exec/run_report.hpp>
#include <tilepipe/exec/trace.hpp>

#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

namespace tp::exec {

/// The whole run as rank 0 sees it.
template <class R>
struct RunTotal {
  R result{};                            ///< combined over all ranks
  RunSummary summary;                    ///< one report per rank, in rank order
  std::vector<std::vector<Span>> spans;  ///< per rank (empty when not traced)
};

namespace detail {

/// Appends a length-prefixed piece to `blob`; take_piece reads it back from `at`.
inline void put_piece(std::vector<std::byte>& blob, std::span<const std::byte> piece) {
  const std::uint64_t n = piece.size();
  const auto* p = reinterpret_cast<const std::byte*>(&n);
  blob.insert(blob.end(), p, p + sizeof n);
  blob.insert(blob.end(), piece.begin(), piece.end());
}

inline Expected<std::vector<std::byte>> take_piece(const std::vector<std::byte>& blob,
                                                   std::size_t& at) {
  std::uint64_t n = 0;
  if (blob.size() - at < sizeof n) return fail(Errc::internal, "malformed outcome from a rank");
  std::memcpy(&n, blob.data() + at, sizeof n);
  at += sizeof n;
  if (blob.size() - at < n) return fail(Errc::internal, "malformed outcome from a rank");
  std::vector<std::byte> piece(blob.begin() + static_cast<std::ptrdiff_t>(at),
                               blob.begin() + static_cast<std::ptrdiff_t>(at + n));
  at += n;
  return piece;
}

}  // namespace detail

/// Collective: every rank passes its outcome; rank 0 gets the total, the others nullopt.
/// R must be trivially copyable (it crosses process boundaries as bytes).
template <class K>
Expected<std::optional<RunTotal<typename K::result_type>>> gather_outcomes(
    comm::World& world, const RankOutcome<typename K::result_type>& mine) {
  using R = typename K::result_type;
  static_assert(std::is_trivially_copyable_v<R>, "results cross ranks as bytes");
  std::vector<std::byte> blob;
  detail::put_piece(blob, std::as_bytes(std::span<const R>(&mine.result, 1)));
  detail::put_piece(blob, encode(mine.report));
  detail::put_piece(blob, encode_spans(mine.spans));
  auto all = world.gather(blob);
  if (!all) return Unexpected{all.error()};
  if (world.rank() != 0) return std::optional<RunTotal<R>>();
  RunTotal<R> total;
  for (const auto& b : *all) {
    std::size_t at = 0;
    auto r = detail::take_piece(b, at);
    if (!r) return Unexpected{r.error()};
    auto rep = detail::take_piece(b, at);
    if (!rep) return Unexpected{rep.error()};
    auto sp = detail::take_piece(b, at);
    if (!sp) return Unexpected{sp.error()};
    if (r->size() != sizeof(R)) return fail(Errc::internal, "malformed result from a rank");
    R value{};
    std::memcpy(&value, r->data(), sizeof(R));
    total.result = K::combine(total.result, value);
    total.summary.ranks.push_back(decode_report(*rep));
    total.spans.push_back(decode_spans(*sp));
  }
  return std::optional<RunTotal<R>>(std::move(total));
}

}  // namespace tp::exec
