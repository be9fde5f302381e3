// A test plugin, first translation unit: a resident kernel with parameters (one of which makes it
// throw in a tile), A[i][j] = scale * A[i-1][j] + A[i][j-1] + offset + own * A[i][j] modulo 2^64
// (A[i][j] on the right: the point's value before the sweep, e.g. from tilepipe run --input).
#include <tilepipe/plugin.hpp>

#include <stdexcept>

namespace {

struct Scaled {
  static constexpr int dims = 2;
  static constexpr tp::exec::Storage storage = tp::exec::Storage::resident;
  using value_type = std::int64_t;
  using result_type = std::uint64_t;
  static constexpr std::array<tp::exec::Dependence<2>, 2> deps{{{1, 0}, {0, 1}}};
  static constexpr std::array<tp::exec::ParamSpec, 4> params{{
      {"scale", tp::exec::ParamType::integer, "3", "the factor of the point above"},
      {"offset", tp::exec::ParamType::integer, "1", "added at every point"},
      {"throw_row", tp::exec::ParamType::integer, "0", "a tile holding this row throws (0: none)"},
      {"own", tp::exec::ParamType::integer, "0",
       "the factor of the point's value before the sweep"},
  }};

  std::int64_t scale = 3;
  std::int64_t offset = 1;
  std::int64_t throw_row = 0;
  std::int64_t own = 0;

  static tp::Expected<Scaled> make(const tp::plan::Index&, const tp::exec::ParamValues& p) {
    if (p.integer("scale") < 0) return tp::fail(tp::Errc::invalid_argument, "scale must be >= 0");
    return Scaled{p.integer("scale"), p.integer("offset"), p.integer("throw_row"),
                  p.integer("own")};
  }
  static result_type combine(result_type a, result_type b) { return a + b; }
  value_type boundary_value(const tp::exec::Point<2>& p) const { return p[0] + 2 * p[1]; }

  void compute_tile(const tp::exec::Box<2>& box, const tp::exec::SlabView<value_type, 2>& s) const {
    if (box.lo[0] <= throw_row && throw_row < box.hi[0]) {
      throw std::runtime_error("row " + std::to_string(throw_row) + " is cursed");
    }
    tp::exec::for_each_row(box, [&](const tp::exec::Point<2>& first) {
      value_type* row = s.at(first);
      const value_type* up = row - s.stride(0);
      for (tp::exec::Index j = 0; j < box.extent(1); ++j) {
        // Modulo 2^64 (unsigned: the values pass int64's range within a few rows).
        row[j] = static_cast<value_type>(
            static_cast<std::uint64_t>(scale) * static_cast<std::uint64_t>(up[j]) +
            static_cast<std::uint64_t>(row[j - 1]) + static_cast<std::uint64_t>(offset) +
            static_cast<std::uint64_t>(own) * static_cast<std::uint64_t>(row[j]));
      }
    });
  }
  result_type tile_result(const tp::exec::Box<2>& box,
                          const tp::exec::SlabView<const value_type, 2>& s) const {
    result_type sum = 0;
    tp::exec::for_each_row(box, [&](const tp::exec::Point<2>& first) {
      for (tp::exec::Index j = 0; j < box.extent(1); ++j)
        sum += static_cast<std::uint64_t>(s.at(first)[j]);
    });
    return sum;
  }
};

}  // namespace

TILEPIPE_PLUGIN_KERNEL(Scaled, "scaled")
