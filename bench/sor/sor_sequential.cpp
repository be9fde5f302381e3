// The plain SOR loop's time (tp::kernels::sor2d_reference / sor3d_reference: T sweeps in place,
// the array's allocation and initial values included, O(grid) against O(T x grid) of sweeps), as
// JSON with the median, min and max of several runs and the checksum.
#include <tilepipe/kernels/sor.hpp>
#include <tilepipe/support/parse.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sor_sequential N1xN2[xN3] ITERATIONS OMEGA [repeats]\n");
    return 2;
  }
  auto size = tp::parse_extents(argv[1], "size");
  auto t = tp::parse_int(argv[2], "iterations", 1);
  const double w = std::atof(argv[3]);
  if (!size || (size->size() != 2 && size->size() != 3) || !t || !(w > 0 && w < 2)) {
    std::fprintf(stderr, "sor_sequential: error: bad size, iterations or omega\n");
    return 2;
  }
  const int repeats = std::max(1, argc > 4 ? std::atoi(argv[4]) : 3);
  const auto& n = *size;
  std::vector<double> times;
  std::uint64_t checksum = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto u = n.size() == 2 ? tp::kernels::sor2d_reference(n[0], n[1], *t, w)
                                 : tp::kernels::sor3d_reference(n[0], n[1], n[2], *t, w);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    checksum = tp::kernels::sor_reference_checksum(u, n);
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "{\"size\": \"%s\", \"iterations\": %lld, \"omega\": %.17g, \"repeats\": %d, "
      "\"plain_s\": {\"median\": %.6f, \"min\": %.6f, \"max\": %.6f}, \"checksum\": \"%s\"}\n",
      argv[1], static_cast<long long>(*t), w, repeats, times[times.size() / 2], times.front(),
      times.back(), tp::kernels::format_checksum(checksum).c_str());
  return 0;
}
