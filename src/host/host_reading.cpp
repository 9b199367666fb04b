#include "host/host_reading.hpp"

#include <utility>
#include <vector>

#include "host/hwmon.hpp"
#include "host/meminfo.hpp"
#include "host/pressure.hpp"
#include "host/sensors.hpp"
#include "host/thermal_zone.hpp"
#include "host/vmstat.hpp"

namespace sparkops::host {

HostReading read_host_reading(const HostRoot& root) {
  HostReading h;
  if (auto mem = read_meminfo(root)) {
    h.mem_total_bytes = mem->mem_total_bytes;
    h.mem_free_bytes = mem->mem_free_bytes;
    h.mem_available_bytes = mem->mem_available_bytes;
    h.cached_bytes = mem->cached_bytes;
  }
  if (auto psi = read_psi(root, PsiResource::memory); psi && *psi) {
    h.psi_mem_some_total_us = (*psi)->some.total_us;
    if ((*psi)->full) h.psi_mem_full_total_us = (*psi)->full->total_us;
  }
  if (auto vm = read_vmstat(root); vm && *vm) h.major_faults_total = (*vm)->pgmajfault;
  std::vector<HwmonChip> chips;
  if (auto c = read_hwmon_chips(root)) chips = std::move(*c);
  std::vector<ThermalZone> zones;
  if (auto z = read_thermal_zones(root)) zones = std::move(*z);
  if (auto hot = hottest_sensor(chips, zones)) {
    h.hottest_sensor = std::move(hot->name);
    h.hottest_millicelsius = hot->temp_millicelsius;
  }
  for (const PowerRail& rail : spbm_rails(chips)) {
    if (rail.name == "sys_total")
      h.spbm_sys_total_microwatts = rail.power_microwatts;
    else if (rail.name == "soc_pkg")
      h.spbm_soc_pkg_microwatts = rail.power_microwatts;
    else if (rail.name == "cpu_gpu")
      h.spbm_cpu_gpu_microwatts = rail.power_microwatts;
    else if (rail.name == "gpu")
      h.spbm_gpu_microwatts = rail.power_microwatts;
    else if (rail.name == "dc_input")
      h.spbm_dc_input_microwatts = rail.power_microwatts;
  }
  return h;
}

}  // namespace sparkops::host
