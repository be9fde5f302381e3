// SlabMemory: mmap + madvise(MADV_HUGEPAGE) + a parallel first touch; touch_pages, zero_parallel.
#include <tilepipe/exec/slab_memory.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace tp::exec {

namespace {

constexpr std::size_t page_bytes = 4096;
constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// Runs fn(lo, hi) over `threads` contiguous page-aligned shares of [0, bytes), share 0 on the
/// caller's thread; a share whose thread cannot start runs on the caller's. False then.
template <class Fn>
bool in_shares(std::size_t bytes, int threads, Fn fn) noexcept {
  const auto n = static_cast<std::size_t>(std::max(1, threads));
  const auto bound = [&](std::size_t i) {
    return std::min(bytes, (bytes / n * i + page_bytes - 1) / page_bytes * page_bytes);
  };
  bool all = true;
  {
    std::vector<std::jthread> team;
    for (std::size_t i = 1; i < n; ++i) {
      const std::size_t lo = bound(i);
      const std::size_t hi = i + 1 == n ? bytes : bound(i + 1);
      try {
        team.emplace_back([=] { fn(lo, hi); });
      } catch (...) {  // no thread (or no memory for one): this share on the caller's
        all = false;
        fn(lo, hi);
      }
    }
    fn(0, n == 1 ? bytes : bound(1));
  }  // the team joins
  return all;
}

}  // namespace

bool touch_pages(std::span<std::byte> bytes, int threads) noexcept {
  std::byte* base = bytes.data();
  return in_shares(bytes.size(), threads, [base](std::size_t lo, std::size_t hi) {
    // volatile: the store of a zero over a zero must reach memory (the fault is the point).
    for (std::size_t at = lo; at < hi; at += page_bytes)
      *static_cast<volatile std::byte*>(base + at) = std::byte{0};
  });
}

void zero_parallel(std::span<std::byte> bytes, int threads) noexcept {
  std::byte* base = bytes.data();
  (void)in_shares(bytes.size(), threads,
                  [base](std::size_t lo, std::size_t hi) { std::memset(base + lo, 0, hi - lo); });
}

SlabMemory::SlabMemory(std::size_t bytes, int threads) : bytes_(bytes) {
  if (bytes == 0) return;
  // Round the mapping up to whole huge pages when it spans one: the kernel backs only huge-page
  // aligned ranges with huge pages, and the tail would stay small pages.
  const std::size_t mapped = bytes >= huge_page_bytes
                                 ? (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes
                                 : (bytes + page_bytes - 1) / page_bytes * page_bytes;
  // Over-map by one huge page to align the start (mmap aligns to 4 KiB only).
  const std::size_t extra = bytes >= huge_page_bytes ? huge_page_bytes : 0;
  void* p =
      ::mmap(nullptr, mapped + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) {
    auto* raw = static_cast<std::byte*>(p);
    std::byte* start = raw;
    if (extra != 0) {
      const auto addr = reinterpret_cast<std::uintptr_t>(raw);
      start = raw + ((huge_page_bytes - addr % huge_page_bytes) % huge_page_bytes);
      if (start > raw) ::munmap(raw, static_cast<std::size_t>(start - raw));
      const std::size_t tail = static_cast<std::size_t>((raw + mapped + extra) - (start + mapped));
      if (tail > 0) ::munmap(start + mapped, tail);
#ifdef MADV_HUGEPAGE
      (void)::madvise(start, mapped, MADV_HUGEPAGE);  // a hint: refused where THP is off
#endif
    }
    data_ = start;
    bytes_ = mapped;
    mapped_ = true;
    (void)touch_pages(std::span<std::byte>(data_, bytes_), threads);
    bytes_ = bytes;
    return;
  }
  // No mapping: a zeroed allocation (calloc may hand out fresh zero pages itself).
  data_ = static_cast<std::byte*>(std::calloc(bytes, 1));
  if (data_ == nullptr) throw std::bad_alloc();
  (void)touch_pages(std::span<std::byte>(data_, bytes_), threads);
}

void SlabMemory::release() noexcept {
  if (data_ == nullptr) return;
  if (mapped_) {
    const std::size_t mapped =
        bytes_ >= huge_page_bytes
            ? (bytes_ + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes
            : (bytes_ + page_bytes - 1) / page_bytes * page_bytes;
    ::munmap(data_, mapped);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace tp::exec
