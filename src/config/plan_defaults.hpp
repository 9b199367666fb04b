#pragma once
// The [plan] config section as one typed value: the framework `plan` assumes without --framework,
// and the run's host side on the pool (the training process, a dataset held in RAM, DataLoader
// workers, whether the checkpoint's file pages stay cached). The member initialisers below are the
// only place these defaults are written (measured, docs/estimator.md "The whole pool"): the key
// table (config_keys.cpp) prints them as the keys' default text, and plan::RunConfig holds a
// PlanHostSide as its host side (plan/estimator.hpp).

#include <cstdint>
#include <string>

#include "base/result.hpp"
#include "config/config.hpp"

namespace sparkops::config {

// The run's host side on a unified machine: outside torch's allocator but in the same pool.
struct PlanHostSide {
  // plan.host_process: Python + torch + CUDA libraries resident (RSS), 1,524,160 KiB.
  std::uint64_t process_bytes = 1524160ULL * 1024;
  std::uint64_t dataset_bytes = 0;  // plan.dataset: a dataset in RAM (Arrow datasets are mmap'd)
  // plan.dataloader_workers: transformers TrainingArguments' dataloader_num_workers default.
  std::uint64_t dataloader_workers = 0;
  // plan.worker_bytes: anonymous RSS of one forked DataLoader worker, 261,064 KiB.
  std::uint64_t worker_bytes = 261064ULL * 1024;
  // plan.page_cache: resident | dropped (the checkpoint's file pages stay cached after loading).
  bool page_cache_resident = true;
};

struct PlanDefaults {
  std::string framework = "hf";  // plan.framework (checked by plan, which knows them)
  std::string transformers;      // plan.transformers: a release; empty: the framework's
  PlanHostSide host;
};

// The plan.* values in effect (defaults, files, flags). An error names the key and the value:
// plan.page_cache other than resident or dropped.
Result<PlanDefaults> plan_defaults(const Config& config);

}  // namespace sparkops::config
