// gpu_probe: opens the GPU source the way sparkops does (open_gpu_source with the environment's
// options: SPARKOPS_NVML_LIB, PATH, SPARKOPS_GPU_BACKEND) and prints every figure of two
// snapshots, naming the ones that are absent. Used by tools/device-check.sh on a real GPU machine
// and by gpu_probe_test against the fake library. Usage: gpu_probe [snapshots]

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpu/open_source.hpp"
#include "gpu/throttle_reasons.hpp"

namespace {

using sparkops::gpu::GpuSnapshot;

template <class T>
void figure(std::vector<std::string>& absent, const char* name, const std::optional<T>& v) {
  if (v) {
    fmt::print("    {}: {}\n", name, *v);
  } else {
    absent.emplace_back(name);
  }
}

void counter(std::vector<std::string>& absent, const char* name,
             const std::optional<std::chrono::nanoseconds>& v) {
  if (v) {
    fmt::print("    counters.{}_ns: {}\n", name, v->count());
  } else {
    absent.push_back(std::string("counters.") + name);
  }
}

void print_snapshot(const GpuSnapshot& s) {
  std::vector<std::string> absent;
  fmt::print("  gpu {}\n", s.index);
  figure(absent, "temp_millicelsius", s.temp_millicelsius);
  figure(absent, "margin_temp_millicelsius", s.margin_temp_millicelsius);
  figure(absent, "power_microwatts", s.power_microwatts);
  figure(absent, "energy_microjoules", s.energy_microjoules);
  figure(absent, "power_limit_microwatts", s.power_limit_microwatts);
  figure(absent, "sm_clock_mhz", s.sm_clock_mhz);
  figure(absent, "sm_clock_max_mhz", s.sm_clock_max_mhz);
  figure(absent, "mem_clock_mhz", s.mem_clock_mhz);
  figure(absent, "mem_clock_max_mhz", s.mem_clock_max_mhz);
  figure(absent, "util_gpu_percent", s.util_gpu_percent);
  figure(absent, "util_mem_percent", s.util_mem_percent);
  figure(absent, "pstate", s.pstate);
  if (s.clocks_event_reasons) {
    fmt::print("    clocks_event_reasons: 0x{:x} ({})\n", *s.clocks_event_reasons,
               sparkops::gpu::reason_names_joined(*s.clocks_event_reasons));
  } else {
    absent.emplace_back("clocks_event_reasons");
  }
  counter(absent, "sw_power_cap", s.counters.sw_power_cap);
  counter(absent, "sync_boost", s.counters.sync_boost);
  counter(absent, "sw_thermal", s.counters.sw_thermal);
  counter(absent, "hw_thermal", s.counters.hw_thermal);
  counter(absent, "hw_power_brake", s.counters.hw_power_brake);
  if (s.memory) {
    fmt::print("    memory: total {} free {} used {} bytes\n", s.memory->total_bytes,
               s.memory->free_bytes, s.memory->used_bytes);
  } else {
    absent.emplace_back("memory");
  }
  if (s.processes) {
    fmt::print("    processes: {}\n", s.processes->size());
    for (const auto& p : *s.processes) {
      fmt::print("      pid {} used_bytes {} {}\n", p.pid,
                 p.used_bytes ? std::to_string(*p.used_bytes) : std::string("unknown"), p.name);
    }
  } else {
    absent.emplace_back("processes");
  }
  fmt::print("    absent: {}\n",
             absent.empty() ? std::string("none") : fmt::format("{}", fmt::join(absent, " ")));
}

}  // namespace

int main(int argc, char** argv) {
  const int snapshots = argc > 1 ? std::atoi(argv[1]) : 2;
  const auto options = sparkops::gpu::gpu_open_options_from_environment();
  auto src = sparkops::gpu::open_gpu_source(options);
  fmt::print("backend: {}\nstate: {}\ndetail: {}\ndriver_version: {}\ndevices: {}\n",
             src->backend(), sparkops::gpu::gpu_state_name(src->state()), src->state_detail(),
             src->driver_version().value_or("absent"), src->devices().size());
  for (const auto& d : src->devices()) {
    fmt::print("device {}: name \"{}\" uuid \"{}\" pci \"{}\"\n", d.index, d.name, d.uuid,
               d.pci_bus_id);
  }
  for (int i = 1; i <= snapshots; ++i) {
    auto snap = src->snapshot();
    if (!snap) {
      fmt::print("snapshot {}: error {}: {}\n", i, sparkops::errc_name(snap.error().code),
                 snap.error().detail);
      continue;
    }
    fmt::print("snapshot {}: {} gpu(s)\n", i, snap->size());
    for (const auto& s : *snap) print_snapshot(s);
  }
  std::fflush(stdout);
  return src->state() == sparkops::gpu::GpuState::ok ? 0 : 3;
}
