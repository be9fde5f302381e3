// Contract failure reporting: the one place the support layer writes to stderr (then aborts).
#include <tilepipe/support/assert.hpp>

#include <cstdio>
#include <cstdlib>

namespace tp::detail {

void contract_failed(const char* kind, const char* expr, const char* file, int line) noexcept {
  std::fprintf(stderr, "tilepipe: %s violated: %s at %s:%d\n", kind, expr, file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace tp::detail
