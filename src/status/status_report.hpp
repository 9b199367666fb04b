#pragma once
// StatusReport: everything `sparkops status` shows, gathered in one pass over the machine. The same
// value feeds the status table, `status --json`, the exporter's /metrics and /api/status, and the
// pre-flight of `watch`. Plain data: every figure the machine may not provide is std::optional.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "host/host_snapshot.hpp"
#include "host/pool.hpp"
#include "workloads/coexistence.hpp"

namespace sparkops::status {

struct GpuStatus {
  std::string backend;  // "nvml", "nvidia-smi", "none"
  gpu::GpuState state = gpu::GpuState::no_library;
  std::string detail;
  std::optional<std::string> driver_version;
  std::vector<gpu::GpuDevice> devices;
  std::vector<gpu::GpuSnapshot> snapshots;  // one per device, same order
  // Sum of per-process GPU-resident memory over every device; absent when no source reports it.
  std::optional<std::uint64_t> process_memory_bytes;
};

struct WorkloadLine {
  std::uint32_t pid = 0;
  std::string kind;                           // "vllm", "ollama", "trainer", ...
  std::string name;                           // short command
  std::optional<std::uint64_t> claim_bytes;   // what its cap lets it take; absent = uncapped
  std::optional<std::uint64_t> actual_bytes;  // max(RSS/PSS, GPU-resident)
  bool heavy = false;
  bool orphan = false;  // a server's engine/worker whose API server is gone, still holding memory
  // The detail `top` shows (not in the JSON document): the scan's figures for the whole group.
  std::string cap;       // cap_state_name: "capped", "fixed", "uncapped"
  std::string cap_text;  // "gpu-memory-utilization 0.5", "default 0.9"
  std::uint64_t rss_bytes = 0;
  std::uint64_t pss_bytes = 0;  // PSS where readable, else RSS
  std::uint64_t gpu_bytes = 0;
  std::string heavy_reason;  // "uncapped, holds 30.2 GiB"
  // The root process: its age, owner and identity (PID + start time guards a signal against reuse).
  std::optional<std::chrono::milliseconds> age;
  std::optional<std::uint32_t> uid;
  std::uint64_t start_ticks = 0;
};

struct StatusReport {
  SystemTime taken_at{};
  std::string sparkops_version;
  host::SystemInfo system;
  std::optional<host::Meminfo> meminfo;
  std::optional<host::PoolView> pool;  // absent only when /proc/meminfo is unreadable or incomplete
  // What a training run may plan against (host/pool.hpp training_budget): the discrete GPU's free
  // memory when NVML reports it, else the pool's budget; absent when neither was read.
  std::optional<host::TrainingBudget> training_budget;
  std::optional<host::CgroupMemory> cgroup;
  std::optional<host::Psi> memory_pressure;
  std::optional<host::Vmstat> vmstat;
  std::optional<host::SensorReading> hottest_sensor;
  std::vector<host::PowerRail> spbm_rails;
  std::optional<host::SpbmStatus> spbm;
  GpuStatus gpu;
  std::optional<std::vector<WorkloadLine>> workloads;  // absent when the scan did not run
  std::string coexistence;              // the verdict in one sentence; empty when not computed
  bool coexistence_stop_first = false;  // the verdict names a PID to stop before a trainer starts
  // The same verdict as fields (status --json `coexistence_verdict`, the exporter's
  // sparkops_pool_oversubscribed_bytes); absent when the scan or the pool is.
  std::optional<workloads::CoexistenceVerdict> coexistence_verdict;
  std::vector<std::string>
      notes;  // permission-denied files, fallbacks, anything the user should know
};

// The memory of the first device NVML reports memory for: a discrete GPU. nullopt where every
// device's memory is unified / not supported (GB10, Thor) or no GPU was read.
std::optional<host::DeviceMemory> discrete_device_memory(
    const std::vector<gpu::GpuSnapshot>& snapshots);

// One reading of a GPU source for the training budget and the space a run competes for: the
// snapshots (each card's memory and processes; empty when the source is not ok or the reading
// failed) and the discrete card's memory among them.
struct GpuMemoryReading {
  std::vector<gpu::GpuSnapshot> snapshots;
  std::optional<host::DeviceMemory> device;
};
GpuMemoryReading read_gpu_memory(gpu::GpuSource& gpu);

struct StatusOptions {
  host::PoolOptions pool;
  bool scan_workloads = true;
  std::uint64_t ticks_per_second =
      100;  // USER_HZ for process ages; the CLI passes sysconf(_SC_CLK_TCK)
};

// Reads the machine once through `root` and `gpu`. Never fails: what cannot be read becomes absent
// with a note.
StatusReport collect_status(const host::HostRoot& root, gpu::GpuSource& gpu, const Clock& clock,
                            const StatusOptions& options);

}  // namespace sparkops::status
