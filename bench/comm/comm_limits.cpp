// Physical limits for the comm benchmarks: cross-core cache-line round trip and one-copy bandwidth.
//
// comm_limits cacheline [--iters N]        one-way cache-line latency (round trip / 2), ns
// comm_limits onecopy --sizes A:B [--iters N]  memcpy by core 0 of a buffer core 1 just wrote
// comm_limits pages [--iters N]            cache-line one-way latency on 16 pages 4 MiB apart,
//                                          8 interleaved rounds: does a line's page matter?
//                                          ("bytes" holds the page index there)
// Output: JSON lines {"what":..., "bytes":..., "value":..., "min":..., "max":...}.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/// One flag per 128 bytes so that the adjacent-line prefetcher never pairs the two flags.
struct alignas(128) Line {
  std::atomic<std::uint64_t> v{0};
};

inline void cpu_relax() {
#if defined(__x86_64__)
  // PAUSE is left out on purpose: see cpu_relax() in the engine.
#endif
}

void print(const char* what, std::size_t bytes, std::vector<double> samples, const char* unit) {
  std::sort(samples.begin(), samples.end());
  std::printf(
      "{\"what\": \"%s\", \"bytes\": %zu, \"unit\": \"%s\", \"value\": %.4f, \"min\": %.4f, "
      "\"max\": %.4f}\n",
      what, bytes, unit, samples[samples.size() / 2], samples.front(), samples.back());
}

void cacheline(long iters) {
  Line ping;
  Line pong;
  std::thread other([&] {
    pin(1);
    for (std::uint64_t i = 1; i <= static_cast<std::uint64_t>(iters) * 64 + 1000; ++i) {
      while (ping.v.load(std::memory_order_acquire) != i) cpu_relax();
      pong.v.store(i, std::memory_order_release);
    }
  });
  pin(0);
  std::vector<double> samples;
  std::uint64_t n = 0;
  // Many short batches: on a shared machine a preempted batch is an outlier, not the median.
  constexpr int batches = 64;
  for (int b = 0; b < batches; ++b) {
    const auto t0 = clock_type::now();
    for (long i = 0; i < iters; ++i) {
      ++n;
      ping.v.store(n, std::memory_order_release);
      while (pong.v.load(std::memory_order_acquire) != n) cpu_relax();
    }
    const std::chrono::duration<double, std::nano> dt = clock_type::now() - t0;
    samples.push_back(dt.count() / (2.0 * static_cast<double>(iters)));
  }
  // Let the partner finish its remaining iterations.
  for (int i = 0; i < 1000; ++i) {
    ++n;
    ping.v.store(n, std::memory_order_release);
    while (pong.v.load(std::memory_order_acquire) != n) {
    }
  }
  other.join();
  print("cacheline_one_way", 64, samples, "ns");
}

void onecopy(std::size_t lo, std::size_t hi, long iters) {
  for (std::size_t bytes = lo; bytes <= hi; bytes *= 2) {
    std::vector<char> src(bytes), dst(bytes);
    std::atomic<int> turn{0};
    const long reps =
        std::max<long>(8, iters * 65536 / static_cast<long>(std::max<std::size_t>(bytes, 65536)));
    std::vector<double> samples;
    std::thread writer([&] {
      pin(1);
      for (long r = 0; r < reps; ++r) {
        while (turn.load(std::memory_order_acquire) != 0) {
        }
        std::memset(src.data(), static_cast<int>(r), bytes);
        turn.store(1, std::memory_order_release);
      }
    });
    pin(0);
    for (long r = 0; r < reps; ++r) {
      while (turn.load(std::memory_order_acquire) != 1) {
      }
      const auto t0 = clock_type::now();
      std::memcpy(dst.data(), src.data(), bytes);
      const std::chrono::duration<double, std::micro> dt = clock_type::now() - t0;
      samples.push_back(static_cast<double>(bytes) / dt.count());  // MB/s
      turn.store(0, std::memory_order_release);
    }
    writer.join();
    print("onecopy_mb_per_s", bytes, samples, "MB/s");
  }
}

/// The cache-line ping-pong of cacheline(), on 16 flag pairs in pages 4 MiB apart, the pages
/// visited in turn for 8 rounds, so that a change of phase over time hits every page alike and a
/// difference between pages at one moment is the pages' own (where their memory lives).
void pages(long iters) {
  constexpr std::size_t spots = 16;
  constexpr std::size_t stride = std::size_t{4} << 20;
  constexpr int rounds = 8;
  auto* mem = static_cast<std::byte*>(std::aligned_alloc(4096, spots * stride));
  if (mem == nullptr) return;
  std::memset(mem, 0, spots * stride);
  auto flag = [&](std::size_t spot, int which) {
    return reinterpret_cast<std::atomic<std::uint64_t>*>(mem + spot * stride + 128 * which);
  };
  std::thread other([&] {
    pin(1);
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t s = 0; s < spots; ++s) {
        const auto base = static_cast<std::uint64_t>(r) * static_cast<std::uint64_t>(iters);
        for (long i = 1; i <= iters; ++i) {
          const std::uint64_t n = base + static_cast<std::uint64_t>(i);
          while (flag(s, 0)->load(std::memory_order_acquire) != n) cpu_relax();
          flag(s, 1)->store(n, std::memory_order_release);
        }
      }
    }
  });
  pin(0);
  std::vector<std::vector<double>> samples(spots);
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t s = 0; s < spots; ++s) {
      const auto base = static_cast<std::uint64_t>(r) * static_cast<std::uint64_t>(iters);
      const auto t0 = clock_type::now();
      for (long i = 1; i <= iters; ++i) {
        const std::uint64_t n = base + static_cast<std::uint64_t>(i);
        flag(s, 0)->store(n, std::memory_order_release);
        while (flag(s, 1)->load(std::memory_order_acquire) != n) cpu_relax();
      }
      const std::chrono::duration<double, std::nano> dt = clock_type::now() - t0;
      samples[s].push_back(dt.count() / (2.0 * static_cast<double>(iters)));
    }
  }
  other.join();
  for (std::size_t s = 0; s < spots; ++s) print("cacheline_page", s, samples[s], "ns");
  std::free(mem);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: comm_limits cacheline|onecopy|pages [--sizes LO:HI] [--iters N]\n");
    return 2;
  }
  std::string mode = argv[1];
  long iters = 20000;
  std::size_t lo = 1024, hi = 4u << 20;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--iters") iters = std::atol(argv[i + 1]);
    if (k == "--sizes") {
      std::string v = argv[i + 1];
      lo = std::strtoull(v.c_str(), nullptr, 10);
      hi = std::strtoull(v.substr(v.find(':') + 1).c_str(), nullptr, 10);
    }
  }
  if (mode == "cacheline")
    cacheline(iters);
  else if (mode == "onecopy")
    onecopy(lo, hi, iters);
  else if (mode == "pages")
    pages(iters);
  else
    return 2;
  return 0;
}
