#pragma once
// Pure renderers for a serving plan and the beside verdict (`plan --serve`, `--beside`, `procs
// --plan`, `watch`'s pre-flight): the text block and its JSON. Pinned by golden files under
// tests/fixtures/golden/.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serving/beside.hpp"
#include "serving/serving_plan.hpp"

namespace sparkops::serving {

std::string render_serving_text(const ServingPlan& p);
nlohmann::json serving_to_json(const ServingPlan& p);
std::string render_beside_text(const BesideVerdict& v, const std::vector<PlannedJob>& jobs);
nlohmann::json beside_to_json(const BesideVerdict& v, const std::vector<PlannedJob>& jobs);

}  // namespace sparkops::serving
