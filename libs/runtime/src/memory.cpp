// The door's memory check: a run on one host must fit its physical memory.
#include <tilepipe/runtime/run.hpp>

#include <fmt/core.h>
#include <unistd.h>

namespace tp::runtime::detail {

Status check_memory(double bytes) {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return {};
  const double have = static_cast<double>(pages) * static_cast<double>(page);
  if (bytes <= have) return {};
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  return fail(
      Errc::out_of_range,
      fmt::format("the run needs about {:.1f} GiB but this machine has {:.1f} GiB of memory",
                  bytes / gib, have / gib));
}

}  // namespace tp::runtime::detail
