// A user's own loop nest through the runtime's door: the classic pipelined 2-D recurrence
// A[i][j] = A[i-1][j] + A[i][j-1] - A[i-1][j-1] on ranks x threads, checked against its plain loop.
//
//   example_02_recurrence [N] [RANKS] [CPUS]      forks RANKS ranks (default 2) of CPUS threads
//   mpirun -np 3 example_02_recurrence [N]        joins the MPI job (its size is the rank count)
#include "recurrence.hpp"

#include <tilepipe/run.hpp>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using recurrence::Index;
using recurrence::Recurrence;

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
