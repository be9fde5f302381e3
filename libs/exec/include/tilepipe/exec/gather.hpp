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

inline Status send_blob(comm::World& world, int tag, const std::vector<std::byte>& blob) {
  const std::uint64_t n = blob.size();
  TP_TRY(world.send(0, tag, std::as_bytes(std::span<const std::uint64_t>(&n, 1))));
  if (n > 0) TP_TRY(world.send(0, tag, blob));
  return {};
}

inline Expected<std::vector<std::byte>> recv_blob(comm::World& world, int source, int tag) {
  std::uint64_t n = 0;
  auto a = world.recv(source, tag, std::as_writable_bytes(std::span<std::uint64_t>(&n, 1)));
  if (!a) return Unexpected{a.error()};
  std::vector<std::byte> blob(n);
  if (n > 0) {
    auto b = world.recv(source, tag, blob);
    if (!b) return Unexpected{b.error()};
  }
  return blob;
}

}  // namespace detail

/// Collective: every rank passes its outcome; rank 0 gets the total, the others nullopt.
/// R must be trivially copyable (it crosses process boundaries as bytes).
template <class K>
Expected<std::optional<RunTotal<typename K::result_type>>> gather_outcomes(
    comm::World& world, const RankOutcome<typename K::result_type>& mine) {
  using R = typename K::result_type;
  static_assert(std::is_trivially_copyable_v<R>, "results cross ranks as bytes");
  constexpr int tag = comm::max_tag - 1;
  if (world.rank() != 0) {
    std::vector<std::byte> r(sizeof(R));
    std::memcpy(r.data(), &mine.result, sizeof(R));
    TP_TRY(detail::send_blob(world, tag, r));
    TP_TRY(detail::send_blob(world, tag, encode(mine.report)));
    TP_TRY(detail::send_blob(world, tag, encode_spans(mine.spans)));
    return std::optional<RunTotal<R>>();
  }
  RunTotal<R> total;
  total.result = mine.result;
  total.summary.ranks.push_back(mine.report);
  total.spans.push_back(mine.spans);
  for (int src = 1; src < world.size(); ++src) {
    auto r = detail::recv_blob(world, src, tag);
    if (!r) return Unexpected{r.error()};
    if (r->size() != sizeof(R)) return fail(Errc::internal, "malformed result from a rank");
    R value{};
    std::memcpy(&value, r->data(), sizeof(R));
    total.result = K::combine(total.result, value);
    auto rep = detail::recv_blob(world, src, tag);
    if (!rep) return Unexpected{rep.error()};
    total.summary.ranks.push_back(decode_report(*rep));
    auto sp = detail::recv_blob(world, src, tag);
    if (!sp) return Unexpected{sp.error()};
    total.spans.push_back(decode_spans(*sp));
  }
  return std::optional<RunTotal<R>>(std::move(total));
}

}  // namespace tp::exec
