#pragma once
// What `sparkops watch` does around the run: the pre-flight warnings, and at the end the diagnosis,
// the OOM check with the ladder's next step, the measured anchor and the summary.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/console.hpp"
#include "diagnose/diagnosis.hpp"
#include "host/host_root.hpp"
#include "ladder/oom_report.hpp"
#include "plan/anchors.hpp"
#include "plan/plan.hpp"
#include "status/status_report.hpp"
#include "watch/watch_session.hpp"

namespace sparkops::watch {

// Pre-flight warnings from the status report: free-now far below available (with the flush
// command) and each heavy GPU workload (uncapped or near capacity).
std::vector<std::string> preflight_warnings(const status::StatusReport& report);

// The OOM verdict for a finished job: the classifier over the output's tail; a SIGKILL the watcher
// did not send counts as the kernel's OOM killer (inferred), confirmed (stated) by a kernel-log
// record naming the job's PID when the kernel log is readable. nullopt when it was not an OOM.
std::optional<ladder::OomReport> oom_verdict(const WatchOutcome& outcome,
                                             const host::HostRoot& root);

// The anchor a run measured: the plan's model and run with the peak pool use over the launch
// baseline. nullopt when no peak was measured.
std::optional<plan::Anchor> measured_anchor(const plan::PlanResult& plan,
                                            const WatchOutcome& outcome, std::size_t steps,
                                            SystemTime now);

struct FinishInput {
  const WatchOptions* options = nullptr;
  const WatchOutcome* outcome = nullptr;
  const plan::PlanResult* plan = nullptr;  // null: no plan flags
  std::string model_arg;  // how the plan named its model (MODEL, or "--params N"), for the advice
  diagnose::DiagnoseOptions diagnose;  // analyze.* and thermal.* from the effective config
  host::PoolOptions pool;              // for the OOM advice's pool (read_pool after the run)
  std::filesystem::path anchor_file;   // where a measured anchor is appended; empty: nowhere
  std::string ladder_state;
  bool json = false;
  std::vector<std::string> preflight_warnings;  // PreflightInput::warnings, when it ran
};

// Prints the summary (and the OOM advice) on stderr, writes summary.json, appends the anchor.
void finish_watch(const Console& io, const host::HostRoot& root, const FinishInput& in);

}  // namespace sparkops::watch
