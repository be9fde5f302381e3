// Last words: the process-wide sink for an error that ends the process (set by the application).
#include <tilepipe/support/last_words.hpp>

#include <atomic>

namespace tp {

namespace {
// Relaxed is enough for the sink: it is set before any rank starts. The flag orders nothing
// else; its exchange alone makes the first caller the only speaker.
std::atomic<LastWordsSink> sink_{nullptr};
std::atomic<bool> spoken_{false};
}  // namespace

void set_last_words_sink(LastWordsSink sink) noexcept {
  sink_.store(sink, std::memory_order_relaxed);
}

bool say_last_words(const Error& error) noexcept {
  const LastWordsSink sink = sink_.load(std::memory_order_relaxed);
  if (sink == nullptr || spoken_.exchange(true, std::memory_order_relaxed)) return false;
  sink(error);
  return true;
}

}  // namespace tp
