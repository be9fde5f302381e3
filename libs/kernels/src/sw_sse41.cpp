// sw striped bands in SSE4.1 lanes: 16 x uint8 and 8 x uint16 (scores floored at 0 and held offset
// by 2^(b-1) in signed saturating lanes, overflow reported), 4 x int32.
#include <tilepipe/kernels/sw.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "sw_striped.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("sse4.1")

namespace tp::kernels::detail {
namespace {

// 16 lanes of 8 bits: value x in 0 .. 255 held as the signed x - 128 (bits x ^ 0x80); signed
// saturating arithmetic floors every value at 0 (the local alignment's floor) and shows a score
// that does not fit as 255.
struct Sse41U8 {
  using V = __m128i;
  using T = std::uint8_t;
  static constexpr int lanes = 16;
  static constexpr bool saturating = true;
  static constexpr bool f_in_pairs = true;
  static constexpr T neg_inf = 0;
  static constexpr T offset = 0x80;
  static V set1(std::int32_t x) noexcept { return _mm_set1_epi8(static_cast<char>(x)); }
  static V adds(V a, V b) noexcept { return _mm_adds_epi8(a, b); }
  static V subs(V a, V b) noexcept { return _mm_subs_epi8(a, b); }
  static V max(V a, V b) noexcept { return _mm_max_epi8(a, b); }
  static V bit_and(V a, V b) noexcept { return _mm_and_si128(a, b); }
  // mask's lanes (all ones or all zeros) take a, the others b.
  static V select(V mask, V a, V b) noexcept { return _mm_blendv_epi8(b, a, mask); }
  static bool any_gt(V a, V b) noexcept { return _mm_movemask_epi8(_mm_cmpgt_epi8(a, b)) != 0; }
  // One bit per byte of the lanes equal in a and b.
  static std::uint32_t eq_mask(V a, V b) noexcept {
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)));
  }
  static V shift_in(V a, T x) noexcept {
    return _mm_insert_epi8(_mm_slli_si128(a, 1), static_cast<char>(x), 0);
  }
  static void store(T* p, V v) noexcept { _mm_store_si128(reinterpret_cast<V*>(p), v); }
  static V load(const T* p) noexcept { return _mm_load_si128(reinterpret_cast<const V*>(p)); }
};

// 8 lanes of 16 bits: value x in 0 .. 65535 held as the signed x - 32768 (bits x ^ 0x8000);
// signed saturating arithmetic floors every value at 0 and shows a score that does not fit as
// 65535.
struct Sse41U16 {
  using V = __m128i;
  using T = std::uint16_t;
  static constexpr int lanes = 8;
  static constexpr bool saturating = true;
  static constexpr bool f_in_pairs = true;
  static constexpr T neg_inf = 0;
  static constexpr T offset = 0x8000;
  static V set1(std::int32_t x) noexcept { return _mm_set1_epi16(static_cast<short>(x)); }
  static V adds(V a, V b) noexcept { return _mm_adds_epi16(a, b); }
  static V subs(V a, V b) noexcept { return _mm_subs_epi16(a, b); }
  static V max(V a, V b) noexcept { return _mm_max_epi16(a, b); }
  static V bit_and(V a, V b) noexcept { return _mm_and_si128(a, b); }
  // mask's lanes (all ones or all zeros) take a, the others b.
  static V select(V mask, V a, V b) noexcept { return _mm_blendv_epi8(b, a, mask); }
  static bool any_gt(V a, V b) noexcept { return _mm_movemask_epi8(_mm_cmpgt_epi16(a, b)) != 0; }
  // One bit per byte of the lanes equal in a and b.
  static std::uint32_t eq_mask(V a, V b) noexcept {
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi16(a, b)));
  }
  static V shift_in(V a, T x) noexcept {
    return _mm_insert_epi16(_mm_slli_si128(a, 2), static_cast<short>(x), 0);
  }
  static void store(T* p, V v) noexcept { _mm_store_si128(reinterpret_cast<V*>(p), v); }
  static V load(const T* p) noexcept { return _mm_load_si128(reinterpret_cast<const V*>(p)); }
};

// 4 lanes of int32: exact for every score SwKernel::make accepts.
struct Sse41I32 {
  using V = __m128i;
  using T = std::int32_t;
  static constexpr int lanes = 4;
  static constexpr bool saturating = false;
  static constexpr bool f_in_pairs = true;
  static constexpr T neg_inf = SwKernel::minus_infinity;
  static constexpr T offset = 0;
  static V set1(std::int32_t x) noexcept { return _mm_set1_epi32(x); }
  static V adds(V a, V b) noexcept { return _mm_add_epi32(a, b); }
  static V subs(V a, V b) noexcept { return _mm_sub_epi32(a, b); }
  static V max(V a, V b) noexcept { return _mm_max_epi32(a, b); }
  static V bit_and(V a, V b) noexcept { return _mm_and_si128(a, b); }
  // mask's lanes (all ones or all zeros) take a, the others b.
  static V select(V mask, V a, V b) noexcept { return _mm_blendv_epi8(b, a, mask); }
  static bool any_gt(V a, V b) noexcept { return _mm_movemask_epi8(_mm_cmpgt_epi32(a, b)) != 0; }
  // One bit per byte of the lanes equal in a and b.
  static std::uint32_t eq_mask(V a, V b) noexcept {
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi32(a, b)));
  }
  static V shift_in(V a, T x) noexcept { return _mm_insert_epi32(_mm_slli_si128(a, 4), x, 0); }
  static void store(T* p, V v) noexcept { _mm_store_si128(reinterpret_cast<V*>(p), v); }
  static V load(const T* p) noexcept { return _mm_load_si128(reinterpret_cast<const V*>(p)); }
};

#include "sw_global_body.hpp"
#include "sw_striped_body.hpp"

}  // namespace

SwBandBest sw_band_sse41_8(const SwBand& b) noexcept {
  return striped_band<Sse41U8>(b);
}
SwBandBest sw_band_sse41_16(const SwBand& b) noexcept {
  return striped_band<Sse41U16>(b);
}
SwBandBest sw_band_sse41_32(const SwBand& b) noexcept {
  return striped_band<Sse41I32>(b);
}
void sw_global_rows_sse41(const SwGlobalRows& p) noexcept {
  global_rows<Sse41I32>(p);
}

}  // namespace tp::kernels::detail

#pragma GCC pop_options
#endif
