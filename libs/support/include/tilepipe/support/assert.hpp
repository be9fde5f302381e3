// Contracts: TP_EXPECTS (preconditions) and TP_ASSERT (invariants) abort with file:line on a bug.
#pragma once

namespace tp::detail {
/// Prints "tilepipe: contract violated: <expr> at <file>:<line>" to stderr and aborts.
[[noreturn]] void contract_failed(const char* kind, const char* expr, const char* file,
                                  int line) noexcept;
}  // namespace tp::detail

#define TP_EXPECTS(cond)         \
  ((cond) ? static_cast<void>(0) \
          : ::tp::detail::contract_failed("precondition", #cond, __FILE__, __LINE__))
#define TP_ASSERT(cond)          \
  ((cond) ? static_cast<void>(0) \
          : ::tp::detail::contract_failed("assertion", #cond, __FILE__, __LINE__))
