// Finding a unimodular transformation that makes every dependence non-negative (docs/math.md,
// "Negative dependences"), or the dependences that admit no schedule.
#include <tilepipe/plan/rational_matrix.hpp>
#include <tilepipe/plan/transform.hpp>
#include <tilepipe/support/checked_math.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

namespace tp::plan {
namespace {

using Matrix = std::vector<Index>;

// Entries beyond this bound are refused: products of two stay far from 64 bits.
constexpr std::int64_t entry_bound = std::int64_t{1} << 30;
// Fourier-Motzkin keeps at most this many constraints per level.
constexpr std::size_t constraint_bound = 20000;

Matrix identity_rows(int n) {
  Matrix m(static_cast<std::size_t>(n), Index(static_cast<std::size_t>(n), 0));
  for (int i = 0; i < n; ++i) m[static_cast<std::size_t>(i)][static_cast<std::size_t>(i)] = 1;
  return m;
}

Expected<std::int64_t> dot(const Index& a, const Index& b) {
  std::int64_t s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto p = checked_mul(a[i], b[i]);
    auto q = p ? checked_add(s, *p) : std::nullopt;
    if (!q) return fail(Errc::out_of_range, "a transformed dependence overflows 64 bits");
    s = *q;
  }
  return s;
}

Expected<Matrix> multiply(const Matrix& a, const Matrix& b) {
  const std::size_t n = a.size();
  Matrix c(n, Index(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      Index col(n);
      for (std::size_t k = 0; k < n; ++k) col[k] = b[k][j];
      auto v = dot(a[i], col);
      if (!v) return Unexpected{v.error()};
      c[i][j] = *v;
    }
  }
  return c;
}

bool lex_positive(const Index& d) {
  for (const auto c : d) {
    if (c != 0) return c > 0;
  }
  return false;
}

// A lower unit-triangular S with S d >= 0 for every (lexicographically positive) d: the new
// coordinate y_k is skewed by the first outer y_m with d_m > 0, by the smallest factor that lifts
// d_k to 0. Since every outer component is already >= 0, a factor never lowers another one.
Expected<Matrix> skew(Matrix deps) {
  const std::size_t n = deps.front().size();
  Matrix s = identity_rows(static_cast<int>(n));
  for (std::size_t k = 1; k < n; ++k) {
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& d : deps) {
        if (d[k] >= 0) continue;
        std::size_t m = 0;
        while (d[m] == 0) ++m;  // d is lexicographically positive and d_k < 0: m < k
        const std::int64_t f = ceil_div(-d[k], d[m]);
        for (std::size_t j = 0; j < n; ++j) s[k][j] += f * s[m][j];  // y_k += f * y_m
        for (auto& e : deps) e[k] += f * e[m];
        if (std::any_of(s[k].begin(), s[k].end(), [](std::int64_t v) { return v > entry_bound; })) {
          return fail(Errc::out_of_range, "the skewing factors grow beyond 2^30");
        }
        changed = true;
        break;
      }
    }
  }
  return s;
}

struct Constraint {  // a . h >= b; `from`: the dependences combined into it
  Index a;
  std::int64_t b = 0;
  std::uint64_t from = 0;
  friend bool operator<(const Constraint& x, const Constraint& y) {
    return std::tie(x.a, x.b) < std::tie(y.a, y.b);
  }
};

// Divides a and b by their common divisor (the same set of real h).
void normalize(Constraint& c) {
  std::int64_t g = c.b < 0 ? -c.b : c.b;
  for (const auto v : c.a) g = std::gcd(g, v < 0 ? -v : v);
  if (g <= 1) return;
  for (auto& v : c.a) v /= g;
  c.b /= g;
}

std::string names_of(const DependenceMatrix& deps, std::uint64_t from) {
  std::string s;
  const int count = std::popcount(from);
  int seen = 0;
  for (std::size_t i = 0; i < deps.vectors().size(); ++i) {
    if ((from >> i & 1U) == 0) continue;
    ++seen;
    s += (seen == 1 ? "" : seen == count ? " and " : ", ") + plan::to_string(deps.vectors()[i]);
  }
  return s;
}

// Gordan's alternative by Fourier-Motzkin elimination: an integer h with h . d >= 1 for every d,
// or the dependences of which a non-negative combination is zero (no schedule exists).
Expected<Index> separating_row(const DependenceMatrix& deps) {
  const std::size_t n = static_cast<std::size_t>(deps.dims());
  std::vector<std::vector<Constraint>> level(n + 1);
  for (std::size_t i = 0; i < deps.vectors().size(); ++i) {
    level[n].push_back({deps.vectors()[i], 1, std::uint64_t{1} << i});
  }
  for (std::size_t k = n; k-- > 0;) {
    std::set<Constraint> next;
    const auto& cur = level[k + 1];
    for (const auto& c : cur) {
      if (c.a[k] == 0) next.insert(c);
    }
    for (const auto& p : cur) {
      if (p.a[k] <= 0) continue;
      for (const auto& q : cur) {
        if (q.a[k] >= 0) continue;
        Constraint c{Index(n, 0), 0, p.from | q.from};
        const std::int64_t fp = -q.a[k];
        const std::int64_t fq = p.a[k];
        for (std::size_t j = 0; j < n; ++j) c.a[j] = fp * p.a[j] + fq * q.a[j];
        c.b = fp * p.b + fq * q.b;
        normalize(c);
        for (const auto v : c.a) {
          if (v > entry_bound || v < -entry_bound) {
            return fail(Errc::out_of_range, "the dependences are too large to analyse");
          }
        }
        if (c.b > entry_bound || c.b < -entry_bound) {
          return fail(Errc::out_of_range, "the dependences are too large to analyse");
        }
        next.insert(c);
        if (next.size() > constraint_bound) {
          return fail(Errc::out_of_range, "too many dependences to analyse");
        }
      }
    }
    level[k].assign(next.begin(), next.end());
  }
  // Every variable eliminated: each constraint reads 0 >= b.
  const Constraint* worst = nullptr;
  for (const auto& c : level[0]) {
    if (c.b > 0 && (!worst || std::popcount(c.from) < std::popcount(worst->from))) worst = &c;
  }
  if (worst) {
    return fail(Errc::invalid_argument,
                "the dependences " + names_of(deps, worst->from) +
                    " admit no legal schedule: a non-negative combination of them is zero");
  }
  // Back substitution, outermost first; an integer where the bounds allow, else the bound.
  std::vector<Rational> h(n);
  for (std::size_t k = 0; k < n; ++k) {
    std::optional<Rational> lo, hi;
    for (const auto& c : level[k + 1]) {
      if (c.a[k] == 0) continue;
      Rational rhs = c.b;
      for (std::size_t j = 0; j < k; ++j) rhs = rhs - Rational(c.a[j]) * h[j];
      const Rational bound = rhs / Rational(c.a[k]);
      if (c.a[k] > 0) {
        lo = lo ? std::max(*lo, bound) : bound;
      } else {
        hi = hi ? std::min(*hi, bound) : bound;
      }
    }
    Rational v = 0;
    if (lo) {
      const Rational up = lo->is_integer() ? *lo : Rational(lo->floor() + 1);
      v = (!hi || up <= *hi) ? up : *lo;
    } else if (hi && *hi < Rational(0)) {
      v = Rational(hi->floor());
    }
    h[k] = v;
  }
  std::int64_t scale = 1;
  for (const auto& v : h) scale = std::lcm(scale, v.den());
  Index row(n);
  std::int64_t g = 0;
  for (std::size_t k = 0; k < n; ++k) {
    row[k] = (h[k] * Rational(scale)).num();
    g = std::gcd(g, row[k] < 0 ? -row[k] : row[k]);
  }
  for (auto& v : row) v /= g;  // h . d stays a positive integer, so >= 1
  for (const auto& d : deps.vectors()) {
    auto s = dot(row, d);
    TP_ASSERT(s && *s >= 1);
  }
  return row;
}

// A unimodular matrix whose first row is the primitive vector h: column operations reduce h to
// e_1 (h U = e_1), the inverse operations on rows build M = U^-1, whose first row is then h.
Matrix complete_row(Index h) {
  const std::size_t n = h.size();
  Matrix m = identity_rows(static_cast<int>(n));
  for (;;) {
    std::size_t p = n;
    for (std::size_t i = 0; i < n; ++i) {
      if (h[i] != 0 && (p == n || std::abs(h[i]) < std::abs(h[p]))) p = i;
    }
    bool single = true;
    for (std::size_t q = 0; q < n; ++q) {
      if (q == p || h[q] == 0) continue;
      single = false;
      const std::int64_t f = h[q] / h[p];  // column q -= f * column p; row p += f * row q
      h[q] -= f * h[p];
      for (std::size_t j = 0; j < n; ++j) m[p][j] += f * m[q][j];
    }
    if (!single) continue;
    std::swap(h[0], h[p]);
    std::swap(m[0], m[p]);
    if (h[0] < 0) {
      h[0] = -h[0];
      for (auto& v : m[0]) v = -v;
    }
    return m;
  }
}

std::string term(std::int64_t c, std::size_t var, bool first) {
  std::string s;
  if (c < 0) {
    s = first ? "-" : " - ";
  } else if (!first) {
    s = " + ";
  }
  const std::int64_t a = c < 0 ? -c : c;
  if (a != 1) s += std::to_string(a) + "*";
  return s + "x" + std::to_string(var + 1);
}

}  // namespace

Transformation Transformation::identity(int dims) {
  Transformation t;
  t.rows_ = identity_rows(dims);
  t.inverse_ = t.rows_;
  return t;
}

Expected<Transformation> Transformation::make(std::vector<Index> rows) {
  const std::size_t n = rows.size();
  RationalMatrix m(static_cast<int>(n));
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i].size() != n) {
      return fail(Errc::invalid_argument, "a transformation must be a square matrix");
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (rows[i][j] > entry_bound || rows[i][j] < -entry_bound) {
        return fail(Errc::out_of_range, "transformation entries must lie within +-2^30");
      }
      m.at(static_cast<int>(i), static_cast<int>(j)) = rows[i][j];
    }
  }
  const auto det = m.determinant();
  if (!det || (*det != Rational(1) && *det != Rational(-1))) {
    return fail(Errc::invalid_argument,
                "a transformation must be unimodular (an integer matrix of determinant +-1)");
  }
  auto inv = m.inverse();
  if (!inv) return Unexpected{inv.error()};
  Transformation t;
  t.rows_ = std::move(rows);
  t.inverse_.assign(n, Index(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const Rational v = inv->at(static_cast<int>(i), static_cast<int>(j));
      TP_ASSERT(v.is_integer());  // det +-1: the adjugate is the inverse up to sign
      t.inverse_[i][j] = v.num();
    }
  }
  return t;
}

Expected<Transformation> Transformation::find(const DependenceMatrix& deps) {
  const int n = deps.dims();
  if (deps.vectors().size() > 64) {
    return fail(Errc::invalid_argument, "at most 64 dependences are analysed");
  }
  bool non_negative = true;
  for (const auto& d : deps.vectors()) {
    for (const auto c : d) non_negative = non_negative && c >= 0;
  }
  if (non_negative) return identity(n);
  // Fewest reversals first: masks ordered by the number of reversed dimensions.
  std::vector<unsigned> masks(std::size_t{1} << n);
  std::iota(masks.begin(), masks.end(), 0U);
  std::stable_sort(masks.begin(), masks.end(),
                   [](unsigned a, unsigned b) { return std::popcount(a) < std::popcount(b); });
  auto finish = [&](const Matrix& first) -> Expected<Transformation> {
    Matrix moved;
    for (const auto& d : deps.vectors()) {
      Index e(static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < e.size(); ++i) {
        auto v = dot(first[i], d);
        if (!v) return Unexpected{v.error()};
        e[i] = *v;
      }
      moved.push_back(e);
    }
    auto s = skew(moved);
    if (!s) return Unexpected{s.error()};
    auto rows = multiply(*s, first);
    if (!rows) return Unexpected{rows.error()};
    return make(*rows);
  };
  for (const unsigned mask : masks) {
    Matrix r = identity_rows(n);
    for (int i = 0; i < n; ++i) {
      if (mask >> i & 1U) r[static_cast<std::size_t>(i)][static_cast<std::size_t>(i)] = -1;
    }
    bool all = true;
    for (const auto& d : deps.vectors()) {
      Index e = d;
      for (int i = 0; i < n; ++i) {
        if (mask >> i & 1U) e[static_cast<std::size_t>(i)] = -e[static_cast<std::size_t>(i)];
      }
      all = all && lex_positive(e);
    }
    if (all) return finish(r);
  }
  auto h = separating_row(deps);
  if (!h) return Unexpected{h.error()};
  return finish(complete_row(*h));
}

bool Transformation::is_identity() const {
  return rows_ == identity_rows(dims());
}

Index Transformation::apply(const Index& x) const {
  Index y(x.size(), 0);
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    for (std::size_t j = 0; j < x.size(); ++j) y[i] += rows_[i][j] * x[j];
  }
  return y;
}

Index Transformation::unapply(const Index& y) const {
  Index x(y.size(), 0);
  for (std::size_t i = 0; i < inverse_.size(); ++i) {
    for (std::size_t j = 0; j < y.size(); ++j) x[i] += inverse_[i][j] * y[j];
  }
  return x;
}

DependenceMatrix Transformation::apply(const DependenceMatrix& deps) const {
  std::vector<Index> v;
  for (const auto& d : deps.vectors()) v.push_back(apply(d));
  auto out = DependenceMatrix::make(deps.dims(), v);
  TP_ASSERT(out.has_value());  // T is invertible: no vector becomes zero
  return *out;
}

Expected<TransformedBox> Transformation::image(const Index& size) const {
  const std::size_t n = rows_.size();
  TP_EXPECTS(size.size() == n);
  TransformedBox box{Index(n, 0), Index(n, 0)};
  Index hi(n, 0);
  for (std::uint64_t corner = 0; corner < (std::uint64_t{1} << n); ++corner) {
    Index x(n);
    for (std::size_t d = 0; d < n; ++d) x[d] = (corner >> d & 1U) ? size[d] : 1;
    Index y(n);
    for (std::size_t i = 0; i < n; ++i) {
      auto v = dot(rows_[i], x);
      if (!v) return fail(Errc::out_of_range, "the transformed space overflows 64 bits");
      y[i] = *v;
    }
    for (std::size_t i = 0; i < n; ++i) {
      box.lo[i] = corner == 0 ? y[i] : std::min(box.lo[i], y[i]);
      hi[i] = corner == 0 ? y[i] : std::max(hi[i], y[i]);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto e = checked_add(hi[i] - box.lo[i], 1);
    if (!e) return fail(Errc::out_of_range, "the transformed space overflows 64 bits");
    box.extents[i] = *e;
  }
  return box;
}

std::string Transformation::to_string() const {
  const std::size_t n = rows_.size();
  std::string s = "(";
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", x" : "x") + std::to_string(i + 1);
  s += ") -> (";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    bool first = true;
    for (std::size_t j = 0; j < n; ++j) {
      if (rows_[i][j] == 0) continue;
      s += term(rows_[i][j], j, first);
      first = false;
    }
  }
  return s + ")";
}

std::string Transformation::rows_string() const {
  std::string s;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (i) s += ";";
    for (std::size_t j = 0; j < rows_[i].size(); ++j) {
      s += (j ? "," : "") + std::to_string(rows_[i][j]);
    }
  }
  return s;
}

Expected<TransformedSpace> transform_space(const Index& size, const DependenceMatrix& deps) {
  auto t = Transformation::find(deps);
  if (!t) return Unexpected{t.error()};
  auto box = t->image(size);
  if (!box) return Unexpected{box.error()};
  auto space = IterationSpace::make(box->extents);
  if (!space) return Unexpected{space.error()};
  DependenceMatrix moved = t->apply(deps);
  return TransformedSpace{std::move(*t), size, deps, std::move(*box), std::move(moved)};
}

bool has_negative_component(const DependenceMatrix& deps) {
  for (const auto& d : deps.vectors()) {
    for (const auto c : d) {
      if (c < 0) return true;
    }
  }
  return false;
}

bool makes_non_negative(const Transformation& t, const DependenceMatrix& deps) {
  for (const auto& d : deps.vectors()) {
    for (const auto c : t.apply(d)) {
      if (c < 0) return false;
    }
  }
  return true;
}

}  // namespace tp::plan
