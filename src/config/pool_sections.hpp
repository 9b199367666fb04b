#pragma once
// The [pool] and [procs] config sections as typed values: the pool's budget rule (host/pool.hpp
// reads the pool with PoolSettings as its PoolOptions), the heavy-job rules of the process scan
// (workloads/scan.hpp) and the coexistence verdict's margin (workloads/coexistence.hpp). The member
// initialisers below are the only place these defaults are written: the key table
// (config_keys.cpp) prints them as the keys' default text.

#include <cstdint>

#include "config/config.hpp"

namespace sparkops::config {

enum class SwapPolicy { excluded, counted };

struct PoolSettings {
  // pool.overhead: the skill's "a few GB" of OS/driver overhead, kept back from MemAvailable.
  std::uint64_t overhead_bytes = 4ULL << 30;
  SwapPolicy swap = SwapPolicy::excluded;  // pool.swap_counts: SwapFree counts as available
  // pool.flush_hint_gap: suggest a cache flush when MemAvailable - MemFree exceeds this.
  std::uint64_t flush_hint_gap_bytes = 8ULL << 30;
};

struct HeavyRules {
  // procs.small_workload: uncapped workloads holding at least this much are heavy (the skill's
  // "< 4 GB LoRA" is small).
  std::uint64_t small_workload_bytes = 4ULL << 30;
  // procs.near_capacity_fraction: a claim at or above this fraction of the device total is near
  // capacity (NVIDIA advises gpu-memory-utilization <= 0.7 on DGX Spark).
  double near_capacity_fraction = 0.7;
  // procs.orphan_min: an orphaned vLLM engine holding at least this much is reported for cleanup.
  std::uint64_t orphan_min_bytes = 1ULL << 30;
};

struct CoexistenceMargin {
  // procs.tight_margin: a run that fits with less than this to spare is "tight".
  std::uint64_t tight_margin_bytes = 8ULL << 30;
};

// The pool.* values in effect (defaults, files, flags).
PoolSettings pool_settings(const Config& config);
// The procs.* values in effect.
HeavyRules heavy_rules(const Config& config);
CoexistenceMargin coexistence_margin(const Config& config);

}  // namespace sparkops::config
