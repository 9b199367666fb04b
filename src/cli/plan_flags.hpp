#pragma once
// The `plan` flags, shared by every command that plans a run (plan, oom, watch, procs --plan), so
// they all accept exactly the same spelling and defaults. Only flags are registered here: the text
// is parsed by plan/plan_args.hpp, the serving flags are planned by serving/serving_flags.hpp.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/result.hpp"
#include "plan/plan_args.hpp"
#include "serving/serving_flags.hpp"

namespace sparkops::cli {

// The flag text: the planned run's (plan/plan_args.hpp, parsed by plan::plan_input; --budget,
// --overhead and --device-total are its) and the serving flags (serving/serving_flags.hpp:
// --serve, --serve-args, the engine's words after `--`, --beside, --beside-running).
struct PlanFlags : plan::PlanArgs {
  serving::ServingFlags serving;
};

// Registers the flags on `cmd` (MODEL positional included) with their defaults in --help.
void add_plan_flags(CLI::App* cmd, PlanFlags& flags);

}  // namespace sparkops::cli
