#pragma once
// The device's capacity in the training replay: what PyTorch's caching allocator can cudaMalloc
// before the call fails, and what a failure does (docs/estimator.md "The device's capacity").
//
// c10/cuda/CUDACachingAllocator.cpp (torch 2.x) DeviceCachingAllocator::malloc: a request no
// cached block serves goes to alloc_block (cudaMalloc); when that fails, release_cached_blocks
// (synchronize_and_free_events, then release_blocks: cudaFree of every cached segment no tensor
// uses) and alloc_block again, counted in memory_stats()["num_alloc_retries"]; when that fails
// too, OutOfMemoryError. So max_memory_reserved never exceeds what cudaMalloc can take, and a run
// whose tensors fit but whose cache would not goes on, paying a device synchronization and the
// cudaFree/cudaMalloc of the released segments each time.

#include <cstdint>
#include <optional>
#include <string>

#include "host/pool.hpp"
#include "plan/estimator.hpp"

namespace sparkops::plan {

// What sits beside the allocator on the memory cudaMalloc draws from.
struct BesideAllocator {
  std::uint64_t cuda_context = 0;  // driver context and loaded kernels
  std::uint64_t nccl_buffers = 0;  // the communicator's cudaMalloc'd buffers (several ranks)
  // On a unified machine only (RunConfig::reach_unified): the process's host side, the paged
  // optimizer states (cudaMallocManaged) and the pinned host buffers of offloaded checkpointing.
  // On a discrete GPU they are host memory, or (paged states) pages the driver evicts to the
  // host when the device runs short.
  std::uint64_t host_side = 0;
  std::uint64_t paged = 0;
  std::uint64_t pinned = 0;
};

// Where cudaMalloc's reach comes from (RunConfig::device_reach_bytes, reach_unified):
// - a discrete GPU read from the machine (`device`: --budget auto): --device-total when given,
//   else the card's free memory (NVML: total less what other processes hold);
// - a unified machine (`pool` read, no discrete GPU): what the kernel can give the process,
//   PoolView::effective_available_bytes (MemAvailable, or a lower cgroup headroom), or
//   --device-total when lower; the host side then comes out of it too;
// - neither (--budget given): --device-total, read as a discrete device's; else unknown (0).
void set_device_reach(RunConfig& run, std::optional<std::uint64_t> device_total,
                      const std::optional<host::DeviceMemory>& device,
                      const std::optional<host::PoolView>& pool);
// `run` with the reach of `from` (a preset alternative planned on the same machine).
RunConfig with_reach(RunConfig run, const RunConfig& from);

// The caching allocator's capacity: run.device_reach_bytes less what sits beside the allocator
// (floor 0); kNoCapacity (plan/reserve_model.hpp) when the reach is unknown (0).
std::uint64_t allocator_capacity(const RunConfig& run, const BesideAllocator& beside);

// One line for the plan when the capacity shaped the figures: the allocated peak does not fit
// (out of memory), or the replay released the cache to stay within it. nullopt otherwise.
std::optional<std::string> capacity_note(const Estimate& e, const RunConfig& run);

}  // namespace sparkops::plan
