#pragma once
// What `sparkops oom` tells the user: notes about the failure (a load transient, a QLoRA
// dequantization spike, a cgroup limit, a server's admission rule) and the next ladder step with
// exact commands and config changes. Concrete values come from the planner (plan/plan.hpp) when
// the run was described with the plan flags. Pure: no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/pool.hpp"
#include "ladder/ladder.hpp"
#include "ladder/oom_report.hpp"
#include "plan/plan.hpp"
#include "plan/plan_args.hpp"
#include "serving/server_log.hpp"
#include "serving/serving_plan.hpp"

namespace sparkops::ladder {

// The run as the planner sees it.
struct PlannedRun {
  std::string model_arg;  // MODEL as the user typed it, for the commands we print
  plan::ModelShape shape;
  plan::RunConfig run;
  std::uint64_t budget_bytes = 0;
  std::optional<std::uint64_t> largest_shard_bytes;
  plan::Estimate estimate;  // of `run`
};

// MODEL as the plan flags hold it, for the commands we print: "--params N" for a bare count.
std::string model_arg_of(const plan::PlanArgs& args);

// The planned run of `plan` (oom's plan flags, watch's pre-flight plan).
PlannedRun planned_run_of(const plan::PlanResult& plan, std::string model_arg);

struct StepAdvice {
  LadderStep step = LadderStep::flush;
  std::string action;                      // one line: what to do
  std::vector<std::string> commands;       // exact commands to run
  std::vector<std::string> changes;        // exact config changes (trainer keys)
  std::vector<std::string> details;        // estimates and reasons
  std::optional<plan::RunConfig> new_run;  // the planner's values for this step
};

struct OomAdvice {
  std::vector<std::string> notes;  // about this failure, before the step
  std::optional<StepAdvice> next;  // nullopt: resolved, exhausted, or not an OOM
  bool ladder_applies = true;      // false for not_oom
};

struct AdviceInput {
  std::optional<OomReport> report;  // nullopt: no log given, only the ladder position
  LadderState state;
  LadderContext ctx;
  std::optional<PlannedRun> planned;
  std::optional<host::PoolView> pool;  // for the flush step's "would give back"
  // A server failure (ctx.server): the engine, what its text says, its serving plan if described.
  std::optional<serving::ServeEngine> server_engine;
  serving::ServerLogFacts server_facts;
  std::optional<serving::ServingPlan> serving;
  std::string model_arg;
};

OomAdvice advise_oom(const AdviceInput& in);

// The advice for one step (used by advise_oom and by tests).
StepAdvice advise_step(LadderStep s, const std::optional<PlannedRun>& planned,
                       const std::optional<host::PoolView>& pool);

}  // namespace sparkops::ladder
