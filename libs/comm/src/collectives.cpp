// World's collectives beyond the barrier: a min-reduction and a gather to rank 0, on library
// tags (negative, so that they never match a user's message).
#include "engine.hpp"

#include <tilepipe/comm/world.hpp>

#include <algorithm>
#include <cstdint>

namespace tp::comm {

namespace {

std::span<std::byte> bytes_of(auto& v) {
  return std::as_writable_bytes(std::span(&v, 1));
}

}  // namespace

Expected<double> World::allreduce_min(double value) {
  detail::Engine& e = *engine_;
  using detail::tag_reduce;
  if (e.rank() != 0) {
    TP_TRY(e.send(0, tag_reduce, std::as_bytes(std::span(&value, 1))));
    double result = 0;
    auto got = e.recv(0, tag_reduce, bytes_of(result));
    if (!got) return Unexpected{got.error()};
    return result;
  }
  double result = value;
  for (int r = 1; r < e.size(); ++r) {
    double v = 0;
    auto got = e.recv(r, tag_reduce, bytes_of(v));
    if (!got) return Unexpected{got.error()};
    result = std::min(result, v);
  }
  for (int r = 1; r < e.size(); ++r) {
    TP_TRY(e.send(r, tag_reduce, std::as_bytes(std::span(&result, 1))));
  }
  return result;
}

Expected<std::vector<std::vector<std::byte>>> World::gather(std::span<const std::byte> blob) {
  detail::Engine& e = *engine_;
  using detail::tag_gather;
  std::vector<std::vector<std::byte>> all;
  if (e.rank() != 0) {
    const std::uint64_t n = blob.size();
    TP_TRY(e.send(0, tag_gather, std::as_bytes(std::span(&n, 1))));
    if (n > 0) TP_TRY(e.send(0, tag_gather, blob));
    return all;
  }
  all.emplace_back(blob.begin(), blob.end());
  for (int r = 1; r < e.size(); ++r) {
    std::uint64_t n = 0;
    auto got = e.recv(r, tag_gather, bytes_of(n));
    if (!got) return Unexpected{got.error()};
    std::vector<std::byte> b(n);
    if (n > 0) {
      auto data = e.recv(r, tag_gather, b);
      if (!data) return Unexpected{data.error()};
    }
    all.push_back(std::move(b));
  }
  return all;
}

}  // namespace tp::comm
