#pragma once
// The one verdict for a combination of jobs in one memory (docs/serving.md "Beside"): a new job
// (a planned training run or a planned server) next to command lines the user intends to run
// (`--beside "vllm serve ORG/NAME --gpu-memory-utilization 0.5"`) and/or what runs now. Each
// command line goes through the classifier and cap parser `procs` uses (workloads/classify.hpp,
// workloads/caps.hpp), becomes a Workload judged by the same rule (workloads/scan.hpp
// judge_workload), and the combination gets workloads/coexistence.hpp's verdict in the
// CoexistenceSpace status and procs judge in: the unified pool, or a discrete GPU's memory where
// the training budget is it (there every job, planned or running, is sized by what it holds on the
// card). `plan --beside`, `plan --serve --beside-running`, `procs --plan --beside` and watch's
// pre-flight all call this.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/pool.hpp"
#include "serving/serving_plan.hpp"
#include "workloads/coexistence.hpp"
#include "workloads/scan.hpp"

namespace sparkops::serving {

// A command line the user means to run beside the new job.
struct PlannedJob {
  std::string command;                 // as given
  workloads::Workload workload;        // pid 0; classified, capped, judged
  std::optional<ServingPlan> serving;  // when the command is a server whose model resolved
  std::string sizing;                  // how its bytes were found ("serving plan", "its cap")
};

// Turns one command line into a planned workload. `serving` (optional) is the serving plan of the
// model the command names; without it a server is sized by its cap alone, and a trainer or an
// unknown program of unknown size is judged heavy (uncapped, size unknown). With
// options.sized_on_gpu the planned bytes are on the GPU (gpu_bytes as well as actual_bytes). An
// empty command, an unterminated quote, or a program the classifier does not know is an Error
// naming the command.
Result<PlannedJob> planned_job(std::string_view command, const std::optional<ServingPlan>& serving,
                               const workloads::ScanOptions& options);

// The new job, judged as a workload too: which job is heavy is part of the answer.
struct NewJob {
  std::string label;  // "plan: Llama-3.1-8B lora" / "plan: vLLM Qwen3-32B"
  std::uint64_t need_bytes = 0;
  workloads::Workload workload;  // pid 0
};
NewJob new_training_job(std::string label, std::uint64_t need_bytes,
                        const workloads::ScanOptions& options);
NewJob new_serving_job(std::string label, const ServingPlan& plan,
                       const workloads::ScanOptions& options);

struct CapAdvice {
  std::string label;
  std::string flag;  // "--gpu-memory-utilization 0.45"
  std::string why;
};

struct BesideVerdict {
  workloads::CoexistenceVerdict verdict;
  std::vector<std::string> heavy;    // "vLLM (planned): uncapped: claims 107.7 GiB at default 0.9"
  std::vector<CapAdvice> cap_first;  // caps that would make the combination fit
  std::string summary;
};

// `running` may be null (nothing counted as running). The planned jobs join the running ones
// (claim at their cap, actual from their serving plan); the new job's need is checked against the
// room they leave in `space`, under the one-heavy-job rule. `options` are the scan options for
// that space (workloads/coexistence.hpp scan_options_in).
BesideVerdict beside_verdict(const workloads::WorkloadScan* running,
                             const std::vector<PlannedJob>& planned, const NewJob& job,
                             const workloads::CoexistenceSpace& space,
                             const workloads::ScanOptions& options,
                             const workloads::CoexistenceOptions& coexistence = {});

}  // namespace sparkops::serving
