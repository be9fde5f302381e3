// Sequential baselines for `tilepipe run`: the wave kernel's own loop over the whole space as
// one box (memory allocated and touched before timing), and the plain reference loop nest of
// tp::kernels (its time includes allocating the array). Prints JSON with medians and spreads.
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/support/parse.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

struct Stats {
  double median = 0, min = 0, max = 0;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

template <int D>
std::pair<Stats, std::uint64_t> kernel_loop(const std::vector<std::int64_t>& size, int repeats) {
  tp::exec::Point<D> n{};
  for (int d = 0; d < D; ++d) n[d] = size[static_cast<std::size_t>(d)];
  const auto kernel = *tp::kernels::Wave<D>::make(n);
  const auto bounds = kernel.array_box();
  std::vector<float> a(static_cast<std::size_t>(bounds.volume()));
  const tp::exec::SlabView<float, D> slab(a.data(), bounds);
  tp::exec::fill_halo(kernel, slab, kernel.space());
  std::vector<double> times;
  std::uint64_t checksum = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    kernel.compute_tile(kernel.space(), slab);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    checksum = kernel.tile_result(kernel.space(), slab);
  }
  return {stats(times), checksum};
}

}  // namespace

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
  const int repeats = std::max(1, argc > 2 ? std::atoi(argv[2]) : 3);
  const auto [loop, checksum] = size->size() == 2   ? kernel_loop<2>(*size, repeats)
                                : size->size() == 3 ? kernel_loop<3>(*size, repeats)
                                                    : kernel_loop<4>(*size, repeats);
  std::vector<double> ref_times;
  std::uint64_t ref_checksum = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto array = tp::kernels::wave_reference(*size);
    ref_times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    ref_checksum = tp::kernels::wave_reference_checksum(array, *size);
  }
  const Stats ref = stats(ref_times);
  if (ref_checksum != checksum) {
    std::fprintf(stderr, "wave_sequential: error: the kernel loop and the reference differ\n");
    return 1;
  }
  std::printf(
      "{\"seconds\": %.6f, \"seconds_min\": %.6f, \"seconds_max\": %.6f, \"reference_s\": %.6f, "
      "\"reference_s_min\": %.6f, \"reference_s_max\": %.6f, \"checksum\": \"%s\"}\n",
      loop.median, loop.min, loop.max, ref.median, ref.min, ref.max,
      tp::kernels::format_checksum(checksum).c_str());
  return 0;
}
