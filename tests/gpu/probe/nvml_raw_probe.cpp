// nvml_raw_probe: asks libnvidia-ml directly (no sparkops code but gpu/nvml_api.hpp), printing
// every return code, so a real driver's answers can be compared with our declarations: symbol
// presence, struct versions, and which field ids carry the throttle counters (251-253 on r580,
// 269-271 in the newer header). Needs only a C++17 compiler and libdl.
// Usage: nvml_raw_probe [library]   (default: $SPARKOPS_NVML_LIB or libnvidia-ml.so.1)

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "gpu/nvml_api.hpp"

namespace {

void* lib = nullptr;

template <class Fn>
Fn sym(const char* name) {
  void* p = dlsym(lib, name);
  std::printf("symbol %-45s %s\n", name, p ? "present" : "MISSING");
  return reinterpret_cast<Fn>(p);
}

const char* err(nvmlErrorString_fn es, nvmlReturn_t rc) {
  return es ? es(rc) : "?";
}

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("SPARKOPS_NVML_LIB");
  const char* path = argc > 1 ? argv[1] : (env && *env ? env : "libnvidia-ml.so.1");
  lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::printf("dlopen %s failed: %s\n", path, dlerror());
    return 2;
  }
  std::printf("library: %s\n", path);
  auto init = sym<nvmlInit_fn>("nvmlInit_v2");
  auto shutdown = sym<nvmlShutdown_fn>("nvmlShutdown");
  auto es = sym<nvmlErrorString_fn>("nvmlErrorString");
  auto drv = sym<nvmlSystemGetDriverVersion_fn>("nvmlSystemGetDriverVersion");
  auto count_fn = sym<nvmlDeviceGetCount_fn>("nvmlDeviceGetCount_v2");
  auto handle_fn = sym<nvmlDeviceGetHandleByIndex_fn>("nvmlDeviceGetHandleByIndex_v2");
  auto name_fn = sym<nvmlDeviceGetName_fn>("nvmlDeviceGetName");
  auto fields_fn = sym<nvmlDeviceGetFieldValues_fn>("nvmlDeviceGetFieldValues");
  auto mem1 = sym<nvmlDeviceGetMemoryInfo_fn>("nvmlDeviceGetMemoryInfo");
  auto mem2 = sym<nvmlDeviceGetMemoryInfo_v2_fn>("nvmlDeviceGetMemoryInfo_v2");
  auto margin = sym<nvmlDeviceGetMarginTemperature_fn>("nvmlDeviceGetMarginTemperature");
  auto reasons = sym<nvmlDeviceGetClocksEventReasons_fn>("nvmlDeviceGetCurrentClocksEventReasons");
  sym<nvmlDeviceGetClocksEventReasons_fn>("nvmlDeviceGetCurrentClocksThrottleReasons");
  auto procs3 =
      sym<nvmlDeviceGetComputeRunningProcesses_fn>("nvmlDeviceGetComputeRunningProcesses_v3");
  sym<nvmlDeviceGetComputeRunningProcesses_fn>("nvmlDeviceGetComputeRunningProcesses_v2");
  auto limit = sym<nvmlDeviceGetEnforcedPowerLimit_fn>("nvmlDeviceGetEnforcedPowerLimit");
  auto energy = sym<nvmlDeviceGetTotalEnergyConsumption_fn>("nvmlDeviceGetTotalEnergyConsumption");
  if (!init || !count_fn || !handle_fn) return 2;
  const nvmlReturn_t rc = init();
  std::printf("nvmlInit_v2: %d %s\n", rc, err(es, rc));
  if (rc != NVML_SUCCESS) return 3;
  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (drv) std::printf("driver: rc %d \"%s\"\n", drv(buf, sizeof buf), buf);
  unsigned count = 0;
  const nvmlReturn_t count_rc = count_fn(&count);
  std::printf("count: rc %d n %u\n", count_rc, count);
  for (unsigned i = 0; i < count && i < 8; ++i) {
    nvmlDevice_t h = nullptr;
    if (handle_fn(i, &h) != NVML_SUCCESS) continue;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (name_fn) name_fn(h, name, sizeof name);
    std::printf("gpu %u: %s\n", i, name);
    if (fields_fn) {
      const unsigned ids[] = {74, 75, 76, 251, 252, 253, 254, 255, 269, 270, 271, 272, 273};
      nvmlFieldValue_t v[sizeof ids / sizeof ids[0]] = {};
      for (unsigned k = 0; k < sizeof ids / sizeof ids[0]; ++k) v[k].fieldId = ids[k];
      const nvmlReturn_t frc = fields_fn(h, static_cast<int>(sizeof ids / sizeof ids[0]), v);
      std::printf("  field values call: rc %d\n", frc);
      for (const auto& f : v) {
        std::printf("  field %3u: rc %2d (%s) type %d ull %llu\n", f.fieldId, f.nvmlReturn,
                    err(es, f.nvmlReturn), f.valueType, f.value.ullVal);
      }
    }
    if (mem2) {
      nvmlMemory_v2_t m{};
      m.version = sparkops::gpu::nvml::kNvmlMemoryV2Version;
      const nvmlReturn_t r = mem2(h, &m);
      std::printf("  memory_v2: rc %d (%s) total %llu free %llu used %llu reserved %llu\n", r,
                  err(es, r), m.total, m.free, m.used, m.reserved);
    }
    if (mem1) {
      nvmlMemory_t m{};
      const nvmlReturn_t r = mem1(h, &m);
      std::printf("  memory_v1: rc %d (%s) total %llu free %llu used %llu\n", r, err(es, r),
                  m.total, m.free, m.used);
    }
    if (margin) {
      nvmlMarginTemperature_v1_t m{};
      m.version = sparkops::gpu::nvml::kNvmlMarginTemperatureV1Version;
      const nvmlReturn_t r = margin(h, &m);
      std::printf("  margin_temperature: rc %d (%s) %d C\n", r, err(es, r), m.marginTemperature);
    }
    if (reasons) {
      unsigned long long r = 0;
      const nvmlReturn_t x = reasons(h, &r);
      std::printf("  clocks_event_reasons: rc %d 0x%llx\n", x, r);
    }
    if (limit) {
      unsigned mw = 0;
      const nvmlReturn_t x = limit(h, &mw);
      std::printf("  enforced_power_limit: rc %d (%s) %u mW\n", x, err(es, x), mw);
    }
    if (energy) {
      unsigned long long mj = 0;
      const nvmlReturn_t x = energy(h, &mj);
      std::printf("  total_energy: rc %d (%s) %llu mJ\n", x, err(es, x), mj);
    }
    if (procs3) {
      nvmlProcessInfo_t p[64] = {};
      unsigned n = 64;
      const nvmlReturn_t x = procs3(h, &n, p);
      std::printf("  compute_processes_v3: rc %d (%s) n %u\n", x, err(es, x), n);
      for (unsigned k = 0; x == NVML_SUCCESS && k < n && k < 64; ++k) {
        std::printf("    pid %u used %llu gi %u ci %u\n", p[k].pid, p[k].usedGpuMemory,
                    p[k].gpuInstanceId, p[k].computeInstanceId);
      }
    }
  }
  if (shutdown) shutdown();
  return 0;
}
