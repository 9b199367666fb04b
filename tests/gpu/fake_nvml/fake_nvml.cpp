// A fake libnvidia-ml: exports the NVML entry points sparkops resolves, answering from a scenario
// file named by FAKE_NVML_SCENARIO (format: docs/gpu.md "Fake NVML scenarios"). Loaded through the
// real dlopen path (SPARKOPS_NVML_LIB), so tests exercise symbol resolution, struct layouts and
// error handling exactly as on a machine with a driver.
//
// Deterministic sequence: every nvmlDeviceGetTemperature call is one "tick" (sparkops reads the
// temperature first, once per device and snapshot). Stepped values are base + step * (ticks - 1)
// of that device; lost_after / recover_after / hang_after count global ticks. hang_init and
// hang_after make calls block (a wedged driver) until the file named by hang_release exists,
// forever without one. Built twice: fake_nvml (current
// API) and, with FAKE_NVML_OLD_API, fake_nvml_old (only the older symbol names, no margin
// temperature, no memory v2) to test the fallbacks.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "gpu/nvml_api.hpp"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct FakeDevice {
  std::map<std::string, std::string> kv;                    // "temperature_c" -> "45"
  std::vector<std::pair<unsigned, std::string>> processes;  // pid, bytes or "unknown"
  unsigned long long ticks = 0;
};

struct FakeState {
  bool loaded = false;
  std::string scenario_path;
  std::map<std::string, std::string> kv;
  std::vector<FakeDevice> devices;
  unsigned long long ticks = 0;
  bool initialized = false;
  bool released = false;  // a hang ended: calls answer normally from then on
};

FakeState& state() {
  static FakeState s;
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

nvmlReturn_t code_from_name(const std::string& name) {
  static const std::map<std::string, nvmlReturn_t> kCodes = {
      {"SUCCESS", NVML_SUCCESS},
      {"UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
      {"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT},
      {"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
      {"NO_PERMISSION", NVML_ERROR_NO_PERMISSION},
      {"NOT_FOUND", NVML_ERROR_NOT_FOUND},
      {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
      {"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
      {"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH},
      {"UNKNOWN", NVML_ERROR_UNKNOWN},
  };
  const auto it = kCodes.find(name);
  return it == kCodes.end() ? NVML_ERROR_UNKNOWN : it->second;
}

bool is_code_name(const std::string& v) {
  return !v.empty() && (v[0] < '0' || v[0] > '9');
}

void load_scenario() {
  FakeState& s = state();
  const char* path = std::getenv("FAKE_NVML_SCENARIO");
  const std::string p = path ? path : "";
  if (s.loaded && p == s.scenario_path) return;
  s = FakeState{};
  s.loaded = true;
  s.scenario_path = p;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = trim(line.substr(0, eq));
    const std::string value = trim(line.substr(eq + 1));
    if (key.rfind("device.", 0) == 0) {
      const auto dot = key.find('.', 7);
      if (dot == std::string::npos) continue;
      const auto index = static_cast<std::size_t>(std::strtoul(key.c_str() + 7, nullptr, 10));
      if (s.devices.size() <= index) s.devices.resize(index + 1);
      const std::string sub = key.substr(dot + 1);
      if (sub == "process") {
        std::istringstream fields(value);
        unsigned pid = 0;
        std::string bytes;
        fields >> pid >> bytes;
        s.devices[index].processes.emplace_back(pid, bytes);
      } else {
        s.devices[index].kv[sub] = value;
      }
    } else {
      s.kv[key] = value;
    }
  }
}

unsigned long long global_setting(const char* key, unsigned long long fallback) {
  const auto& kv = state().kv;
  const auto it = kv.find(key);
  return it == kv.end() ? fallback : std::strtoull(it->second.c_str(), nullptr, 0);
}

bool lost_now() {
  const FakeState& s = state();
  if (!s.kv.count("lost_after")) return false;
  const unsigned long long after = global_setting("lost_after", 0);
  if (s.ticks <= after) return false;
  if (!s.kv.count("recover_after")) return true;
  return s.ticks <= after + global_setting("recover_after", 0);
}

// Blocks like a wedged driver when the scenario says so: in nvmlInit for "hang_init = 1", in every
// device call from tick hang_after+1 on. Polls for the hang_release file (never returns without
// one) and touches no shared state while it waits, so a process may exit around a blocked thread.
void maybe_hang(bool init_call) {
  FakeState& s = state();
  if (s.released) return;
  const bool hang = init_call
                        ? global_setting("hang_init", 0) != 0
                        : s.kv.count("hang_after") && s.ticks > global_setting("hang_after", 0);
  if (!hang) return;
  const auto it = s.kv.find("hang_release");
  const std::string release = it == s.kv.end() ? std::string() : it->second;
  while (release.empty() || ::access(release.c_str(), F_OK) != 0) ::usleep(10'000);
  state().released = true;
}

FakeDevice* device(nvmlDevice_t h) {
  auto& devs = state().devices;
  const auto index = reinterpret_cast<std::uintptr_t>(h);
  if (index == 0 || index > devs.size()) return nullptr;
  return &devs[index - 1];
}

// The answer for `key` of device `h`: NVML_SUCCESS and the value (stepped by "<key>_step" per
// tick), or the error code the scenario names. A missing key is NOT_SUPPORTED.
nvmlReturn_t lookup(nvmlDevice_t h, const std::string& key, unsigned long long& out) {
  if (!state().initialized) return NVML_ERROR_UNINITIALIZED;
  FakeDevice* d = device(h);
  if (!d) return NVML_ERROR_INVALID_ARGUMENT;
  maybe_hang(false);
  if (lost_now()) return NVML_ERROR_GPU_IS_LOST;
  const auto it = d->kv.find(key);
  if (it == d->kv.end()) return NVML_ERROR_NOT_SUPPORTED;
  if (is_code_name(it->second)) return code_from_name(it->second);
  out = std::strtoull(it->second.c_str(), nullptr, 0);
  if (const auto step = d->kv.find(key + "_step"); step != d->kv.end()) {
    const unsigned long long ticks = d->ticks == 0 ? 0 : d->ticks - 1;
    out += std::strtoull(step->second.c_str(), nullptr, 0) * ticks;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t lookup_string(nvmlDevice_t h, const std::string& key, char* buf, unsigned len) {
  if (!state().initialized) return NVML_ERROR_UNINITIALIZED;
  FakeDevice* d = device(h);
  if (!d || !buf) return NVML_ERROR_INVALID_ARGUMENT;
  const auto it = d->kv.find(key);
  if (it == d->kv.end()) return NVML_ERROR_NOT_SUPPORTED;
  if (it->second.size() + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, it->second.c_str(), it->second.size() + 1);
  return NVML_SUCCESS;
}

template <class T>
nvmlReturn_t lookup_as(nvmlDevice_t h, const std::string& key, T* out) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long v = 0;
  const nvmlReturn_t rc = lookup(h, key, v);
  if (rc == NVML_SUCCESS) *out = static_cast<T>(v);
  return rc;
}

nvmlReturn_t init_impl() {
  load_scenario();
  maybe_hang(true);
  FakeState& s = state();
  const auto it = s.kv.find("init");
  if (it != s.kv.end() && it->second != "SUCCESS") return code_from_name(it->second);
  s.initialized = true;
  return NVML_SUCCESS;
}

nvmlReturn_t count_impl(unsigned int* count) {
  if (!state().initialized) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(state().devices.size());
  return NVML_SUCCESS;
}

nvmlReturn_t handle_impl(unsigned int index, nvmlDevice_t* h) {
  if (!state().initialized) return NVML_ERROR_UNINITIALIZED;
  if (!h || index >= state().devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *h = reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(index) + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t processes_impl(nvmlDevice_t h, unsigned int* count, nvmlProcessInfo_t* infos) {
  if (!state().initialized) return NVML_ERROR_UNINITIALIZED;
  if (!count || !device(h)) return NVML_ERROR_INVALID_ARGUMENT;
  maybe_hang(false);
  if (lost_now()) return NVML_ERROR_GPU_IS_LOST;
  // "processes = NOT_SUPPORTED" (any code name) answers that code; otherwise the listed processes.
  if (const auto it = device(h)->kv.find("processes");
      it != device(h)->kv.end() && is_code_name(it->second) && it->second != "SUCCESS") {
    return code_from_name(it->second);
  }
  const auto& procs = device(h)->processes;
  const auto needed = static_cast<unsigned>(procs.size());
  if (*count < needed || (needed > 0 && !infos)) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < needed; ++i) {
    infos[i].pid = procs[i].first;
    infos[i].usedGpuMemory = procs[i].second == "unknown"
                                 ? NVML_VALUE_NOT_AVAILABLE_ULL
                                 : std::strtoull(procs[i].second.c_str(), nullptr, 0);
    infos[i].gpuInstanceId = 0xFFFFFFFFU;
    infos[i].computeInstanceId = 0xFFFFFFFFU;
  }
  *count = needed;
  return NVML_SUCCESS;
}

}  // namespace

// Test hook: forget the loaded scenario and every counter (the next nvmlInit reads the file again).
FAKE_EXPORT void fake_nvml_reset(void) {
  state() = FakeState{};
}

#ifdef FAKE_NVML_OLD_API
FAKE_EXPORT nvmlReturn_t nvmlInit(void) {
  return init_impl();
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* c) {
  return count_impl(c);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t* h) {
  return handle_impl(i, h);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t h, unsigned int* c,
                                                                 nvmlProcessInfo_t* p) {
  return processes_impl(h, c, p);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t h,
                                                                   unsigned long long* r) {
  return lookup_as(h, "clocks_event_reasons", r);
}
#else
FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  return init_impl();
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* c) {
  return count_impl(c);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* h) {
  return handle_impl(i, h);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t h, unsigned int* c,
                                                                 nvmlProcessInfo_t* p) {
  return processes_impl(h, c, p);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t h,
                                                                unsigned long long* r) {
  return lookup_as(h, "clocks_event_reasons", r);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMarginTemperature(nvmlDevice_t h,
                                                        nvmlMarginTemperature_v1_t* m) {
  if (!m || m->version != sparkops::gpu::nvml::kNvmlMarginTemperatureV1Version) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return lookup_as(h, "margin_temperature_c", &m->marginTemperature);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t h, nvmlMemory_v2_t* m) {
  if (!m || m->version != sparkops::gpu::nvml::kNvmlMemoryV2Version)
    return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t rc = lookup_as(h, "memory_total", &m->total);
  if (rc != NVML_SUCCESS) return rc;
  m->reserved = 0;
  rc = lookup_as(h, "memory_free", &m->free);
  return rc != NVML_SUCCESS ? rc : lookup_as(h, "memory_used", &m->used);
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlShutdown(void) {
  if (!state().initialized) return NVML_ERROR_UNINITIALIZED;
  state().initialized = false;
  return NVML_SUCCESS;
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "RM has detected an NVML/RM version mismatch.";
    default:
      return "Unknown Error";
  }
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* buf, unsigned int len) {
  const auto it = state().kv.find("driver_version");
  if (!state().initialized) return NVML_ERROR_UNINITIALIZED;
  if (it == state().kv.end()) return NVML_ERROR_NOT_SUPPORTED;
  if (!buf || it->second.size() + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, it->second.c_str(), it->second.size() + 1);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char* buf, unsigned int len) {
  return lookup_string(h, "name", buf, len);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char* buf, unsigned int len) {
  return lookup_string(h, "uuid", buf, len);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t* pci) {
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = nvmlPciInfo_t{};
  return lookup_string(h, "pci_bus_id", pci->busId, sizeof pci->busId);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t h, int sensor, unsigned int* t) {
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  if (FakeDevice* d = device(h); d && state().initialized) {
    ++d->ticks;
    ++state().ticks;
  }
  return lookup_as(h, "temperature_c", t);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int* mw) {
  return lookup_as(h, "power_mw", mw);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h,
                                                             unsigned long long* mj) {
  return lookup_as(h, "energy_mj", mj);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t h, unsigned int* mw) {
  return lookup_as(h, "power_limit_mw", mw);
}

namespace {
const char* clock_key(int type, bool max) {
  switch (type) {
    case NVML_CLOCK_SM:
      return max ? "clock_max_sm_mhz" : "clock_sm_mhz";
    case NVML_CLOCK_MEM:
      return max ? "clock_max_mem_mhz" : "clock_mem_mhz";
    case NVML_CLOCK_GRAPHICS:
      return max ? "clock_max_graphics_mhz" : "clock_graphics_mhz";
    default:
      return "clock_unknown";
  }
}
}  // namespace

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t h, int type, unsigned int* mhz) {
  return lookup_as(h, clock_key(type, false), mhz);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t h, int type, unsigned int* mhz) {
  return lookup_as(h, clock_key(type, true), mhz);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t* u) {
  if (!u) return NVML_ERROR_INVALID_ARGUMENT;
  const nvmlReturn_t rc = lookup_as(h, "util_gpu", &u->gpu);
  return rc != NVML_SUCCESS ? rc : lookup_as(h, "util_mem", &u->memory);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t h, int* p) {
  return lookup_as(h, "pstate", p);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t* m) {
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t rc = lookup_as(h, "memory_total", &m->total);
  if (rc != NVML_SUCCESS) return rc;
  rc = lookup_as(h, "memory_free", &m->free);
  return rc != NVML_SUCCESS ? rc : lookup_as(h, "memory_used", &m->used);
}

// Counters answer per field: "field.<id> = <ns>" (and "field.<id>_step"); an id the scenario does
// not list is NOT_SUPPORTED in that entry's nvmlReturn, as on a real driver.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t h, int count,
                                                  nvmlFieldValue_t* values) {
  if (!values || count <= 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (!state().initialized) return NVML_ERROR_UNINITIALIZED;
  if (!device(h)) return NVML_ERROR_INVALID_ARGUMENT;
  maybe_hang(false);
  if (lost_now()) return NVML_ERROR_GPU_IS_LOST;
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& v = values[i];
    unsigned long long value = 0;
    v.nvmlReturn = lookup(h, "field." + std::to_string(v.fieldId), value);
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    v.value.ullVal = v.nvmlReturn == NVML_SUCCESS ? value : 0;
    v.timestamp = 0;
    v.latencyUsec = 0;
  }
  return NVML_SUCCESS;
}
