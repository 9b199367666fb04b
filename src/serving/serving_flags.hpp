#pragma once
// The serving side of the plan flags (docs/serving.md): `--serve ENGINE` with the engine's flags,
// and `--beside CMD` / `--beside-running`, shared by `plan`, `procs --plan`, `oom --serve` and
// `watch`'s pre-flight so all of them give the same verdict. The flags arrive as the user typed
// them; every error names the flag.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "host/pool.hpp"
#include "plan/plan.hpp"
#include "plan/plan_args.hpp"
#include "serving/beside.hpp"
#include "serving/serving_plan.hpp"
#include "workloads/coexistence.hpp"
#include "workloads/scan.hpp"

namespace sparkops::serving {

// The flags' text (cli/plan_flags.hpp holds them with the plan flags, whose --budget and
// --overhead serving_context reads).
struct ServingFlags {
  std::string serve;       // --serve ENGINE: vllm | sglang | ollama | llamacpp | trtllm
  std::string serve_args;  // --serve-args "--max-model-len 32768 --gpu-memory-utilization 0.5"
  std::vector<std::string> engine_words;  // the words after `--` (`plan ... --serve vllm -- ...`)
  std::vector<std::string> beside;        // --beside CMD (repeatable), as the user would run them
  bool beside_running = false;            // --beside-running: judge against what `procs` sees
};

struct ServingContext {
  std::uint64_t device_total_bytes = 0;
  std::uint64_t budget_bytes = 0;
  bool budget_given = false;
  std::optional<host::PoolView> pool;
  // A discrete GPU's memory (env.device_memory: NVML reports it, --budget auto): the jobs live
  // there, not in the pool.
  std::optional<host::DeviceMemory> device;
  // The GPU reading `device` came from: the card's per-process memory, for the running workloads
  // a --beside verdict scans (empty: none read; they then count by their claims only).
  std::vector<gpu::GpuSnapshot> gpu_snapshots;
  workloads::ScanOptions
      scan;  // device total, pool, USER_HZ and the heavy rules, as procs uses them
};

// The pool, budget, device total and heavy rules for the serving flags and the plan flags'
// --budget, --overhead and --device-total (`budget`); `rules` from config procs.*. With
// env.device_memory (a discrete GPU) the device total is the card's (unless --device-total),
// --budget auto is its free memory, and the scan options size workloads on the card
// (workloads/coexistence.hpp scan_options_in).
Result<ServingContext> serving_context(const ServingFlags& flags, const plan::PlanArgs& budget,
                                       const plan::PlanEnvironment& env,
                                       const workloads::HeavyRules& rules);

// The engine words: --serve-args split as a shell would, then the words after `--`.
Result<CommandLine> engine_words(const ServingFlags& flags);

// `plan MODEL --serve ENGINE ...`: the serving plan of the model in `input` (the plan flags as a
// PlanInput; its error, if any, is reported after the engine's flags are checked).
Result<ServingPlan> serving_plan_from_flags(const ServingFlags& flags,
                                            const Result<plan::PlanInput>& input,
                                            const plan::PlanEnvironment& env,
                                            const ServingContext& sc);

// `--serve ENGINE` with MODEL from the flags alone: serving_context, then serving_plan_from_flags
// on the plan flags' run (`plan --serve`, `oom --serve`, `procs --plan --serve`).
struct PlannedServer {
  ServingContext context;
  ServingPlan plan;
};
Result<PlannedServer> plan_server(const ServingFlags& flags, const plan::PlanArgs& args,
                                  const plan::PlanEnvironment& env,
                                  const workloads::HeavyRules& rules);

// Every --beside command as a planned job; a server command whose model resolves is sized by its
// own serving plan (a model that does not resolve leaves it sized by its cap, with a note).
Result<std::vector<PlannedJob>> beside_jobs(const ServingFlags& flags,
                                            const plan::PlanEnvironment& env,
                                            const ServingContext& sc,
                                            std::vector<std::string>& notes);

// What runs now, for a --beside verdict.
struct BesideNow {
  const workloads::WorkloadScan* scanned =
      nullptr;             // the caller's own scan (procs: GPU processes joined)
  bool scan_host = false;  // no scan given: scan the host's workloads here (--beside-running,
                           // watch's pre-flight); false and none given: nothing counts as running
};

struct Beside {
  BesideVerdict verdict;
  std::vector<PlannedJob> jobs;  // the --beside commands, as planned
};

// The space a --beside verdict is judged in (workloads/coexistence.hpp): sc.device's memory, else
// the live pool; nullopt when neither was read.
std::optional<workloads::CoexistenceSpace> beside_space(const ServingContext& sc);

// The one --beside question, asked the same way by `plan`, `procs --plan` and watch's pre-flight:
// every --beside command planned (beside_jobs), next to what runs now, and the verdict for `job`
// in beside_space (status and procs judge in the same one; without it the error says so). Errors
// name the flag.
Result<Beside> beside_from_flags(const ServingFlags& flags, const plan::PlanEnvironment& env,
                                 const ServingContext& sc, const NewJob& job, BesideNow now,
                                 const workloads::CoexistenceOptions& coexistence,
                                 std::vector<std::string>& notes);

}  // namespace sparkops::serving
