// Test-only fault injection: pthread_create fails with EAGAIN once a budget of thread starts is
// spent (LD_PRELOAD it, or link it into a test). Budget: TILEPIPE_FAULT_THREADS=N, or
// tp_fault_set_thread_budget(N) from a test; unset or negative: unlimited. Forked children
// inherit what is left of the budget. TILEPIPE_FAULT_THREADS_FROM=text: only the threads started
// from a shared object whose path holds `text` count (libstdc++: std::thread, i.e. tilepipe's
// own threads, not those of the MPI library).
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

constexpr long unread = -2;
std::atomic<long> budget{unread};

long budget_from_environment() {
  const char* text = std::getenv("TILEPIPE_FAULT_THREADS");
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  return *end == '\0' ? n : -1;
}

/// True when one more thread may start (and takes it from the budget).
bool take_thread() {
  long b = budget.load(std::memory_order_relaxed);
  if (b == unread) {
    const long from_env = budget_from_environment();
    budget.compare_exchange_strong(b, from_env, std::memory_order_relaxed);
    b = budget.load(std::memory_order_relaxed);
  }
  while (b >= 0) {
    if (b == 0) return false;
    if (budget.compare_exchange_weak(b, b - 1, std::memory_order_relaxed)) return true;
  }
  return true;
}

/// True when a thread started from `caller` counts against the budget.
bool counts(void* caller) {
  const char* from = std::getenv("TILEPIPE_FAULT_THREADS_FROM");
  if (from == nullptr || *from == '\0') return true;
  Dl_info info{};
  return ::dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, from) != nullptr;
}

}  // namespace

extern "C" {

/// Threads that may still start in this process; negative: unlimited.
void tp_fault_set_thread_budget(long threads) {
  budget.store(threads < 0 ? -1 : threads, std::memory_order_relaxed);
}

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                   void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto real = reinterpret_cast<Create>(::dlsym(RTLD_NEXT, "pthread_create"));
  if (counts(__builtin_return_address(0)) && !take_thread()) return EAGAIN;
  return real(thread, attr, start, arg);
}

}  // extern "C"
