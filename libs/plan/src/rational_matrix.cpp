// Exact Gauss-Jordan inversion and determinants of small rational matrices.
#include <tilepipe/plan/rational_matrix.hpp>
#include <tilepipe/support/parse.hpp>

#include <utility>

namespace tp::plan {

RationalMatrix RationalMatrix::identity(int n) {
  RationalMatrix m(n);
  for (int i = 0; i < n; ++i) m.at(i, i) = 1;
  return m;
}

RationalMatrix RationalMatrix::diagonal(const std::vector<Rational>& d) {
  RationalMatrix m(static_cast<int>(d.size()));
  for (int i = 0; i < m.size(); ++i) m.at(i, i) = d[static_cast<std::size_t>(i)];
  return m;
}

Expected<RationalMatrix> RationalMatrix::inverse() const {
  const auto overflow = [] {
    return fail(Errc::out_of_range, "tiling matrix: entries too large to invert exactly");
  };
  RationalMatrix a = *this;
  RationalMatrix inv = identity(n_);
  for (int col = 0; col < n_; ++col) {
    int pivot = -1;
    for (int r = col; r < n_; ++r) {
      if (!a.at(r, col).is_zero()) {
        pivot = r;
        break;
      }
    }
    if (pivot < 0) {
      return fail(Errc::invalid_argument, "tiling matrix " + to_string() +
                                              " is singular (det = 0): its rows must be "
                                              "linearly independent");
    }
    for (int c = 0; c < n_; ++c) {
      std::swap(a.at(col, c), a.at(pivot, c));
      std::swap(inv.at(col, c), inv.at(pivot, c));
    }
    const Rational p = a.at(col, col);
    for (int c = 0; c < n_; ++c) {
      auto x = checked_div(a.at(col, c), p);
      auto y = checked_div(inv.at(col, c), p);
      if (!x || !y) return overflow();
      a.at(col, c) = *x;
      inv.at(col, c) = *y;
    }
    for (int r = 0; r < n_; ++r) {
      if (r == col || a.at(r, col).is_zero()) continue;
      const Rational f = a.at(r, col);
      for (int c = 0; c < n_; ++c) {
        auto fa = checked_mul(f, a.at(col, c));
        auto fi = checked_mul(f, inv.at(col, c));
        if (!fa || !fi) return overflow();
        auto na = checked_add(a.at(r, c), -*fa);
        auto ni = checked_add(inv.at(r, c), -*fi);
        if (!na || !ni) return overflow();
        a.at(r, c) = *na;
        inv.at(r, c) = *ni;
      }
    }
  }
  return inv;
}

std::optional<Rational> RationalMatrix::determinant() const {
  RationalMatrix a = *this;
  Rational det = 1;
  for (int col = 0; col < n_; ++col) {
    int pivot = -1;
    for (int r = col; r < n_; ++r) {
      if (!a.at(r, col).is_zero()) {
        pivot = r;
        break;
      }
    }
    if (pivot < 0) return Rational(0);
    if (pivot != col) {
      for (int c = 0; c < n_; ++c) std::swap(a.at(col, c), a.at(pivot, c));
      det = -det;
    }
    auto d = checked_mul(det, a.at(col, col));
    if (!d) return std::nullopt;
    det = *d;
    for (int r = col + 1; r < n_; ++r) {
      auto f = checked_div(a.at(r, col), a.at(col, col));
      if (!f) return std::nullopt;
      for (int c = col; c < n_; ++c) {
        auto fa = checked_mul(*f, a.at(col, c));
        if (!fa) return std::nullopt;
        auto v = checked_add(a.at(r, c), -*fa);
        if (!v) return std::nullopt;
        a.at(r, c) = *v;
      }
    }
  }
  return det;
}

std::optional<std::vector<Rational>> RationalMatrix::checked_apply(
    const std::vector<std::int64_t>& x) const {
  TP_EXPECTS(static_cast<int>(x.size()) == n_);
  std::vector<Rational> y(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    Rational s = 0;
    for (int c = 0; c < n_; ++c) {
      const std::int64_t xc = x[static_cast<std::size_t>(c)];
      if (xc == INT64_MIN) return std::nullopt;  // not a Rational
      auto term = checked_mul(at(r, c), Rational(xc));
      auto sum = term ? checked_add(s, *term) : std::nullopt;
      if (!sum) return std::nullopt;
      s = *sum;
    }
    y[static_cast<std::size_t>(r)] = s;
  }
  return y;
}

std::vector<Rational> RationalMatrix::apply(const std::vector<std::int64_t>& x) const {
  auto y = checked_apply(x);
  TP_ASSERT(y.has_value());
  return std::move(*y);
}

std::optional<std::vector<std::int64_t>> RationalMatrix::checked_apply_floor(
    const std::vector<std::int64_t>& x) const {
  const auto y = checked_apply(x);
  if (!y) return std::nullopt;
  std::vector<std::int64_t> out(y->size());
  for (std::size_t i = 0; i < y->size(); ++i) out[i] = (*y)[i].floor();
  return out;
}

std::vector<std::int64_t> RationalMatrix::apply_floor(const std::vector<std::int64_t>& x) const {
  auto y = checked_apply_floor(x);
  TP_ASSERT(y.has_value());
  return std::move(*y);
}

bool RationalMatrix::is_diagonal() const {
  for (int r = 0; r < n_; ++r) {
    for (int c = 0; c < n_; ++c) {
      if (r != c && !at(r, c).is_zero()) return false;
    }
  }
  return true;
}

std::string RationalMatrix::to_string() const {
  std::string s = "[";
  for (int r = 0; r < n_; ++r) {
    s += r ? ", [" : "[";
    for (int c = 0; c < n_; ++c) s += (c ? ", " : "") + at(r, c).to_string();
    s += "]";
  }
  return s + "]";
}

Expected<RationalMatrix> parse_rational_matrix(std::string_view text, std::string_view what) {
  const auto rows = split(trim(text), ';');
  const int n = static_cast<int>(rows.size());
  RationalMatrix m(n);
  for (int r = 0; r < n; ++r) {
    const auto cells = split(rows[static_cast<std::size_t>(r)], ',');
    if (static_cast<int>(cells.size()) != n) {
      return fail(Errc::invalid_argument, std::string(what) + ": row " + std::to_string(r + 1) +
                                              " has " + std::to_string(cells.size()) +
                                              " entries but the matrix has " + std::to_string(n) +
                                              " rows (it must be square)");
    }
    for (int c = 0; c < n; ++c) {
      auto v = parse_rational(cells[static_cast<std::size_t>(c)], std::string(what) + " entry (" +
                                                                      std::to_string(r + 1) + "," +
                                                                      std::to_string(c + 1) + ")");
      if (!v) return Unexpected{v.error()};
      m.at(r, c) = *v;
    }
  }
  return m;
}

}  // namespace tp::plan
