// The plain sweep3d loop's time (tp::kernels::sweep3d_reference: every octant, direction and cell
// in order, the arrays' allocation included), as JSON with the median, min and max of several runs
// and the checksum of phi. An optional fifth argument is the scattering ratio C (default 0.0).
#include <tilepipe/kernels/sweep3d.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/support/parse.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sweep3d_sequential IxJxK ANGLES ITERATIONS [repeats [C]]\n");
    return 2;
  }
  auto size = tp::parse_extents(argv[1], "size");
  auto angles = tp::parse_int(argv[2], "angles", 1);
  auto iterations = tp::parse_int(argv[3], "iterations", 1);
  if (!size || size->size() != 3 || !angles || (*angles != 1 && *angles != 3) || !iterations) {
    std::fprintf(stderr, "sweep3d_sequential: error: bad size, angles or iterations\n");
    return 2;
  }
  const int repeats = std::max(1, argc > 4 ? std::atoi(argv[4]) : 3);
  const tp::exec::Point<3> n{(*size)[0], (*size)[1], (*size)[2]};
  tp::kernels::Sweep3dParams params;
  params.angles = *angles;
  params.iterations = *iterations;
  if (argc > 5) {
    char* end = nullptr;
    params.c = std::strtod(argv[5], &end);
    if (end == argv[5] || *end != '\0' || !(params.c >= 0.0)) {
      std::fprintf(stderr, "sweep3d_sequential: error: bad C\n");
      return 2;
    }
  }
  std::vector<double> times;
  std::uint64_t checksum = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto phi = tp::kernels::sweep3d_reference(n, params);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    checksum = tp::kernels::sweep3d_checksum(phi);
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "{\"size\": \"%s\", \"angles\": %lld, \"iterations\": %lld, \"repeats\": %d, "
      "\"plain_s\": {\"median\": %.6f, \"min\": %.6f, \"max\": %.6f}, \"checksum\": \"%s\"}\n",
      argv[1], static_cast<long long>(*angles), static_cast<long long>(*iterations), repeats,
      times[times.size() / 2], times.front(), times.back(),
      tp::kernels::format_checksum(checksum).c_str());
  return 0;
}
