// sw striped bands in AVX2 lanes: 32 x uint8 and 16 x uint16 (scores floored at 0 and held offset
// by 2^(b-1) in signed saturating lanes, overflow reported), 8 x int32.
#include <tilepipe/kernels/sw.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "sw_striped.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2")

namespace tp::kernels::detail {
namespace {

// A band's column buffer of 32 x uint8 lanes (offset by 0x80) to int32 rows in row order:
// out[r] = the value of row r for r < rows (row r = l seg + v sits in vector v, lane l). Blocks of
// 8 vectors are transposed in registers (three rounds of unpacks; afterwards register k holds
// lanes 2k, 2k+1 in its low half and 16 + 2k, 17 + 2k in its high half, 8 rows each) and widened
// 8 rows at a time; the lanes holding padding and the last seg % 8 rows go one by one.
void u8_lanes_to_rows(const std::uint8_t* lanes, std::int64_t seg, std::int64_t rows,
                      std::int32_t* out) noexcept {
  const std::int64_t full = std::min<std::int64_t>(rows / seg, 32);  // lanes of seg real rows
  const __m256i off = _mm256_set1_epi32(0x80);
  std::int64_t v = 0;
  const auto emit = [&](std::int64_t l, __m128i q) __attribute__((always_inline)) {
    if (l < full) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + l * seg + v),
                          _mm256_xor_si256(_mm256_cvtepu8_epi32(q), off));
    }
  };
  for (; v + 8 <= seg; v += 8) {
    const auto* p = reinterpret_cast<const __m256i*>(lanes + v * 32);
    __m256i a[8];
    for (int i = 0; i < 8; ++i) a[i] = _mm256_load_si256(p + i);
    __m256i s1[8], s2[8], s3[8];
    for (int i = 0; i < 4; ++i) {
      s1[2 * i] = _mm256_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
      s1[2 * i + 1] = _mm256_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) {  // rows 0-3, then 4-7
      s2[4 * i] = _mm256_unpacklo_epi16(s1[4 * i], s1[4 * i + 2]);
      s2[4 * i + 1] = _mm256_unpackhi_epi16(s1[4 * i], s1[4 * i + 2]);
      s2[4 * i + 2] = _mm256_unpacklo_epi16(s1[4 * i + 1], s1[4 * i + 3]);
      s2[4 * i + 3] = _mm256_unpackhi_epi16(s1[4 * i + 1], s1[4 * i + 3]);
    }
    for (int i = 0; i < 4; ++i) {
      s3[2 * i] = _mm256_unpacklo_epi32(s2[i], s2[4 + i]);
      s3[2 * i + 1] = _mm256_unpackhi_epi32(s2[i], s2[4 + i]);
    }
    for (int k = 0; k < 8; ++k) {
      const __m128i lo = _mm256_castsi256_si128(s3[k]);
      const __m128i hi = _mm256_extracti128_si256(s3[k], 1);
      emit(2 * k, lo);
      emit(2 * k + 1, _mm_srli_si128(lo, 8));
      emit(16 + 2 * k, hi);
      emit(17 + 2 * k, _mm_srli_si128(hi, 8));
    }
  }
  for (std::int64_t l = 0; l < 32; ++l) {
    for (std::int64_t u = l < full ? v : 0; u < seg && l * seg + u < rows; ++u) {
      out[l * seg + u] = static_cast<std::uint8_t>(lanes[u * 32 + l] ^ 0x80);
    }
  }
}

// The same for 16 x uint16 lanes (offset by 0x8000): register k holds lanes k and 8 + k.
void u16_lanes_to_rows(const std::uint16_t* lanes, std::int64_t seg, std::int64_t rows,
                       std::int32_t* out) noexcept {
  const std::int64_t full = std::min<std::int64_t>(rows / seg, 16);
  const __m256i off = _mm256_set1_epi32(0x8000);
  std::int64_t v = 0;
  const auto emit = [&](std::int64_t l, __m128i q) __attribute__((always_inline)) {
    if (l < full) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + l * seg + v),
                          _mm256_xor_si256(_mm256_cvtepu16_epi32(q), off));
    }
  };
  for (; v + 8 <= seg; v += 8) {
    const auto* p = reinterpret_cast<const __m256i*>(lanes + v * 16);
    __m256i a[8];
    for (int i = 0; i < 8; ++i) a[i] = _mm256_load_si256(p + i);
    __m256i s1[8], s2[8], s3[8];
    for (int i = 0; i < 4; ++i) {
      s1[2 * i] = _mm256_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
      s1[2 * i + 1] = _mm256_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) {
      s2[4 * i] = _mm256_unpacklo_epi32(s1[4 * i], s1[4 * i + 2]);
      s2[4 * i + 1] = _mm256_unpackhi_epi32(s1[4 * i], s1[4 * i + 2]);
      s2[4 * i + 2] = _mm256_unpacklo_epi32(s1[4 * i + 1], s1[4 * i + 3]);
      s2[4 * i + 3] = _mm256_unpackhi_epi32(s1[4 * i + 1], s1[4 * i + 3]);
    }
    for (int i = 0; i < 4; ++i) {
      s3[2 * i] = _mm256_unpacklo_epi64(s2[i], s2[4 + i]);
      s3[2 * i + 1] = _mm256_unpackhi_epi64(s2[i], s2[4 + i]);
    }
    for (int k = 0; k < 8; ++k) {
      emit(k, _mm256_castsi256_si128(s3[k]));
      emit(8 + k, _mm256_extracti128_si256(s3[k], 1));
    }
  }
  for (std::int64_t l = 0; l < 16; ++l) {
    for (std::int64_t u = l < full ? v : 0; u < seg && l * seg + u < rows; ++u) {
      out[l * seg + u] = static_cast<std::uint16_t>(lanes[u * 16 + l] ^ 0x8000);
    }
  }
}

// The left face into the striped layout: out[v L + l] = in[l seg + v] for every lane and v < seg
// (in: seg L values, padding included), 8 rows of every lane at a time. Each group of 8 lanes
// is transposed as an 8 x 8 matrix of elements (three rounds of unpacks on the lanes' 8 rows, one
// register each), which leaves the group's rows in pairs (8-bit) or one per register (16-bit);
// the row's groups are then put side by side in one vector.
[[gnu::always_inline]] inline __m128i load_rows8(const void* p) noexcept {
  return _mm_loadl_epi64(static_cast<const __m128i*>(p));
}

void u8_rows_to_lanes(const std::uint8_t* in, std::int64_t seg, std::uint8_t* out) noexcept {
  std::int64_t v = 0;
  for (; v + 8 <= seg; v += 8) {
    __m128i rows[4][4];  // [group][k]: rows 2k (low half) and 2k + 1 (high half) of the group
    for (int g = 0; g < 4; ++g) {
      const std::uint8_t* p = in + g * 8 * seg + v;
      __m128i a[8];
      for (int j = 0; j < 8; ++j) a[j] = load_rows8(p + j * seg);
      __m128i s1[4], s2[4];
      for (int j = 0; j < 4; ++j) s1[j] = _mm_unpacklo_epi8(a[2 * j], a[2 * j + 1]);
      s2[0] = _mm_unpacklo_epi16(s1[0], s1[1]);
      s2[1] = _mm_unpackhi_epi16(s1[0], s1[1]);
      s2[2] = _mm_unpacklo_epi16(s1[2], s1[3]);
      s2[3] = _mm_unpackhi_epi16(s1[2], s1[3]);
      rows[g][0] = _mm_unpacklo_epi32(s2[0], s2[2]);
      rows[g][1] = _mm_unpackhi_epi32(s2[0], s2[2]);
      rows[g][2] = _mm_unpacklo_epi32(s2[1], s2[3]);
      rows[g][3] = _mm_unpackhi_epi32(s2[1], s2[3]);
    }
    for (int k = 0; k < 4; ++k) {
      const __m128i lo01 = _mm_unpacklo_epi64(rows[0][k], rows[1][k]);  // row 2k, lanes 0-15
      const __m128i lo23 = _mm_unpacklo_epi64(rows[2][k], rows[3][k]);  // row 2k, lanes 16-31
      const __m128i hi01 = _mm_unpackhi_epi64(rows[0][k], rows[1][k]);
      const __m128i hi23 = _mm_unpackhi_epi64(rows[2][k], rows[3][k]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + (v + 2 * k) * 32),
                         _mm256_set_m128i(lo23, lo01));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + (v + 2 * k + 1) * 32),
                         _mm256_set_m128i(hi23, hi01));
    }
  }
  for (std::int64_t l = 0; l < 32; ++l) {
    for (std::int64_t u = v; u < seg; ++u) out[u * 32 + l] = in[l * seg + u];
  }
}

void u16_rows_to_lanes(const std::uint16_t* in, std::int64_t seg, std::uint16_t* out) noexcept {
  std::int64_t v = 0;
  for (; v + 8 <= seg; v += 8) {
    __m128i rows[2][8];  // [group][i]: row i of the group's 8 lanes
    for (int g = 0; g < 2; ++g) {
      const std::uint16_t* p = in + g * 8 * seg + v;
      __m128i a[8];
      for (int j = 0; j < 8; ++j)
        a[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j * seg));
      __m128i s1[8], s2[8];
      for (int j = 0; j < 4; ++j) {
        s1[2 * j] = _mm_unpacklo_epi16(a[2 * j], a[2 * j + 1]);      // rows 0-3 of lanes 2j, 2j+1
        s1[2 * j + 1] = _mm_unpackhi_epi16(a[2 * j], a[2 * j + 1]);  // rows 4-7
      }
      for (int h = 0; h < 2; ++h) {                                // rows 0-3, then 4-7
        s2[4 * h] = _mm_unpacklo_epi32(s1[h], s1[2 + h]);          // rows 4h, 4h+1; lanes 0-3
        s2[4 * h + 1] = _mm_unpackhi_epi32(s1[h], s1[2 + h]);      // rows 4h+2, 4h+3; lanes 0-3
        s2[4 * h + 2] = _mm_unpacklo_epi32(s1[4 + h], s1[6 + h]);  // rows 4h, 4h+1; lanes 4-7
        s2[4 * h + 3] = _mm_unpackhi_epi32(s1[4 + h], s1[6 + h]);  // rows 4h+2, 4h+3; lanes 4-7
      }
      for (int h = 0; h < 2; ++h) {
        rows[g][4 * h] = _mm_unpacklo_epi64(s2[4 * h], s2[4 * h + 2]);
        rows[g][4 * h + 1] = _mm_unpackhi_epi64(s2[4 * h], s2[4 * h + 2]);
        rows[g][4 * h + 2] = _mm_unpacklo_epi64(s2[4 * h + 1], s2[4 * h + 3]);
        rows[g][4 * h + 3] = _mm_unpackhi_epi64(s2[4 * h + 1], s2[4 * h + 3]);
      }
    }
    for (int i = 0; i < 8; ++i) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + (v + i) * 16),
                         _mm256_set_m128i(rows[1][i], rows[0][i]));
    }
  }
  for (std::int64_t l = 0; l < 16; ++l) {
    for (std::int64_t u = v; u < seg; ++u) out[u * 16 + l] = in[l * seg + u];
  }
}

// A band's query profile in 32 x int8 lanes, for alphabets of at most 31 letters: the striped
// residue codes first (code `alphabet` for padding rows), then, per residue a, one table of the
// 32 scores of a (padding: the lanes' least, 0x80) looked up by two in-lane shuffles and a blend
// per vector. Returns false (nothing written) for larger alphabets. `codes`: nvec x 32 bytes.
bool u8_build_profile(std::uint8_t* prof, const SwBand& b, std::int64_t seg,
                      std::uint8_t* codes) noexcept {
  const int alphabet = b.alphabet;
  if (alphabet > 31) return false;
  const std::int64_t rows = b.rows;
  for (std::int64_t l = 0; l < 32; ++l) {
    const std::int64_t real = std::clamp<std::int64_t>(rows - l * seg, 0, seg);
    const std::uint8_t* q = b.q + std::min(l * seg, rows);
    std::int64_t v = 0;
    for (; v < real; ++v) codes[v * 32 + l] = q[v];
    for (; v < seg; ++v) codes[v * 32 + l] = static_cast<std::uint8_t>(alphabet);
  }
  alignas(32) std::uint8_t table[32];
  for (int a = 0; a < alphabet; ++a) {
    for (int c = 0; c < 32; ++c) {
      table[c] = c < alphabet ? static_cast<std::uint8_t>(b.scores[c * alphabet + a]) : 0x80;
    }
    const __m256i lo =
        _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<__m128i*>(table)));
    const __m256i hi =
        _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<__m128i*>(table + 16)));
    auto* out = reinterpret_cast<__m256i*>(prof + static_cast<std::size_t>(a) * seg * 32);
    for (std::int64_t v = 0; v < seg; ++v) {
      const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(codes + v * 32));
      // Codes 16-31 take the high table: bit 4 moved to each byte's top bit selects it (codes
      // are below 32, so the 16-bit shift carries no bit into the next byte's top).
      const __m256i pick = _mm256_slli_epi16(idx, 3);
      _mm256_store_si256(out + v, _mm256_blendv_epi8(_mm256_shuffle_epi8(lo, idx),
                                                     _mm256_shuffle_epi8(hi, idx), pick));
    }
  }
  return true;
}

// 32 lanes of 8 bits: value x in 0 .. 255 held as the signed x - 128 (bits x ^ 0x80); signed
// saturating arithmetic floors every value at 0 (the local alignment's floor) and shows a score
// that does not fit as 255.
struct Avx2U8 {
  using V = __m256i;
  using T = std::uint8_t;
  static constexpr int lanes = 32;
  static constexpr bool saturating = true;
  static constexpr bool f_in_pairs = true;
  static constexpr T neg_inf = 0;
  static constexpr T offset = 0x80;
  static V set1(std::int32_t x) noexcept { return _mm256_set1_epi8(static_cast<char>(x)); }
  static V adds(V a, V b) noexcept { return _mm256_adds_epi8(a, b); }
  static V subs(V a, V b) noexcept { return _mm256_subs_epi8(a, b); }
  static V max(V a, V b) noexcept { return _mm256_max_epi8(a, b); }
  static V bit_and(V a, V b) noexcept { return _mm256_and_si256(a, b); }
  // mask's lanes (all ones or all zeros) take a, the others b.
  static V select(V mask, V a, V b) noexcept { return _mm256_blendv_epi8(b, a, mask); }
  static bool any_gt(V a, V b) noexcept {
    return _mm256_movemask_epi8(_mm256_cmpgt_epi8(a, b)) != 0;
  }
  // One bit per byte of the lanes equal in a and b.
  static std::uint32_t eq_mask(V a, V b) noexcept {
    return static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b)));
  }
  static V shift_in(V a, T x) noexcept {
    const V low_to_high = _mm256_permute2x128_si256(a, a, 0x08);
    return _mm256_insert_epi8(_mm256_alignr_epi8(a, low_to_high, 15), static_cast<char>(x), 0);
  }
  static void store(T* p, V v) noexcept { _mm256_store_si256(reinterpret_cast<V*>(p), v); }
  static V load(const T* p) noexcept { return _mm256_load_si256(reinterpret_cast<const V*>(p)); }
  static void lanes_to_rows(const T* lanes, std::int64_t seg, std::int64_t rows,
                            std::int32_t* out) noexcept {
    u8_lanes_to_rows(lanes, seg, rows, out);
  }
  static bool build_profile(T* prof, const SwBand& b, std::int64_t seg,
                            std::uint8_t* codes) noexcept {
    return u8_build_profile(prof, b, seg, codes);
  }
  static void rows_to_lanes(const T* in, std::int64_t seg, T* out) noexcept {
    u8_rows_to_lanes(in, seg, out);
  }
};

// 16 lanes of 16 bits: value x in 0 .. 65535 held as the signed x - 32768 (bits x ^ 0x8000);
// signed saturating arithmetic floors every value at 0 and shows a score that does not fit as
// 65535.
struct Avx2U16 {
  using V = __m256i;
  using T = std::uint16_t;
  static constexpr int lanes = 16;
  static constexpr bool saturating = true;
  static constexpr bool f_in_pairs = true;
  static constexpr T neg_inf = 0;
  static constexpr T offset = 0x8000;
  static V set1(std::int32_t x) noexcept { return _mm256_set1_epi16(static_cast<short>(x)); }
  static V adds(V a, V b) noexcept { return _mm256_adds_epi16(a, b); }
  static V subs(V a, V b) noexcept { return _mm256_subs_epi16(a, b); }
  static V max(V a, V b) noexcept { return _mm256_max_epi16(a, b); }
  static V bit_and(V a, V b) noexcept { return _mm256_and_si256(a, b); }
  // mask's lanes (all ones or all zeros) take a, the others b.
  static V select(V mask, V a, V b) noexcept { return _mm256_blendv_epi8(b, a, mask); }
  static bool any_gt(V a, V b) noexcept {
    return _mm256_movemask_epi8(_mm256_cmpgt_epi16(a, b)) != 0;
  }
  // One bit per byte of the lanes equal in a and b.
  static std::uint32_t eq_mask(V a, V b) noexcept {
    return static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi16(a, b)));
  }
  // Lane l gets lane l-1 of a, lane 0 gets x (the byte shift crosses the 128-bit halves).
  static V shift_in(V a, T x) noexcept {
    const V low_to_high = _mm256_permute2x128_si256(a, a, 0x08);
    return _mm256_insert_epi16(_mm256_alignr_epi8(a, low_to_high, 14), static_cast<short>(x), 0);
  }
  static void store(T* p, V v) noexcept { _mm256_store_si256(reinterpret_cast<V*>(p), v); }
  static V load(const T* p) noexcept { return _mm256_load_si256(reinterpret_cast<const V*>(p)); }
  static void lanes_to_rows(const T* lanes, std::int64_t seg, std::int64_t rows,
                            std::int32_t* out) noexcept {
    u16_lanes_to_rows(lanes, seg, rows, out);
  }
  static void rows_to_lanes(const T* in, std::int64_t seg, T* out) noexcept {
    u16_rows_to_lanes(in, seg, out);
  }
};

// 8 lanes of int32: exact for every score SwKernel::make accepts.
struct Avx2I32 {
  using V = __m256i;
  using T = std::int32_t;
  static constexpr int lanes = 8;
  static constexpr bool saturating = false;
  static constexpr bool f_in_pairs = true;
  static constexpr T neg_inf = SwKernel::minus_infinity;
  static constexpr T offset = 0;
  static V set1(std::int32_t x) noexcept { return _mm256_set1_epi32(x); }
  static V adds(V a, V b) noexcept { return _mm256_add_epi32(a, b); }
  static V subs(V a, V b) noexcept { return _mm256_sub_epi32(a, b); }
  static V max(V a, V b) noexcept { return _mm256_max_epi32(a, b); }
  static V bit_and(V a, V b) noexcept { return _mm256_and_si256(a, b); }
  // mask's lanes (all ones or all zeros) take a, the others b.
  static V select(V mask, V a, V b) noexcept { return _mm256_blendv_epi8(b, a, mask); }
  static bool any_gt(V a, V b) noexcept {
    return _mm256_movemask_epi8(_mm256_cmpgt_epi32(a, b)) != 0;
  }
  // One bit per byte of the lanes equal in a and b.
  static std::uint32_t eq_mask(V a, V b) noexcept {
    return static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi32(a, b)));
  }
  static V shift_in(V a, T x) noexcept {
    const V low_to_high = _mm256_permute2x128_si256(a, a, 0x08);
    return _mm256_insert_epi32(_mm256_alignr_epi8(a, low_to_high, 12), x, 0);
  }
  static void store(T* p, V v) noexcept { _mm256_store_si256(reinterpret_cast<V*>(p), v); }
  static V load(const T* p) noexcept { return _mm256_load_si256(reinterpret_cast<const V*>(p)); }
};

#include "sw_global_body.hpp"
#include "sw_striped_body.hpp"

}  // namespace

SwBandBest sw_band_avx2_8(const SwBand& b) noexcept {
  return striped_band<Avx2U8>(b);
}
SwBandBest sw_band_avx2_16(const SwBand& b) noexcept {
  return striped_band<Avx2U16>(b);
}
SwBandBest sw_band_avx2_32(const SwBand& b) noexcept {
  return striped_band<Avx2I32>(b);
}
void sw_global_rows_avx2(const SwGlobalRows& p) noexcept {
  global_rows<Avx2I32>(p);
}

std::int32_t sw_max_avx2(const std::int32_t* p, std::int64_t n) noexcept {
  // Four independent maxima of 8 lanes: 32 values per iteration, no chain between the loads.
  const __m256i lowest = _mm256_set1_epi32(std::numeric_limits<std::int32_t>::min());
  __m256i m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
  std::int64_t i = 0;
  const auto load = [p](std::int64_t k) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + k));
  };
  for (; i + 32 <= n; i += 32) {
    m0 = _mm256_max_epi32(m0, load(i));
    m1 = _mm256_max_epi32(m1, load(i + 8));
    m2 = _mm256_max_epi32(m2, load(i + 16));
    m3 = _mm256_max_epi32(m3, load(i + 24));
  }
  for (; i + 8 <= n; i += 8) m0 = _mm256_max_epi32(m0, load(i));
  const __m256i m = _mm256_max_epi32(_mm256_max_epi32(m0, m1), _mm256_max_epi32(m2, m3));
  alignas(32) std::int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), m);
  std::int32_t best = std::numeric_limits<std::int32_t>::min();
  for (const std::int32_t x : lanes) best = std::max(best, x);
  for (; i < n; ++i) best = std::max(best, p[i]);
  return best;
}

}  // namespace tp::kernels::detail

#pragma GCC pop_options
#endif
