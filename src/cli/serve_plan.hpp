#pragma once
// The serving side of the plan flags (docs/serving.md): `--serve ENGINE` with the engine's flags,
// and `--beside CMD` / `--beside-running`, shared by `plan`, `procs --plan` and `watch`'s
// pre-flight so all three give the same verdict.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.hpp"
#include "cli/plan_flags.hpp"
#include "config/config.hpp"
#include "plan/plan.hpp"
#include "serving/beside.hpp"
#include "serving/serving_plan.hpp"
#include "serving/serving_render.hpp"

namespace sparkops::cli {

struct ServingContext {
  std::uint64_t device_total_bytes = 0;
  std::uint64_t budget_bytes = 0;
  bool budget_given = false;
  std::optional<PoolView> pool;
  ScanOptions scan;  // device total and the heavy rules, as procs uses them
};

// The pool, budget, device total and heavy rules for the serving flags (--budget, --overhead,
// --device-total, config procs.*). Errors name the flag.
Result<ServingContext> serving_context(const PlanFlags& flags, const plan::PlanEnvironment& env,
                                       const Config& config);

// The engine words: --serve-args split as a shell would, then the words after `--`.
Result<serving::CommandLine> engine_words(const PlanFlags& flags);

// `plan MODEL --serve ENGINE ...`: the serving plan of MODEL.
Result<serving::ServingPlan> serving_plan_from_flags(const PlanFlags& flags,
                                                     const plan::PlanEnvironment& env,
                                                     const ServingContext& sc);

// Every --beside command as a planned job; a server command whose model resolves is sized by its
// own serving plan (a model that does not resolve leaves it sized by its cap, with a note).
Result<std::vector<serving::PlannedJob>> beside_jobs(const PlanFlags& flags,
                                                     const plan::PlanEnvironment& env,
                                                     const ServingContext& sc,
                                                     std::vector<std::string>& notes);

// The renderers live with the data in serving/serving_render.hpp; the commands that take these
// flags call them by their short names.
using serving::beside_to_json;
using serving::render_beside_text;
using serving::render_serving_text;
using serving::serving_to_json;

}  // namespace sparkops::cli
