// tp::sim::simulate: the public entry of the simulator (the engine is simulator.hpp/.cpp).
#include <tilepipe/sim/simulate.hpp>

#include "simulator.hpp"

#include <string>

namespace tp::sim {

Expected<SimResult> simulate(const plan::Plan& plan, const model::Machine& machine,
                             const SimOptions& options) {
  if (plan.is_cyclic()) {
    // ADR 0018: the simulator's rank shapes are the block mapping's (one row per CPU).
    return fail(
        Errc::invalid_argument,
        "the simulator does not model the block-cyclic mapping yet (cyclic factors " +
            [&] {
              std::string s;
              for (auto c : plan.cyclic()) s += (s.empty() ? "" : "x") + std::to_string(c);
              return s;
            }() +
            "); simulate a cyclic factor of 1");
  }
  auto prediction = model::predict(plan, machine, options.model);
  if (!prediction) return Unexpected{prediction.error()};
  detail::Simulator sim(plan, machine, options, *prediction);
  return sim.run();
}

}  // namespace tp::sim
