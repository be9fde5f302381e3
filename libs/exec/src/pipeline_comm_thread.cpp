// Non-template parts of the communication-thread pipeline: the plan check and the agreement on
// the share.
#include <tilepipe/exec/pipeline.hpp>

#include <algorithm>
#include <cstring>

namespace tp::exec {

Status check_comm_thread(const plan::Plan& plan) {
  if (plan.schedule().grouping().kind() == plan::GroupingKind::vertical) {
    return Unexpected{Error::about(
        "comm_thread", Errc::invalid_argument,
        "runs with hyperplane grouping only (vertical grouping splits every tile among the CPUs "
        "with a barrier per subtile)")};
  }
  return {};
}

namespace detail {

Expected<double> allreduce_min(comm::World& world, double value) {
  constexpr int tag = comm::max_tag - 1;
  const auto bytes = [](double& v) { return std::as_writable_bytes(std::span<double>(&v, 1)); };
  if (world.rank() == 0) {
    double result = value;
    for (int r = 1; r < world.size(); ++r) {
      double v = 0;
      if (auto got = world.recv(r, tag, bytes(v)); !got) return Unexpected{got.error()};
      result = std::min(result, v);
    }
    for (int r = 1; r < world.size(); ++r) {
      if (auto s = world.send(r, tag, std::as_bytes(std::span<const double>(&result, 1))); !s) {
        return Unexpected{s.error()};
      }
    }
    return result;
  }
  if (auto s = world.send(0, tag, std::as_bytes(std::span<const double>(&value, 1))); !s) {
    return Unexpected{s.error()};
  }
  double result = 0;
  if (auto got = world.recv(0, tag, bytes(result)); !got) return Unexpected{got.error()};
  return result;
}

}  // namespace detail
}  // namespace tp::exec
