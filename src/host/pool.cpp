#include "host/pool.hpp"

#include <algorithm>

namespace sparkops::host {

std::optional<std::uint64_t> CgroupMemory::headroom_bytes() const {
  if (!max_bytes) return std::nullopt;
  const std::uint64_t current = current_bytes.value_or(0);
  return current >= *max_bytes ? 0 : *max_bytes - current;
}

Result<PoolView> compute_pool(const Meminfo& m, const std::optional<CgroupMemory>& cgroup,
                              const PoolOptions& options) {
  if (!m.mem_total_bytes) return fail(Errc::malformed, "/proc/meminfo: MemTotal missing");
  if (!m.mem_free_bytes) return fail(Errc::malformed, "/proc/meminfo: MemFree missing");
  if (!m.mem_available_bytes) {
    return fail(Errc::malformed, "/proc/meminfo: MemAvailable missing (kernel older than 3.14?)");
  }
  PoolView p;
  p.total_bytes = *m.mem_total_bytes;
  p.free_now_bytes = *m.mem_free_bytes;
  p.available_bytes = *m.mem_available_bytes;
  if (options.swap == SwapPolicy::counted) p.available_bytes += m.swap_free_bytes.value_or(0);
  p.reclaimable_bytes =
      *m.mem_available_bytes > *m.mem_free_bytes ? *m.mem_available_bytes - *m.mem_free_bytes : 0;
  // HugeTLB pages leave the buddy allocator at reservation, so MemFree/MemAvailable already exclude
  // them; subtracting them again would double-count. They are reported so the user sees the hole.
  p.hugepages_reserved_bytes = m.hugepages_reserved_bytes().value_or(0);
  p.effective_available_bytes = p.available_bytes;
  if (cgroup) {
    if (const auto headroom = cgroup->headroom_bytes(); headroom && *headroom < p.available_bytes) {
      p.cgroup_headroom_bytes = *headroom;
      p.effective_available_bytes = *headroom;
    }
  }
  p.overhead_bytes = options.overhead_bytes;
  p.budget_bytes = p.effective_available_bytes > options.overhead_bytes
                       ? p.effective_available_bytes - options.overhead_bytes
                       : 0;
  p.flush_suggested = p.reclaimable_bytes > options.flush_hint_gap_bytes;
  return p;
}

std::string_view budget_source_name(BudgetSource s) {
  return s == BudgetSource::gpu_memory ? "gpu_memory" : "unified_pool";
}

std::optional<TrainingBudget> training_budget(const std::optional<PoolView>& pool,
                                              const std::optional<DeviceMemory>& device) {
  if (device) return TrainingBudget{device->free_bytes, BudgetSource::gpu_memory, device};
  if (pool) return TrainingBudget{pool->budget_bytes, BudgetSource::unified_pool, std::nullopt};
  return std::nullopt;
}

Result<PoolView> read_pool(const HostRoot& root, const PoolOptions& options) {
  auto meminfo = read_meminfo(root);
  if (!meminfo) return fail(Errc::io, meminfo.error().detail);
  auto cgroup = read_cgroup_memory(root);
  const std::optional<CgroupMemory> limits = cgroup ? *cgroup : std::nullopt;
  auto pool = compute_pool(*meminfo, limits, options);
  if (!pool) return fail(Errc::io, pool.error().detail);
  return pool;
}

}  // namespace sparkops::host
