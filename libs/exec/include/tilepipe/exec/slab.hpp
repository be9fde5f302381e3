// Row walks over boxes, halo filling, and packing of resident faces into contiguous buffers or
// straight into another slab.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/support/assert.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <utility>

namespace tp::exec {

namespace detail {
template <int L, int D, class F>
constexpr void rows_from(const Box<D>& box, Point<D>& p, F& f) {
  if constexpr (L == D - 1) {
    p[L] = box.lo[L];
    f(std::as_const(p));
  } else {
    for (p[L] = box.lo[L]; p[L] < box.hi[L]; ++p[L]) rows_from<L + 1, D>(box, p, f);
  }
}
}  // namespace detail

/// Calls f(first) for every row of a non-empty box, in row-major order: `first` is the row's
/// point with i_{D-1} = box.lo[D-1]; the row holds box.extent(D-1) contiguous points.
template <int D, class F>
constexpr void for_each_row(const Box<D>& box, F&& f) {
  if (box.empty()) return;
  Point<D> p = box.lo;
  detail::rows_from<0, D>(box, p, f);
}

/// The `width` layers of `box` at its high end along dimension k: what a tile sends to +e_k.
template <int D>
constexpr Box<D> outgoing_face(const Box<D>& box, int k, int width) noexcept {
  Box<D> f = box;
  f.lo[k] = std::max(box.lo[k], box.hi[k] - width);
  return f;
}

/// The `width` layers just below `box` along dimension k: the halo a tile receives from -e_k.
template <int D>
constexpr Box<D> incoming_face(const Box<D>& box, int k, int width) noexcept {
  Box<D> f = box;
  f.hi[k] = box.lo[k];
  f.lo[k] = box.lo[k] - width;
  return f;
}

/// Copies the elements of `region` (inside slab.bounds()) into `out`, row-major; O(volume).
template <class T, int D>
void pack(const SlabView<const T, D>& slab, const Box<D>& region, std::span<T> out) {
  TP_EXPECTS(slab.bounds().contains(region));
  TP_EXPECTS(static_cast<Index>(out.size()) >= region.volume());
  const auto n = static_cast<std::size_t>(region.extent(D - 1));
  T* dst = out.data();
  for_each_row(region, [&](const Point<D>& p) {
    std::memcpy(dst, slab.at(p), n * sizeof(T));
    dst += n;
  });
}

/// Copies `in` (row-major, as pack wrote it) into the elements of `region` of the slab.
template <class T, int D>
void unpack(std::span<const T> in, const Box<D>& region, const SlabView<T, D>& slab) {
  TP_EXPECTS(slab.bounds().contains(region));
  TP_EXPECTS(static_cast<Index>(in.size()) >= region.volume());
  const auto n = static_cast<std::size_t>(region.extent(D - 1));
  const T* src = in.data();
  for_each_row(region, [&](const Point<D>& p) {
    std::memcpy(slab.at(p), src, n * sizeof(T));
    src += n;
  });
}

/// Copies the elements of `region` from one slab into the same points of another (a direct
/// face: one strided copy, no buffer in between); O(volume).
template <class T, int D>
void copy_region(const SlabView<const T, D>& from, const Box<D>& region, const SlabView<T, D>& to) {
  TP_EXPECTS(from.bounds().contains(region) && to.bounds().contains(region));
  const auto n = static_cast<std::size_t>(region.extent(D - 1)) * sizeof(T);
  for_each_row(region, [&](const Point<D>& p) { std::memcpy(to.at(p), from.at(p), n); });
}

/// Sets every element of the slab whose point lies outside `space` to kernel.boundary_value(p):
/// the initial values that the dependences of the space's points reach. O(slab volume).
template <ResidentKernel K>
void fill_halo(const K& kernel, const SlabView<typename K::value_type, K::dims>& slab,
               const Box<K::dims>& space) {
  constexpr int D = K::dims;
  const Box<D>& b = slab.bounds();
  for_each_row(b, [&](const Point<D>& first) {
    bool outer_inside = true;
    for (int d = 0; d < D - 1; ++d) {
      outer_inside = outer_inside && first[d] >= space.lo[d] && first[d] < space.hi[d];
    }
    Point<D> p = first;
    for (p[D - 1] = b.lo[D - 1]; p[D - 1] < b.hi[D - 1]; ++p[D - 1]) {
      const bool inside = outer_inside && p[D - 1] >= space.lo[D - 1] && p[D - 1] < space.hi[D - 1];
      if (!inside) *slab.at(p) = kernel.boundary_value(p);
    }
  });
}

/// Fills the halo layers of the slab that lie below the space (index 0 layers) with the kernel's
/// boundary values; O(surface), unlike fill_halo's scan of the whole slab. The rest of a rank's
/// halo comes from its neighbours' faces.
template <ResidentKernel K>
void fill_outer_halo(const K& kernel, const SlabView<typename K::value_type, K::dims>& slab,
                     const Box<K::dims>& space) {
  constexpr int D = K::dims;
  for (int d = 0; d < D; ++d) {
    if (slab.bounds().lo[d] >= space.lo[d]) continue;
    Box<D> layer = slab.bounds();
    layer.hi[d] = space.lo[d];
    for_each_row(layer, [&](const Point<D>& first) {
      Point<D> p = first;
      for (Index j = 0; j < layer.extent(D - 1); ++j) {
        p[D - 1] = first[D - 1] + j;
        *slab.at(p) = kernel.boundary_value(p);
      }
    });
  }
}

}  // namespace tp::exec
