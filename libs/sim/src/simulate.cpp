// tp::sim::simulate: the public entry of the simulator (the engine is simulator.hpp/.cpp).
#include <tilepipe/sim/simulate.hpp>

#include "simulator.hpp"

namespace tp::sim {

Expected<SimResult> simulate(const plan::Plan& plan, const model::Machine& machine,
                             const SimOptions& options) {
  auto prediction = model::predict(plan, machine, options.model);
  if (!prediction) return Unexpected{prediction.error()};
  detail::Simulator sim(plan, machine, options, *prediction);
  auto result = sim.run();
  if (!result) return result;
  // Repeated sweeps (ModelOptions::workload): every rank ends a sweep before any starts the next
  // (the executor's next_sweep), so the run is the simulated sweep repeated; the copying sweeps
  // and the exchange between two sweeps are charged as the model charges them.
  const model::Prediction& p = *prediction;
  result->sweep = result->simulated;
  result->sweeps = p.sweeps;
  result->simulated = result->sweep * static_cast<double>(p.sweeps - p.copy_sweeps) +
                      p.copy_sweep * static_cast<double>(p.copy_sweeps) +
                      p.between * static_cast<double>(p.sweeps - 1);
  return result;
}

}  // namespace tp::sim
