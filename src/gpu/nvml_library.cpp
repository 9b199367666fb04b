#include "gpu/nvml_library.hpp"

#include <dlfcn.h>

#include <charconv>
#include <initializer_list>

#include <fmt/format.h>

namespace sparkops::gpu::nvml {

namespace {

// The first of `names` the library exports, cast to the wanted pointer type.
template <class Fn>
Fn resolve(void* handle, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* sym = dlsym(handle, name)) return reinterpret_cast<Fn>(sym);
  }
  return nullptr;
}

}  // namespace

SlowdownIdSet choose_slowdown_ids(nvmlReturn_t sw_thermal_251_result) {
  return sw_thermal_251_result == NVML_SUCCESS ? SlowdownIdSet::early_r580_251
                                               : SlowdownIdSet::header_269;
}

Result<Library> Library::open(const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail(Errc::not_found, fmt::format("{}: cannot load: {}", path, why ? why : "unknown"));
  }
  Symbols s;
  s.init = resolve<nvmlInit_fn>(handle, {"nvmlInit_v2", "nvmlInit"});
  s.shutdown = resolve<nvmlShutdown_fn>(handle, {"nvmlShutdown"});
  s.device_count =
      resolve<nvmlDeviceGetCount_fn>(handle, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  s.handle_by_index = resolve<nvmlDeviceGetHandleByIndex_fn>(
      handle, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  if (!s.init || !s.shutdown || !s.device_count || !s.handle_by_index) {
    dlclose(handle);
    return fail(Errc::unsupported,
                fmt::format("{}: not an NVML library (nvmlInit/nvmlDeviceGetCount missing)", path));
  }
  s.error_string = resolve<nvmlErrorString_fn>(handle, {"nvmlErrorString"});
  s.driver_version = resolve<nvmlSystemGetDriverVersion_fn>(handle, {"nvmlSystemGetDriverVersion"});
  s.name = resolve<nvmlDeviceGetName_fn>(handle, {"nvmlDeviceGetName"});
  s.uuid = resolve<nvmlDeviceGetUUID_fn>(handle, {"nvmlDeviceGetUUID"});
  s.pci_info = resolve<nvmlDeviceGetPciInfo_fn>(
      handle, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
  s.temperature = resolve<nvmlDeviceGetTemperature_fn>(handle, {"nvmlDeviceGetTemperature"});
  s.margin_temperature =
      resolve<nvmlDeviceGetMarginTemperature_fn>(handle, {"nvmlDeviceGetMarginTemperature"});
  s.power_usage = resolve<nvmlDeviceGetPowerUsage_fn>(handle, {"nvmlDeviceGetPowerUsage"});
  s.total_energy = resolve<nvmlDeviceGetTotalEnergyConsumption_fn>(
      handle, {"nvmlDeviceGetTotalEnergyConsumption"});
  s.enforced_power_limit =
      resolve<nvmlDeviceGetEnforcedPowerLimit_fn>(handle, {"nvmlDeviceGetEnforcedPowerLimit"});
  s.clock_info = resolve<nvmlDeviceGetClockInfo_fn>(handle, {"nvmlDeviceGetClockInfo"});
  s.max_clock_info = resolve<nvmlDeviceGetClockInfo_fn>(handle, {"nvmlDeviceGetMaxClockInfo"});
  s.utilization =
      resolve<nvmlDeviceGetUtilizationRates_fn>(handle, {"nvmlDeviceGetUtilizationRates"});
  s.performance_state =
      resolve<nvmlDeviceGetPerformanceState_fn>(handle, {"nvmlDeviceGetPerformanceState"});
  s.clocks_event_reasons = resolve<nvmlDeviceGetClocksEventReasons_fn>(
      handle,
      {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  s.field_values = resolve<nvmlDeviceGetFieldValues_fn>(handle, {"nvmlDeviceGetFieldValues"});
  s.memory_info_v2 = resolve<nvmlDeviceGetMemoryInfo_v2_fn>(handle, {"nvmlDeviceGetMemoryInfo_v2"});
  s.memory_info = resolve<nvmlDeviceGetMemoryInfo_fn>(handle, {"nvmlDeviceGetMemoryInfo"});
  s.compute_processes = resolve<nvmlDeviceGetComputeRunningProcesses_fn>(
      handle,
      {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  return Library(handle, s);
}

Library::Library(Library&& other) noexcept : handle_(other.handle_), symbols_(other.symbols_) {
  other.handle_ = nullptr;
}

Library& Library::operator=(Library&& other) noexcept {
  if (this != &other) {
    if (handle_) dlclose(handle_);
    handle_ = other.handle_;
    symbols_ = other.symbols_;
    other.handle_ = nullptr;
  }
  return *this;
}

Library::~Library() {
  if (handle_) dlclose(handle_);
}

std::string Library::error_string(nvmlReturn_t code) const {
  if (symbols_.error_string) {
    if (const char* text = symbols_.error_string(code); text && *text) return text;
  }
  return fmt::format("NVML error {}", code);
}

}  // namespace sparkops::gpu::nvml
