// The plan as JSON (the documented fields of `tilepipe plan --json`) and as a readable table.
#pragma once

#include <tilepipe/model/choose.hpp>
#include <tilepipe/model/machine.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/plan/transform.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace tp::app {

/// dims, size, tile, tile_space, map_dim (1-based), mesh, cpu_grid, schedule, grouping,
/// schedule_vector, steps, legal and the other fields documented in docs/cli.md.
nlohmann::ordered_json plan_to_json(const plan::Plan& plan, const std::string& kernel);

/// A human-readable multi-line summary of the plan.
std::string plan_to_text(const plan::Plan& plan, const std::string& kernel);

/// "I of P nodes and J of P m CPUs have no row of tiles and run none" (plan and run reports).
std::string idle_text(const plan::Plan& plan);

/// Adds "loop_nest": the original size, dependences and point count, the transformation's rows
/// and the transformed space's lower corner (a plan over a transformed space).
void add_transform_json(nlohmann::ordered_json& json, const plan::TransformedSpace& t);

/// The rows for a transformed space: the loop nest, its dependences, the transformation.
std::string transform_to_text(const plan::TransformedSpace& t);

/// Adds the cost model's fields (with --machine): machine, predicted_s, step_s, step_time,
/// chosen_by, reason (docs/model.md, "tilepipe plan --machine").
void add_prediction_json(nlohmann::ordered_json& json, const model::Choice& choice,
                         const model::Machine& machine);

/// The rows that --machine adds to the table: machine, step time and its formula, predicted
/// time, and who chose the tile and scheme.
std::string prediction_to_text(const model::Choice& choice, const model::Machine& machine,
                               std::int64_t cpus);

}  // namespace tp::app
