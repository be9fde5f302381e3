// tp::sim::simulate: the public entry of the simulator (the engine is simulator.hpp/.cpp).
#include <tilepipe/sim/simulate.hpp>

#include "simulator.hpp"

namespace tp::sim {

Expected<SimResult> simulate(const plan::Plan& plan, const model::Machine& machine,
                             const SimOptions& options) {
  auto prediction = model::predict(plan, machine, options.model);
  if (!prediction) return Unexpected{prediction.error()};
  detail::Simulator sim(plan, machine, options, *prediction);
  return sim.run();
}

}  // namespace tp::sim
