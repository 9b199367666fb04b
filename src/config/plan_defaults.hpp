#pragma once
// The [plan] config section as one typed value: the framework `plan` assumes without --framework,
// and the run's host side on the pool (the training process, a dataset held in RAM, DataLoader
// workers, whether the checkpoint's file pages stay cached). The defaults are the key table's
// (config_keys.cpp: measured, docs/estimator.md).

#include <cstdint>
#include <string>

#include "base/result.hpp"
#include "config/config.hpp"

namespace sparkops {

struct PlanDefaults {
  std::string framework;                 // plan.framework (checked by plan, which knows them)
  std::uint64_t host_process_bytes = 0;  // plan.host_process
  std::uint64_t dataset_bytes = 0;       // plan.dataset
  std::uint64_t dataloader_workers = 0;  // plan.dataloader_workers
  std::uint64_t worker_bytes = 0;        // plan.worker_bytes
  bool page_cache_resident = true;       // plan.page_cache: resident | dropped
};

// The plan.* values in effect (defaults, files, flags). An error names the key and the value:
// plan.page_cache other than resident or dropped.
Result<PlanDefaults> plan_defaults(const Config& config);

}  // namespace sparkops
