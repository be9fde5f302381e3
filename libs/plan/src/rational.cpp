// Exact rational arithmetic with 128-bit intermediates and overflow detection.
#include <tilepipe/plan/rational.hpp>
#include <tilepipe/support/parse.hpp>

#include <numeric>

namespace tp::plan {

namespace {

__extension__ using Wide = __int128;

std::optional<Rational> from_wide(Wide n, Wide d) {
  if (d == 0) return std::nullopt;
  if (d < 0) {
    n = -n;
    d = -d;
  }
  Wide a = n < 0 ? -n : n;
  Wide b = d;
  while (b != 0) {
    const Wide t = a % b;
    a = b;
    b = t;
  }
  const Wide g = a == 0 ? 1 : a;
  n /= g;
  d /= g;
  if (n > INT64_MAX || n < -INT64_MAX || d > INT64_MAX) return std::nullopt;
  return Rational(static_cast<std::int64_t>(n), static_cast<std::int64_t>(d));
}

Rational must(std::optional<Rational> r) {
  TP_ASSERT(r.has_value());
  return *r;
}

}  // namespace

Rational::Rational(std::int64_t n, std::int64_t d) {
  TP_EXPECTS(d != 0);
  TP_EXPECTS(n != INT64_MIN && d != INT64_MIN);
  if (d < 0) {
    n = -n;
    d = -d;
  }
  const std::int64_t g = std::gcd(n, d);
  num_ = g == 0 ? n : n / g;
  den_ = g == 0 ? d : d / g;
}

std::int64_t Rational::floor() const noexcept {
  const std::int64_t q = num_ / den_;
  return (num_ % den_ != 0 && num_ < 0) ? q - 1 : q;
}

std::string Rational::to_string() const {
  return den_ == 1 ? std::to_string(num_) : std::to_string(num_) + "/" + std::to_string(den_);
}

std::optional<Rational> checked_add(Rational a, Rational b) {
  return from_wide(Wide(a.num_) * b.den_ + Wide(b.num_) * a.den_, Wide(a.den_) * b.den_);
}
std::optional<Rational> checked_mul(Rational a, Rational b) {
  return from_wide(Wide(a.num_) * b.num_, Wide(a.den_) * b.den_);
}
std::optional<Rational> checked_div(Rational a, Rational b) {
  if (b.num_ == 0) return std::nullopt;
  return from_wide(Wide(a.num_) * b.den_, Wide(a.den_) * b.num_);
}

Rational operator+(Rational a, Rational b) {
  return must(checked_add(a, b));
}
Rational operator-(Rational a, Rational b) {
  return must(checked_add(a, -b));
}
Rational operator*(Rational a, Rational b) {
  return must(checked_mul(a, b));
}
Rational operator/(Rational a, Rational b) {
  return must(checked_div(a, b));
}

std::strong_ordering operator<=>(Rational a, Rational b) {
  return Wide(a.num_) * b.den_ <=> Wide(b.num_) * a.den_;
}

Expected<Rational> parse_rational(std::string_view text, std::string_view what) {
  const std::string_view t = trim(text);
  const auto bad = [&] {
    return fail(Errc::invalid_argument,
                std::string(what) + ": '" + std::string(text) + "' is not a number (e.g. 1/4)");
  };
  if (const auto slash = t.find('/'); slash != std::string_view::npos) {
    auto n = parse_int(t.substr(0, slash), what);
    auto d = parse_int(t.substr(slash + 1), what);
    if (!n || !d) return bad();
    if (*d == 0) {
      return fail(Errc::invalid_argument,
                  std::string(what) + ": '" + std::string(text) + "' divides by zero");
    }
    if (*n == INT64_MIN || *d == INT64_MIN) return bad();
    return Rational(*n, *d);
  }
  if (const auto dot = t.find('.'); dot != std::string_view::npos) {
    const std::string_view frac = t.substr(dot + 1);
    if (frac.empty() || frac.size() > 15 || frac.find_first_not_of("0123456789") != frac.npos) {
      return bad();
    }
    const std::string_view whole = t.substr(0, dot);
    const bool negative = !whole.empty() && whole.front() == '-';
    auto w = whole.empty() || whole == "-" || whole == "+" ? Expected<std::int64_t>(0)
                                                           : parse_int(whole, what);
    auto f = parse_int(frac, what);
    if (!w || !f) return bad();
    std::int64_t scale = 1;
    for (std::size_t i = 0; i < frac.size(); ++i) scale *= 10;
    auto r = checked_add(Rational(*w), Rational(negative ? -*f : *f, scale));
    if (!r) return bad();
    return *r;
  }
  auto n = parse_int(t, what);
  if (!n) return n.error().code == Errc::out_of_range ? Unexpected{n.error()} : bad();
  if (*n == INT64_MIN) return bad();
  return Rational(*n);
}

}  // namespace tp::plan
