// The plan as JSON (the documented fields of `tilepipe plan --json`) and as a readable table.
#pragma once

#include <tilepipe/plan/plan.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace tp::app {

/// dims, size, tile, tile_space, map_dim (1-based), mesh, cpu_grid, schedule, grouping,
/// schedule_vector, steps, legal and the other fields documented in docs/cli.md.
nlohmann::ordered_json plan_to_json(const plan::Plan& plan, const std::string& kernel);

/// A human-readable multi-line summary of the plan.
std::string plan_to_text(const plan::Plan& plan, const std::string& kernel);

}  // namespace tp::app
