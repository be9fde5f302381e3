// The traceback: reverse score pass for the start, Myers-Miller (1988) for the path, O(n + m).
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/exec/rect_tiling.hpp>
#include <tilepipe/kernels/sw_align.hpp>
#include <tilepipe/support/assert.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <system_error>
#include <thread>
#include <utility>

#include "sw_striped.hpp"

namespace tp::kernels {

std::int64_t gap_run_cost(GapCosts gaps, std::int64_t length) noexcept {
  if (length <= 0) return 0;
  return gaps.open + (length - 1) * std::min(gaps.open, gaps.extend);
}

std::string cigar(const SwAlignment& a) {
  std::string out;
  for (const SwOp& op : a.ops) out += fmt::format("{}{}", op.length, op.op);
  return out;
}

std::int64_t alignment_score(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                             std::span<const std::uint8_t> target, GapCosts gaps,
                             const SwAlignment& a) {
  std::int64_t score = 0;
  auto i = static_cast<std::size_t>(a.query_start > 0 ? a.query_start - 1 : 0);
  auto j = static_cast<std::size_t>(a.target_start > 0 ? a.target_start - 1 : 0);
  for (const SwOp& op : a.ops) {
    const auto n = static_cast<std::size_t>(op.length);
    if (op.op == 'M') {
      TP_EXPECTS(i + n <= query.size() && j + n <= target.size());
      for (std::size_t k = 0; k < n; ++k) score += matrix.score(query[i + k], target[j + k]);
      i += n;
      j += n;
    } else {
      TP_EXPECTS(op.op == 'I' || op.op == 'D');
      score -= gap_run_cost(gaps, op.length);
      (op.op == 'I' ? i : j) += n;
    }
  }
  return score;
}

bool is_similar(const ScoreMatrix& matrix, std::uint8_t a, std::uint8_t b) noexcept {
  return matrix.score(a, b) > 0 && (matrix.score(a, a) > 0 || matrix.score(b, b) > 0);
}

SwAlignmentStats alignment_stats(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                 std::span<const std::uint8_t> target, const SwAlignment& a) {
  SwAlignmentStats s;
  auto i = static_cast<std::size_t>(a.query_start > 0 ? a.query_start - 1 : 0);
  auto j = static_cast<std::size_t>(a.target_start > 0 ? a.target_start - 1 : 0);
  for (const SwOp& op : a.ops) {
    const auto n = static_cast<std::size_t>(op.length);
    s.length += op.length;
    if (op.op == 'M') {
      TP_EXPECTS(i + n <= query.size() && j + n <= target.size());
      for (std::size_t k = 0; k < n; ++k) {
        const bool same = query[i + k] == target[j + k] && !matrix.is_added_u(query[i + k]);
        s.identity += same ? 1 : 0;
        s.mismatches += same ? 0 : 1;
        s.similarity += is_similar(matrix, query[i + k], target[j + k]) ? 1 : 0;
      }
      i += n;
      j += n;
    } else {
      s.gaps += op.length;
      s.gap_opens += 1;
      (op.op == 'I' ? i : j) += n;
    }
  }
  return s;
}

namespace {

using Cost = std::int64_t;

// Myers and Miller's diff() in their notation, minimizing cost: w(a, b) = -score, a gap of k
// columns costs g + k * h (g = open - extend', h = extend' with extend' = min(open, extend), so
// g >= 0). A = query (rows; deleting a_i is SAM's 'I'), B = target (columns; inserting b_j is 'D').
// tb, te: the opening cost of a vertical gap touching the box's top-left / bottom-right corner
// (g, or 0 where it continues a gap pinned by the caller).
class MyersMiller {
 public:
  MyersMiller(const ScoreMatrix& matrix, std::span<const std::uint8_t> a,
              std::span<const std::uint8_t> b, GapCosts gaps, int threads, SwIsa isa,
              std::atomic<std::int64_t>* progress, std::vector<SwOp>& ops)
      : MyersMiller(matrix.scores().data(), static_cast<std::size_t>(matrix.size()), a.data(),
                    b.data(), static_cast<std::int64_t>(b.size()),
                    gaps.open - std::min(gaps.open, gaps.extend), std::min(gaps.open, gaps.extend),
                    threads, pass_for(isa), progress, ops) {}

  /// Boxes of at least this many cells on each side of a split run on two threads (when the
  /// thread budget allows): the two sub-boxes share nothing but the sequences.
  static constexpr std::int64_t parallel_cells = std::int64_t{1} << 18;

  void diff(std::int64_t i0, std::int64_t m, std::int64_t j0, std::int64_t n, Cost tb, Cost te) {
    if (n == 0) return put('I', m);
    if (m == 0) return put('D', n);
    if (m == 1) return one_row(i0, j0, n, tb, te);
    const std::int64_t mid = m / 2;
    // The two half passes read the sequences and write disjoint arrays: on two threads for big
    // boxes (a thread start costs microseconds; a box of 2^20 cells about a millisecond).
    std::thread other;
    if (threads_ > 1 && mid * n >= (std::int64_t{1} << 20)) {
      try {
        other = std::thread([&] { backward(i0, m, mid, j0, n, te); });
      } catch (const std::system_error&) {  // no thread to be had: both passes on this one
      }
    }
    if (other.joinable()) {
      forward(i0, mid, j0, n, tb);
      other.join();
    } else {
      forward(i0, mid, j0, n, tb);
      backward(i0, m, mid, j0, n, te);
    }
    // The crossing of row mid: smallest column, type 1 (at a cell) before type 2 (inside a
    // vertical gap through rows mid and mid + 1).
    Cost best = cc_[0] + rr_[0];
    std::int64_t best_j = 0;
    bool in_gap = false;
    for (std::int64_t j = 0; j <= n; ++j) {
      const auto u = static_cast<std::size_t>(j);
      if (const Cost c = cc_[u] + rr_[u]; c < best) {
        best = c;
        best_j = j;
        in_gap = false;
      }
      if (const Cost c = dd_[u] + ss_[u] - g_; c < best) {
        best = c;
        best_j = j;
        in_gap = true;
      }
    }
    // Type 1: the boxes above and below the cell; type 2: two gap columns pinned through rows
    // mid and mid + 1, the neighbouring vertical gaps opened at cost 0 on that side.
    const Box top{i0, in_gap ? mid - 1 : mid, j0, best_j, tb, in_gap ? 0 : g_};
    const Box bottom{in_gap ? i0 + mid + 1 : i0 + mid,
                     in_gap ? m - mid - 1 : m - mid,
                     j0 + best_j,
                     n - best_j,
                     in_gap ? 0 : g_,
                     te};
    if (threads_ > 1 && top.cells() >= parallel_cells && bottom.cells() >= parallel_cells &&
        both_at_once(top, bottom, in_gap)) {
      return;
    }
    run(top);
    if (in_gap) put('I', 2);
    run(bottom);
  }

 private:
  struct Box {
    std::int64_t i0, m, j0, n;
    Cost tb, te;
    [[nodiscard]] std::int64_t cells() const noexcept { return m * n; }
  };

  using StripedPass = void (*)(const detail::SwGlobalRows&) noexcept;

  // The half passes' striped lanes for the ISA; nullptr: the scalar pass.
  static StripedPass pass_for(SwIsa isa) noexcept {
#ifdef TP_SW_SIMD
    // AVX-512 CPUs run the AVX2 pass (the traceback's half passes are not the score pass's
    // hot loop).
    if (isa == SwIsa::avx2 || isa == SwIsa::avx512) return detail::sw_global_rows_avx2;
    if (isa == SwIsa::sse41) return detail::sw_global_rows_sse41;
#endif
    (void)isa;
    return nullptr;
  }

  MyersMiller(const std::int32_t* scores, std::size_t alphabet, const std::uint8_t* a,
              const std::uint8_t* b, std::int64_t columns, Cost g, Cost h, int threads,
              StripedPass striped, std::atomic<std::int64_t>* progress, std::vector<SwOp>& ops)
      : scores_(scores),
        alphabet_(alphabet),
        a_(a),
        b_(b),
        h_(h),
        g_(g),
        threads_(threads),
        striped_(striped),
        progress_(progress),
        step_cost_(g + h + largest_entry(scores, alphabet)),
        cc_(static_cast<std::size_t>(columns) + 1),
        dd_(static_cast<std::size_t>(columns) + 1),
        rr_(static_cast<std::size_t>(columns) + 1),
        ss_(static_cast<std::size_t>(columns) + 1),
        ops_(&ops) {}

  void run(const Box& x) {
    diff(x.i0, x.m, x.j0, x.n, x.tb, x.te);
  }

  // The box above on a new thread with its own rows (half the thread budget), the box below on
  // this one; their columns joined in order. False (nothing done) when no thread starts.
  bool both_at_once(const Box& top, const Box& bottom, bool in_gap) {
    std::vector<SwOp> top_ops, bottom_ops;
    const int top_threads = threads_ / 2;
    MyersMiller other(scores_, alphabet_, a_, b_, top.n, g_, h_, top_threads, striped_, progress_,
                      top_ops);
    std::thread worker;
    try {
      worker = std::thread([&] { other.run(top); });
    } catch (const std::system_error&) {
      return false;
    }
    struct Join {
      std::thread& t;
      ~Join() {
        if (t.joinable()) t.join();  // also when run(bottom) throws
      }
    } join{worker};
    std::vector<SwOp>* out = ops_;
    const int threads = threads_;
    ops_ = &bottom_ops;
    threads_ = threads - top_threads;
    run(bottom);
    ops_ = out;
    threads_ = threads;
    worker.join();
    for (const SwOp& op : top_ops) put(op.op, op.length);
    if (in_gap) put('I', 2);
    for (const SwOp& op : bottom_ops) put(op.op, op.length);
    return true;
  }

  [[nodiscard]] Cost gap(std::int64_t k) const noexcept {
    return k <= 0 ? 0 : g_ + k * h_;
  }
  [[nodiscard]] const std::int32_t* row_of(std::int64_t i) const noexcept {
    return scores_ + a_[i] * alphabet_;
  }

  void count(std::int64_t cells) const noexcept {
    if (progress_ != nullptr) progress_->fetch_add(cells, std::memory_order_relaxed);
  }

  void put(char op, std::int64_t n) {
    if (n <= 0) return;
    if (!ops_->empty() && ops_->back().op == op) {
      ops_->back().length += n;
    } else {
      ops_->push_back(SwOp{op, n});
    }
  }

  // One query residue: against the leftmost best target residue, or deleted (the gap next to the
  // corner whose opening is cheaper) only if strictly better.
  void one_row(std::int64_t i0, std::int64_t j0, std::int64_t n, Cost tb, Cost te) {
    const std::int32_t* srow = row_of(i0);
    Cost best = 0;
    std::int64_t best_j = 0;
    for (std::int64_t j = 1; j <= n; ++j) {
      const Cost c = gap(j - 1) - srow[b_[j0 + j - 1]] + gap(n - j);
      if (best_j == 0 || c < best) {
        best = c;
        best_j = j;
      }
    }
    if (std::min(tb, te) + h_ + gap(n) < best) {
      if (tb <= te) {
        put('I', 1);
        put('D', n);
      } else {
        put('D', n);
        put('I', 1);
      }
      return;
    }
    put('D', best_j - 1);
    put('M', 1);
    put('D', n - best_j);
  }

  static Cost largest_entry(const std::int32_t* scores, std::size_t alphabet) noexcept {
    Cost m = 0;
    for (std::size_t k = 0; k < alphabet * alphabet; ++k)
      m = std::max<Cost>(m, std::abs(scores[k]));
    return m;
  }

  // A half pass in the ISA's striped int32 lanes (sw_global_body.hpp), the same costs as the
  // scalar pass, where the box pays for its profile (alphabet x n) and every cost fits the lanes;
  // false: the caller runs the scalar pass. The backward pass reads both sequences backwards and
  // writes its columns mirrored.
  bool striped_pass(const std::uint8_t* a, std::int64_t a_step, const std::uint8_t* b,
                    std::int64_t b_step, std::int64_t rows, std::int64_t n, Cost tb, bool mirrored,
                    Cost* cc, Cost* dd) const noexcept {
    constexpr std::int64_t min_rows = 8, min_columns = 64;
    if (striped_ == nullptr || rows < min_rows || n < min_columns) return false;
    if (tb + (rows + n + 2) * step_cost_ >= detail::global_rows_limit) return false;
    striped_(detail::SwGlobalRows{a, a_step, b, b_step, rows, n, scores_,
                                  static_cast<int>(alphabet_), g_, h_, tb, mirrored, cc, dd});
    return true;
  }

  // cc_[j], dd_[j]: the least cost of A[1..rows] against B[1..j], dd_ ending in a deletion.
  // Rows go K at a time through one sweep over the columns: K independent dependence chains, and
  // the rows' arrays read and written once per K rows (they outgrow L2 at 30k columns).
  void forward(std::int64_t i0, std::int64_t rows, std::int64_t j0, std::int64_t n, Cost tb) {
    Cost* cc = cc_.data();
    Cost* dd = dd_.data();
    count(rows * n);
    if (striped_pass(a_ + i0, 1, b_ + j0, 1, rows, n, tb, false, cc, dd)) return;
    cc[0] = 0;
    Cost t = g_;
    for (std::int64_t j = 1; j <= n; ++j) {
      t += h_;
      cc[j] = t;
      dd[j] = t + g_;
    }
    t = tb;
    std::int64_t i = 1;
    for (; i + 3 <= rows; i += 4) t = sweep_rows<4, true>(i0 + i - 1, j0, n, t);
    for (; i <= rows; ++i) t = sweep_rows<1, true>(i0 + i - 1, j0, n, t);
    dd[0] = cc[0];
  }

  // Rows a[r], a[r+1], ..., a[r+K-1] (0-based) of the forward pass (cc_, dd_, columns 1..n), or
  // with Forward false rows a[r], a[r-1], ..., a[r-K+1] of the backward pass (rr_, ss_, columns
  // n-1..0); t: the edge column's cost of the row before. Returns the edge cost of the last row.
  template <int K, bool Forward>
  Cost sweep_rows(std::int64_t r, std::int64_t j0, std::int64_t n, Cost t) {
    constexpr std::int64_t dir = Forward ? 1 : -1;
    Cost* cc = Forward ? cc_.data() : rr_.data();
    Cost* dd = Forward ? dd_.data() : ss_.data();
    const std::int64_t edge = Forward ? 0 : n;
    std::array<const std::int32_t*, K> srow;
    std::array<Cost, K> s, c, e;
    for (int k = 0; k < K; ++k) {
      srow[k] = row_of(r + dir * k);
      s[k] = k == 0 ? cc[edge] : c[k - 1];
      t += h_;
      c[k] = t;
      e[k] = t + g_;
    }
    cc[edge] = t;
    // One column j against residue bj; the loops below give the forward and backward orders.
    const auto column = [&](std::int64_t j, std::uint8_t bj) __attribute__((always_inline)) {
      Cost up_c = cc[j];
      Cost up_d = dd[j];
      for (int k = 0; k < K; ++k) {
        e[k] = std::min(e[k], c[k] + g_) + h_;
        const Cost d = std::min(up_d, up_c + g_) + h_;
        const Cost v = std::min(std::min(d, e[k]), s[k] - srow[k][bj]);
        s[k] = up_c;
        up_c = v;
        up_d = d;
        c[k] = v;
      }
      cc[j] = up_c;
      dd[j] = up_d;
    };
    const std::uint8_t* b = b_ + j0;
    if constexpr (Forward) {
      for (std::int64_t j = 1; j <= n; ++j) column(j, b[j - 1]);
    } else {
      for (std::int64_t j = n - 1; j >= 0; --j) column(j, b[j]);
    }
    return t;
  }

  // rr_[j], ss_[j]: the least cost of A[mid+1..m] against B[j+1..n], ss_ starting with a deletion.
  void backward(std::int64_t i0, std::int64_t m, std::int64_t mid, std::int64_t j0, std::int64_t n,
                Cost te) {
    Cost* rr = rr_.data();
    Cost* ss = ss_.data();
    count((m - mid) * n);
    if (striped_pass(a_ + i0 + m - 1, -1, b_ + j0 + n - 1, -1, m - mid, n, te, true, rr, ss)) {
      return;
    }
    rr[n] = 0;
    Cost t = g_;
    for (std::int64_t j = n - 1; j >= 0; --j) {
      t += h_;
      rr[j] = t;
      ss[j] = t + g_;
    }
    t = te;
    std::int64_t i = m;
    for (; i - 3 > mid; i -= 4) t = sweep_rows<4, false>(i0 + i - 1, j0, n, t);
    for (; i > mid; --i) t = sweep_rows<1, false>(i0 + i - 1, j0, n, t);
    ss[n] = rr[n];
  }

  const std::int32_t* scores_;
  std::size_t alphabet_;
  const std::uint8_t* a_;
  const std::uint8_t* b_;
  Cost h_;
  Cost g_;
  int threads_;
  StripedPass striped_;
  std::atomic<std::int64_t>* progress_;  // SwOptions::progress: cells of the half passes
  Cost step_cost_;                       // bounds what one row or column adds to a cost's magnitude
  std::vector<Cost> cc_, dd_, rr_, ss_;
  std::vector<SwOp>* ops_;
};

std::vector<SwOp> global_path(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                              std::span<const std::uint8_t> target, GapCosts gaps, int threads,
                              std::optional<SwIsa> isa, std::atomic<std::int64_t>* progress) {
  std::vector<SwOp> ops;
  MyersMiller mm(matrix, query, target, gaps, threads, isa.value_or(best_sw_isa()), progress, ops);
  const Cost g = gaps.open - std::min(gaps.open, gaps.extend);
  mm.diff(0, static_cast<std::int64_t>(query.size()), 0, static_cast<std::int64_t>(target.size()),
          g, g);
  return ops;
}

}  // namespace

std::vector<SwOp> sw_global_path(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                 std::span<const std::uint8_t> target, GapCosts gaps, int threads,
                                 std::optional<SwIsa> isa) {
  return global_path(matrix, query, target, gaps, threads, isa, nullptr);
}

Expected<SwAlignment> sw_traceback(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                   std::span<const std::uint8_t> target, GapCosts gaps,
                                   const SwResult& end, const SwTracebackOptions& options) {
  TP_EXPECTS(options.threads >= 1);
  if (end.score <= 0) return SwAlignment{};
  TP_EXPECTS(end.end_query >= 1 && end.end_query <= static_cast<std::int64_t>(query.size()));
  TP_EXPECTS(end.end_target >= 1 && end.end_target <= static_cast<std::int64_t>(target.size()));
  const auto ei = static_cast<std::size_t>(end.end_query);
  const auto ej = static_cast<std::size_t>(end.end_target);
  // The start: the local score pass over the reversed prefixes. Its maxima (end.score) are
  // exactly the starts of the optimal alignments ending at `end` (docs/adr/0007); its first in
  // row-major order is the largest start.
  std::vector<std::uint8_t> rq(query.rend() - static_cast<std::ptrdiff_t>(ei), query.rend());
  std::vector<std::uint8_t> rt(target.rend() - static_cast<std::ptrdiff_t>(ej), target.rend());
  auto kernel = SwKernel::make(matrix, rq, rt, gaps, options.sw);
  if (!kernel) return Unexpected{kernel.error()};
  const auto threads = static_cast<std::int64_t>(options.threads);
  const auto rows = (static_cast<std::int64_t>(ei) + threads - 1) / threads;
  auto tiling = exec::RectTiling<2>::make(kernel->space(), {rows, threads == 1 ? 8192 : 2048});
  if (!tiling) return Unexpected{tiling.error()};
  auto reverse = exec::run_local(*kernel, *tiling, options.threads);
  if (!reverse) return Unexpected{reverse.error()};
  TP_ASSERT(reverse->score == end.score);
  SwAlignment out;
  out.score = end.score;
  out.query_end = end.end_query;
  out.target_end = end.end_target;
  out.query_start = end.end_query - reverse->end_query + 1;
  out.target_start = end.end_target - reverse->end_target + 1;
  const auto qs = static_cast<std::size_t>(out.query_start - 1);
  const auto ts = static_cast<std::size_t>(out.target_start - 1);
  out.ops = global_path(matrix, query.subspan(qs, ei - qs), target.subspan(ts, ej - ts), gaps,
                        options.threads, options.sw.isa, options.sw.progress);
  // The internal check: the columns score what the score pass found, and begin and end with M
  // (a gap at either end would make a start or an end that the tie rules would have chosen).
  TP_ASSERT(alignment_score(matrix, query, target, gaps, out) == end.score);
  TP_ASSERT(!out.ops.empty() && out.ops.front().op == 'M' && out.ops.back().op == 'M');
  return out;
}

}  // namespace tp::kernels
