// sw striped bands in AVX-512 (BW and DQ) lanes: 64 x uint8 and 32 x uint16 (scores floored at 0
// and held offset by 2^(b-1) in signed saturating lanes, overflow reported), 16 x int32. The same
// body as sw_avx2.cpp over twice the lanes; where the CPU runs 512-bit operations at full width a
// column of a band costs half the instructions.
#include <tilepipe/kernels/sw.hpp>

#include <algorithm>
#include <array>
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

// r[i]'s qword m to r[m]'s qword i (an 8 x 8 transposition of qwords, its own inverse): pairs of
// rows interleaved in each 128-bit block, then two rounds of block shuffles.
[[gnu::always_inline]] inline void transpose_qwords(__m512i r[8]) noexcept {
  __m512i u[8], v[8];
  for (int i = 0; i < 4; ++i) {
    u[2 * i] = _mm512_unpacklo_epi64(r[2 * i], r[2 * i + 1]);
    u[2 * i + 1] = _mm512_unpackhi_epi64(r[2 * i], r[2 * i + 1]);
  }
  // 0x88: blocks 0 and 2 of each source; 0xDD: blocks 1 and 3.
  for (int i = 0; i < 2; ++i) {
    v[4 * i] = _mm512_shuffle_i64x2(u[4 * i], u[4 * i + 2], 0x88);
    v[4 * i + 1] = _mm512_shuffle_i64x2(u[4 * i], u[4 * i + 2], 0xDD);
    v[4 * i + 2] = _mm512_shuffle_i64x2(u[4 * i + 1], u[4 * i + 3], 0x88);
    v[4 * i + 3] = _mm512_shuffle_i64x2(u[4 * i + 1], u[4 * i + 3], 0xDD);
  }
  r[0] = _mm512_shuffle_i64x2(v[0], v[4], 0x88);
  r[4] = _mm512_shuffle_i64x2(v[0], v[4], 0xDD);
  r[2] = _mm512_shuffle_i64x2(v[1], v[5], 0x88);
  r[6] = _mm512_shuffle_i64x2(v[1], v[5], 0xDD);
  r[1] = _mm512_shuffle_i64x2(v[2], v[6], 0x88);
  r[5] = _mm512_shuffle_i64x2(v[2], v[6], 0xDD);
  r[3] = _mm512_shuffle_i64x2(v[3], v[7], 0x88);
  r[7] = _mm512_shuffle_i64x2(v[3], v[7], 0xDD);
}

// A vector of 32 word indices (GCC 12 has no _mm512_setr_epi16).
[[gnu::always_inline]] inline __m512i index_words(const std::array<std::int16_t, 32>& w) noexcept {
  return _mm512_loadu_si512(w.data());
}

// The band's faces between row order and the striped layout, 8 vectors (8 rows of every lane) at
// a time: the 8 vectors' qwords transposed (register m: lane group m, row by row), then the lanes
// and rows of each register swapped by a permutation, so that each lane's 8 rows lie together.
// `bytes` is the lane width; a qword holds 8 / bytes lanes.
template <int bytes>
struct FaceTranspose {
  static constexpr int lanes = 64 / bytes;
  static constexpr int group = 8 / bytes;  // lanes per qword
  // Rows to lanes within a register: (row i, lane j) at element i group + j goes to j 8 + i.
  // 8-bit lanes: a byte shuffle within each 128-bit block pairs rows 2b and 2b+1 of each lane,
  // then a word permutation gathers each lane's four pairs (no byte permutation across blocks,
  // which needs AVX-512 VBMI).
  static __m512i to_lanes(__m512i t) noexcept {
    if constexpr (bytes == 1) {
      const __m512i pair = _mm512_broadcast_i32x4(
          _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
      // Word b 8 + j is (rows 2b, 2b+1; lane j): to j 4 + b.
      const __m512i words =
          index_words({0, 8,  16, 24, 1, 9,  17, 25, 2, 10, 18, 26, 3, 11, 19, 27,
                       4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31});
      return _mm512_permutexvar_epi16(words, _mm512_shuffle_epi8(t, pair));
    } else {
      // Word 4i + j is (row i, lane j): to j 8 + i.
      const __m512i words =
          index_words({0, 4, 8,  12, 16, 20, 24, 28, 1, 5, 9,  13, 17, 21, 25, 29,
                       2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31});
      return _mm512_permutexvar_epi16(words, t);
    }
  }
  // The inverse of to_lanes.
  static __m512i to_rows(__m512i w) noexcept {
    if constexpr (bytes == 1) {
      // Word j 4 + b back to b 8 + j, then each block's pairs back to rows.
      const __m512i words =
          index_words({0, 4, 8,  12, 16, 20, 24, 28, 1, 5, 9,  13, 17, 21, 25, 29,
                       2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31});
      const __m512i unpair = _mm512_broadcast_i32x4(
          _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
      return _mm512_shuffle_epi8(_mm512_permutexvar_epi16(words, w), unpair);
    } else {
      const __m512i words =
          index_words({0, 8,  16, 24, 1, 9,  17, 25, 2, 10, 18, 26, 3, 11, 19, 27,
                       4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31});
      return _mm512_permutexvar_epi16(words, w);
    }
  }
  // A lane's 8 rows (the 8 bytes elements of one lane, from block `blk` of w, half `half`),
  // widened to int32 and offset back, stored at out.
  template <int blk>
  static void emit_block(__m512i w, std::int64_t first_lane, std::int64_t full, std::int64_t seg,
                         std::int64_t v, std::int32_t* out) noexcept {
    const __m128i q = _mm512_extracti32x4_epi32(w, blk);
    if constexpr (bytes == 1) {
      // Two lanes per block: 8 bytes each.
      const __m512i x = _mm512_xor_si512(_mm512_cvtepu8_epi32(q), _mm512_set1_epi32(0x80));
      const std::int64_t l = first_lane + 2 * blk;
      if (l < full) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + l * seg + v),
                            _mm512_castsi512_si256(x));
      }
      if (l + 1 < full) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (l + 1) * seg + v),
                            _mm512_extracti64x4_epi64(x, 1));
      }
    } else {
      const std::int64_t l = first_lane + blk;
      if (l < full) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + l * seg + v),
                            _mm256_xor_si256(_mm256_cvtepu16_epi32(q), _mm256_set1_epi32(0x8000)));
      }
    }
  }
  // out[l seg + v] = the value of lanes[v L + l], for the rows below `rows`.
  template <class T>
  static void lanes_to_rows(const T* lanes_in, std::int64_t seg, std::int64_t rows,
                            std::int32_t* out) noexcept {
    const std::int64_t full = std::min<std::int64_t>(rows / seg, lanes);
    std::int64_t v = 0;
    for (; v + 8 <= seg; v += 8) {
      __m512i r[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm512_load_si512(lanes_in + (v + i) * lanes);
      transpose_qwords(r);
      for (int m = 0; m < 8; ++m) {
        if (m * group >= full) break;
        const __m512i w = to_lanes(r[m]);
        emit_block<0>(w, m * group, full, seg, v, out);
        emit_block<1>(w, m * group, full, seg, v, out);
        emit_block<2>(w, m * group, full, seg, v, out);
        emit_block<3>(w, m * group, full, seg, v, out);
      }
    }
    constexpr T offset = bytes == 1 ? 0x80 : 0x8000;
    for (std::int64_t l = 0; l < lanes; ++l) {
      for (std::int64_t u = l < full ? v : 0; u < seg && l * seg + u < rows; ++u) {
        out[l * seg + u] = static_cast<T>(lanes_in[u * lanes + l] ^ offset);
      }
    }
  }
  // out[v L + l] = in[l seg + v] for every lane and v < seg (in: seg L values, padding included).
  template <class T>
  static void rows_to_lanes(const T* in, std::int64_t seg, T* out) noexcept {
    // 8-bit lanes: the byte offsets of a group's 8 lanes, one lane every seg values.
    const __m512i at =
        _mm512_setr_epi64(0, seg, 2 * seg, 3 * seg, 4 * seg, 5 * seg, 6 * seg, 7 * seg);
    std::int64_t v = 0;
    for (; v + 8 <= seg; v += 8) {
      __m512i r[8];
      for (int m = 0; m < 8; ++m) {
        // The register of lanes m group .. m group + group - 1, each lane's 8 rows together.
        const T* p = in + m * group * seg + v;
        if constexpr (bytes == 1) {
          r[m] = to_rows(_mm512_i64gather_epi64(at, p, 1));
        } else {
          __m512i w = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
          w = _mm512_inserti32x4(w, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + seg)), 1);
          w = _mm512_inserti32x4(w, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * seg)),
                                 2);
          w = _mm512_inserti32x4(w, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3 * seg)),
                                 3);
          r[m] = to_rows(w);
        }
      }
      transpose_qwords(r);
      for (int i = 0; i < 8; ++i) _mm512_store_si512(out + (v + i) * lanes, r[i]);
    }
    for (std::int64_t l = 0; l < lanes; ++l) {
      for (std::int64_t u = v; u < seg; ++u) out[u * lanes + l] = in[l * seg + u];
    }
  }
};

// A band's query profile for alphabets of at most 31 letters (codes and padding below 32): the
// striped residue codes first (code `alphabet` for padding rows, in `codes`: nvec x 64 bytes),
// then per residue a one table of a's scores by code (padding: the lanes' least) looked up for
// every vector: 8-bit lanes by two in-block byte shuffles and a blend on bit 4 of the code (as
// sw_avx2.cpp does, no VBMI), 16-bit lanes by one word permutation. Returns false (nothing
// written) for larger alphabets.
template <class T>
bool build_profile_avx512(T* prof, const SwBand& b, std::int64_t seg,
                          std::uint8_t* codes) noexcept {
  constexpr int lanes = 64 / static_cast<int>(sizeof(T));
  const int alphabet = b.alphabet;
  if (alphabet > 31) return false;
  auto* c = reinterpret_cast<T*>(codes);
  const std::int64_t rows = b.rows;
  for (std::int64_t l = 0; l < lanes; ++l) {
    const std::int64_t real = std::clamp<std::int64_t>(rows - l * seg, 0, seg);
    const std::uint8_t* q = b.q + std::min(l * seg, rows);
    std::int64_t v = 0;
    for (; v < real; ++v) c[v * lanes + l] = q[v];
    for (; v < seg; ++v) c[v * lanes + l] = static_cast<T>(alphabet);
  }
  alignas(64) T table[32];
  constexpr T least = sizeof(T) == 1 ? 0x80 : 0x8000;
  for (int a = 0; a < alphabet; ++a) {
    for (int k = 0; k < 32; ++k) {
      table[k] = k < alphabet ? static_cast<T>(b.scores[k * alphabet + a]) : least;
    }
    auto* out = reinterpret_cast<__m512i*>(prof + static_cast<std::size_t>(a) * seg * lanes);
    if constexpr (sizeof(T) == 1) {
      const __m512i lo = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<__m128i*>(table)));
      const __m512i hi =
          _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<__m128i*>(table + 16)));
      for (std::int64_t v = 0; v < seg; ++v) {
        const __m512i idx = _mm512_load_si512(codes + v * 64);
        // Codes 16-31 take the high table: bit 4 moved to each byte's top bit (codes are below
        // 32, so the 16-bit shift carries no bit into the next byte's top).
        const __mmask64 high = _mm512_movepi8_mask(_mm512_slli_epi16(idx, 3));
        _mm512_store_si512(out + v, _mm512_mask_blend_epi8(high, _mm512_shuffle_epi8(lo, idx),
                                                           _mm512_shuffle_epi8(hi, idx)));
      }
    } else {
      const __m512i words = _mm512_load_si512(table);
      for (std::int64_t v = 0; v < seg; ++v) {
        const __m512i idx = _mm512_load_si512(codes + v * 64);
        _mm512_store_si512(out + v, _mm512_permutexvar_epi16(idx, words));
      }
    }
  }
  return true;
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
  static void lanes_to_rows(const T* lanes_in, std::int64_t seg, std::int64_t rows,
                            std::int32_t* out) noexcept {
    FaceTranspose<1>::lanes_to_rows(lanes_in, seg, rows, out);
  }
  static void rows_to_lanes(const T* in, std::int64_t seg, T* out) noexcept {
    FaceTranspose<1>::rows_to_lanes(in, seg, out);
  }
  static bool build_profile(T* prof, const SwBand& b, std::int64_t seg,
                            std::uint8_t* codes) noexcept {
    return build_profile_avx512(prof, b, seg, codes);
  }
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
  static void lanes_to_rows(const T* lanes_in, std::int64_t seg, std::int64_t rows,
                            std::int32_t* out) noexcept {
    FaceTranspose<2>::lanes_to_rows(lanes_in, seg, rows, out);
  }
  static void rows_to_lanes(const T* in, std::int64_t seg, T* out) noexcept {
    FaceTranspose<2>::rows_to_lanes(in, seg, out);
  }
  static bool build_profile(T* prof, const SwBand& b, std::int64_t seg,
                            std::uint8_t* codes) noexcept {
    return build_profile_avx512(prof, b, seg, codes);
  }
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
