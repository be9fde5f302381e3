// sw striped bands in AVX-512 (BW and DQ) lanes: 64 x uint8 and 32 x uint16 (scores floored at 0
// and held offset by 2^(b-1) in signed saturating lanes, overflow reported), 16 x int32. The same
// body as sw_avx2.cpp over twice the lanes; where the CPU runs 512-bit operations at full width a
// column of a band costs half the instructions.
#include <tilepipe/kernels/sw.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "sw_striped.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,avx512f,avx512bw,avx512dq,avx512vl")
// GCC 12's AVX-512 intrinsics fill their unused merge operand with _mm512_undefined_epi32(), a
// self-initialized variable that -Wmaybe-uninitialized reports at every use (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tp::kernels::detail {
namespace {

// Lane l of the result is lane l-1 of a, lane 0 is x's; `bytes` is the lane width. valignd moves
// each 128-bit block up by one (block 0 takes x's), then a byte shift within the blocks brings
// each block's last lane in from the block below.
template <int bytes>
[[gnu::always_inline]] inline __m512i shift_lanes_in(__m512i a, __m512i x) noexcept {
  const __m512i blocks_up = _mm512_alignr_epi32(a, x, 12);
  return _mm512_alignr_epi8(a, blocks_up, 16 - bytes);
}

// 64 lanes of 8 bits, held as in sw_avx2.cpp's Avx2U8 (x - 128 in signed saturating lanes).
struct Avx512U8 {
  using V = __m512i;
  using T = std::uint8_t;
  static constexpr int lanes = 64;
  static constexpr bool saturating = true;
  // F's chain one vector at a time: the loop is bound by the 512-bit operations' throughput here
  // (pairs took 6% longer on the protein benchmark pair, sw_striped_body.hpp).
  static constexpr bool f_in_pairs = false;
  static constexpr T neg_inf = 0;
  static constexpr T offset = 0x80;
  static V set1(std::int32_t x) noexcept { return _mm512_set1_epi8(static_cast<char>(x)); }
  static V adds(V a, V b) noexcept { return _mm512_adds_epi8(a, b); }
  static V subs(V a, V b) noexcept { return _mm512_subs_epi8(a, b); }
  static V max(V a, V b) noexcept { return _mm512_max_epi8(a, b); }
  static V bit_and(V a, V b) noexcept { return _mm512_and_si512(a, b); }
  // mask's lanes (all ones or all zeros) take a, the others b.
  static V select(V mask, V a, V b) noexcept {
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(mask), b, a);
  }
  static bool any_gt(V a, V b) noexcept { return _mm512_cmpgt_epi8_mask(a, b) != 0; }
  // One bit per byte of the lanes equal in a and b.
  static std::uint64_t eq_mask(V a, V b) noexcept { return _mm512_cmpeq_epi8_mask(a, b); }
  static V shift_in(V a, T x) noexcept { return shift_lanes_in<1>(a, set1(x)); }
  static void store(T* p, V v) noexcept { _mm512_store_si512(p, v); }
  static V load(const T* p) noexcept { return _mm512_load_si512(p); }
};

// 32 lanes of 16 bits, held as in Avx2U16 (x - 32768 in signed saturating lanes).
struct Avx512U16 {
  using V = __m512i;
  using T = std::uint16_t;
  static constexpr int lanes = 32;
  static constexpr bool saturating = true;
  static constexpr bool f_in_pairs = false;
  static constexpr T neg_inf = 0;
  static constexpr T offset = 0x8000;
  static V set1(std::int32_t x) noexcept { return _mm512_set1_epi16(static_cast<short>(x)); }
  static V adds(V a, V b) noexcept { return _mm512_adds_epi16(a, b); }
  static V subs(V a, V b) noexcept { return _mm512_subs_epi16(a, b); }
  static V max(V a, V b) noexcept { return _mm512_max_epi16(a, b); }
  static V bit_and(V a, V b) noexcept { return _mm512_and_si512(a, b); }
  static V select(V mask, V a, V b) noexcept {
    return _mm512_mask_blend_epi16(_mm512_movepi16_mask(mask), b, a);
  }
  static bool any_gt(V a, V b) noexcept { return _mm512_cmpgt_epi16_mask(a, b) != 0; }
  static std::uint64_t eq_mask(V a, V b) noexcept {
    return _mm512_movepi8_mask(_mm512_movm_epi16(_mm512_cmpeq_epi16_mask(a, b)));
  }
  static V shift_in(V a, T x) noexcept { return shift_lanes_in<2>(a, set1(x)); }
  static void store(T* p, V v) noexcept { _mm512_store_si512(p, v); }
  static V load(const T* p) noexcept { return _mm512_load_si512(p); }
};

// 16 lanes of int32: exact for every score SwKernel::make accepts.
struct Avx512I32 {
  using V = __m512i;
  using T = std::int32_t;
  static constexpr int lanes = 16;
  static constexpr bool saturating = false;
  static constexpr bool f_in_pairs = false;
  static constexpr T neg_inf = SwKernel::minus_infinity;
  static constexpr T offset = 0;
  static V set1(std::int32_t x) noexcept { return _mm512_set1_epi32(x); }
  static V adds(V a, V b) noexcept { return _mm512_add_epi32(a, b); }
  static V subs(V a, V b) noexcept { return _mm512_sub_epi32(a, b); }
  static V max(V a, V b) noexcept { return _mm512_max_epi32(a, b); }
  static V bit_and(V a, V b) noexcept { return _mm512_and_si512(a, b); }
  static V select(V mask, V a, V b) noexcept {
    return _mm512_mask_blend_epi32(_mm512_movepi32_mask(mask), b, a);
  }
  static bool any_gt(V a, V b) noexcept { return _mm512_cmpgt_epi32_mask(a, b) != 0; }
  static std::uint64_t eq_mask(V a, V b) noexcept {
    return _mm512_movepi8_mask(_mm512_movm_epi32(_mm512_cmpeq_epi32_mask(a, b)));
  }
  static V shift_in(V a, T x) noexcept { return _mm512_alignr_epi32(a, set1(x), 15); }
  static void store(T* p, V v) noexcept { _mm512_store_si512(p, v); }
  static V load(const T* p) noexcept { return _mm512_load_si512(p); }
};

#include "sw_striped_body.hpp"

}  // namespace

SwBandBest sw_band_avx512_8(const SwBand& b) noexcept {
  return striped_band<Avx512U8>(b);
}
SwBandBest sw_band_avx512_16(const SwBand& b) noexcept {
  return striped_band<Avx512U16>(b);
}
SwBandBest sw_band_avx512_32(const SwBand& b) noexcept {
  return striped_band<Avx512I32>(b);
}

}  // namespace tp::kernels::detail

#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif
