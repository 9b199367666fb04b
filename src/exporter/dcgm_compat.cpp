#include "exporter/dcgm_compat.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace sparkops::exporter {

namespace {

constexpr std::string_view kDcgmLabels =
    "gpu,UUID,pci_bus_id,device,modelName,Hostname,DCGM_FI_DRIVER_VERSION";

const gpu::GpuDevice* device_of(const status::GpuStatus& g, unsigned index) {
  for (const auto& d : g.devices) {
    if (d.index == index) return &d;
  }
  return nullptr;
}

std::vector<Label> dcgm_labels(const status::StatusReport& r, const gpu::GpuSnapshot& s) {
  const gpu::GpuDevice* d = device_of(r.gpu, s.index);
  std::vector<Label> labels = {
      {"gpu", std::to_string(s.index)},
      {"UUID", d ? d->uuid : std::string()},
      {"pci_bus_id", d ? d->pci_bus_id : std::string()},
      {"device", "nvidia" + std::to_string(s.index)},
      {"modelName", d ? d->name : std::string()},
  };
  // dcgm-exporter leaves Hostname out when it has none (--no-hostname).
  if (r.system.hostname && !r.system.hostname->empty())
    labels.push_back({"Hostname", *r.system.hostname});
  if (r.gpu.driver_version) labels.push_back({"DCGM_FI_DRIVER_VERSION", *r.gpu.driver_version});
  return labels;
}

struct Framebuffer {
  double free_mib = 0, used_mib = 0, reserved_mib = 0;
};

// Whole MiB, rounded down, as DCGM reports them.
double to_mib(std::uint64_t bytes) {
  return static_cast<double>(bytes / (1024ULL * 1024ULL));
}

std::optional<Framebuffer> framebuffer(const status::StatusReport& r, const gpu::GpuSnapshot& s) {
  if (s.memory) {
    const auto& m = *s.memory;
    const std::uint64_t accounted = m.free_bytes + m.used_bytes;
    return Framebuffer{to_mib(m.free_bytes), to_mib(m.used_bytes),
                       to_mib(m.total_bytes > accounted ? m.total_bytes - accounted : 0)};
  }
  if (!r.pool || r.gpu.snapshots.size() != 1) return std::nullopt;
  const auto& p = *r.pool;
  // available may include SwapFree (pool.swap_counts): never report more free than MemTotal.
  const std::uint64_t free = std::min(p.available_bytes, p.total_bytes);
  const std::uint64_t reserved = std::min(p.hugepages_reserved_bytes, p.total_bytes - free);
  return Framebuffer{to_mib(free), to_mib(p.total_bytes - free - reserved), to_mib(reserved)};
}

}  // namespace

const std::vector<MetricDef>& dcgm_catalogue() {
  using enum MetricType;
  static const std::vector<MetricDef> defs = {
      {"DCGM_FI_DEV_SM_CLOCK", gauge, kDcgmLabels, "SM clock (MHz)."},
      {"DCGM_FI_DEV_MEM_CLOCK", gauge, kDcgmLabels, "Memory clock (MHz)."},
      {"DCGM_FI_DEV_GPU_TEMP", gauge, kDcgmLabels, "GPU temperature (C)."},
      {"DCGM_FI_DEV_POWER_USAGE", gauge, kDcgmLabels, "GPU power draw (W)."},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", counter, kDcgmLabels,
       "GPU energy since driver load (mJ)."},
      {"DCGM_FI_DEV_GPU_UTIL", gauge, kDcgmLabels, "GPU utilisation (%)."},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", gauge, kDcgmLabels, "Memory controller utilisation (%)."},
      {"DCGM_FI_DEV_FB_FREE", gauge, kDcgmLabels,
       "Free memory (MiB); on a unified-memory GPU, the pool's MemAvailable."},
      {"DCGM_FI_DEV_FB_USED", gauge, kDcgmLabels,
       "Used memory (MiB); on a unified-memory GPU, MemTotal minus available and huge pages."},
      {"DCGM_FI_DEV_FB_RESERVED", gauge, kDcgmLabels,
       "Reserved memory (MiB); on a unified-memory GPU, huge pages."},
      {"DCGM_FI_DEV_POWER_VIOLATION", counter, kDcgmLabels,
       "Time held back by the SW power cap since driver load (ns)."},
      {"DCGM_FI_DEV_THERMAL_VIOLATION", counter, kDcgmLabels,
       "Time held back by SW plus HW thermal slowdown since driver load (ns)."},
      {"DCGM_FI_DEV_SYNC_BOOST_VIOLATION", counter, kDcgmLabels,
       "Time held back by sync boost since driver load (ns)."},
  };
  return defs;
}

std::vector<MetricFamily> dcgm_metric_families(const status::StatusReport& report) {
  std::map<std::string_view, std::vector<MetricSample>> samples;
  const auto add = [&samples](std::string_view name, const std::vector<Label>& labels,
                              double value) {
    samples[name].push_back(MetricSample{labels, value});
  };
  const auto ns = [](const std::optional<std::chrono::nanoseconds>& d) {
    return static_cast<double>(d->count());
  };
  for (const auto& s : report.gpu.snapshots) {
    const auto L = dcgm_labels(report, s);
    if (s.sm_clock_mhz) add("DCGM_FI_DEV_SM_CLOCK", L, static_cast<double>(*s.sm_clock_mhz));
    if (s.mem_clock_mhz) add("DCGM_FI_DEV_MEM_CLOCK", L, static_cast<double>(*s.mem_clock_mhz));
    if (s.temp_millicelsius)
      add("DCGM_FI_DEV_GPU_TEMP", L, static_cast<double>(*s.temp_millicelsius) / 1e3);
    if (s.power_microwatts)
      add("DCGM_FI_DEV_POWER_USAGE", L, static_cast<double>(*s.power_microwatts) / 1e6);
    if (s.energy_microjoules)
      add("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", L,
          static_cast<double>(*s.energy_microjoules / 1000));
    if (s.util_gpu_percent)
      add("DCGM_FI_DEV_GPU_UTIL", L, static_cast<double>(*s.util_gpu_percent));
    if (s.util_mem_percent)
      add("DCGM_FI_DEV_MEM_COPY_UTIL", L, static_cast<double>(*s.util_mem_percent));
    if (const auto fb = framebuffer(report, s)) {
      add("DCGM_FI_DEV_FB_FREE", L, fb->free_mib);
      add("DCGM_FI_DEV_FB_USED", L, fb->used_mib);
      add("DCGM_FI_DEV_FB_RESERVED", L, fb->reserved_mib);
    }
    const auto& c = s.counters;
    if (c.sw_power_cap) add("DCGM_FI_DEV_POWER_VIOLATION", L, ns(c.sw_power_cap));
    // DCGM has one thermal figure; NVML's two counters overlap when both hold at once, so the sum
    // can exceed wall time. Only when both are known.
    if (c.sw_thermal && c.hw_thermal)
      add("DCGM_FI_DEV_THERMAL_VIOLATION", L, ns(c.sw_thermal) + ns(c.hw_thermal));
    if (c.sync_boost) add("DCGM_FI_DEV_SYNC_BOOST_VIOLATION", L, ns(c.sync_boost));
  }
  std::vector<MetricFamily> out;
  for (const auto& def : dcgm_catalogue()) {
    auto it = samples.find(def.name);
    if (it == samples.end()) continue;
    out.push_back(MetricFamily{std::string(def.name), def.type, std::string(def.help),
                               std::move(it->second)});
  }
  return out;
}

}  // namespace sparkops::exporter
