#include "exporter/metric_catalogue.hpp"

#include <stdexcept>
#include <string>

namespace sparkops::exporter {

const std::vector<MetricDef>& metric_catalogue() {
  using enum MetricType;
  static const std::vector<MetricDef> defs = {
      {"sparkops_info", gauge, "version,hostname,kernel,arch,os,model,gpu_backend,gpu_driver",
       "Constant 1; the labels carry the sparkops version, machine and GPU driver."},
      {"sparkops_collect_timestamp_seconds", gauge, "",
       "Unix time at which the figures in this exposition were read."},
      {"sparkops_collect_duration_seconds", gauge, "", "Time taken to read the machine once."},
      {"sparkops_collect_interval_seconds", gauge, "",
       "How often the exporter reads the machine (serve --interval)."},
      {"sparkops_pool_total_bytes", gauge, "", "Unified pool size (MemTotal)."},
      {"sparkops_pool_free_bytes", gauge, "",
       "Memory free now (MemFree): what CUDA can take on GB10 without reclaim."},
      {"sparkops_pool_available_bytes", gauge, "",
       "Honest headroom (MemAvailable, plus SwapFree when configured)."},
      {"sparkops_pool_reclaimable_bytes", gauge, "",
       "MemAvailable minus MemFree: what a page-cache flush gives back."},
      {"sparkops_pool_effective_available_bytes", gauge, "",
       "Available memory after the cgroup limit, when lower."},
      {"sparkops_pool_hugepages_reserved_bytes", gauge, "",
       "Memory held by huge pages (already outside MemAvailable)."},
      {"sparkops_pool_overhead_bytes", gauge, "", "OS/driver overhead kept out of the budget."},
      {"sparkops_pool_budget_bytes", gauge, "",
       "Effective available memory minus overhead: what a new job may plan against."},
      {"sparkops_pool_flush_suggested", gauge, "",
       "1 when reclaimable page cache exceeds the flush hint gap, else 0."},
      {"sparkops_pool_oversubscribed_bytes", gauge, "",
       "How far the workloads' claims (max of cap and holding) exceed the pool after overhead; 0 "
       "when they fit."},
      {"sparkops_cgroup_memory_max_bytes", gauge, "", "cgroup v2 memory.max of sparkops' cgroup."},
      {"sparkops_cgroup_memory_high_bytes", gauge, "",
       "cgroup v2 memory.high of sparkops' cgroup."},
      {"sparkops_cgroup_memory_current_bytes", gauge, "",
       "cgroup v2 memory.current of sparkops' cgroup."},
      {"sparkops_memory_pressure_avg10_ratio", gauge, "scope",
       "Memory PSI, share of the last 10 s some/all tasks stalled on memory (0-1)."},
      {"sparkops_memory_pressure_avg60_ratio", gauge, "scope",
       "Memory PSI, share of the last 60 s some/all tasks stalled on memory (0-1)."},
      {"sparkops_memory_pressure_stall_seconds_total", counter, "scope",
       "Memory PSI, total stall time since boot."},
      {"sparkops_memory_major_faults_total", counter, "",
       "Major page faults since boot (/proc/vmstat pgmajfault): pages read back from disk."},
      {"sparkops_memory_refaults_total", counter, "",
       "Evicted pages needed again since boot (/proc/vmstat workingset_refault_anon + _file)."},
      {"sparkops_memory_swapin_pages_total", counter, "",
       "Pages swapped in since boot (/proc/vmstat pswpin)."},
      {"sparkops_oom_kills_total", counter, "",
       "Processes killed by the kernel OOM killer since boot (/proc/vmstat oom_kill)."},
      {"sparkops_host_hottest_sensor_celsius", gauge, "sensor",
       "Temperature of the hottest host sensor (hwmon/thermal zone)."},
      {"sparkops_spbm_rail_power_watts", gauge, "rail", "spbm hwmon power rail reading."},
      {"sparkops_spbm_prochot", gauge, "", "spbm PROCHOT state as reported by the driver."},
      {"sparkops_platform_power_ceiling_watts", gauge, "",
       "Sustained power ceiling under long load that the platform-cap rule compares with "
       "(config thermal.ceiling_watts; GB10 about 100 W of 240 W rated)."},
      {"sparkops_gpu_source_info", gauge, "backend,state",
       "Constant 1; which GPU backend answered and its state (ok, no_library, init_failed, ...)."},
      {"sparkops_gpu_hung", gauge, "backend",
       "1 while a GPU driver call (NVML or nvidia-smi) has not returned within gpu.timeout; GPU "
       "series are absent meanwhile, host series go on."},
      {"sparkops_gpu_info", gauge, "gpu,name,uuid,pci_bus_id", "Constant 1 per GPU device."},
      {"sparkops_gpu_temperature_celsius", gauge, "gpu", "GPU temperature."},
      {"sparkops_gpu_temperature_margin_celsius", gauge, "gpu",
       "Distance from the GPU temperature to its slowdown limit."},
      {"sparkops_gpu_power_watts", gauge, "gpu", "GPU power draw (driver 1 s average)."},
      {"sparkops_gpu_power_limit_watts", gauge, "gpu",
       "Enforced GPU power limit (absent on GB10)."},
      {"sparkops_gpu_energy_joules_total", counter, "gpu", "GPU energy since driver load."},
      {"sparkops_gpu_sm_clock_hertz", gauge, "gpu", "Current SM clock."},
      {"sparkops_gpu_sm_clock_max_hertz", gauge, "gpu", "Maximum SM clock."},
      {"sparkops_gpu_memory_clock_hertz", gauge, "gpu", "Current memory clock."},
      {"sparkops_gpu_memory_clock_max_hertz", gauge, "gpu", "Maximum memory clock."},
      {"sparkops_gpu_utilization_ratio", gauge, "gpu",
       "GPU (SM) utilisation over the last sample period (0-1)."},
      {"sparkops_gpu_memory_utilization_ratio", gauge, "gpu",
       "Memory controller utilisation over the last sample period (0-1)."},
      {"sparkops_gpu_pstate", gauge, "gpu", "Performance state (0 = P0, fastest)."},
      {"sparkops_gpu_clocks_event_reasons", gauge, "gpu",
       "Instantaneous clocks-event-reason bitmask (nvml.h nvmlClocksEventReason*)."},
      {"sparkops_gpu_clocks_event_reason_active", gauge, "gpu,reason",
       "1 when the named clocks-event reason bit is set now, else 0."},
      {"sparkops_gpu_throttle_seconds_total", counter, "gpu,reason",
       "Cumulative time the GPU spent held back by each reason since driver load (NVML counters)."},
      {"sparkops_gpu_memory_total_bytes", gauge, "gpu",
       "Dedicated GPU memory size (discrete GPUs; absent on unified-memory GB10)."},
      {"sparkops_gpu_memory_used_bytes", gauge, "gpu",
       "Dedicated GPU memory in use (discrete GPUs; absent on unified-memory GB10)."},
      {"sparkops_gpu_process_memory_bytes", gauge, "",
       "Sum of per-process GPU-resident memory over all devices."},
      {"sparkops_workloads", gauge, "kind", "GPU workloads found by the process scan, per kind."},
      {"sparkops_workloads_unexported", gauge, "",
       "Workloads beyond the per-workload series cap (largest first are exported)."},
      {"sparkops_workload_claim_bytes", gauge, "kind,pid,name",
       "Memory a workload's cap lets it take (absent when uncapped)."},
      {"sparkops_workload_actual_bytes", gauge, "kind,pid,name",
       "Memory a workload holds now: max(RSS/PSS, GPU-resident)."},
      {"sparkops_workload_heavy", gauge, "kind,pid,name",
       "1 for a heavy job under the one-heavy-job rule, else 0."},
      {"sparkops_workload_orphan", gauge, "kind,pid,name",
       "1 for a server's engine or worker whose API server is gone (it still holds memory), "
       "else 0."},
      {"sparkops_throttle_events_total", counter, "gpu,reason",
       "Throttle events detected by the exporter's sampling loop since it started."},
      {"sparkops_slowdown_events_total", counter, "gpu,reason",
       "Unflagged slow states (clock stuck low or power collapsed under load) since the exporter "
       "started."},
      {"sparkops_contention_events_total", counter, "",
       "Contention events since the exporter started: the one-heavy-job rule starting to be "
       "broken, "
       "and memory contention between readings (PSI, major faults, refaults, swap-in, eviction, "
       "OOM kills)."},
      {"sparkops_gpu_hang_events_total", counter, "",
       "Times the GPU backend turned hung (a driver call out past gpu.timeout) since the exporter "
       "started."},
  };
  return defs;
}

const MetricDef& metric_def(std::string_view name) {
  for (const auto& def : metric_catalogue()) {
    if (def.name == name) return def;
  }
  throw std::out_of_range("metric not in catalogue: " + std::string(name));
}

}  // namespace sparkops::exporter
