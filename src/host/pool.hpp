#pragma once
// The unified pool as sparkops reports it (docs/domain.md "Memory on a unified pool"):
// total, free-now (what CUDA can take without reclaim), available (the honest headroom),
// reclaimable by a cache flush (available - free), the cgroup limit when lower, and the budget.

#include <cstdint>
#include <optional>
#include <string_view>

#include "config/pool_sections.hpp"
#include "host/cgroup.hpp"
#include "host/meminfo.hpp"

namespace sparkops::host {

// The [pool] config section is the pool's options: overhead, swap policy, flush hint (its defaults
// are written once, in config/pool_sections.hpp).
using SwapPolicy = config::SwapPolicy;
using PoolOptions = config::PoolSettings;

struct PoolView {
  std::uint64_t total_bytes = 0;
  std::uint64_t free_now_bytes = 0;     // MemFree
  std::uint64_t available_bytes = 0;    // MemAvailable (+ SwapFree when counted)
  std::uint64_t reclaimable_bytes = 0;  // MemAvailable - MemFree, never negative
  std::uint64_t hugepages_reserved_bytes =
      0;  // already outside MemAvailable; shown, not subtracted
  std::optional<std::uint64_t> cgroup_headroom_bytes;  // only when lower than available
  std::uint64_t effective_available_bytes = 0;         // min(available, cgroup headroom)
  std::uint64_t overhead_bytes = 0;
  std::uint64_t budget_bytes = 0;  // effective available - overhead, floor 0
  bool flush_suggested = false;    // reclaimable > flush_hint_gap
};

// What the pool can ever give a run: total - overhead, floor 0 (the ceiling of every claim).
inline std::uint64_t pool_total_budget(const PoolView& pool) {
  return pool.total_bytes > pool.overhead_bytes ? pool.total_bytes - pool.overhead_bytes : 0;
}

// The memory of a discrete GPU as NVML reports it (absent where NVML says the memory is unified or
// not supported: GB10, Jetson Thor).
struct DeviceMemory {
  unsigned index = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
};

// Where a training run's budget comes from: the one rule status, plan and procs share. On a
// discrete GPU the run lives in the device's memory, so the budget is what the device has free
// (NVML's free: total - used); the host pool bounds it only where memory is unified, and there
// the budget is the pool's (available - overhead, host/pool above).
enum class BudgetSource { unified_pool, gpu_memory };
std::string_view budget_source_name(BudgetSource s);  // "unified_pool", "gpu_memory"

struct TrainingBudget {
  std::uint64_t bytes = 0;
  BudgetSource source = BudgetSource::unified_pool;
  std::optional<DeviceMemory> device;  // set when source is gpu_memory
};

// nullopt when neither is known (no GPU memory reading and no pool).
std::optional<TrainingBudget> training_budget(const std::optional<PoolView>& pool,
                                              const std::optional<DeviceMemory>& device);

// Pure. Needs MemTotal, MemFree and MemAvailable; an Error names the missing field.
Result<PoolView> compute_pool(const Meminfo& meminfo, const std::optional<CgroupMemory>& cgroup,
                              const PoolOptions& options);

// The machine's pool: /proc/meminfo and the memory cgroup under `root` (an unreadable cgroup is
// no limit), through compute_pool. The one reading every command's budget comes from. Every
// failure is Errc::io: the machine could not be read (exit 1, README "Exit codes"), whatever was
// wrong with the file, never bad input from the user.
Result<PoolView> read_pool(const HostRoot& root, const PoolOptions& options);

}  // namespace sparkops::host
