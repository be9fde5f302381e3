// Per-thread recording of compute and communication spans, written as Chrome trace-event JSON.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tp::exec {

/// What a span of a thread's time was spent on.
enum class SpanKind : std::uint8_t { compute, send_start, wait, sync };

/// "compute", "send", "wait", "sync".
const char* to_string(SpanKind kind) noexcept;

/// One span: a thread of a rank did `kind` for tile step `step`.
struct Span {
  std::int64_t start_ns = 0;  ///< since the tracer's epoch (steady_clock, shared by a host)
  std::int64_t dur_ns = 0;
  std::int64_t step = 0;
  std::int32_t thread = 0;
  SpanKind kind = SpanKind::compute;
};

/// Collects spans of one rank. Each thread appends to its own vector (no locking); enabled() is
/// false when tracing is off, so recording costs one branch.
class Tracer {
 public:
  Tracer() = default;
  /// Records for `threads` threads; epoch = steady_clock time zero of the trace.
  Tracer(int threads, std::chrono::steady_clock::time_point epoch);

  [[nodiscard]] bool enabled() const noexcept { return !per_thread_.empty(); }
  /// Appends a span of thread `thread` (0..threads-1). Only that thread may call it.
  void record(int thread, SpanKind kind, std::int64_t step,
              std::chrono::steady_clock::time_point start,
              std::chrono::steady_clock::time_point end);
  /// All spans, thread by thread.
  [[nodiscard]] std::vector<Span> spans() const;

 private:
  std::chrono::steady_clock::time_point epoch_;
  std::vector<std::vector<Span>> per_thread_;
};

/// Spans as bytes (to gather them on rank 0) and back.
std::vector<std::byte> encode_spans(const std::vector<Span>& spans);
std::vector<Span> decode_spans(const std::vector<std::byte>& bytes);

/// Chrome trace-event JSON (Perfetto opens it): one process per rank, one track per thread,
/// complete ("X") events in microseconds. `spans_by_rank[r]` are rank r's spans.
std::string chrome_trace_json(const std::vector<std::vector<Span>>& spans_by_rank,
                              const std::string& title);

}  // namespace tp::exec
