// Myers-Miller's half pass in striped int32 lanes (included per ISA, like sw_striped_body.hpp:
// inside a `#pragma GCC target` region, in an anonymous namespace, after the lane operations).
//
// The pass (sw_align.cpp, MyersMiller::forward) computes, for the rows a[0], a[1], ... of a box
// against the columns b[0 .. n), the least cost of a global alignment with affine gaps (a gap of k
// columns costs g + k h) of the rows so far against b[0 .. j) for every j, and of those ending in
// a vertical gap. Here in scores (S = -cost), so that the lane operations of the tile bands serve:
//   D(i, j) = max(D(i-1, j), H(i-1, j) - g) - h           (vertical gap: from the row above)
//   E(i, j) = max(E(i, j-1), H(i, j-1) - g) - h           (horizontal gap: along the row)
//   H(i, j) = max(H(i-1, j-1) + s(a_i, b_j), D(i, j), E(i, j))
// with H(0, j) = -(g + j h), D(0, j) = H(0, j) - g, and at the edge column H(i, 0) = -(tb + i h),
// E(i, 0) = H(i, 0) - g. Exact integer arithmetic: the same values as the scalar pass (the caller
// checks that every value fits far inside int32).
//
// Layout: Farrar's striped one with the lanes across the columns (column c = j - 1 is element
// (c mod seg) L + c / seg); one row at a time, vector by vector, D and H need only the row above,
// and E crosses from the end of lane l to the start of lane l+1 in a lazy pass after the row
// (Farrar 2007). The lazy pass stops once the carry c entering a vector is at most H - g in every
// lane: then it raises no H there, and E_main of the next column, at least H - g - h, is at least
// what the carry brings (c - h); by induction nothing below changes. Columns past n (padding at
// the end of the last lanes) only feed later padding.

template <class O>
void global_rows(const SwGlobalRows& p) noexcept {
  using V = typename O::V;
  using T = typename O::T;
  static_assert(sizeof(T) == 4);
  constexpr int L = O::lanes;
  const std::int64_t n = p.n;
  const std::int64_t seg = (n + L - 1) / L;
  const auto nvec = static_cast<std::size_t>(seg);
  const auto alphabet = static_cast<std::size_t>(p.alphabet);
  V* prof = static_cast<V*>(sw_scratch((alphabet + 2) * nvec * sizeof(V)));
  V* hv = prof + alphabet * nvec;  // H of the row above, then of this row
  V* dv = hv + nvec;               // D likewise
  const auto b_at = [&p](std::int64_t c) { return p.b[c * p.b_step]; };

  auto* pt = reinterpret_cast<T*>(prof);
  for (std::size_t x = 0; x < alphabet; ++x) {
    const std::int32_t* row = p.scores + x * alphabet;
    T* out = pt + x * nvec * L;
    for (std::int64_t l = 0, c = 0; l < L; ++l) {
      for (std::int64_t s = 0; s < seg; ++s, ++c) {
        out[s * L + l] = c < n ? row[b_at(c)] : 0;
      }
    }
  }
  auto* ht = reinterpret_cast<T*>(hv);
  auto* dt = reinterpret_cast<T*>(dv);
  for (std::int64_t l = 0, c = 0; l < L; ++l) {
    for (std::int64_t s = 0; s < seg; ++s, ++c) {
      const std::int64_t h0 = -(p.g + (c + 1) * p.h);
      ht[s * L + l] = static_cast<T>(h0);
      dt[s * L + l] = static_cast<T>(h0 - p.g);
    }
  }

  const V vg = O::set1(static_cast<std::int32_t>(p.g)),
          vh = O::set1(static_cast<std::int32_t>(p.h));
  const V vneg = O::set1(O::neg_inf);
  const V vh2 = O::set1(static_cast<std::int32_t>(2 * p.h)),
          vgh = O::set1(static_cast<std::int32_t>(p.g + p.h)),
          vg2h = O::set1(static_cast<std::int32_t>(p.g + 2 * p.h));
  std::int64_t edge_above = 0;  // H(i-1, 0)
  for (std::int64_t i = 1; i <= p.rows; ++i) {
    const std::int64_t edge = -(p.tb + i * p.h);  // H(i, 0)
    V ve = O::shift_in(vneg, static_cast<T>(edge - p.g - p.h));
    V vdiag = O::shift_in(hv[nvec - 1], static_cast<T>(edge_above));
    const V* pr = prof + static_cast<std::size_t>(p.a[(i - 1) * p.a_step]) * nvec;
    // E is the only chain from vector to vector. With Y = max(diag + s, D), H = max(Y, E) and
    // E(j+1) = max(E(j), H(j) - g) - h = max(E(j), Y(j) - g) - h (E - g never exceeds E), and two
    // vectors at once, E(j+2) = max(E(j) - 2h, max(Y(j) - g - 2h, Y(j+1) - g - h)): one
    // subtraction and one max per two vectors (through H it was four operations per vector).
    std::size_t s = 0;
    for (; s + 1 < nvec; s += 2) {
      const V up0 = hv[s], up1 = hv[s + 1];
      const V d0 = O::subs(O::max(dv[s], O::subs(up0, vg)), vh);
      const V d1 = O::subs(O::max(dv[s + 1], O::subs(up1, vg)), vh);
      dv[s] = d0;
      dv[s + 1] = d1;
      const V y0 = O::max(O::adds(vdiag, pr[s]), d0);
      const V y1 = O::max(O::adds(up0, pr[s + 1]), d1);
      const V e1 = O::subs(O::max(ve, O::subs(y0, vg)), vh);
      hv[s] = O::max(y0, ve);
      hv[s + 1] = O::max(y1, e1);
      ve = O::max(O::subs(ve, vh2), O::max(O::subs(y0, vg2h), O::subs(y1, vgh)));
      vdiag = up1;
    }
    for (; s < nvec; ++s) {
      const V up = hv[s];
      const V d = O::subs(O::max(dv[s], O::subs(up, vg)), vh);
      dv[s] = d;
      const V y = O::max(O::adds(vdiag, pr[s]), d);
      hv[s] = O::max(y, ve);
      vdiag = up;
      ve = O::subs(O::max(ve, O::subs(y, vg)), vh);
    }
    // Lazy E: what leaves lane l's last column enters lane l+1's first.
    V carry = O::shift_in(ve, O::neg_inf);
    for (int pass = 0; pass < L; ++pass) {
      s = 0;
      for (; s < nvec; ++s) {
        if (!O::any_gt(carry, O::subs(hv[s], vg))) break;
        hv[s] = O::max(hv[s], carry);
        carry = O::subs(carry, vh);
      }
      if (s < nvec) break;
      carry = O::shift_in(carry, O::neg_inf);
    }
    edge_above = edge;
  }

  // Costs out, in column order (or mirrored: cc[n - j] for the backward pass).
  const auto put = [&p, n](std::int64_t j, std::int64_t cost_h, std::int64_t cost_d) {
    const std::int64_t k = p.mirrored ? n - j : j;
    p.cc[k] = cost_h;
    p.dd[k] = cost_d;
  };
  for (std::int64_t l = 0, c = 0; l < L; ++l) {
    for (std::int64_t s = 0; s < seg && c < n; ++s, ++c) {
      const auto e = static_cast<std::size_t>(s * L + l);
      put(c + 1, -static_cast<std::int64_t>(ht[e]), -static_cast<std::int64_t>(dt[e]));
    }
  }
  const std::int64_t corner = p.rows == 0 ? 0 : p.tb + p.rows * p.h;
  put(0, corner, corner);
}
