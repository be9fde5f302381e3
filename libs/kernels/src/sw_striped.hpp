// sw striped tile bands: the interface between the dispatcher (sw.cpp) and the per-ISA files.
#pragma once

#include <cstddef>
#include <cstdint>

// The striped SIMD bands (sw_avx512.cpp, sw_avx2.cpp, sw_sse41.cpp) are compiled for their ISA with
// GCC's target pragma on x86-64 and chosen at run time from the CPU.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TP_SW_SIMD 1
#endif

namespace tp::kernels::detail {

/// One band of a tile: `rows` consecutive rows over the tile's `w` columns, int32 faces as in
/// sw.hpp. The bottom face may alias the top face (the band reads column j's top values before
/// it writes column j's bottom values); nothing else aliases.
struct SwBand {
  const std::int32_t* top_h;   ///< w+1: H of the row above, from column c0-1
  const std::int32_t* top_f;   ///< w: F of the row above, from column c0
  const std::int32_t* left_h;  ///< rows: H of column c0-1
  const std::int32_t* left_e;  ///< rows: E of column c0-1
  std::int32_t* bottom_h;      ///< w+1: H of the band's last row, from column c0-1
  std::int32_t* bottom_f;      ///< w: F of the band's last row
  std::int32_t* right_h;       ///< rows: H of column c1-1
  std::int32_t* right_e;       ///< rows: E of column c1-1
  const std::uint8_t* q;       ///< query residues of the band's rows
  const std::uint8_t* t;       ///< target residues of the tile's columns
  const std::int32_t* scores;  ///< the matrix, row-major, alphabet x alphabet
  std::int64_t rows;
  std::int64_t w;
  std::uint64_t kernel_id;  ///< unique per SwKernel::make: keys the per-thread profile cache
  int alphabet;
  std::int32_t open;
  std::int32_t extend;
};

/// A band's best cell (0-based row and column in the band; score 0 when none is positive), or
/// overflow: an 8-bit or 16-bit band met a score it cannot hold (its outputs are then garbage).
/// E and F in the outputs are max(E, 0) and max(F, 0) in every lane width (see sw.hpp).
struct SwBandBest {
  std::int32_t score = 0;
  std::int64_t row = 0;
  std::int64_t col = 0;
  bool overflow = false;
};

/// The largest face value an 8-bit or 16-bit band accepts (its lanes hold 0 .. 2^bits - 1; a cell
/// reaching 2^bits - 1 signals overflow).
constexpr std::int32_t band_input_limit(int bits) noexcept {
  return (bits == 8 ? 255 : 65535) - 1;
}

/// 4K aliasing: a load whose address agrees with an earlier, still pending store in its low 12
/// bits waits for it on x86 cores (the store-to-load forwarding check compares those bits first).
/// A band's rows (H of two columns, E, the profile's row) are each a multiple of 4 KiB long in
/// 16-bit lanes (1024 vectors of 32 bytes), so laid out back to back every load of the main loop
/// would alias a store of the same loop: the rows start at distinct offsets within a page instead.
inline constexpr std::size_t page_bytes = 4096;
/// Bytes between consecutive scratch rows beyond their length (three cache lines).
inline constexpr std::size_t row_pad_bytes = 192;
/// Where a profile starts within its page: past the offsets of the band's four scratch rows.
inline constexpr std::size_t profile_page_offset = 5 * row_pad_bytes;

/// Page-aligned per-thread scratch of at least `bytes` (valid until the thread's next call).
void* sw_scratch(std::size_t bytes);

/// A per-thread cache of band query profiles: the tiles of one row of tiles share their bands'
/// rows, so a thread builds each band's profile once, not once per tile. `find` returns the
/// profile stored under the key, or a buffer of `bytes` to fill (and `fresh`), starting
/// profile_page_offset bytes into a page.
struct SwProfileKey {
  std::uint64_t kernel_id;
  const std::uint8_t* q;
  std::int64_t rows;
  int lane_bytes;
  friend bool operator==(const SwProfileKey&, const SwProfileKey&) = default;
};
void* sw_profile(const SwProfileKey& key, std::size_t bytes, bool& fresh);

// Farrar's striped layout (query rows across lanes) with a lazy-F pass, per ISA and lane width.
// Defined only where the compiler can target the ISA (GCC on x86-64); call only when the CPU
// supports it.
SwBandBest sw_band_avx512_8(const SwBand& b) noexcept;
SwBandBest sw_band_avx512_16(const SwBand& b) noexcept;
SwBandBest sw_band_avx512_32(const SwBand& b) noexcept;
SwBandBest sw_band_avx2_8(const SwBand& b) noexcept;
SwBandBest sw_band_avx2_16(const SwBand& b) noexcept;
SwBandBest sw_band_avx2_32(const SwBand& b) noexcept;
SwBandBest sw_band_sse41_8(const SwBand& b) noexcept;
SwBandBest sw_band_sse41_16(const SwBand& b) noexcept;
SwBandBest sw_band_sse41_32(const SwBand& b) noexcept;

/// Myers-Miller's half pass (sw_global_body.hpp): rows a[0], a[step], ... against the columns
/// b[0], b[step], ..., global costs with affine gaps, into cc and dd (n + 1 each, or mirrored:
/// index n - j for column j). The caller checks that every cost fits global_rows_limit.
struct SwGlobalRows {
  const std::uint8_t* a;
  std::int64_t a_step;  ///< +1, or -1 for the backward pass
  const std::uint8_t* b;
  std::int64_t b_step;
  std::int64_t rows;
  std::int64_t n;
  const std::int32_t* scores;  ///< the matrix, row-major, alphabet x alphabet
  int alphabet;
  std::int64_t g;   ///< a gap's opening cost beyond its columns (open - h, at least 0)
  std::int64_t h;   ///< the cost per gap column
  std::int64_t tb;  ///< the opening cost of a vertical gap at the top-left corner
  bool mirrored;
  std::int64_t* cc;
  std::int64_t* dd;
};

/// The largest cost magnitude the int32 lanes of a global pass take (the lanes' minus infinity
/// and the carries subtracted from it stay apart from every real value).
inline constexpr std::int64_t global_rows_limit = std::int64_t{1} << 28;

void sw_global_rows_avx2(const SwGlobalRows& p) noexcept;

/// The largest of n values (n >= 0; the int32 minimum when n = 0), in AVX2 lanes.
std::int32_t sw_max_avx2(const std::int32_t* p, std::int64_t n) noexcept;
void sw_global_rows_sse41(const SwGlobalRows& p) noexcept;

}  // namespace tp::kernels::detail
