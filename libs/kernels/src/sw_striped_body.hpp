// sw striped band: the tile function's body over an ISA's lane operations (included per ISA).
// Include inside a `#pragma GCC target` region, after <algorithm>, <cstdint>, <limits> and
// sw_striped.hpp, in an anonymous namespace: every function here is compiled for that ISA.
//
// Layout (Farrar 2007, "Striped Smith-Waterman speeds database searches six times over other
// SIMD implementations"): the band's rows split into L lanes of seg = ceil(rows / L) consecutive
// rows; vector s holds rows s, seg + s, ..., (L-1) seg + s. One column at a time, vector by
// vector, the recurrence of docs/kernels.md runs in every lane; F crosses from the end of lane
// l to the start of lane l+1 only in the lazy-F pass after the column. Rows past `rows` (padding
// at the end of the last lanes) score the least profile value; nothing real reads them, and the
// column maximum masks them out.
//
// Narrow lanes (8 and 16 bits, O::saturating) hold max(x, 0) of every H, E and F, as x - 2^(b-1)
// in signed saturating arithmetic (as parasail does; the lane's bits are x ^ O::offset): the
// lane's least value stands for 0, so adding a score or subtracting a gap cost floors at 0 by
// itself, H = max(diag + s, E, F) needs no max with 0 and no bias, and a lane holds 0 ..
// 2^b - 1. The profile holds the scores themselves (signed); diag + s saturates only when it
// reaches 2^b - 1, so a cell of 2^b - 1 reports overflow. Exact for H: floor(x) = max(x, 0)
// commutes with max and with subtracting a cost c >= 0 (floor(x - c) = floor(floor(x) - c)), and a
// negative E or F never wins H's max with 0. Faces therefore carry max(E, 0) and max(F, 0) (every
// path clamps them alike, sw.cpp).

// Lazy F (Farrar's correction, with exact carries). Let g = min(open, extend). A carry C into a
// row raises its H and F to at least C and adds at most C - g to the next row (C - open from the
// raised H, C - extend from F), so the carry into lane l+1 is exactly
//   C(l+1) = max(out(l), C(l) - seg * g),   C(0) = -inf,
// out(l) the F that leaves lane l's last row in the main pass; one pass then applies C down every
// lane. It may stop early: the main pass left F(s+1) >= H(s) - open in every lane, so once
// C - g <= H_old(s) - open in every lane nothing below changes.

// A value in the lane's bits: floored at 0 and offset in narrow lanes (the caller checked the top).
template <class O>
[[gnu::always_inline]] inline typename O::T narrow(std::int32_t x) noexcept {
  using T = typename O::T;
  if constexpr (O::saturating) {
    return static_cast<T>(static_cast<T>(std::max(x, 0)) ^ O::offset);
  } else {
    return x < std::int32_t{O::neg_inf} ? O::neg_inf : static_cast<T>(x);
  }
}

// The value a lane's bits hold.
template <class O>
[[gnu::always_inline]] inline std::int32_t widen(typename O::T x) noexcept {
  using T = typename O::T;
  return static_cast<std::int32_t>(static_cast<T>(x ^ O::offset));
}

// Out-faces hold max(E, 0) and max(F, 0) (sw.hpp): narrow lanes hold them so already.
template <class O>
[[gnu::always_inline]] inline std::int32_t floor0_of(std::int32_t x) noexcept {
  if constexpr (O::saturating) {
    return x;
  } else {
    return std::max(x, 0);
  }
}

template <class O>
SwBandBest striped_band(const SwBand& b) noexcept {
  using V = typename O::V;
  using T = typename O::T;
  constexpr int L = O::lanes;
  const std::int64_t rows = b.rows;
  const std::int64_t seg = (rows + L - 1) / L;
  const auto nvec = static_cast<std::size_t>(seg);
  const auto alphabet = static_cast<std::size_t>(b.alphabet);
  bool fresh = false;
  auto* prof = static_cast<V*>(sw_profile({b.kernel_id, b.q, rows, static_cast<int>(sizeof(T))},
                                          alphabet * nvec * sizeof(V), fresh));
  // Four rows, each row_pad_bytes past the end of the one before (4K aliasing, sw_striped.hpp).
  const std::size_t stride = nvec + row_pad_bytes / sizeof(V);
  // ... and two more of nvec vectors: the left face in the lanes' bits, in row order.
  V* hp = static_cast<V*>(sw_scratch((4 * stride + 2 * nvec) * sizeof(V)));  // H, previous column
  V* hc = hp + stride;                              // H of the current column
  V* ev = hc + stride;                              // E of the current column, then of the next one
  V* e_last = ev + stride;                          // E of the band's last column (the right face)
  const auto at = [seg](std::int64_t r) noexcept {  // element index of row r
    return static_cast<std::size_t>((r % seg) * L + r / seg);
  };

  // The query profile of the band: prof[a] holds the striped scores of residue a (in narrow lanes
  // signed, the padding rows' the lane's least).
  const T pad_score = O::saturating ? O::offset : O::neg_inf;
  auto* pt = reinterpret_cast<T*>(prof);
  if constexpr (requires { O::build_profile(pt, b, seg, static_cast<std::uint8_t*>(nullptr)); }) {
    // The ISA's table lookups (small alphabets), with the band's scratch for the striped query.
    if (fresh && O::build_profile(pt, b, seg, reinterpret_cast<std::uint8_t*>(e_last + stride))) {
      fresh = false;
    }
  }
  for (std::size_t a = 0; fresh && a < alphabet; ++a) {
    T* p = pt + a * nvec * L;
    for (std::int64_t l = 0, r = 0; l < L; ++l) {
      for (std::int64_t v = 0; v < seg; ++v, ++r) {
        p[v * L + l] = r < rows ? static_cast<T>(b.scores[b.q[r] * alphabet + a]) : pad_score;
      }
    }
  }
  auto* hpt = reinterpret_cast<T*>(hp);
  auto* evt = reinterpret_cast<T*>(ev);
  {
    // H and E of column c0 from the left face (E = max(H - open, E - extend) in 32 bits) in the
    // lanes' bits, first in row order (a loop the compiler vectorizes), with the padding rows
    // from `rows` on (H 0, E minus infinity), then into the striped layout.
    T* const th = reinterpret_cast<T*>(e_last + stride);
    T* const te = th + nvec * L;
    {
      // Restrict: nothing here aliases, so that the compiler vectorizes both loops.
      T* __restrict__ h_out = th;
      T* __restrict__ e_out = te;
      const std::int32_t* __restrict__ h_in = b.left_h;
      const std::int32_t* __restrict__ e_in = b.left_e;
      const std::int32_t open = b.open, extend = b.extend;
      for (std::int64_t r = 0; r < rows; ++r) h_out[r] = narrow<O>(h_in[r]);
      for (std::int64_t r = 0; r < rows; ++r) {
        e_out[r] = narrow<O>(std::max(h_in[r] - open, e_in[r] - extend));
      }
    }
    const auto lane_rows = static_cast<std::size_t>(seg * L);
    std::fill(th + rows, th + lane_rows, narrow<O>(0));
    std::fill(te + rows, te + lane_rows, narrow<O>(O::neg_inf));
    if constexpr (requires { O::rows_to_lanes(th, seg, hpt); }) {
      O::rows_to_lanes(th, seg, hpt);  // the ISA's transposition
      O::rows_to_lanes(te, seg, evt);
    } else {
      for (std::int64_t l = 0; l < L; ++l) {
        for (std::int64_t v = 0; v < seg; ++v) {
          hpt[v * L + l] = th[l * seg + v];
          evt[v * L + l] = te[l * seg + v];
        }
      }
    }
  }

  const V vopen = O::set1(b.open), vext = O::set1(b.extend), vzero = O::set1(narrow<O>(0));
  // Narrow lanes: the least H that may have saturated (see the top of this file).
  const std::int32_t overflow_at = std::numeric_limits<T>::max();
  const T lane_min = narrow<O>(O::neg_inf);  // the lanes' least value (0 in narrow lanes)
  const V vgap = O::set1(std::min(b.open, b.extend)), vneg = O::set1(lane_min);
  using S = std::make_signed_t<T>;  // lanes subtract costs as signed amounts
  const bool pair_f =
      O::f_in_pairs && 2 * std::min(b.open, b.extend) <= std::numeric_limits<S>::max();
  const V vgap2 = O::set1(pair_f ? 2 * std::min(b.open, b.extend) : 0);
  // What a carry loses crossing a whole lane (seg rows), saturated to the lane type.
  const std::int64_t lane_gap = seg * std::min(b.open, b.extend);
  const V vlane = O::set1(
      static_cast<std::int32_t>(std::min<std::int64_t>(lane_gap, std::numeric_limits<S>::max())));
  const std::int64_t sb = (rows - 1) % seg;  // the band's last row: segment sb, lane lb
  const auto lb = static_cast<std::size_t>((rows - 1) / seg);
  const std::size_t bottom = at(rows - 1);
  std::int32_t best = 0;
  std::int64_t best_row = 0, best_col = 0;
  std::int32_t corner = b.top_h[0];
  alignas(64) T lane_values[L];
  // The lanes of real rows in segments up to sb (lanes 0 .. lb) and past it (lanes 0 .. lb-1):
  // the column maximum leaves padding out (in narrow lanes a padding row's diagonal is the row
  // above it, so padding may hold a value above every real cell of the column).
  const auto lanes_up_to = [&lane_values](std::size_t last) {
    for (std::size_t l = 0; l < static_cast<std::size_t>(L); ++l) {
      lane_values[l] = l < last ? static_cast<T>(~std::uint64_t{0}) : T{0};
    }
    return O::load(lane_values);
  };
  const V keep_lo = lanes_up_to(lb + 1), keep_hi = lanes_up_to(lb);
  // The lazy-F pass's blocks (vectors): the carry into a lane is the largest of L lanes' outgoing
  // F, so it runs longer in more lanes. Measured on the 30k protein pair (BLOSUM62, 10/1): 64
  // lanes 40 then 16, 32 lanes 24 then 8, 16 lanes 16 then 8 (the loop that tested every second
  // vector exited at 8-36 vectors in 64 lanes, mean 20, mispredicted in most columns).
  constexpr std::size_t lazy_first_block = L / 2 + 8, lazy_block = L >= 64 ? 16 : 8;

  for (std::int64_t j = 0; j < b.w; ++j) {
    // Read column j's top values before the bottom face (which may alias them) is written.
    const std::int32_t up = b.top_h[j + 1];
    const std::int32_t f_top = std::max(up - b.open, b.top_f[j] - b.extend);
    V vf = O::shift_in(vneg, narrow<O>(f_top));
    V vdiag = O::shift_in(hp[nvec - 1], narrow<O>(corner));
    corner = up;
    const V* pr = prof + static_cast<std::size_t>(b.t[j]) * nvec;
    V vmax = vzero;
    if (j == b.w - 1) std::copy_n(ev, nvec, e_last);
    // One vector of cells. F is the only chain from vector to vector, and it passes one
    // subtraction and one max: with X = max(diag + score, E) (and 0 in int32 lanes), H = max(X, F)
    // and g = min(open, extend),
    //   F(s+1) = max(F(s) - extend, H(s) - open) = max(F(s) - g, X(s) - open),
    // as F(s) - open is the smaller of F(s) - extend and F(s) - open. (Through H the chain took
    // a third operation, and the loop ran at the chain's latency: 1.3-1.4x slower.) Flooring at 0
    // commutes with both operations, so narrow lanes compute the same.
    const auto cell = [&](std::size_t s) __attribute__((always_inline)) {
      const V e = ev[s];
      V x;
      if constexpr (O::saturating) {
        x = O::max(O::adds(vdiag, pr[s]), e);
      } else {
        x = O::max(O::max(O::adds(vdiag, pr[s]), vzero), e);
      }
      const V h = O::max(x, vf);
      hc[s] = h;
      vmax = O::max(vmax, h);
      const V h_open = O::subs(h, vopen);
      ev[s] = O::max(O::subs(e, vext), h_open);
      vf = O::max(O::subs(vf, vgap), O::subs(x, vopen));
      vdiag = hp[s];
    };
    // Two vectors: F of the second from the first's, off the chain, which goes straight to the
    // third's, F(s+2) = max(F(s) - 2g, max(X(s) - open - g, X(s+1) - open)): one subtraction
    // and one max per two vectors, for one more operation per pair (pair_f: where the ISA's loop
    // is bound by the chain, O::f_in_pairs, and 2g fits the lanes' signed subtrahend).
    const auto cells2 = [&](std::size_t s) __attribute__((always_inline)) {
      const V e0 = ev[s], e1 = ev[s + 1];
      V x0, x1;
      if constexpr (O::saturating) {
        x0 = O::max(O::adds(vdiag, pr[s]), e0);
        x1 = O::max(O::adds(hp[s], pr[s + 1]), e1);
      } else {
        x0 = O::max(O::max(O::adds(vdiag, pr[s]), vzero), e0);
        x1 = O::max(O::max(O::adds(hp[s], pr[s + 1]), vzero), e1);
      }
      vdiag = hp[s + 1];
      const V xo0 = O::subs(x0, vopen), xo1 = O::subs(x1, vopen);
      const V f1 = O::max(O::subs(vf, vgap), xo0);
      const V h0 = O::max(x0, vf), h1 = O::max(x1, f1);
      vf = O::max(O::subs(vf, vgap2), O::max(O::subs(xo0, vgap), xo1));
      hc[s] = h0;
      hc[s + 1] = h1;
      vmax = O::max(vmax, O::max(h0, h1));
      ev[s] = O::max(O::subs(e0, vext), O::subs(h0, vopen));
      ev[s + 1] = O::max(O::subs(e1, vext), O::subs(h1, vopen));
    };
    const auto run = [&](std::size_t & s, std::size_t end) __attribute__((always_inline)) {
      if (pair_f) {
        for (; s + 1 < end; s += 2) cells2(s);
      } else {
        // GCC then keeps F and the column maximum in place (one vector per iteration costs two
        // register copies, a fifth of the loop's instructions).
        for (; s + 1 < end; s += 2) {
          cell(s);
          cell(s + 1);
        }
      }
      for (; s < end; ++s) cell(s);
    };
    std::size_t s = 0;
    run(s, static_cast<std::size_t>(sb));
    V f_bottom = vf;  // F of segment sb (the band's last row in lane lb)
    cell(s++);
    V vmax_lo = vmax;  // segments 0 .. sb; vmax then holds the rest
    vmax = vzero;
    run(s, nvec);

    // Lazy F with exact carries (see the comment at the top): usually the carry into lane l+1 is
    // what leaves lane l; when a carry could cross a whole lane, a scan over the lanes instead.
    V carry = O::shift_in(vf, lane_min);
    if (O::any_gt(O::subs(carry, vlane), vf)) {
      O::store(lane_values, vf);
      std::int64_t c = O::neg_inf;
      alignas(64) T carries[L];
      for (int l = 0; l < L; ++l) {
        carries[l] = narrow<O>(static_cast<std::int32_t>(std::max<std::int64_t>(c, O::neg_inf)));
        c = std::max<std::int64_t>(widen<O>(lane_values[l]), c - lane_gap);
      }
      carry = O::load(carries);
    }
    // The pass raises H to the carry and the next column's E to the carry - open (E already holds
    // at least H - open), vector by vector, in blocks with the stop tested at each block's end
    // (a carry past the stop changes nothing, so a block may run past it): the loop's exit is
    // data-dependent and mispredicted, so the first block is long enough for most columns.
    // Every raised H is at most the carry into vector 0, which the pass always applies: the
    // column maximum takes it at once (past segment sb, the carry there, see below).
    vmax_lo = O::max(vmax_lo, carry);
    V carry_open = O::subs(carry, vopen);
    const auto lazy_until = [&](std::size_t & u, std::size_t end, std::size_t block)
        __attribute__((always_inline)) {
      while (u < end) {
        const std::size_t stop = std::min(u + block, end);
        V h_old = vneg;
        for (; u < stop; ++u) {
          h_old = hc[u];
          hc[u] = O::max(h_old, carry);
          ev[u] = O::max(ev[u], carry_open);
          carry = O::subs(carry, vgap);
          carry_open = O::subs(carry_open, vgap);
        }
        if (!O::any_gt(carry, O::subs(h_old, vopen))) return false;
        block = lazy_block;
      }
      return true;
    };
    s = 0;
    if (lazy_until(s, static_cast<std::size_t>(sb), lazy_first_block)) {
      f_bottom = O::max(f_bottom, carry);  // the carry into segment sb
      if (lazy_until(s, static_cast<std::size_t>(sb) + 1, 1)) {
        // The largest carry past sb (at most H there when the pass stops at sb).
        if (s < nvec) vmax = O::max(vmax, carry);
        lazy_until(s, nvec, lazy_first_block);
      }
    }

    vmax = O::max(O::select(keep_lo, vmax_lo, vzero), O::select(keep_hi, vmax, vzero));

    // The column's best cell when it can beat (or tie, from a lower row) the band's best.
    const auto* hct = reinterpret_cast<const T*>(hc);
    if (O::any_gt(vmax, O::set1(narrow<O>(std::max(best, 1) - 1)))) {
      O::store(lane_values, vmax);
      std::int32_t col_max = 0;
      for (const T x : lane_values) col_max = std::max(col_max, widen<O>(x));
      if (O::saturating && col_max >= overflow_at) return {0, 0, 0, true};
      // The first row holding col_max (a tie only matters above the best's row): the lanes
      // holding it in a real row (vmax's lanes are the lane maxima over the real rows, so no pass
      // over the column), then the first of their rows in lane order.
      const std::int64_t end = col_max > best ? rows : best_row;
      std::uint64_t hit = O::eq_mask(vmax, O::set1(narrow<O>(col_max)));  // a bit per byte
      bool found = false;
      while (hit != 0 && !found) {
        const auto l = static_cast<std::int64_t>(__builtin_ctzll(hit) / sizeof(T));
        if (l * seg >= end) break;
        const auto next = static_cast<unsigned>(l + 1) * sizeof(T);  // the next lane's first bit
        hit = next >= 64 ? 0 : hit & ~((std::uint64_t{1} << next) - 1u);
        for (std::int64_t v = 0; v < seg && l * seg + v < end; ++v) {
          if (widen<O>(hct[static_cast<std::size_t>(v * L + l)]) == col_max) {
            best = col_max;
            best_row = l * seg + v;
            best_col = j;
            found = true;
            break;
          }
        }
      }
    }
    b.bottom_h[j + 1] = widen<O>(hct[bottom]);
    O::store(lane_values, f_bottom);
    b.bottom_f[j] = floor0_of<O>(widen<O>(lane_values[lb]));
    std::swap(hp, hc);
  }

  hpt = reinterpret_cast<T*>(hp);
  const auto* elt = reinterpret_cast<const T*>(e_last);
  if constexpr (requires { O::lanes_to_rows(hpt, seg, rows, b.right_h); }) {
    // The ISA's transposition (narrow lanes only: E is at least 0 there already).
    O::lanes_to_rows(hpt, seg, rows, b.right_h);
    O::lanes_to_rows(elt, seg, rows, b.right_e);
  } else {
    // Row r = l seg + v is element v L + l (at(r), without its division per row).
    for (std::int64_t l = 0, r = 0; l < L; ++l) {
      for (std::int64_t v = 0; v < seg && r < rows; ++v, ++r) {
        const auto i = static_cast<std::size_t>(v * L + l);
        b.right_h[r] = widen<O>(hpt[i]);
        b.right_e[r] = floor0_of<O>(widen<O>(elt[i]));
      }
    }
  }
  b.bottom_h[0] = b.left_h[rows - 1];
  return {best, best_row, best_col, false};
}
