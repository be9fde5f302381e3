// A user's frontier kernel through the runtime's door: the LCS length of two generated strings on
// forked ranks x threads, checked against its plain loop.
//
//   example_03_lcs [N1] [N2] [RANKS] [CPUS]     forks RANKS ranks (default 2) of CPUS threads
//   mpirun -np 3 example_03_lcs [N1] [N2]        joins the MPI job (its size is the rank count)
#include "lcs.hpp"

#include <tilepipe/run.hpp>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const tp::exec::Index n1 = argc > 1 ? std::atoll(argv[1]) : 500;
  const tp::exec::Index n2 = argc > 2 ? std::atoll(argv[2]) : 400;
  tp::runtime::RunOptions options;
  options.nodes = argc > 3 ? std::atoll(argv[3]) : 0;  // 0: the MPI job's size, or 2 below
  if (options.nodes == 0 && !tp::runtime::joins_mpi(options.launch)) options.nodes = 2;
  options.cpus = argc > 4 ? std::atoll(argv[4]) : 1;
  options.tile_height = 64;
  options.verify = true;
  const lcs::Lcs kernel{7, 4};
  auto run = tp::runtime::run(kernel, {n1, n2}, options);
  if (!run) {
    std::fprintf(stderr, "error: %s (rank %d)\n", run.error().message.c_str(), run.error().rank);
    return run.error().is_user_error() ? 2 : 1;
  }
  if (!run->root) return 0;
  const lcs::Result expected = lcs::plain_loop(n1, n2, kernel.seed, kernel.alphabet);
  std::printf("lcs %lldx%lld on %lld rank(s) x %lld CPU(s): %s, plain loop %s, verified %s\n",
              static_cast<long long>(n1), static_cast<long long>(n2),
              static_cast<long long>(run->planned.plan.nodes()),
              static_cast<long long>(run->planned.plan.cpus()),
              lcs::Lcs::format_result(run->result).c_str(),
              lcs::Lcs::format_result(expected).c_str(), *run->verified ? "yes" : "NO");
  return run->result == expected && *run->verified ? 0 : 1;
}
