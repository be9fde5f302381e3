// What the plan property tests (test_plan_enumeration.cpp, test_plan_mesh_choice.cpp) share: a
// random case and its text, random 0/1 dependences, and the seeds (TILEPIPE_PROPERTY_SEED=<seed>
// reruns one case).
#pragma once

#include <tilepipe/plan/plan.hpp>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace tp::plan::property {

struct Case {
  PlanRequest request;
  std::string text;
};

inline std::string join(const Index& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

// `count` seeds from base * 1000, or the one in TILEPIPE_PROPERTY_SEED.
inline std::vector<std::uint64_t> seeds(int count, std::uint64_t base) {
  if (const char* s = std::getenv("TILEPIPE_PROPERTY_SEED")) return {std::strtoull(s, nullptr, 10)};
  std::vector<std::uint64_t> out;
  for (int i = 0; i < count; ++i) out.push_back(base * 1000 + static_cast<std::uint64_t>(i));
  return out;
}

// Uniform draws in [lo, hi] from one seeded generator.
struct Picker {
  explicit Picker(std::uint64_t seed) : rng(seed) {}
  std::int64_t operator()(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  }
  std::mt19937_64 rng;
};

// q = pick(1, max_vectors) nonzero 0/1 dependence vectors of n dimensions.
inline DependenceMatrix random_01_deps(Picker& pick, int n, int max_vectors) {
  std::vector<Index> v;
  const int q = static_cast<int>(pick(1, max_vectors));
  for (int i = 0; i < q; ++i) {
    Index d(static_cast<std::size_t>(n));
    bool nonzero = false;
    for (auto& x : d) {
      x = pick(0, 1);
      nonzero = nonzero || x != 0;
    }
    if (!nonzero) d[static_cast<std::size_t>(pick(0, n - 1))] = 1;
    v.push_back(d);
  }
  return *DependenceMatrix::make(n, v);
}

// The case's text, printed with each failure.
inline std::string describe(std::uint64_t seed, const PlanRequest& r) {
  return "seed " + std::to_string(seed) + ": size " + join(r.size) + " deps " +
         r.deps->to_string() + " nodes " + std::to_string(r.nodes) + " cpus " +
         std::to_string(r.cpus) + " height " + std::to_string(r.tile_height) + " " +
         std::string(to_string(r.schedule)) + " " + std::string(to_string(r.grouping)) +
         " map_dim " + std::to_string(r.map_dim);
}

}  // namespace tp::plan::property
