// Unimodular transformations that make every dependence non-negative (reversal, skewing, or a
// general first row from Gordan's alternative), so that rectangular tiles of the transformed
// space are legal; and the refusal, with the dependences named, when no schedule exists.
#pragma once

#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/support/expected.hpp>

#include <string>
#include <vector>

namespace tp::plan {

/// The image of J^n under a transformation, as the box the executor runs: y = lo + (x - 1) for
/// x in 1..extents (x the executor's 1-based point, y the transformed point).
struct TransformedBox {
  Index lo;       ///< the lowest transformed point in every dimension
  Index extents;  ///< hi - lo + 1
};

/// y = T x with T an integer matrix of determinant +-1 (so T^-1 is an integer matrix too and the
/// transformed lattice is Z^n: no point is computed twice or lost). Legal for D when T d >= 0
/// component-wise (and non-zero) for every dependence d: then every rectangular tiling of the
/// transformed space with the transformed dependences is legal (HD >= 0), and lexicographic
/// order in it respects D.
class Transformation {
 public:
  /// The identity of n dimensions.
  static Transformation identity(int dims);
  /// T from its rows; fails unless square with determinant +-1.
  static Expected<Transformation> make(std::vector<Index> rows);
  /// A legal T for `deps`: the identity when every component is already >= 0; else the fewest
  /// reversals that make every dependence lexicographically positive, followed by skewing each
  /// dimension by the outer ones (the smallest non-negative factors, outermost first); else a
  /// first row h with h . d >= 1 for all d (Fourier-Motzkin), completed to a unimodular matrix,
  /// then skewing. Errc::invalid_argument when no schedule exists (a non-negative combination of
  /// dependences is zero: a cycle), naming those dependences.
  static Expected<Transformation> find(const DependenceMatrix& deps);

  [[nodiscard]] int dims() const noexcept { return static_cast<int>(rows_.size()); }
  [[nodiscard]] const std::vector<Index>& rows() const noexcept { return rows_; }
  [[nodiscard]] bool is_identity() const;
  /// T x.
  [[nodiscard]] Index apply(const Index& x) const;
  /// T^-1 y.
  [[nodiscard]] Index unapply(const Index& y) const;
  /// T D (every vector non-zero since T is invertible).
  [[nodiscard]] DependenceMatrix apply(const DependenceMatrix& deps) const;
  /// The bounding box of T J^n for J^n = 1..size[d] (from the 2^n corners: T is linear).
  [[nodiscard]] Expected<TransformedBox> image(const Index& size) const;
  /// "(t, i, j) -> (t, i + t, j + t)" in the names x1..xn: each new coordinate as a sum.
  [[nodiscard]] std::string to_string() const;
  /// "1,0,0;1,1,0;1,0,1" (rows separated by ';').
  [[nodiscard]] std::string rows_string() const;

 private:
  std::vector<Index> rows_;
  std::vector<Index> inverse_;
};

/// A loop nest with dependences of any sign made plannable: T, the original space and
/// dependences, and the space the executor runs (T J^n's bounding box) with T D.
struct TransformedSpace {
  Transformation transform;
  Index original_size;
  DependenceMatrix original_deps;
  TransformedBox box;     ///< box.extents is the planned space
  DependenceMatrix deps;  ///< T D, every component >= 0
};

/// Transformation::find for `deps`, then the image of 1..size[d]. Errors as find's, and
/// Errc::out_of_range when the transformed space does not fit in 64 bits.
Expected<TransformedSpace> transform_space(const Index& size, const DependenceMatrix& deps);

/// True when some dependence has a negative component (the space needs a transformation).
bool has_negative_component(const DependenceMatrix& deps);

/// True when T d >= 0 component-wise for every dependence d.
bool makes_non_negative(const Transformation& t, const DependenceMatrix& deps);

}  // namespace tp::plan
