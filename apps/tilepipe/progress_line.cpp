#include "progress_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <new>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

namespace tp::app {

void draw_share(std::string_view label, double share) {
  fmt::print(stderr, "\r{} {:3.0f}%", label, 100 * share);
  std::fflush(stderr);
}

void draw_bar(std::string_view name, int done, int total, std::string_view what, int what_width) {
  constexpr int width = 30;
  const int filled = total > 0 ? std::clamp(done * width / total, 0, width) : width;
  const std::string bar = std::string(static_cast<std::size_t>(filled), '#') +
                          std::string(static_cast<std::size_t>(width - filled), '.');
  if (::isatty(STDERR_FILENO) == 1) {
    fmt::print(stderr, "\r{} [{}] {:3}/{} {:<{}.{}}{}", name, bar, done, total, what, what_width,
               what_width, done == total ? "\n" : "");
  } else {
    fmt::print(stderr, "{} [{}] {}/{} {}\n", name, bar, done, total, what);
  }
  std::fflush(stderr);
}

namespace {

using Counter = std::atomic<std::int64_t>;
static_assert(Counter::is_always_lock_free);  // so processes may share it

// One counter in a page of its own, shared with the processes forked after it; nullptr when the
// mapping fails.
Counter* shared_counter() noexcept {
  void* page =
      ::mmap(nullptr, sizeof(Counter), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return page == MAP_FAILED ? nullptr : new (page) Counter(0);
}

}  // namespace

ProgressLine::ProgressLine(std::string what, bool show)
    : what_(std::move(what)),
      show_(show),
      shared_(shared_counter()),
      // Without a shared page, forked ranks leave the display at 0% until their phase ends.
      done_(shared_ != nullptr ? shared_ : &own_) {}

ProgressLine::~ProgressLine() {
  if (thread_.joinable()) {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
      if (!phase_.empty()) std::fputc('\n', stderr);  // a phase cut short (an error) ends its line
    }
    wake_.notify_all();
    thread_.join();
  }
  if (shared_ != nullptr) ::munmap(shared_, sizeof(Counter));
}

void ProgressLine::start(std::string phase, std::int64_t total) {
  finish();
  done_->store(0, std::memory_order_relaxed);
  if (!show_) return;
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
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
  draw_share(what_ + ": " + phase_, share);
}

void ProgressLine::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(200));
    if (stop_ || phase_.empty()) continue;
    const double share =
        static_cast<double>(done_->load(std::memory_order_relaxed)) / static_cast<double>(total_);
    draw(std::min(share, 0.99));
  }
}

}  // namespace tp::app
