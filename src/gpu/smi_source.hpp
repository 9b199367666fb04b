#pragma once
// GpuSource over the nvidia-smi CLI, the fallback when libnvidia-ml cannot be loaded. Each
// snapshot() runs two queries (argv, no shell; bounded output; timeout):
//   nvidia-smi --query-gpu=<kSmiQueryGpuFields> --format=csv,noheader,nounits
//   nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory
//   --format=csv,noheader,nounits
// A field the driver does not know (`Field "x" is not a valid field to query.`, exit status 2) is
// dropped and the query retried, so it only makes that figure absent; for
// clocks_event_reasons.active (drivers before 535) the older name clocks_throttle_reasons.active
// is tried first. The reduced list is kept from then on. Throttle counters and margin temperature
// are not in the CSV: they stay absent. Construction runs the GPU query once to list devices and
// never fails: a failing nvidia-smi is state init_failed with its first output line. A run that
// outlives `timeout` is killed and turns the state to hung (the next snapshot asks again); the
// caller's watchdog (watchdog_source.hpp) bounds the wait when even the kill does not end it.

#include <chrono>
#include <memory>
#include <string>

#include "gpu/gpu_source.hpp"

namespace sparkops::gpu {

struct SmiSourceOptions {
  std::string executable;  // absolute path to nvidia-smi (see find_on_path)
  // nvidia-smi is killed after this; the watchdog around the source answers "hung" long before.
  std::chrono::milliseconds timeout{60'000};
  std::size_t max_output_bytes = 4 * 1024 * 1024;
};

std::unique_ptr<GpuSource> make_smi_gpu_source(const SmiSourceOptions& options);

}  // namespace sparkops::gpu
