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

// The flag text: the planned run's (plan/plan_args.hpp, parsed by plan::plan_input) and the
// serving flags.
struct PlanFlags : plan::PlanArgs {
  // Serving (docs/serving.md): --serve ENGINE with the engine's own flags in --serve-args (or,
  // for `plan`, after `--`), and the jobs to judge the plan beside.
  std::string serve;                      // vllm | sglang | ollama | llamacpp | trtllm
  std::string serve_args;                 // "--max-model-len 32768 --gpu-memory-utilization 0.5"
  std::vector<std::string> engine_words;  // `plan ... --serve vllm -- --max-model-len 32768`
  std::vector<std::string> beside;        // command lines, as the user would run them
  bool beside_running = false;            // judge against what `procs` sees now
  std::string device_total;               // what CUDA reports as the device total
};

// Registers the flags on `cmd` (MODEL positional included) with their defaults in --help.
void add_plan_flags(CLI::App* cmd, PlanFlags& flags);

// The serving flags among them, for serving/serving_flags.hpp.
serving::ServingFlags serving_flags_of(const PlanFlags& flags);

}  // namespace sparkops::cli
