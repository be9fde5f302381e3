// SlabMemory, touch_pages and zero_parallel: zeroed, aligned, whole, on any number of threads.
#include <tilepipe/exec/slab_memory.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

using tp::exec::SlabMemory;

bool all_zero(const std::byte* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

TEST(SlabMemory, is_zeroed_page_aligned_and_writable_at_every_size) {
  // Below a page, across pages, and over a huge page with a ragged tail.
  for (const std::size_t bytes :
       {std::size_t{24}, std::size_t{3 * 4096 + 8}, (std::size_t{2} << 20) + 5 * 4096 + 16}) {
    for (const int threads : {1, 3}) {
      SlabMemory m(bytes, threads);
      ASSERT_NE(m.data(), nullptr);
      EXPECT_EQ(m.size(), bytes);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.data()) % 4096, 0U);
      EXPECT_TRUE(all_zero(m.data(), bytes)) << bytes << " bytes, " << threads << " threads";
      double* d = m.as<double>();
      d[0] = 1.5;
      d[bytes / sizeof(double) - 1] = 2.5;
      EXPECT_EQ(d[0], 1.5);
    }
  }
}

TEST(SlabMemory, moves_own_the_memory_once) {
  SlabMemory a((std::size_t{2} << 20) + 8, 2);
  std::byte* p = a.data();
  SlabMemory b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  SlabMemory c(64, 1);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), (std::size_t{2} << 20) + 8);
}

TEST(SlabMemory, zero_parallel_clears_every_byte_and_touch_keeps_them) {
  std::vector<std::byte> v(5 * 4096 + 123, std::byte{0x5a});
  tp::exec::zero_parallel(v, 4);
  EXPECT_TRUE(all_zero(v.data(), v.size()));
  EXPECT_TRUE(tp::exec::touch_pages(v, 3));
  EXPECT_TRUE(all_zero(v.data(), v.size()));
  std::vector<std::byte> one(100, std::byte{1});
  tp::exec::zero_parallel(one, 8);  // more threads than pages
  EXPECT_TRUE(all_zero(one.data(), one.size()));
}

}  // namespace
