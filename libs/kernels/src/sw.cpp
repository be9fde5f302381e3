// The sw tile function and the sequential Gotoh reference.
#include <tilepipe/kernels/sw.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include "sw_striped.hpp"

namespace tp::kernels {

std::string_view to_string(SwIsa isa) noexcept {
  switch (isa) {
    case SwIsa::scalar:
      return "scalar";
    case SwIsa::sse41:
      return "sse41";
    case SwIsa::avx2:
      return "avx2";
    case SwIsa::avx512:
      return "avx512";
  }
  return "?";
}

Expected<SwIsa> parse_sw_isa(std::string_view text) {
  for (const SwIsa isa : {SwIsa::scalar, SwIsa::sse41, SwIsa::avx2, SwIsa::avx512}) {
    if (text == to_string(isa)) return isa;
  }
  return fail(Errc::invalid_argument,
              fmt::format("unknown instruction set '{}' (choose scalar|sse41|avx2|avx512)", text));
}

bool sw_isa_supported(SwIsa isa) noexcept {
  switch (isa) {
    case SwIsa::scalar:
      return true;
#ifdef TP_SW_SIMD
    case SwIsa::sse41:
      return __builtin_cpu_supports("sse4.1") != 0;
    case SwIsa::avx2:
      return __builtin_cpu_supports("avx2") != 0;
    case SwIsa::avx512:
      return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0 &&
             __builtin_cpu_supports("avx512dq") != 0 && __builtin_cpu_supports("avx512vl") != 0;
#else
    default:
      return false;
#endif
  }
  return false;
}

SwIsa best_sw_isa() noexcept {
  for (const SwIsa isa : {SwIsa::avx512, SwIsa::avx2, SwIsa::sse41}) {
    if (sw_isa_supported(isa)) return isa;
  }
  return SwIsa::scalar;
}

Expected<int> gap_scale(double open, double extend) {
  for (const double v : {open, extend}) {
    if (!(v >= 0 && v <= ScoreMatrix::max_entry)) {
      return fail(Errc::invalid_argument,
                  fmt::format("gap penalty {} outside [0, {}]", v, ScoreMatrix::max_entry));
    }
  }
  const auto integral = [](double v) { return std::abs(v - std::round(v)) < 1e-9; };
  for (const int f : {1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000}) {
    if (integral(open * f) && integral(extend * f)) return f;
  }
  return fail(Errc::invalid_argument,
              fmt::format("gap penalties {} and {} are not multiples of 0.001", open, extend));
}

namespace detail {

void* sw_scratch(std::size_t bytes) {
  // One growing buffer per thread: tiles of one thread run one after the other. Page-aligned:
  // the band lays its rows out at fixed offsets within a page from here (sw_striped_body.hpp).
  constexpr std::size_t align = page_bytes;
  thread_local std::unique_ptr<std::byte[]> buffer;
  thread_local std::size_t capacity = 0;
  if (capacity < bytes) {
    buffer = std::make_unique_for_overwrite<std::byte[]>(bytes + align);
    capacity = bytes;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(buffer.get());
  return buffer.get() + ((align - address % align) % align);
}

void* sw_profile(const SwProfileKey& key, std::size_t bytes, bool& fresh) {
  // Least recently used of a few entries: enough for the bands of two rows of tiles.
  struct Entry {
    SwProfileKey key{};
    std::unique_ptr<std::byte[]> buffer;
    std::size_t capacity = 0;
    std::uint64_t used = 0;
  };
  // Page-aligned plus profile_page_offset: the profile's rows sit at an offset within a page that
  // none of the band's scratch rows has (4K aliasing, sw_striped.hpp).
  constexpr std::size_t align = page_bytes;
  const auto start = [](std::byte* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    return p + ((align - address % align) % align) + profile_page_offset;
  };
  thread_local std::array<Entry, 8> cache;
  thread_local std::uint64_t clock = 0;
  ++clock;
  Entry* victim = &cache[0];
  for (Entry& e : cache) {
    if (e.capacity >= bytes && e.key == key) {
      e.used = clock;
      fresh = false;
      return start(e.buffer.get());
    }
    if (e.used < victim->used) victim = &e;
  }
  if (victim->capacity < bytes) {
    victim->buffer =
        std::make_unique_for_overwrite<std::byte[]>(bytes + align + profile_page_offset);
    victim->capacity = bytes;
  }
  victim->key = key;
  victim->used = clock;
  fresh = true;
  return start(victim->buffer.get());
}

}  // namespace detail

Expected<SwKernel> SwKernel::make(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                  std::span<const std::uint8_t> target, GapCosts gaps,
                                  SwOptions options) {
  if (query.empty() || target.empty()) {
    return fail(Errc::invalid_argument, "sw: the query and the target must not be empty");
  }
  if (gaps.open < 0 || gaps.open > ScoreMatrix::max_entry || gaps.extend < 0 ||
      gaps.extend > ScoreMatrix::max_entry) {
    return fail(Errc::invalid_argument,
                fmt::format("sw: gap costs must lie in [0, {}] (open {}, extend {})",
                            ScoreMatrix::max_entry, gaps.open, gaps.extend));
  }
  const auto shorter = static_cast<std::int64_t>(std::min(query.size(), target.size()));
  if (shorter * std::max(matrix.max_score(), 1) > (std::int64_t{1} << 30)) {
    return fail(Errc::out_of_range, "sw: sequences too long for 32-bit scores with this matrix");
  }
  for (const std::uint8_t c : query) TP_EXPECTS(c < matrix.size());
  for (const std::uint8_t c : target) TP_EXPECTS(c < matrix.size());
  if (options.min_bits != 8 && options.min_bits != 16 && options.min_bits != 32) {
    return fail(Errc::invalid_argument,
                fmt::format("sw: SIMD lanes of {} bits (choose 8, 16 or 32)", options.min_bits));
  }
  if (options.band_rows != 0 && options.band_rows < 8) {
    return fail(Errc::invalid_argument,
                fmt::format("sw: SIMD bands of {} rows (choose 0 for auto, or at least 8)",
                            options.band_rows));
  }
  const SwIsa isa = options.isa.value_or(best_sw_isa());
  if (!sw_isa_supported(isa)) {
    return fail(
        Errc::invalid_argument,
        fmt::format("sw: this build or CPU cannot run the {} tile function", to_string(isa)));
  }
  SwKernel k(matrix, query, target, gaps);
  static std::atomic<std::uint64_t> next_id{1};
  k.id_ = next_id.fetch_add(1, std::memory_order_relaxed);  // only uniqueness matters
  k.progress_ = options.progress;
  k.isa_ = isa;
  const auto& sc = matrix.scores();
  const bool fits8 = gaps.open <= 127 && gaps.extend <= 127 &&
                     std::all_of(sc.begin(), sc.end(), [](int x) { return x >= -127 && x <= 127; });
  k.min_bits_ = options.min_bits == 8 && !fits8 ? 16 : options.min_bits;
  const std::int64_t vector_bytes = isa == SwIsa::avx512 ? 64 : isa == SwIsa::avx2 ? 32 : 16;
  k.band_rows_ =
      options.band_rows != 0 ? options.band_rows : band_vectors * vector_bytes / (k.min_bits_ / 8);
  return k;
}

void SwKernel::boundary_face(int k, const exec::Box<2>& box,
                             std::span<face_type> face) const noexcept {
  // Face 0: H (w+1 values) then F; face 1: H (h values) then E.
  const std::size_t h_count = k == 0 ? static_cast<std::size_t>(box.extent(1)) + 1
                                     : static_cast<std::size_t>(box.extent(0));
  std::fill(face.begin(), face.begin() + static_cast<std::ptrdiff_t>(h_count), 0);
  std::fill(face.begin() + static_cast<std::ptrdiff_t>(h_count), face.end(), minus_infinity);
}

namespace {

// SIMD bands need enough rows and columns to pay for the query profile they build (tile_best).
constexpr exec::Index min_simd_rows = 8, min_simd_cols = 16;

// One tile's pointers into its faces and its inputs (see the face layout in sw.hpp).
struct Tile {
  std::int32_t* hrow;          // H of the row above the next row to compute, from column c0-1
  std::int32_t* frow;          // F of that row, from column c0
  const std::int32_t* h_left;  // H of column c0-1, rows r0 .. r1-1
  const std::int32_t* e_left;  // E of column c0-1
  std::int32_t* h_right;       // H of column c1-1
  std::int32_t* e_right;       // E of column c1-1
  const std::uint8_t* t;       // target residues of columns c0 .. c1-1
  const std::uint8_t* q;       // query residues of rows r0 .. r1-1
  const std::int32_t* scores;  // the matrix, row-major
  std::size_t alphabet;
  exec::Index w;
  std::int32_t open;
  std::int32_t extend;
  exec::Index i0;  // 1-based query position of row r0
  exec::Index j0;  // 1-based target position of column c0
};

// Rows [r, r_end) one after the other: the scalar recurrence, one cell per iteration.
void scalar_rows(const Tile& k, exec::Index r, exec::Index r_end, SwResult& best) noexcept {
  std::int32_t* hrow = k.hrow;
  std::int32_t* frow = k.frow;
  for (; r < r_end; ++r) {
    const std::int32_t* srow = k.scores + k.q[r] * k.alphabet;
    std::int32_t diag = hrow[0];
    std::int32_t left = k.h_left[r];
    std::int32_t e = k.e_left[r];
    hrow[0] = left;
    // The row's maximum without a branch per cell; its first position is found afterwards in
    // hrow, which now holds the row's H values, only when it beats the tile's best.
    std::int32_t row_best = 0;
    for (exec::Index c = 0; c < k.w; ++c) {
      // Only e and cell depend on the previous cell; the rest is off the critical path.
      const std::int32_t up = hrow[c + 1];
      const std::int32_t f = std::max(up - k.open, frow[c] - k.extend);
      const std::int32_t a = std::max(std::max(diag + srow[k.t[c]], 0), f);
      e = std::max(left - k.open, e - k.extend);
      const std::int32_t cell = std::max(a, e);
      diag = up;
      hrow[c + 1] = cell;
      frow[c] = f;
      left = cell;
      row_best = std::max(row_best, cell);
    }
    k.h_right[r] = left;
    k.e_right[r] = e;
    if (row_best > best.score) {
      exec::Index c = 0;
      while (hrow[c + 1] != row_best) ++c;
      best = SwResult{row_best, k.i0 + r, k.j0 + c};
    }
  }
}

// Out-faces carry max(E, 0) and max(F, 0) whatever the path (narrow lanes floor them; see sw.hpp):
// F of the tile's last row and E of its rows [r, h), as scalar_rows left them.
void clamp_gap_faces(const Tile& k, exec::Index r, exec::Index h) noexcept {
  const auto floor0 = [](std::int32_t x) { return std::max(x, 0); };
  std::transform(k.frow, k.frow + k.w, k.frow, floor0);
  std::transform(k.e_right + r, k.e_right + h, k.e_right + r, floor0);
}

#ifdef TP_SW_SIMD
// The largest of n values: four independent maxima (no chain from one vector to the next), in
// SSE4.1's pmaxsd (SIMD bands run only where the CPU has SSE4.1). A band's left face has as many
// values as it has rows, and this runs once per band.
[[gnu::target("sse4.1")]] std::int32_t max_of(const std::int32_t* p, std::int64_t n) noexcept {
  constexpr std::int32_t lowest = std::numeric_limits<std::int32_t>::min();
  std::int32_t m[4] = {lowest, lowest, lowest, lowest};
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int k = 0; k < 4; ++k) m[k] = std::max(m[k], p[i + k]);
  }
  for (; i < n; ++i) m[0] = std::max(m[0], p[i]);
  return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
}

// The largest face value the band reads (AVX2 where the band's ISA implies it: a band's left
// face has as many values as it has rows, and this runs once per band of every tile).
std::int32_t faces_max(SwIsa isa, const detail::SwBand& b) noexcept {
  const auto max = isa == SwIsa::sse41 ? max_of : detail::sw_max_avx2;
  return std::max(std::max(max(b.top_h, b.w + 1), max(b.top_f, b.w)),
                  std::max(max(b.left_h, b.rows), max(b.left_e, b.rows)));
}

// A per-thread copy of a band's top face, kept for a retry in wider lanes.
std::int32_t* face_copy(std::size_t values) {
  thread_local std::vector<std::int32_t> copy;
  if (copy.size() < values) copy.resize(values);
  return copy.data();
}

// One SIMD band in the narrowest lanes from `min_bits` whose input faces fit, retried in the next
// wider lanes while a band overflows; 32-bit lanes are exact for every input make() accepts.
detail::SwBandBest run_band(SwIsa isa, int min_bits, detail::SwBand band) noexcept {
  using Fn = detail::SwBandBest (*)(const detail::SwBand&) noexcept;
  // The 8-, 16- and 32-bit bands of the ISA.
  const std::array<Fn, 3> fns =
      isa == SwIsa::avx512 ? std::array<Fn, 3>{detail::sw_band_avx512_8, detail::sw_band_avx512_16,
                                               detail::sw_band_avx512_32}
      : isa == SwIsa::avx2 ? std::array<Fn, 3>{detail::sw_band_avx2_8, detail::sw_band_avx2_16,
                                               detail::sw_band_avx2_32}
                           : std::array<Fn, 3>{detail::sw_band_sse41_8, detail::sw_band_sse41_16,
                                               detail::sw_band_sse41_32};
  const std::int32_t limit[2] = {detail::band_input_limit(8), detail::band_input_limit(16)};
  const auto w = static_cast<std::size_t>(band.w);
  bool saved = false;
  const std::int32_t in_max = min_bits == 32 ? 0 : faces_max(isa, band);
  for (int n = min_bits == 8 ? 0 : min_bits == 16 ? 1 : 2; n < 2; ++n) {
    if (in_max > limit[n]) continue;
    if (!saved) {
      // A narrow pass overwrites the top face in place; keep it for a retry.
      std::int32_t* copy = face_copy(2 * w + 1);
      std::copy_n(band.top_h, w + 1, copy);
      std::copy_n(band.top_f, w, copy + w + 1);
      band.top_h = copy;
      band.top_f = copy + w + 1;
      saved = true;
    }
    const detail::SwBandBest b = fns[static_cast<std::size_t>(n)](band);
    if (!b.overflow) return b;
  }
  return fns[2](band);
}
#endif

}  // namespace

SwResult SwKernel::compute_tile(const exec::Box<2>& box,
                                const exec::FaceSet<const face_type, 2>& in,
                                const exec::FaceSet<face_type, 2>& out) const noexcept {
  const SwResult best = tile_best(box, in, out);
  if (progress_ != nullptr) {
    progress_->fetch_add(box.extent(0) * box.extent(1), std::memory_order_relaxed);
  }
  return best;
}

void SwKernel::prepare_rows(const exec::Box<2>& box) const {
  if (box.empty()) return;
  // The fewest columns a SIMD band takes: the profile and scratch depend on the rows only.
  exec::Box<2> few = box;
  few.hi[1] = std::min(box.hi[1], box.lo[1] + min_simd_cols);
  std::array<std::vector<face_type>, 2> in, out;
  exec::FaceSet<const face_type, 2> in_set;
  exec::FaceSet<face_type, 2> out_set;
  for (int k = 0; k < 2; ++k) {
    const auto ku = static_cast<std::size_t>(k);
    in[ku].resize(face_size(k, few));
    out[ku].resize(face_size(k, few));
    boundary_face(k, few, in[ku]);
    in_set[ku] = in[ku];
    out_set[ku] = out[ku];
  }
  (void)tile_best(few, in_set, out_set);
}

SwResult SwKernel::tile_best(const exec::Box<2>& box, const exec::FaceSet<const face_type, 2>& in,
                             const exec::FaceSet<face_type, 2>& out) const noexcept {
  const exec::Index w = box.extent(1);
  const exec::Index h = box.extent(0);
  std::copy(in[0].begin(), in[0].end(), out[0].begin());
  Tile k;
  k.hrow = out[0].data();
  k.frow = k.hrow + w + 1;
  k.h_left = in[1].data();
  k.e_left = k.h_left + h;
  k.h_right = out[1].data();
  k.e_right = k.h_right + h;
  k.t = target_.data() + (box.lo[1] - 1);
  k.q = query_.data() + (box.lo[0] - 1);
  k.scores = matrix_->scores().data();
  k.alphabet = static_cast<std::size_t>(matrix_->size());
  k.w = w;
  k.open = gaps_.open;
  k.extend = gaps_.extend;
  k.i0 = box.lo[0];
  k.j0 = box.lo[1];
  SwResult best;
#ifdef TP_SW_SIMD
  if (isa_ == SwIsa::scalar || h < min_simd_rows || w < min_simd_cols) {
    scalar_rows(k, 0, h, best);
    clamp_gap_faces(k, 0, h);
    return best;
  }
  for (exec::Index r = 0; r < h; r += band_rows_) {
    const exec::Index rows = std::min(band_rows_, h - r);
    if (rows < min_simd_rows) {
      scalar_rows(k, r, h, best);
      clamp_gap_faces(k, r, h);  // the SIMD bands floored their own faces
      break;
    }
    detail::SwBand band{k.hrow,
                        k.frow,
                        k.h_left + r,
                        k.e_left + r,
                        k.hrow,
                        k.frow,
                        k.h_right + r,
                        k.e_right + r,
                        k.q + r,
                        k.t,
                        k.scores,
                        rows,
                        w,
                        id_,
                        static_cast<int>(k.alphabet),
                        gaps_.open,
                        gaps_.extend};
    const detail::SwBandBest b = run_band(isa_, min_bits_, band);
    if (b.score > 0) best = better(best, SwResult{b.score, k.i0 + r + b.row, k.j0 + b.col});
  }
#else
  scalar_rows(k, 0, h, best);
  clamp_gap_faces(k, 0, h);
#endif
  return best;
}

std::array<std::int64_t, 2> sw_default_tile(std::int64_t query_length, std::int64_t target_length,
                                            int threads) noexcept {
  TP_EXPECTS(query_length >= 1 && target_length >= 1);
  const std::int64_t t = std::max(threads, 1);
  if (t == 1) return {query_length, 8192};
  const std::int64_t per_row = sw_tiles_per_row_per_thread * t;
  return {(query_length + t - 1) / t,
          std::clamp<std::int64_t>((target_length + per_row - 1) / per_row, 256, 2048)};
}

SwResult sw_sequential(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                       std::span<const std::uint8_t> target, GapCosts gaps) {
  const std::size_t m = target.size();
  std::vector<std::int32_t> hrow(m + 1, 0), frow(m + 1, SwKernel::minus_infinity);
  SwResult best;
  for (std::size_t i = 1; i <= query.size(); ++i) {
    std::int32_t diag = 0, left = 0, e = SwKernel::minus_infinity;
    for (std::size_t j = 1; j <= m; ++j) {
      e = std::max(left - gaps.open, e - gaps.extend);
      frow[j] = std::max(hrow[j] - gaps.open, frow[j] - gaps.extend);
      const std::int32_t cell =
          std::max({diag + matrix.score(query[i - 1], target[j - 1]), 0, e, frow[j]});
      diag = hrow[j];
      hrow[j] = cell;
      left = cell;
      if (cell > best.score) {
        best = SwResult{cell, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)};
      }
    }
  }
  return best;
}

}  // namespace tp::kernels
