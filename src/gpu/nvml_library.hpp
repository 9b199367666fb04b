#pragma once
// NVML loaded with dlopen: the handle and every symbol sparkops uses, resolved once. A symbol the
// library does not export is a null pointer: the figure it provides is absent, never an error.
// Versioned symbols are preferred and fall back to their older names (nvmlInit_v2 -> nvmlInit).

#include <string>

#include "base/result.hpp"
#include "gpu/nvml_api.hpp"

namespace sparkops::gpu::nvml {

struct Symbols {
  // Required: without these the library is unusable.
  nvmlInit_fn init = nullptr;                               // nvmlInit_v2 | nvmlInit
  nvmlShutdown_fn shutdown = nullptr;                       // nvmlShutdown
  nvmlDeviceGetCount_fn device_count = nullptr;             // nvmlDeviceGetCount_v2 | _GetCount
  nvmlDeviceGetHandleByIndex_fn handle_by_index = nullptr;  // _v2 | unversioned
  // Optional.
  nvmlErrorString_fn error_string = nullptr;
  nvmlSystemGetDriverVersion_fn driver_version = nullptr;
  nvmlDeviceGetName_fn name = nullptr;
  nvmlDeviceGetUUID_fn uuid = nullptr;
  nvmlDeviceGetPciInfo_fn pci_info = nullptr;  // _v3 | _v2
  nvmlDeviceGetTemperature_fn temperature = nullptr;
  nvmlDeviceGetMarginTemperature_fn margin_temperature = nullptr;
  nvmlDeviceGetPowerUsage_fn power_usage = nullptr;
  nvmlDeviceGetTotalEnergyConsumption_fn total_energy = nullptr;
  nvmlDeviceGetEnforcedPowerLimit_fn enforced_power_limit = nullptr;
  nvmlDeviceGetClockInfo_fn clock_info = nullptr;
  nvmlDeviceGetClockInfo_fn max_clock_info = nullptr;
  nvmlDeviceGetUtilizationRates_fn utilization = nullptr;
  nvmlDeviceGetPerformanceState_fn performance_state = nullptr;
  nvmlDeviceGetClocksEventReasons_fn clocks_event_reasons = nullptr;  // | ...ThrottleReasons
  nvmlDeviceGetFieldValues_fn field_values = nullptr;
  nvmlDeviceGetMemoryInfo_v2_fn memory_info_v2 = nullptr;
  nvmlDeviceGetMemoryInfo_fn memory_info = nullptr;
  nvmlDeviceGetComputeRunningProcesses_fn compute_processes = nullptr;  // _v3 | _v2
};

class Library {
 public:
  // dlopen(path, RTLD_NOW | RTLD_LOCAL). not_found with dlerror's text when the library cannot be
  // loaded; unsupported when a required symbol is missing.
  static Result<Library> open(const std::string& path);

  Library(Library&& other) noexcept;
  Library& operator=(Library&& other) noexcept;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library();

  const Symbols& fn() const { return symbols_; }
  // nvmlErrorString when the library exports it, else "NVML error <code>".
  std::string error_string(nvmlReturn_t code) const;

 private:
  Library(void* handle, Symbols symbols) : handle_(handle), symbols_(symbols) {}
  void* handle_ = nullptr;
  Symbols symbols_;
};

}  // namespace sparkops::gpu::nvml
