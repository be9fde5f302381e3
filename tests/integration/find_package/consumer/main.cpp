// Plans seed 000's configuration through the installed tilepipe package; prints the steps.
#include <tilepipe/plan/plan.hpp>

#include <cstdio>

int main() {
  tp::plan::PlanRequest r;
  r.size = {12, 12, 524288};
  r.deps = tp::plan::DependenceMatrix::unit(3);
  r.tile_height = 1024;
  r.nodes = 9;
  auto plan = tp::plan::Plan::make(r);
  if (!plan) {
    std::fprintf(stderr, "%s\n", plan.error().message.c_str());
    return 1;
  }
  std::printf("steps %lld\n", static_cast<long long>(plan->steps()));
  return plan->steps() == 520 ? 0 : 1;
}
