// Span recording and Chrome trace-event JSON output.
#include <tilepipe/exec/trace.hpp>
#include <tilepipe/support/assert.hpp>

#include <fmt/format.h>
#include <cstring>

namespace tp::exec {

const char* to_string(SpanKind kind) noexcept {
  switch (kind) {
    case SpanKind::compute:
      return "compute";
    case SpanKind::send_start:
      return "send";
    case SpanKind::wait:
      return "wait";
    case SpanKind::sync:
      return "sync";
  }
  return "?";
}

Tracer::Tracer(int threads, std::chrono::steady_clock::time_point epoch)
    : epoch_(epoch), per_thread_(static_cast<std::size_t>(threads)) {
  for (auto& v : per_thread_) v.reserve(4096);
}

void Tracer::record(int thread, SpanKind kind, std::int64_t step,
                    std::chrono::steady_clock::time_point start,
                    std::chrono::steady_clock::time_point end) {
  if (!enabled()) return;
  using std::chrono::duration_cast;
  using std::chrono::nanoseconds;
  per_thread_[static_cast<std::size_t>(thread)].push_back(
      Span{duration_cast<nanoseconds>(start - epoch_).count(),
           duration_cast<nanoseconds>(end - start).count(), step, thread, kind});
}

std::vector<Span> Tracer::spans() const {
  std::vector<Span> all;
  for (const auto& v : per_thread_) all.insert(all.end(), v.begin(), v.end());
  return all;
}

std::vector<std::byte> encode_spans(const std::vector<Span>& spans) {
  std::vector<std::byte> out(spans.size() * sizeof(Span));
  if (!spans.empty()) std::memcpy(out.data(), spans.data(), out.size());
  return out;
}

std::vector<Span> decode_spans(const std::vector<std::byte>& bytes) {
  TP_EXPECTS(bytes.size() % sizeof(Span) == 0);
  std::vector<Span> spans(bytes.size() / sizeof(Span));
  if (!spans.empty()) std::memcpy(spans.data(), bytes.data(), bytes.size());
  return spans;
}

std::string chrome_trace_json(const std::vector<std::vector<Span>>& spans_by_rank,
                              const std::string& title) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"title\":\"";
  for (char c : title) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += "\"},\"traceEvents\":[\n";
  bool first = true;
  const auto add = [&](const std::string& e) {
    out += first ? "" : ",\n";
    out += e;
    first = false;
  };
  for (std::size_t r = 0; r < spans_by_rank.size(); ++r) {
    add(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"rank {}"}}}})", r,
                    r));
    int max_thread = -1;
    for (const auto& s : spans_by_rank[r]) max_thread = std::max(max_thread, s.thread);
    for (int t = 0; t <= max_thread; ++t) {
      add(fmt::format(
          R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"cpu {}"}}}})", r, t,
          t));
    }
    for (const auto& s : spans_by_rank[r]) {
      add(fmt::format(
          R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"args":{{"step":{}}}}})",
          to_string(s.kind), s.kind == SpanKind::compute ? "compute" : "comm", r, s.thread,
          static_cast<double>(s.start_ns) / 1e3, static_cast<double>(s.dur_ns) / 1e3, s.step));
    }
  }
  out += "\n]}\n";
  return out;
}

}  // namespace tp::exec
