// A one-line progress display on stderr for long runs: "aligning: score pass  42%".
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tp::app {

/// The displays of tilepipe's long commands share these two lines on stderr.
/// "\r<label> 42%" redrawn in place (share in [0, 1]); the caller ends the line.
void draw_share(std::string_view label, double share);
/// A stage bar, "<name> [#####.....] 3/10 <what>": redrawn in place on a terminal (ended at
/// done == total), a line per stage otherwise; `what` is padded or cut to `what_width`.
void draw_bar(std::string_view name, int done, int total, std::string_view what, int what_width);

/// Phases of work, each with a count of done units that the workers raise (relaxed) and a total
/// known when the phase starts. A thread redraws the line every 200 ms while a phase runs; each
/// phase ends on its own line at 100%. Shown only when `show` (then nothing else on the line:
/// stdout is not touched). An estimated total caps the shown share at 99% until the phase ends.
/// The counter lives in a shared mapping, so ranks forked after construction raise the same one;
/// the thread starts with the first phase, so that no thread exists before they fork.
class ProgressLine {
 public:
  ProgressLine(std::string what, bool show);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();

  /// Starts a phase of `total` units (> 0); the counter restarts at 0. Ends the phase before.
  void start(std::string phase, std::int64_t total);
  /// Ends the running phase: its line at 100%, then a new line.
  void finish();
  /// What the workers raise, one unit each (cells here); valid for the object's life.
  [[nodiscard]] std::atomic<std::int64_t>* counter() noexcept { return done_; }
  [[nodiscard]] bool shown() const noexcept { return show_; }

 private:
  void draw(double share);  // with mutex_ held
  void loop();

  std::string what_;
  bool show_;
  std::atomic<std::int64_t>* shared_;  // the counter in its shared page (nullptr: none)
  std::atomic<std::int64_t> own_{0};   // the counter when the page could not be mapped
  std::atomic<std::int64_t>* done_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string phase_;  // empty: no phase runs
  std::int64_t total_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tp::app
