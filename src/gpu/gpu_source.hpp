#pragma once
// GpuSource: the narrow, app-shaped view of the GPUs (docs/design.md "seams"). Implementations:
// NVML over dlopen (nvml_source), the nvidia-smi CSV fallback (smi_source), and none (no GPU).
// Every figure a driver may not provide is std::optional: NOT_SUPPORTED / [N/A] is "absent", never
// 0.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace sparkops::gpu {

struct GpuDevice {
  unsigned index = 0;
  std::string name;        // "NVIDIA GB10"
  std::string uuid;        // "GPU-..."; empty when unknown
  std::string pci_bus_id;  // "0000000F:01:00.0"; empty when unknown
};

// Cumulative time spent in each clocks-event reason since driver load (NVML field values 74, 76,
// 269, 270, 271; nanoseconds). Diff two snapshots to see throttling the instantaneous bits miss.
struct ThrottleCounters {
  std::optional<std::chrono::nanoseconds> sw_power_cap;
  std::optional<std::chrono::nanoseconds> sync_boost;
  std::optional<std::chrono::nanoseconds> sw_thermal;
  std::optional<std::chrono::nanoseconds> hw_thermal;
  std::optional<std::chrono::nanoseconds> hw_power_brake;
};

struct GpuMemory {
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t used_bytes = 0;
};

struct GpuProcess {
  std::uint32_t pid = 0;                    // a host PID, also when sparkops runs in a container
  std::optional<std::uint64_t> used_bytes;  // absent when the driver reports "unknown"
  std::string name;                         // process name when the source gives one
};

struct GpuSnapshot {
  unsigned index = 0;
  std::optional<std::int64_t> temp_millicelsius;
  std::optional<std::int64_t> margin_temp_millicelsius;  // distance to the slowdown limit
  std::optional<std::uint64_t> power_microwatts;         // NVML: 1 s average
  std::optional<std::uint64_t> energy_microjoules;       // total since driver load
  std::optional<std::uint64_t> power_limit_microwatts;   // enforced limit; absent on GB10
  std::optional<std::uint32_t> sm_clock_mhz;
  std::optional<std::uint32_t> sm_clock_max_mhz;
  std::optional<std::uint32_t> mem_clock_mhz;
  std::optional<std::uint32_t> mem_clock_max_mhz;
  std::optional<std::uint32_t> util_gpu_percent;
  std::optional<std::uint32_t> util_mem_percent;
  std::optional<std::uint32_t> pstate;                // 0 = P0 ... 15; absent when unknown
  std::optional<std::uint64_t> clocks_event_reasons;  // bitmask, see throttle_reasons.hpp
  ThrottleCounters counters;
  std::optional<GpuMemory> memory;                   // absent on unified-memory iGPUs (GB10)
  std::optional<std::vector<GpuProcess>> processes;  // absent when the query is unsupported
};

enum class GpuState {
  ok,           // devices found and answering
  no_library,   // libnvidia-ml / nvidia-smi not present: a machine without an NVIDIA GPU
  init_failed,  // library present but initialisation failed (driver not loaded, version mismatch)
  no_devices,   // initialised, zero devices
  lost,         // a device fell off the bus or the driver went away mid-run
  hung,         // a driver call (nvmlInit, a reading, nvidia-smi) has not returned in time
};

std::string_view gpu_state_name(GpuState state);

// Not thread-safe: one sampler thread owns a source.
class GpuSource {
 public:
  virtual ~GpuSource() = default;
  virtual std::string_view backend() const = 0;  // "nvml", "nvidia-smi", "none"
  virtual GpuState state() const = 0;
  virtual std::string state_detail() const = 0;  // one line for the user; empty when ok
  virtual std::optional<std::string> driver_version() const = 0;
  virtual const std::vector<GpuDevice>& devices() const = 0;
  // One reading of every device. A device lost mid-run turns state() to lost and returns an Error
  // with Errc::gpu_lost; a later call may recover (the caller backs off and retries). A call that
  // outlives the watchdog (watchdog_source.hpp) turns state() to hung and returns Errc::gpu_hung
  // at once; asking again costs nothing while the call is out.
  virtual Result<std::vector<GpuSnapshot>> snapshot() = 0;
};

// A source for a machine without a GPU: state no_library, no devices, empty snapshots.
std::unique_ptr<GpuSource> make_null_gpu_source(GpuState state, std::string detail);

}  // namespace sparkops::gpu
