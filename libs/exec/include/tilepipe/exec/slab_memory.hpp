// A rank's slab memory: an anonymous mapping (zero pages from the kernel, no zero-fill of ours),
// asked for transparent huge pages, first touched in parallel by the threads that compute on it
// (docs/adr/0027-recurrence-pipeline-and-setup.md).
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

namespace tp::exec {

/// Touches every page of `bytes` (writes a zero byte per 4 KiB page, which leaves zeroed memory
/// as it is) on `threads` threads, each a contiguous share, so that no page fault falls into a
/// timed kernel call. Returns false when a thread could not start (the caller's thread then
/// touched that share itself). Precondition: the memory is zero or its values do not matter.
bool touch_pages(std::span<std::byte> bytes, int threads) noexcept;

/// Writes zeros over `bytes` on `threads` threads, each a contiguous share (a serial memset of a
/// slab costs a second and more at 20000 x 20000 doubles).
void zero_parallel(std::span<std::byte> bytes, int threads) noexcept;

/// Zeroed memory for `count` elements of T, page aligned, released with the object. Mapped
/// anonymously with MADV_HUGEPAGE where the mapping spans a huge page (the kernel honours it when
/// transparent huge pages are `madvise` or `always`), and touched by `threads` threads at
/// construction. Falls back to a plain allocation where the mapping fails. Move-only.
class SlabMemory {
 public:
  SlabMemory() = default;
  SlabMemory(std::size_t bytes, int threads);
  SlabMemory(SlabMemory&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        bytes_(std::exchange(o.bytes_, 0)),
        mapped_(std::exchange(o.mapped_, false)) {}
  SlabMemory& operator=(SlabMemory&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      mapped_ = std::exchange(o.mapped_, false);
    }
    return *this;
  }
  SlabMemory(const SlabMemory&) = delete;
  SlabMemory& operator=(const SlabMemory&) = delete;
  ~SlabMemory() { release(); }

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }
  /// The memory as `count` zero-valued elements of T (an implicit-lifetime type).
  template <class T>
  [[nodiscard]] T* as() const noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "slab elements are copied as bytes");
    return reinterpret_cast<T*>(data_);
  }

 private:
  void release() noexcept;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool mapped_ = false;
};

}  // namespace tp::exec
