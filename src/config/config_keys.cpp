#include <chrono>
#include <deque>
#include <string>

#include <fmt/format.h>

#include "config/config.hpp"
#include "config/plan_defaults.hpp"
#include "config/pool_sections.hpp"
#include "config/run_sections.hpp"
#include "config/slowdown_thresholds.hpp"
#include "config/thermal_thresholds.hpp"

namespace sparkops::config {

namespace {

// A typed section's default as the key table's text: "240", "0.6", "5" (fmt's shortest round-trip
// spelling).
template <typename T>
std::string_view default_text(T value) {
  static std::deque<std::string> texts;  // push_back keeps earlier elements in place
  texts.push_back(fmt::format("{}", value));
  return texts.back();
}

// A byte default as the key table writes it: whole GiB as "4GiB", else KiB as the measured RSS
// figures are ("1524160K"), else bytes.
std::string_view default_bytes(std::uint64_t bytes) {
  static std::deque<std::string> texts;
  if (bytes != 0 && bytes % (1ULL << 30) == 0)
    texts.push_back(fmt::format("{}GiB", bytes >> 30));
  else if (bytes != 0 && bytes % 1024 == 0)
    texts.push_back(fmt::format("{}K", bytes / 1024));
  else
    texts.push_back(fmt::format("{}", bytes));
  return texts.back();
}

// A duration default in whole seconds, as the key table writes it: "30s".
std::string_view default_seconds(std::chrono::nanoseconds d) {
  static std::deque<std::string> texts;
  texts.push_back(fmt::format("{}s", std::chrono::duration_cast<std::chrono::seconds>(d).count()));
  return texts.back();
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  // Defaults follow the skill and docs/domain.md; each can be overridden per machine. The thermal
  // and analyze defaults are ThermalThresholds' and SlowdownThresholds' (config/
  // thermal_thresholds.hpp, config/slowdown_thresholds.hpp), written once there; so are the plan
  // defaults (config/plan_defaults.hpp), the pool and procs defaults (config/pool_sections.hpp)
  // and the sample, watch, serve and gpu defaults (config/run_sections.hpp).
  static const ThermalThresholds t;
  static const SlowdownThresholds a;
  static const PlanDefaults p;
  static const PoolSettings pool;
  static const HeavyRules heavy;
  static const CoexistenceMargin margin;
  static const SampleSettings sample;
  static const ServeSettings serve;
  static const WatchSettings watch;
  static const GpuSettings gpu;
  static const std::vector<ConfigKey> keys = {
      {"pool.overhead", default_bytes(pool.overhead_bytes), "bytes",
       "OS/driver overhead subtracted from MemAvailable to get the budget (the skill's \"a few "
       "GB\")"},
      {"pool.swap_counts", pool.swap == SwapPolicy::counted ? "true" : "false", "bool",
       "count SwapFree as available pool memory"},
      {"pool.flush_hint_gap", default_bytes(pool.flush_hint_gap_bytes), "bytes",
       "suggest a cache flush when MemAvailable - MemFree exceeds this"},
      {"thermal.rated_watts", default_text(t.rated_watts), "number",
       "rated platform power (GB10: 240 W)"},
      {"thermal.ceiling_watts", default_text(t.ceiling_watts), "number",
       "sustained power ceiling under long load (GB10: ~100 W)"},
      {"thermal.ceiling_band_watts", default_text(t.ceiling_band_watts), "number",
       "power within this band of the ceiling counts as 'at the ceiling'"},
      {"thermal.hot_celsius", default_text(t.hot_celsius), "number",
       "GPU temperature considered high under load"},
      {"thermal.busy_util_percent", default_text(t.busy_util_percent), "number",
       "utilisation at or above which the GPU is under load"},
      {"thermal.low_clock_ratio", default_text(t.low_clock_ratio), "number",
       "SM clock below this fraction of its max under load is an unflagged slow state"},
      {"thermal.low_power_ratio", default_text(t.low_power_ratio), "number",
       "power below this fraction of the run's own earlier level under load is an unflagged slow "
       "state"},
      {"gpu.timeout", default_seconds(gpu.timeout), "duration",
       "longest wait for one GPU driver call (NVML or nvidia-smi) before the GPU is marked hung "
       "and host readings go on"},
      {"sample.interval", default_seconds(sample.interval), "duration",
       "default sampling interval"},
      {"sample.fsync_every", default_text(sample.fsync_every), "integer",
       "fsync the sample file every N rows"},
      {"sample.memory_buffer_rows", default_text(sample.memory_buffer_rows), "integer",
       "rows kept in memory while the output cannot be written"},
      {"watch.max_log_bytes", default_bytes(watch.max_log_bytes), "bytes",
       "`sparkops watch` stops writing the job's log (and its .times sidecar) at this size; the "
       "job and its terminal output go on"},
      {"serve.listen", serve.listen, "string",
       "address:port `sparkops serve` listens on (non-loopback needs --token or --insecure)"},
      {"serve.interval", default_seconds(serve.interval), "duration",
       "how often `sparkops serve` reads the machine"},
      {"serve.max_workloads", default_text(serve.max_workloads), "integer",
       "per-workload series `sparkops serve` exports at most (largest first)"},
      {"analyze.slowdown_factor", default_text(a.slowdown_factor), "number",
       "step time this many times the baseline is a slowdown"},
      {"analyze.sustain_steps", default_text(a.sustain_steps), "integer",
       "slow measurements a slowdown needs (fewer make a stall)"},
      {"analyze.min_wall_share", default_text(a.min_wall_share), "number",
       "share of a slowdown's wall time its slow steps must take (0..1)"},
      {"analyze.noise_sigmas", default_text(a.noise_sigmas), "number",
       "a slow step is also this many robust sigmas of the baseline's noise above it"},
      {"analyze.warmup_steps", default_text(a.warmup_steps), "integer",
       "steps skipped before the baseline"},
      {"procs.small_workload", default_bytes(heavy.small_workload_bytes), "bytes",
       "an uncapped workload holding less than this is small and coexists (the skill's < 4 GB "
       "LoRA)"},
      {"procs.near_capacity_fraction", default_text(heavy.near_capacity_fraction), "number",
       "a workload claiming this fraction of the device total or more is near capacity (heavy)"},
      {"procs.tight_margin", default_bytes(margin.tight_margin_bytes), "bytes",
       "a run that fits with less than this to spare is 'tight'"},
      {"procs.orphan_min", default_bytes(heavy.orphan_min_bytes), "bytes",
       "an orphaned vLLM engine holding this much is reported for cleanup"},
      {"plan.framework", p.framework, "string",
       "training framework whose memory defaults `plan` assumes without --framework "
       "(hf|trl|unsloth|axolotl|llamafactory|torchtune|litgpt|nemo|swift)"},
      {"plan.transformers", p.transformers, "string",
       "installed transformers release (e.g. 4.46.0) whose HF loss `plan` assumes without "
       "--transformers; empty: the framework's"},
      {"plan.host_process", default_bytes(p.host.process_bytes), "bytes",
       "the training process's own resident memory on the pool: Python, torch and the CUDA "
       "libraries (default measured, docs/estimator.md)"},
      {"plan.dataset", default_bytes(p.host.dataset_bytes), "bytes",
       "a dataset the run holds in RAM (Arrow datasets are memory-mapped: their pages are cache)"},
      {"plan.dataloader_workers", default_text(p.host.dataloader_workers), "integer",
       "DataLoader worker processes of the run (transformers' dataloader_num_workers default 0)"},
      {"plan.worker_bytes", default_bytes(p.host.worker_bytes), "bytes",
       "anonymous memory of one forked DataLoader worker (default measured, docs/estimator.md)"},
      {"plan.page_cache", p.host.page_cache_resident ? "resident" : "dropped", "string",
       "resident|dropped: whether the checkpoint's file pages stay cached after loading (they "
       "count against what is free without a flush)"},
  };
  return keys;
}

}  // namespace sparkops::config
