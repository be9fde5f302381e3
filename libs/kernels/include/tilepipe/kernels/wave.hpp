// wave2d/wave3d/wave4d: the float32 wavefront benchmarks and their checksum (issue 4, exactly).
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/support/checked_math.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace tp::kernels {

using exec::Box;
using exec::Index;
using exec::Point;

/// Boundary coefficients c_1..c_4: A = (float)((sum_d c_d * idx_d) mod 101) / 101.0f.
inline constexpr std::array<std::int64_t, 4> wave_boundary_coeffs{7, 13, 29, 31};

/// The interior weights w_1..w_D as float32 literals.
template <int D>
constexpr std::array<float, D> wave_weights() noexcept {
  static_assert(D >= 2 && D <= 4, "wave kernels have 2 to 4 dimensions");
  if constexpr (D == 2) {
    return {0.45f, 0.55f};
  } else if constexpr (D == 3) {
    return {0.25f, 0.35f, 0.4f};
  } else {
    return {0.1f, 0.2f, 0.3f, 0.4f};
  }
}

/// The value of a boundary point (some index 0): the 64-bit sum mod 101, one float division.
template <int D>
constexpr float wave_boundary_value(const Point<D>& idx) noexcept {
  std::int64_t sum = 0;
  for (int d = 0; d < D; ++d) sum += wave_boundary_coeffs[static_cast<std::size_t>(d)] * idx[d];
  return static_cast<float>(sum % 101) / 101.0f;
}

/// The multiplier of the checksum's linear index (and splitmix64's increment).
inline constexpr std::uint64_t golden_gamma = 0x9E3779B97F4A7C15ULL;

/// splitmix64's output function applied to x + golden_gamma.
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  std::uint64_t z = x + golden_gamma;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// One interior point's checksum term: splitmix64(lin * golden_gamma + bits(value)).
inline std::uint64_t wave_point_hash(std::uint64_t lin, float value) noexcept {
  return splitmix64(lin * golden_gamma + std::bit_cast<std::uint32_t>(value));
}

/// The checksum as 16 lowercase hexadecimal digits.
std::string format_checksum(std::uint64_t checksum);

/// The D-dimensional wave kernel on indices 0..N_d (resident storage). Iteration space: the
/// interior points, 1 <= i_d <= N_d; A[i] = w_1*A[i-e_1] + ... + w_D*A[i-e_D], left to right.
/// The result is the checksum's sum over the boxes computed (mod 2^64).
template <int D>
class Wave {
 public:
  static_assert(D >= 2 && D <= 4, "wave kernels have 2 to 4 dimensions");
  static constexpr int dims = D;
  static constexpr exec::Storage storage = exec::Storage::resident;
  using value_type = float;
  using result_type = std::uint64_t;
  static constexpr std::array<exec::Dependence<D>, D> deps = [] {
    std::array<exec::Dependence<D>, D> v{};
    for (int d = 0; d < D; ++d) v[static_cast<std::size_t>(d)][static_cast<std::size_t>(d)] = 1;
    return v;
  }();

  /// Checks N_d >= 1 and that the (N_1+1) x ... array's byte size fits in 63 bits.
  static Expected<Wave> make(const Point<D>& n) {
    Index elems = 1;
    for (int d = 0; d < D; ++d) {
      if (n[d] < 1) {
        return fail(Errc::invalid_argument, "size " + std::to_string(n[d]) + " in dimension " +
                                                std::to_string(d + 1) + ": must be >= 1");
      }
      const auto side = checked_add(n[d], 1);  // N_d = INT64_MAX must not overflow here
      const auto e = side ? checked_mul(elems, *side) : std::nullopt;
      if (!e || !checked_mul(*e, Index{sizeof(float)})) {
        return fail(Errc::out_of_range, "the array does not fit in 64-bit byte offsets");
      }
      elems = *e;
    }
    return Wave(n);
  }

  /// make() for a registry entry (runtime::make_entry): an error names the size as the option
  /// "size" ("9x1: the array does not fit ...").
  static Expected<Wave> make(const std::vector<Index>& size, const exec::ParamValues&) {
    Point<D> n{};
    std::string text;
    for (int d = 0; d < D; ++d) {
      n[d] = size[static_cast<std::size_t>(d)];
      text += (d ? "x" : "") + std::to_string(n[d]);
    }
    auto k = make(n);
    if (!k)
      return Unexpected{Error::about("size", k.error().code, text + ": " + k.error().message)};
    return k;
  }

  /// Sums two checksums modulo 2^64.
  static result_type combine(result_type a, result_type b) noexcept { return a + b; }

  /// N_1..N_D.
  [[nodiscard]] const Point<D>& size() const noexcept { return n_; }
  /// The iteration space: [1, N_d + 1) in every dimension.
  [[nodiscard]] Box<D> space() const noexcept {
    Box<D> b;
    for (int d = 0; d < D; ++d) b.lo[d] = 1, b.hi[d] = n_[d] + 1;
    return b;
  }
  /// The whole array: [0, N_d + 1) in every dimension.
  [[nodiscard]] Box<D> array_box() const noexcept {
    Box<D> b = space();
    for (int d = 0; d < D; ++d) b.lo[d] = 0;
    return b;
  }

  /// The initial value of a boundary point.
  [[nodiscard]] float boundary_value(const Point<D>& p) const noexcept {
    return wave_boundary_value<D>(p);
  }

  /// Computes every point of box in place; the slab holds box and the layer below it in every
  /// dimension. Rows along the last dimension are computed `strip` at a time, row l of a strip
  /// lagging l points behind row 0 so that its upper neighbour (row l-1) is ready: the strip's
  /// rows are independent chains the CPU overlaps. Each point's value is the same expression of
  /// the same inputs as in the reference, so results are bit-identical.
  void compute_tile(const Box<D>& box, const exec::SlabView<float, D>& slab) const noexcept {
    if (box.empty()) return;
    Box<D> starts = box;  // the first row of every strip column: index lo along dimension D-2
    starts.hi[D - 2] = starts.lo[D - 2] + 1;
    const Index len = box.extent(D - 1);
    const Index rows = box.extent(D - 2);
    const Index row_stride = slab.stride(D - 2);
    exec::for_each_row(starts, [&](const Point<D>& first) {
      float* cur = slab.at(first);
      Index r = 0;
      for (; r + strip <= rows; r += strip) strip_rows(cur + r * row_stride, slab, len);
      for (; r < rows; ++r) single_row(cur + r * row_stride, slab, len);
    });
  }

  /// The checksum terms of the points of box, summed modulo 2^64.
  [[nodiscard]] result_type tile_result(const Box<D>& box,
                                        const exec::SlabView<const float, D>& slab) const noexcept {
    std::uint64_t sum = 0;
    const Index len = box.extent(D - 1);
    exec::for_each_row(box, [&](const Point<D>& first) {
      const float* v = slab.at(first);
      std::uint64_t lin = 0;
      for (int d = 0; d < D; ++d) lin += static_cast<std::uint64_t>(first[d] * lin_stride_[d]);
      for (Index j = 0; j < len; ++j)
        sum += wave_point_hash(lin + static_cast<std::uint64_t>(j), v[j]);
    });
    return sum;
  }

 private:
  explicit Wave(const Point<D>& n) : n_(n) {
    Index s = 1;
    for (int d = D - 1; d >= 0; --d) {
      lin_stride_[d] = s;
      s *= n[d] + 1;
    }
  }

  static constexpr int strip = 4;  // rows in flight: enough independent chains to hide latency
  // Software prefetch of the rows a strip reads (strip_rows): once per cache line of a row, this
  // many points ahead (128 floats: 512 bytes, 8 lines; 64 and 512 were slower on this machine).
  static constexpr Index prefetch_every = 16;
  static constexpr Index prefetch_ahead = 128;

  // One point: w_1*A[i-e_1] + ... + w_D*A[i-e_D] left to right, each operation rounded to
  // float32 (no contraction); `left` is A[i-e_D], carried in a register.
  static float point(const float* p, const std::array<Index, D - 1>& strides, float left) noexcept {
    constexpr auto w = wave_weights<D>();
    float acc = w[0] * p[-strides[0]];
    for (int k = 1; k < D - 1; ++k) acc = acc + w[k] * p[-strides[k]];
    return acc + w[D - 1] * left;
  }

  static std::array<Index, D - 1> outer_strides(const exec::SlabView<float, D>& slab) noexcept {
    std::array<Index, D - 1> s{};
    for (int k = 0; k < D - 1; ++k) s[static_cast<std::size_t>(k)] = slab.stride(k);
    return s;
  }

  static void single_row(float* cur, const exec::SlabView<float, D>& slab, Index len) noexcept {
    const auto strides = outer_strides(slab);
    float left = cur[-1];
    for (Index j = 0; j < len; ++j) cur[j] = left = point(cur + j, strides, left);
  }

  // `strip` rows starting at cur, row l at column s - l in step s.
  static void strip_rows(float* cur, const exec::SlabView<float, D>& slab, Index len) noexcept {
    const auto strides = outer_strides(slab);
    const Index next = slab.stride(D - 2);
    std::array<float*, strip> row;
    std::array<float, strip> left;
    for (int l = 0; l < strip; ++l) {
      row[static_cast<std::size_t>(l)] = cur + l * next;
      left[static_cast<std::size_t>(l)] = row[static_cast<std::size_t>(l)][-1];
    }
    auto step = [&](int l, Index c) {
      float* p = row[static_cast<std::size_t>(l)] + c;
      if (c % prefetch_every == 0) {
        // The rows this one reads along the outer dimensions, a few lines ahead: a face another
        // CPU wrote sits in that CPU's cache, and the chain of `left` leaves the out-of-order
        // core too little room to wait for it (2 ranks on shm: the receiver's tiles 8% faster).
        for (int k = 0; k < D - 1; ++k) {
          __builtin_prefetch(p - strides[static_cast<std::size_t>(k)] + prefetch_ahead);
        }
      }
      float& x = left[static_cast<std::size_t>(l)];
      *p = x = point(p, strides, x);
    };
    const Index steady_end = len;  // steps where every row has a column: [strip-1, len)
    for (Index s = 0; s < std::min<Index>(strip - 1, len + strip - 1); ++s) {
      for (int l = 0; l <= s && l < strip; ++l) {
        if (s - l < len) step(l, s - l);
      }
    }
    for (Index s = strip - 1; s < steady_end; ++s) {
      for (int l = 0; l < strip; ++l) step(l, s - l);
    }
    for (Index s = std::max<Index>(len, strip - 1); s < len + strip - 1; ++s) {
      for (int l = 0; l < strip; ++l) {
        const Index c = s - l;
        if (c >= 0 && c < len) step(l, c);
      }
    }
  }

  Point<D> n_;
  Point<D> lin_stride_{};
};

/// The whole array after a plain sequential loop nest (row-major, N_d + 1 per dimension).
std::vector<float> wave2d_reference(Index n1, Index n2);
/// As wave2d_reference, three nested loops.
std::vector<float> wave3d_reference(Index n1, Index n2, Index n3);
/// As wave2d_reference, four nested loops.
std::vector<float> wave4d_reference(Index n1, Index n2, Index n3, Index n4);
/// The reference array for 2 to 4 sizes (dispatches to the functions above).
std::vector<float> wave_reference(const std::vector<Index>& n);
/// The checksum of a whole reference array: a straight walk over its interior points.
std::uint64_t wave_reference_checksum(const std::vector<float>& a, const std::vector<Index>& n);

}  // namespace tp::kernels
