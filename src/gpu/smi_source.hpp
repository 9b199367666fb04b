#pragma once
// GpuSource over the nvidia-smi CLI, the fallback when libnvidia-ml cannot be loaded. Each
// snapshot() runs two queries (argv, no shell; bounded output; timeout):
//   nvidia-smi --query-gpu=<kSmiQueryGpuFields> --format=csv,noheader,nounits
//   nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory
//   --format=csv,noheader,nounits
// When nvidia-smi rejects clocks_event_reasons.active (drivers before 535) the older name
// clocks_throttle_reasons.active is used from then on. Throttle counters and margin temperature
// are not in the CSV: they stay absent. Construction runs the GPU query once to list devices and
// never fails: a failing nvidia-smi is state init_failed with its first output line.

#include <chrono>
#include <memory>
#include <string>

#include "gpu/gpu_source.hpp"

namespace sparkops {

struct SmiSourceOptions {
  std::string executable;  // absolute path to nvidia-smi (see find_on_path)
  std::chrono::milliseconds timeout{10'000};
  std::size_t max_output_bytes = 4 * 1024 * 1024;
};

std::unique_ptr<GpuSource> make_smi_gpu_source(const SmiSourceOptions& options);

}  // namespace sparkops
