#include "progress_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

namespace tp::app {

ProgressLine::ProgressLine(std::string what, bool show) : what_(std::move(what)), show_(show) {
  if (show_) thread_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() {
  if (!show_) return;
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
    if (!phase_.empty()) std::fputc('\n', stderr);  // a phase cut short (an error) ends its line
  }
  wake_.notify_all();
  thread_.join();
}

void ProgressLine::start(std::string phase, std::int64_t total) {
  finish();
  done_.store(0, std::memory_order_relaxed);
  if (!show_) return;
  const std::lock_guard lock(mutex_);
  phase_ = std::move(phase);
  total_ = std::max<std::int64_t>(total, 1);
  draw(0.0);
}

void ProgressLine::finish() {
  if (!show_) return;
  const std::lock_guard lock(mutex_);
  if (phase_.empty()) return;
  draw(1.0);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  phase_.clear();
}

void ProgressLine::draw(double share) {
  fmt::print(stderr, "\r{}: {} {:3.0f}%", what_, phase_, 100 * share);
  std::fflush(stderr);
}

void ProgressLine::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(200));
    if (stop_ || phase_.empty()) continue;
    const double share =
        static_cast<double>(done_.load(std::memory_order_relaxed)) / static_cast<double>(total_);
    draw(std::min(share, 0.99));
  }
}

}  // namespace tp::app
