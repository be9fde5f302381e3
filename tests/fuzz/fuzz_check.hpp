// Oracles shared by the fuzz targets: a failed check prints what broke and aborts (a finding).
#pragma once

#include <tilepipe/support/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace tp::fuzz {

/// Aborts with `what` when `ok` is false: libFuzzer records the input as a crash.
inline void check(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

/// A reader's error on arbitrary input must be the user's (exit 2) and say something.
inline void check_user_error(const Error& e) {
  check(e.is_user_error(), e.message);
  check(!e.message.empty(), "an empty error message");
}

}  // namespace tp::fuzz
