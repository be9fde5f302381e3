// The plain sequential loop of a wave kernel (the kernels' reference), timed: the baseline that
// `tilepipe run` on 1 rank x 1 thread is compared with. Prints JSON: seconds (median), checksum.
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/support/parse.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: wave_sequential N1xN2[xN3[xN4]] [repeats]\n");
    return 2;
  }
  auto size = tp::parse_extents(argv[1], "size");
  if (!size || size->size() < 2 || size->size() > 4) {
    std::fprintf(stderr, "wave_sequential: error: bad size '%s'\n", argv[1]);
    return 2;
  }
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  std::vector<double> times;
  std::uint64_t checksum = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto a = std::chrono::steady_clock::now();
    const auto array = tp::kernels::wave_reference(*size);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    checksum = tp::kernels::wave_reference_checksum(array, *size);
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "{\"seconds\": %.6f, \"seconds_min\": %.6f, \"seconds_max\": %.6f, \"checksum\": "
      "\"%s\"}\n",
      times[times.size() / 2], times.front(), times.back(),
      tp::kernels::format_checksum(checksum).c_str());
  return 0;
}
