// The Kernel API: boxes, slab views, face sets and the ResidentKernel / FrontierKernel concepts.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace tp::exec {

/// Iteration coordinates and extents are 64-bit signed integers.
using Index = std::int64_t;

/// The most dimensions a kernel may have.
inline constexpr int max_dims = 4;

/// A point of a D-dimensional iteration space.
template <int D>
using Point = std::array<Index, D>;

/// A rectangular box of iteration points, half-open: lo[d] <= i_d < hi[d] in every dimension d.
template <int D>
struct Box {
  static_assert(D >= 1 && D <= max_dims);
  Point<D> lo{};
  Point<D> hi{};

  /// Points along dimension d (0 when empty).
  [[nodiscard]] constexpr Index extent(int d) const noexcept {
    return hi[d] > lo[d] ? hi[d] - lo[d] : 0;
  }
  /// Number of points in the box (0 when empty).
  [[nodiscard]] constexpr Index volume() const noexcept {
    Index v = 1;
    for (int d = 0; d < D; ++d) v *= extent(d);
    return v;
  }
  /// True when the box holds no point.
  [[nodiscard]] constexpr bool empty() const noexcept { return volume() == 0; }
  /// True when every point of `inner` lies in this box (an empty inner box is contained).
  [[nodiscard]] constexpr bool contains(const Box& inner) const noexcept {
    if (inner.empty()) return true;
    for (int d = 0; d < D; ++d) {
      if (inner.lo[d] < lo[d] || inner.hi[d] > hi[d]) return false;
    }
    return true;
  }
  friend constexpr bool operator==(const Box&, const Box&) = default;
};

/// How a kernel keeps its data (docs/kernels.md).
enum class Storage {
  resident,  ///< each rank keeps a slab of the whole array; tiles update it in place
  frontier,  ///< only faces travel between tiles; the kernel reduces a result
};

/// The dimension along which a kernel of `storage` and `dims` dimensions keeps its elements
/// contiguous: a resident kernel's slab is row-major (SlabView), so its last; none for a
/// frontier kernel (the planner's mapping tie then has no preference, ADR 0032).
constexpr std::optional<int> contiguous_dim(Storage storage, int dims) noexcept {
  return storage == Storage::resident ? std::optional<int>(dims - 1) : std::nullopt;
}

/// A row-major view of a rank's slab: the array elements of the points in `bounds`.
/// Element (i_0, ..., i_{D-1}) lives at data[sum_d (i_d - bounds.lo[d]) * stride(d)].
/// Cheap to copy; never owns memory. Kernels take one row pointer per row, not per point.
template <class T, int D>
class SlabView {
 public:
  SlabView() = default;
  /// Views `data` as the row-major array of the points in `bounds` (precondition: non-empty).
  constexpr SlabView(T* data, const Box<D>& bounds) noexcept : data_(data), bounds_(bounds) {
    Index s = 1;
    for (int d = D - 1; d >= 0; --d) {
      strides_[d] = s;
      s *= bounds.extent(d);
    }
  }
  /// A read-only view of the same elements.
  constexpr operator SlabView<const T, D>() const noexcept {  // NOLINT: implicit on purpose
    return SlabView<const T, D>(data_, bounds_);
  }

  /// The points whose elements the view holds.
  [[nodiscard]] constexpr const Box<D>& bounds() const noexcept { return bounds_; }
  /// Elements between neighbours along dimension d (the last dimension is contiguous).
  [[nodiscard]] constexpr Index stride(int d) const noexcept { return strides_[d]; }
  /// Offset of point p from data(); p must lie in bounds() (not checked).
  [[nodiscard]] constexpr Index offset(const Point<D>& p) const noexcept {
    Index o = 0;
    for (int d = 0; d < D; ++d) o += (p[d] - bounds_.lo[d]) * strides_[d];
    return o;
  }
  /// Pointer to the element of point p (p in bounds(), not checked).
  [[nodiscard]] constexpr T* at(const Point<D>& p) const noexcept { return data_ + offset(p); }
  /// The first element.
  [[nodiscard]] constexpr T* data() const noexcept { return data_; }

 private:
  T* data_ = nullptr;
  Box<D> bounds_{};
  Point<D> strides_{};
};

/// A rank's slab in parts (docs/adr/0028-a-slab-of-the-ranks-own-rows.md): one SlabView per box
/// of points the rank computes, each over that box and the halo below it (one part for a block
/// plan, one per cycle vector for a block-cyclic one, none for an idle rank). The parts' bounds
/// are disjoint; a tile and its halo lie in one part. Owns only the list of views, not the
/// memory.
template <class T, int D>
class RankSlab {
 public:
  RankSlab() = default;
  explicit RankSlab(std::vector<SlabView<T, D>> parts) : parts_(std::move(parts)) {}

  /// The parts, in row-major order of their corners (the order of the rank's owned boxes).
  [[nodiscard]] std::span<const SlabView<T, D>> parts() const noexcept { return parts_; }
  /// Part i (i < parts().size()).
  [[nodiscard]] const SlabView<T, D>& part(std::size_t i) const noexcept { return parts_[i]; }
  /// Pointer to the element of point p, which must lie in a part's bounds (null otherwise);
  /// O(parts): for hooks that walk rows, not for per-point loops.
  [[nodiscard]] T* at(const Point<D>& p) const noexcept {
    for (const auto& v : parts_) {
      if (v.bounds().contains(Box<D>{p, next(p)})) return v.at(p);
    }
    return nullptr;
  }

 private:
  static constexpr Point<D> next(Point<D> p) noexcept {
    for (auto& x : p) ++x;
    return p;
  }
  std::vector<SlabView<T, D>> parts_;
};

/// One contiguous face buffer per dimension: faces[k] crosses dimension k (normal e_k).
template <class T, int D>
using FaceSet = std::array<std::span<T>, D>;

/// A dependence vector: point p needs the value of point p - dep (all components >= 0).
template <int D>
using Dependence = std::array<int, D>;

/// What every kernel declares: `dims`, `storage`, `deps`, a `result_type` whose value-initialized
/// state is the identity of `combine` (associative and commutative, so tiles reduce in any order).
template <class K>
concept KernelTraits = requires {
  { K::dims } -> std::convertible_to<int>;
  { K::storage } -> std::convertible_to<Storage>;
  typename K::result_type;
  { K::deps.size() } -> std::convertible_to<std::size_t>;
}
&&(K::dims >= 1 && K::dims <= max_dims) && std::regular<typename K::result_type>&& requires(
                                               const typename K::result_type& a,
                                               const typename K::result_type& b) {
  { K::combine(a, b) } -> std::same_as<typename K::result_type>;
};

/// A resident kernel updates the slab in place, one box of iteration points at a time.
///   value_type                        the element type of the array
///   boundary_value(p)                 the initial value of a point outside the iteration space
///                                     that a dependence reaches (e.g. index 0)
///   compute_tile(box, slab)           computes every point of box; slab holds box and its halo
///   tile_result(box, cslab)           this box's share of the result (e.g. a checksum)
template <class K>
concept ResidentKernel = KernelTraits<K> && K::storage == Storage::resident&& requires {
  typename K::value_type;
}
&&std::is_trivially_copyable_v<typename K::value_type>&& requires(
    const K& k, const Box<K::dims>& box, const Point<K::dims>& p,
    const SlabView<typename K::value_type, K::dims>& slab,
    const SlabView<const typename K::value_type, K::dims>& cslab) {
  { k.boundary_value(p) } -> std::same_as<typename K::value_type>;
  { k.compute_tile(box, slab) } -> std::same_as<void>;
  { k.tile_result(box, cslab) } -> std::same_as<typename K::result_type>;
};

/// A frontier kernel reads incoming faces, writes outgoing faces and returns the tile's result.
///   face_type                         the element type of the faces
///   face_size(k, box)                 elements of the face crossing dimension k, entering or
///                                     leaving a tile with this box (depends on the other extents)
///   boundary_face(k, box, face)       fills the incoming face of a tile at the space's low end
///                                     of dimension k
///   compute_tile(box, in, out)        computes the box; in[k] is the face from the tile at
///                                     -e_k, out[k] the face for the tile at +e_k
template <class K>
concept FrontierKernel = KernelTraits<K> && K::storage == Storage::frontier&& requires {
  typename K::face_type;
}
&&std::is_trivially_copyable_v<typename K::face_type>&& requires(
    const K& k, int dim, const Box<K::dims>& box, std::span<typename K::face_type> face,
    const FaceSet<const typename K::face_type, K::dims>& in,
    const FaceSet<typename K::face_type, K::dims>& out) {
  { k.face_size(dim, box) } -> std::convertible_to<std::size_t>;
  { k.boundary_face(dim, box, face) } -> std::same_as<void>;
  { k.compute_tile(box, in, out) } -> std::same_as<typename K::result_type>;
};

/// A frontier kernel some of whose tiles hold final values of an output array (sor: the tiles of
/// the last sweep hold the grid after it), which a run may keep (PipelineOptions::keep_values):
///   output_type, output_dims          the output array's element type and dimensions
///   output_box(box)                   the output points (1-based) whose final values a tile or
///                                     subtile with this box holds (empty for most); the boxes of
///                                     a rank's tiles must tile a box (checked)
///   compute_tile(box, in, out, keep)  compute_tile that also writes those values into keep
///                                     (keep.bounds() contains output_box(box); the rank's
///                                     other threads write other elements of the same view)
template <class K>
concept FrontierOutput = FrontierKernel<K> && requires {
  typename K::output_type;
  { K::output_dims } -> std::convertible_to<int>;
} && std::is_trivially_copyable_v<typename K::output_type> &&
    requires(const K& k, const Box<K::dims>& box,
             const FaceSet<const typename K::face_type, K::dims>& in,
             const FaceSet<typename K::face_type, K::dims>& out,
             const SlabView<typename K::output_type, K::output_dims>& keep) {
  { k.output_box(box) } -> std::same_as<Box<K::output_dims>>;
  { k.compute_tile(box, in, out, keep) } -> std::same_as<typename K::result_type>;
};

/// A frontier kernel that can get a thread ready for tiles of some rows before their faces come:
///   prepare_rows(box)   builds on the calling thread what its tiles with box's rows will need
///                       (tables, scratch), changing no result; box is the row's first tile
/// run_rows calls it on the thread that takes a row of tiles, before it waits for the row above.
template <class K>
concept PreparedKernel = FrontierKernel<K> && requires(const K& k, const Box<K::dims>& box) {
  { k.prepare_rows(box) } -> std::same_as<void>;
};

/// Any kernel the executor can run.
template <class K>
concept Kernel = ResidentKernel<K> || FrontierKernel<K>;

/// The largest component of the dependence vectors along dimension d: the halo width a resident
/// slab needs below its box, and the thickness of the face a tile sends along d.
template <class K>
constexpr int halo_width(int d) noexcept {
  int w = 0;
  for (const auto& dep : K::deps) w = dep[d] > w ? dep[d] : w;
  return w;
}

/// True when a dependence of K has more than one non-zero component (faces then carry corners).
template <class K>
constexpr bool has_diagonal_dependence() noexcept {
  for (const auto& dep : K::deps) {
    int nonzero = 0;
    for (const auto c : dep) nonzero += c != 0 ? 1 : 0;
    if (nonzero > 1) return true;
  }
  return false;
}

}  // namespace tp::exec
