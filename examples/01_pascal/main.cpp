// A user kernel: Pascal's triangle modulo a prime as a resident tilepipe kernel, run on 2 threads.
#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/exec/slab.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

using tp::exec::Box;
using tp::exec::Index;
using tp::exec::Point;
using tp::exec::SlabView;

constexpr std::uint32_t prime = 1000003;

/// C(i + j, i) mod prime on the points 1 <= i, j <= N; the result is the sum of the values mod
/// 2^64.
struct Pascal {
  static constexpr int dims = 2;
  static constexpr tp::exec::Storage storage = tp::exec::Storage::resident;
  using value_type = std::uint32_t;
  using result_type = std::uint64_t;
  static constexpr std::array<tp::exec::Dependence<2>, 2> deps{{{1, 0}, {0, 1}}};

  static result_type combine(result_type a, result_type b) { return a + b; }

  /// Row 0 and column 0 hold C(j, 0) = C(i, i) = 1.
  value_type boundary_value(const Point<2>&) const { return 1; }

  /// One straight loop per row: the row above is one stride back, the left value is carried.
  void compute_tile(const Box<2>& box, const SlabView<value_type, 2>& slab) const {
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      value_type* row = slab.at(first);
      const value_type* up = row - slab.stride(0);
      value_type left = row[-1];
      for (Index j = 0; j < box.extent(1); ++j) {
        left = (up[j] + left) % prime;
        row[j] = left;
      }
    });
  }

  result_type tile_result(const Box<2>& box, const SlabView<const value_type, 2>& slab) const {
    result_type sum = 0;
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      for (Index j = 0; j < box.extent(1); ++j) sum += slab.at(first)[j];
    });
    return sum;
  }
};

static_assert(tp::exec::ResidentKernel<Pascal>);

}  // namespace

int main() {
  constexpr Index n = 300;
  const Box<2> array{{0, 0}, {n + 1, n + 1}};
  const Box<2> space{{1, 1}, {n + 1, n + 1}};
  std::vector<std::uint32_t> data(static_cast<std::size_t>(array.volume()));
  const SlabView<std::uint32_t, 2> slab(data.data(), array);
  const Pascal kernel;
  tp::exec::fill_halo(kernel, slab, space);
  auto tiling = tp::exec::RectTiling<2>::make(space, {64, 48});
  if (!tiling) return 2;
  auto sum = tp::exec::run_local(kernel, slab, *tiling, 2);
  if (!sum) {
    std::fprintf(stderr, "error: %s\n", sum.error().message.c_str());
    return 1;
  }
  // Check against a plain loop with the same recurrence.
  std::vector<std::uint32_t> ref(static_cast<std::size_t>((n + 1) * (n + 1)), 1);
  std::uint64_t ref_sum = 0;
  for (Index i = 1; i <= n; ++i) {
    for (Index j = 1; j <= n; ++j) {
      auto& v = ref[static_cast<std::size_t>(i * (n + 1) + j)];
      v = (ref[static_cast<std::size_t>((i - 1) * (n + 1) + j)] +
           ref[static_cast<std::size_t>(i * (n + 1) + j - 1)]) %
          prime;
      ref_sum += v;
    }
  }
  // C(4, 2) = 6 sits at (2, 2).
  const bool ok = *sum == ref_sum && data == ref && *slab.at({2, 2}) == 6;
  std::printf("pascal %lldx%lld: sum %llu, %s\n", static_cast<long long>(n),
              static_cast<long long>(n), static_cast<unsigned long long>(*sum),
              ok ? "matches the plain loop" : "MISMATCH");
  return ok ? 0 : 1;
}
