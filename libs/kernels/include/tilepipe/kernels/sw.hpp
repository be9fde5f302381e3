// sw: Smith-Waterman local alignment with affine gaps (Gotoh), score only, frontier storage.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/support/expected.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>

namespace tp::kernels {

/// Gap costs: a gap of length L costs open + (L - 1) * extend (EMBOSS water's convention).
struct GapCosts {
  int open = 10;
  int extend = 1;
};

/// The least factor (1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500 or 1000) that
/// makes both gap penalties integers (within 1e-9), as EMBOSS water takes them (10 and 0.5: 2); an
/// Error naming the value when none does (finer than 1/1000) or a penalty is negative or above
/// ScoreMatrix::max_entry. Scores are then computed in units of 1 / factor.
Expected<int> gap_scale(double open, double extend);

/// The instruction set of the sw tile function; avx512 is AVX-512 F, BW and DQ (512-bit lanes).
enum class SwIsa { scalar, sse41, avx2, avx512 };

/// "scalar", "sse41", "avx2" or "avx512".
std::string_view to_string(SwIsa isa) noexcept;
/// Parses "scalar", "sse41", "avx2" or "avx512"; anything else is an Error listing the choices.
Expected<SwIsa> parse_sw_isa(std::string_view text);
/// Whether this build and this CPU can run `isa` (scalar always can).
bool sw_isa_supported(SwIsa isa) noexcept;
/// The fastest ISA this build and CPU support (avx512, then avx2, then sse41, then scalar).
SwIsa best_sw_isa() noexcept;

/// How the sw tile function computes; every choice gives the same scores.
struct SwOptions {
  /// Unset: best_sw_isa(). Set: that ISA (make fails if the CPU lacks it).
  std::optional<SwIsa> isa;
  /// SIMD only: the narrowest lanes a band tries first, 8, 16 or 32 bits; a band whose scores or
  /// input faces do not fit is redone in the next wider lanes (8 bits only where the matrix and
  /// the gap costs fit in [-127, 127]).
  int min_bits = 8;
  /// SIMD only: rows of a band (0, or at least 8); 0: SwKernel::band_vectors vectors of the
  /// lanes tried first (32768 rows in AVX2's 8-bit lanes, 16384 in its 16-bit ones; twice as
  /// many in AVX-512's).
  std::int64_t band_rows = 0;
  /// Where set, every tile adds its cells when it is done (relaxed), and sw_traceback the cells
  /// of its half passes: a count for a progress display, never read by the kernel. It must
  /// outlive the kernel.
  std::atomic<std::int64_t>* progress = nullptr;
};

/// The best local alignment score and where it ends (1-based query and target positions; both 0
/// when no pair scores above 0). Ties: the first end in row-major (query, target) order.
struct SwResult {
  std::int32_t score = 0;
  std::int64_t end_query = 0;
  std::int64_t end_target = 0;
  friend bool operator==(const SwResult&, const SwResult&) = default;
};

/// The better of two results under the tie rule (higher score, then smaller (query, target)).
constexpr SwResult better(const SwResult& a, const SwResult& b) noexcept {
  if (a.score != b.score) return a.score > b.score ? a : b;
  if (a.end_query != b.end_query) return a.end_query < b.end_query ? a : b;
  return a.end_target <= b.end_target ? a : b;
}

/// The sw kernel over the (query x target) DP: iteration space [1, n+1) x [1, m+1), point (i, j)
/// the cell of query position i and target position j. Frontier faces (int32):
///   face 0 (crossing rows, from the tile above), 2w+1 values: H[r0-1][c0-1 .. c1-1], then
///     F[r0-1][c0 .. c1-1]  (w = c1 - c0; H[..][c0-1] is the corner the tile's first row needs)
///   face 1 (crossing columns, from the tile to the left), 2h values: H[r0 .. r1-1][c0-1], then
///     E[r0 .. r1-1][c0-1]  (h = r1 - r0)
/// E is the gap along the target (horizontal), F along the query (vertical). The kernel keeps
/// references to the matrix and the encoded sequences; they must outlive it.
/// Out-faces hold max(E, 0) and max(F, 0) (every path alike): exact for H, since a negative gap
/// score never wins H's max with 0; in-faces may hold either.
/// SIMD tiles (SwOptions): Farrar's striped layout, query rows across lanes, in bands of at most
/// band_rows() rows; 8-bit, then 16-bit lanes (scores floored at 0, up to 254 or 65534, held
/// offset in signed saturating lanes) with a retry in wider lanes of a band that overflows. Faces
/// stay int32.
class SwKernel {
 public:
  static constexpr int dims = 2;
  static constexpr exec::Storage storage = exec::Storage::frontier;
  using face_type = std::int32_t;
  using result_type = SwResult;
  static constexpr std::array<exec::Dependence<2>, 3> deps{{{1, 0}, {0, 1}, {1, 1}}};
  /// The value of E and F where no gap can end: low enough to lose every max, high enough that
  /// subtracting gap costs cannot overflow.
  static constexpr std::int32_t minus_infinity = std::numeric_limits<std::int32_t>::min() / 4;

  /// Vectors of a SIMD band by default: each column pays a fixed cost (the lazy-F pass, the best
  /// cell's check) that a taller band spreads over more cells; 1024 vectors keep the band's four
  /// column buffers (128 KiB in 256-bit lanes) in the L2 cache.
  static constexpr std::int64_t band_vectors = 1024;

  /// Checks non-empty sequences, gap costs in [0, ScoreMatrix::max_entry], that no score can
  /// overflow int32, min_bits in {8, 16, 32}, band_rows 0 or at least 8, and that the CPU
  /// supports the requested ISA.
  static Expected<SwKernel> make(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                 std::span<const std::uint8_t> target, GapCosts gaps,
                                 SwOptions options = {});

  /// The ISA the tile function uses.
  [[nodiscard]] SwIsa isa() const noexcept { return isa_; }
  /// The narrowest lanes SIMD bands try first (8, 16 or 32; see SwOptions::min_bits).
  [[nodiscard]] int min_bits() const noexcept { return min_bits_; }
  /// Rows of a SIMD band (see SwOptions::band_rows).
  [[nodiscard]] std::int64_t band_rows() const noexcept { return band_rows_; }

  /// The better of two results (the tie rule of SwResult).
  static SwResult combine(const SwResult& a, const SwResult& b) noexcept { return better(a, b); }

  /// The whole DP: [1, n+1) x [1, m+1).
  [[nodiscard]] exec::Box<2> space() const noexcept {
    return {{1, 1},
            {static_cast<exec::Index>(query_.size()) + 1,
             static_cast<exec::Index>(target_.size()) + 1}};
  }
  /// Face sizes: 2w+1 for face 0, 2h for face 1 (see the class comment).
  [[nodiscard]] std::size_t face_size(int k, const exec::Box<2>& box) const noexcept {
    return k == 0 ? static_cast<std::size_t>(2 * box.extent(1) + 1)
                  : static_cast<std::size_t>(2 * box.extent(0));
  }
  /// The DP's border: H = 0, E = F = minus_infinity.
  void boundary_face(int k, const exec::Box<2>& box, std::span<face_type> face) const noexcept;
  /// Computes the box's cells from in-faces into out-faces (out[0] doubles as the working row);
  /// returns the box's best cell. O(cells) time, no allocation.
  SwResult compute_tile(const exec::Box<2>& box, const exec::FaceSet<const face_type, 2>& in,
                        const exec::FaceSet<face_type, 2>& out) const noexcept;
  /// Builds, on the calling thread, what its tiles of `box`'s rows need before their first
  /// column: each SIMD band's query profile (cached per thread) and scratch, by running the
  /// bands over the first few columns of throwaway faces (exec::PreparedKernel: run_rows calls
  /// it while the thread waits for the tile above). Results and progress are untouched.
  void prepare_rows(const exec::Box<2>& box) const;

 private:
  SwKernel(const ScoreMatrix& m, std::span<const std::uint8_t> q, std::span<const std::uint8_t> t,
           GapCosts g)
      : matrix_(&m), query_(q), target_(t), gaps_(g) {}
  const ScoreMatrix* matrix_;
  std::span<const std::uint8_t> query_;
  std::span<const std::uint8_t> target_;
  GapCosts gaps_;
  std::uint64_t id_ = 0;        // unique per make (copies share it): keys cached band profiles
  SwIsa isa_ = SwIsa::scalar;   // chosen once, in make
  int min_bits_ = 8;            // 16 when the matrix or the gap costs do not fit 8 bits
  std::int64_t band_rows_ = 0;  // rows of a SIMD band, chosen in make
  std::atomic<std::int64_t>* progress_ = nullptr;  // SwOptions::progress

  SwResult tile_best(const exec::Box<2>& box, const exec::FaceSet<const face_type, 2>& in,
                     const exec::FaceSet<face_type, 2>& out) const noexcept;
};

/// The tile extents (query x target) of one pair on `threads` threads of one process when none is
/// given (`tilepipe align`, sw_search). One thread: one row of tiles 8192 wide. More: one row of
/// tiles per thread along the query, since each SIMD band pays a fixed cost per column (the lazy-F
/// pass, the column's best, its faces) and a row of tiles is one band where it fits; and tiles
/// about target / (sw_tiles_per_row_per_thread x threads) wide, clamped to 256-2048, trading the
/// pipeline's start and end (each idles one tile per extra thread) against each tile's cost of
/// turning its faces into lanes and back (about 2 ns per row). Preconditions: lengths >= 1.
std::array<std::int64_t, 2> sw_default_tile(std::int64_t query_length, std::int64_t target_length,
                                            int threads) noexcept;
/// Tiles per row and thread that sw_default_tile aims at.
inline constexpr std::int64_t sw_tiles_per_row_per_thread = 16;

/// The plain sequential Gotoh DP, row by row, O(m) memory: the reference for the tiled kernel.
SwResult sw_sequential(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                       std::span<const std::uint8_t> target, GapCosts gaps);

}  // namespace tp::kernels
