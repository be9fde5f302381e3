// Non-template part of the communication-thread pipeline: the plan check.
#include <tilepipe/exec/pipeline.hpp>

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

}  // namespace tp::exec
