// A user's own loop nest through the runtime's door: the classic pipelined 2-D recurrence
// A[i][j] = A[i-1][j] + A[i][j-1] - A[i-1][j-1] on ranks x threads, checked against its plain loop.
//
//   example_02_recurrence [N] [RANKS] [CPUS]      forks RANKS ranks (default 2) of CPUS threads
//   mpirun -np 3 example_02_recurrence [N]        joins the MPI job (its size is the rank count)
#include <tilepipe/run.hpp>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using tp::exec::Box;
using tp::exec::Index;
using tp::exec::Point;
using tp::exec::SlabView;

/// The boundary A[i][0], A[0][j] = ((7 i + 13 j) mod 101) / 101 (not linear, so that every value
/// depends on the order of its roundings); the result is the sum of the values' bit patterns mod
/// 2^64 (exact in any order, so it is the same whatever the tiling).
struct Recurrence {
  static constexpr int dims = 2;
  static constexpr tp::exec::Storage storage = tp::exec::Storage::resident;
  using value_type = double;
  using result_type = std::uint64_t;
  static constexpr std::array<tp::exec::Dependence<2>, 3> deps{{{1, 0}, {0, 1}, {1, 1}}};

  static result_type combine(result_type a, result_type b) { return a + b; }

  value_type boundary_value(const Point<2>& p) const { return boundary(p[0], p[1]); }
  static double boundary(Index i, Index j) {
    return static_cast<double>((7 * i + 13 * j) % 101) / 101.0;
  }

  void compute_tile(const Box<2>& box, const SlabView<value_type, 2>& slab) const {
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      double* row = slab.at(first);
      const double* up = row - slab.stride(0);
      for (Index j = 0; j < box.extent(1); ++j) row[j] = up[j] + row[j - 1] - up[j - 1];
    });
  }

  result_type tile_result(const Box<2>& box, const SlabView<const value_type, 2>& slab) const {
    result_type sum = 0;
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      for (Index j = 0; j < box.extent(1); ++j)
        sum += std::bit_cast<std::uint64_t>(slab.at(first)[j]);
    });
    return sum;
  }
};

static_assert(tp::exec::ResidentKernel<Recurrence>);

/// The plain loop over the same (N+1) x (N+1) array.
std::uint64_t plain_loop(Index n) {
  const auto w = static_cast<std::size_t>(n + 1);
  std::vector<double> a(w * w);
  for (std::size_t i = 0; i < w; ++i) {
    a[i * w] = Recurrence::boundary(static_cast<Index>(i), 0);
    a[i] = Recurrence::boundary(0, static_cast<Index>(i));
  }
  std::uint64_t sum = 0;
  for (std::size_t i = 1; i < w; ++i) {
    for (std::size_t j = 1; j < w; ++j) {
      a[i * w + j] = a[(i - 1) * w + j] + a[i * w + j - 1] - a[(i - 1) * w + j - 1];
      sum += std::bit_cast<std::uint64_t>(a[i * w + j]);
    }
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const Index n = argc > 1 ? std::atoll(argv[1]) : 1000;
  tp::runtime::RunOptions options;
  options.nodes = argc > 2 ? std::atoll(argv[2]) : 0;  // 0: the MPI job's size, or 2 below
  if (options.nodes == 0 && !tp::runtime::joins_mpi(options.launch)) options.nodes = 2;
  options.cpus = argc > 3 ? std::atoll(argv[3]) : 1;
  options.tile_height = 64;
  options.verify = true;  // the kernel again as one tile, in order, compared bit for bit
  auto run = tp::runtime::run(Recurrence{}, {n, n}, options);
  if (!run) {
    std::fprintf(stderr, "error: %s (rank %d, -1: before the ranks started)\n",
                 run.error().message.c_str(), run.error().rank);
    return run.error().is_user_error() ? 2 : 1;
  }
  if (!run->root) return 0;
  const std::uint64_t expected = plain_loop(n);
  std::printf(
      "recurrence %lldx%lld on %lld rank(s) x %lld CPU(s): %.6f s, sum %016llx, plain "
      "loop %016llx, verified %s\n",
      static_cast<long long>(n), static_cast<long long>(n),
      static_cast<long long>(run->planned.plan.nodes()),
      static_cast<long long>(run->planned.plan.cpus()), run->summary.wall_s(),
      static_cast<unsigned long long>(run->result), static_cast<unsigned long long>(expected),
      *run->verified ? "yes" : "NO");
  return run->result == expected && *run->verified ? 0 : 1;
}
