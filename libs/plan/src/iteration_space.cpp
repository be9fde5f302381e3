// Validation of iteration spaces and dependence matrices.
#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/support/checked_math.hpp>
#include <tilepipe/support/parse.hpp>

namespace tp::plan {

std::string to_string(const Index& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

Expected<IterationSpace> IterationSpace::make(Index extents) {
  const int n = static_cast<int>(extents.size());
  if (n < min_dims || n > max_dims) {
    return fail(Errc::invalid_argument,
                "iteration space has " + std::to_string(n) + " dimensions; tilepipe plans 2 to 6");
  }
  std::int64_t points = 1;
  for (int d = 0; d < n; ++d) {
    const std::int64_t e = extents[static_cast<std::size_t>(d)];
    if (e < 1) {
      return fail(Errc::invalid_argument, "extent " + std::to_string(e) + " in dimension " +
                                              std::to_string(d + 1) + ": extents must be >= 1");
    }
    auto p = checked_mul(points, e);
    if (!p) {
      return fail(Errc::out_of_range, "iteration space " + to_string(extents) +
                                          " has more than 2^63 points: it overflows 64 bits");
    }
    points = *p;
  }
  IterationSpace s;
  s.extents_ = std::move(extents);
  s.points_ = points;
  return s;
}

bool IterationSpace::contains(const Index& j) const {
  if (j.size() != extents_.size()) return false;
  for (std::size_t d = 0; d < j.size(); ++d) {
    if (j[d] < 1 || j[d] > extents_[d]) return false;
  }
  return true;
}

Expected<DependenceMatrix> DependenceMatrix::make(int dims, std::vector<Index> vectors) {
  if (vectors.empty()) {
    return fail(Errc::invalid_argument, "dependence matrix: no dependence vectors given");
  }
  for (const auto& v : vectors) {
    if (static_cast<int>(v.size()) != dims) {
      return fail(Errc::invalid_argument, "dependence vector " + plan::to_string(v) + " has " +
                                              std::to_string(v.size()) +
                                              " entries but the iteration space has " +
                                              std::to_string(dims) + " dimensions");
    }
    bool zero = true;
    for (auto x : v) zero = zero && x == 0;
    if (zero) {
      return fail(Errc::invalid_argument,
                  "dependence vector " + plan::to_string(v) + " is zero: not a dependence");
    }
  }
  DependenceMatrix m;
  m.dims_ = dims;
  m.vectors_ = std::move(vectors);
  return m;
}

Expected<DependenceMatrix> DependenceMatrix::parse(std::string_view text) {
  std::vector<Index> vectors;
  const auto pieces = split(trim(text), ';');
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    Index v;
    for (auto cell : split(pieces[i], ',')) {
      auto x = parse_int(cell, "--deps vector " + std::to_string(i + 1), -(1LL << 40), 1LL << 40);
      if (!x) return Unexpected{x.error()};
      v.push_back(*x);
    }
    vectors.push_back(std::move(v));
  }
  const int dims = static_cast<int>(vectors.front().size());
  for (std::size_t i = 1; i < vectors.size(); ++i) {
    if (static_cast<int>(vectors[i].size()) != dims) {
      return fail(Errc::invalid_argument, "--deps: vector " + std::to_string(i + 1) + " has " +
                                              std::to_string(vectors[i].size()) +
                                              " entries but vector 1 has " + std::to_string(dims));
    }
  }
  return make(dims, std::move(vectors));
}

DependenceMatrix DependenceMatrix::unit(int dims) {
  DependenceMatrix m;
  m.dims_ = dims;
  for (int d = 0; d < dims; ++d) {
    Index e(static_cast<std::size_t>(dims), 0);
    e[static_cast<std::size_t>(d)] = 1;
    m.vectors_.push_back(std::move(e));
  }
  return m;
}

std::string DependenceMatrix::to_string() const {
  std::string s;
  for (std::size_t i = 0; i < vectors_.size(); ++i) {
    if (i) s += ";";
    for (std::size_t k = 0; k < vectors_[i].size(); ++k) {
      s += (k ? "," : "") + std::to_string(vectors_[i][k]);
    }
  }
  return s;
}

}  // namespace tp::plan
