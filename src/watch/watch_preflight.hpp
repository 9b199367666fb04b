#pragma once
// `sparkops watch`'s pre-flight on the error stream: the status table and its warnings, the plan
// when one was asked for, and (--beside CMD) the verdict `plan --beside --beside-running` gives
// (docs/serving.md). A run the plan or that verdict says cannot start is refused unless forced.

#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/console.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "plan/plan.hpp"
#include "plan/plan_args.hpp"
#include "serving/serving_flags.hpp"
#include "status/status_report.hpp"
#include "workloads/coexistence.hpp"

namespace sparkops::watch {

struct PreflightInput {
  host::HostRoot root;
  status::StatusOptions status;
  const plan::PlanResult* plan = nullptr;          // null: no plan flags
  const plan::PlanEnvironment* env = nullptr;      // the plan's environment (with `plan`)
  const serving::ServingFlags* serving = nullptr;  // --beside commands (with `plan`)
  const plan::PlanArgs* budget = nullptr;          // their --budget and --overhead (with serving)
  workloads::HeavyRules heavy;                     // config procs.*
  workloads::CoexistenceOptions coexistence;       // config procs.tight_margin
  bool force = false;                              // --force: launch what would be refused
  // Set: every warning the pre-flight prints (the status notes and warnings, the heavy workloads,
  // a launch forced past a refusal) is appended here, for the summary's `notes`.
  std::vector<std::string>* warnings = nullptr;
};

// Prints the pre-flight on io.err. Returns false when the launch is refused (the plan says
// wont_fit, or beside the other jobs this one must wait, without --force; or the --beside
// commands cannot be judged).
bool run_preflight(const Console& io, const PreflightInput& in, gpu::GpuSource& gpu, Clock& clock);

}  // namespace sparkops::watch
