// libFuzzer target: the parsers of --size, --tile, --deps, --tiling-matrix, --nodes/--cpus values
// (support's parse_extents/parse_int/parse_bytes, plan's DependenceMatrix::parse and
// parse_rational_matrix), each on every input line, then a plan from the five lines together.
#include "fuzz_check.hpp"

#include <tilepipe/plan/plan.hpp>
#include <tilepipe/plan/rational_matrix.hpp>
#include <tilepipe/support/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace {

template <class T>
bool accepted(const tp::Expected<T>& e) {
  if (!e) tp::fuzz::check_user_error(e.error());
  return e.has_value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> lines = tp::split(text, '\n');
  for (const auto line : lines) {
    if (auto e = tp::parse_extents(line, "--size"); accepted(e)) {
      for (const auto v : *e) tp::fuzz::check(v >= 1, "an extent < 1");
    }
    if (auto v = tp::parse_int(line, "--tile", 1, 1 << 20); accepted(v)) {
      tp::fuzz::check(*v >= 1 && *v <= (1 << 20), "parse_int outside its range");
    }
    if (auto b = tp::parse_bytes(line, "--eager-max"); accepted(b)) {
      tp::fuzz::check(*b >= 0, "a negative byte count");
    }
    if (auto d = tp::plan::DependenceMatrix::parse(line); accepted(d)) {
      auto again = tp::plan::DependenceMatrix::parse(d->to_string());
      tp::fuzz::check(again.has_value(), "DependenceMatrix::to_string does not parse back");
    }
    (void)accepted(tp::plan::parse_rational_matrix(line, "--tiling-matrix"));
  }
  if (lines.size() < 5) return 0;
  // size / tile (height, extents or a matrix) / deps / nodes / cpus, as tilepipe plan reads them.
  tp::plan::PlanRequest req;
  auto extents = tp::parse_extents(lines[0], "--size");
  auto deps = tp::plan::DependenceMatrix::parse(lines[2]);
  auto nodes = tp::parse_int(lines[3], "--nodes", 1, tp::plan::max_nodes);
  auto cpus = tp::parse_int(lines[4], "--cpus", 1, tp::plan::max_cpus);
  if (!extents || !deps || !nodes || !cpus || extents->size() > 6) return 0;
  // A general tiling matrix enumerates every point (plan::TileSpace, up to its enumeration
  // limit): 1.6 M points took 1.8 s in release and 12 s here (the first long run's only
  // timeout). Bounded by design; the fuzzer looks at small spaces instead.
  std::int64_t points = 1;
  for (const auto v : *extents) {
    if (v > 65536 || (points *= v) > 65536) return 0;
  }
  req.size = *extents;
  req.deps = *deps;
  req.nodes = *nodes;
  req.cpus = *cpus;
  const std::string_view tile = lines[1];
  if (tile.find(';') != std::string_view::npos || tile.find('/') != std::string_view::npos) {
    auto h = tp::plan::parse_rational_matrix(tile, "--tiling-matrix");
    if (!h) return 0;
    req.tile_kind = tp::plan::TileSpecKind::matrix;
    req.h = *h;
  } else if (tile.find('x') != std::string_view::npos) {
    auto w = tp::parse_extents(tile, "--tile");
    if (!w) return 0;
    req.tile_kind = tp::plan::TileSpecKind::extents;
    req.tile_extents = *w;
  } else {
    auto z = tp::parse_int(tile, "--tile", 1);
    if (!z) return 0;
    req.tile_height = *z;
  }
  auto plan = tp::plan::Plan::make(req);
  if (!plan) {
    tp::fuzz::check_user_error(plan.error());
    return 0;
  }
  tp::fuzz::check(plan->steps() >= 1, "a plan without a time step");
  tp::fuzz::check(plan->nodes() == req.nodes, "a plan on other nodes than asked");
  return 0;
}
