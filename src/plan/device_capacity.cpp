#include "plan/device_capacity.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/checked_cast.hpp"
#include "base/units.hpp"
#include "plan/reserve_model.hpp"

namespace sparkops::plan {

void set_device_reach(RunConfig& run, std::optional<std::uint64_t> device_total,
                      const std::optional<host::DeviceMemory>& device,
                      const std::optional<host::PoolView>& pool) {
  run.device_reach_bytes = 0;
  run.reach_unified = false;
  if (device) {
    run.device_reach_bytes = device_total.value_or(device->free_bytes);
  } else if (pool) {
    run.device_reach_bytes = pool->effective_available_bytes;
    if (device_total) run.device_reach_bytes = std::min(run.device_reach_bytes, *device_total);
    run.reach_unified = true;
  } else if (device_total) {
    run.device_reach_bytes = *device_total;
  }
}

RunConfig with_reach(RunConfig run, const RunConfig& from) {
  run.device_reach_bytes = from.device_reach_bytes;
  run.reach_unified = from.reach_unified;
  return run;
}

std::uint64_t allocator_capacity(const RunConfig& run, const BesideAllocator& b) {
  if (run.device_reach_bytes == 0) return kNoCapacity;
  std::uint64_t beside = saturating_add(b.cuda_context, b.nccl_buffers);
  if (run.reach_unified)
    beside = saturating_add(beside, saturating_add(b.host_side, saturating_add(b.paged, b.pinned)));
  return run.device_reach_bytes > beside ? run.device_reach_bytes - beside : 0;
}

std::optional<std::string> capacity_note(const Estimate& e, const RunConfig& run) {
  if (run.device_reach_bytes == 0) return std::nullopt;
  const std::string reach = run.reach_unified
                                ? "what the kernel can give the process (MemAvailable)"
                                : "the device's memory CUDA reports";
  const std::string beside = run.reach_unified
                                 ? "the CUDA context, the host side, paged and pinned memory"
                                 : "the CUDA context";
  if (e.out_of_memory) {
    return fmt::format(
        "out of memory on the device: the allocated peak ({} GiB), or the tensors after a cache "
        "release, do not fit in the {} GiB the caching allocator can take ({} {} GiB less {}{}): "
        "torch raises OutOfMemoryError",
        format_gib(e.train_peak_allocated_bytes), format_gib(e.allocator_capacity_bytes), reach,
        format_gib(run.device_reach_bytes), beside, e.terms.nccl_buffers > 0 ? " and NCCL" : "");
  }
  if (e.alloc_retries == 0) return std::nullopt;
  std::string where =
      "the run goes on, more slowly: each release synchronizes the device and cudaFrees the "
      "cached segments, which later steps cudaMalloc again";
  if (run.reach_unified)
    where =
        "on a unified machine cudaMalloc fails only when the kernel has no pages left: the cache "
        "first takes the overhead the budget keeps for the OS, and the host reclaims, swaps or "
        "OOM-kills before the release comes";
  const std::string times =
      e.alloc_retries == 1 ? "once" : fmt::format("{} times", e.alloc_retries);
  return fmt::format(
      "the tensors fit the device, but the caching allocator reaches its capacity ({} GiB: "
      "{} {} GiB less {}{}) and releases its cache {} in the replayed steps "
      "(release_cached_blocks, then a retry: num_alloc_retries); max_memory_reserved stops at "
      "{} GiB; {}",
      format_gib(e.allocator_capacity_bytes), reach, format_gib(run.device_reach_bytes), beside,
      e.terms.nccl_buffers > 0 ? " and NCCL" : "", times, format_gib(e.train_peak_reserved_bytes),
      where);
}

}  // namespace sparkops::plan
