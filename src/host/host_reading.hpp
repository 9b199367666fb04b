#pragma once
// HostReading: the host half of one sample, as the sampler, `watch` and the exporter take it from
// host/ (read_host_reading walks every sensor once; HostProbe, host_probe.hpp, gives the same
// answer at the cost of a few held-file reads per tick).

#include <cstdint>
#include <optional>
#include <string>

#include "host/host_root.hpp"

namespace sparkops::host {

// Host side of a tick. Temperatures in millicelsius, power in microwatts, memory in bytes.
struct HostReading {
  std::optional<std::string> hottest_sensor;  // "<chip>/<label>", e.g. "acpitz/temp1"
  std::optional<std::int64_t> hottest_millicelsius;
  std::optional<std::uint64_t> spbm_sys_total_microwatts;
  std::optional<std::uint64_t> spbm_soc_pkg_microwatts;
  std::optional<std::uint64_t> spbm_cpu_gpu_microwatts;
  std::optional<std::uint64_t> spbm_gpu_microwatts;
  std::optional<std::uint64_t> spbm_dc_input_microwatts;
  std::optional<std::uint64_t> mem_total_bytes;
  std::optional<std::uint64_t> mem_free_bytes;
  std::optional<std::uint64_t> mem_available_bytes;
  std::optional<std::uint64_t> cached_bytes;
  std::optional<std::uint64_t> psi_mem_some_total_us;  // cumulative (/proc/pressure/memory total=)
  std::optional<std::uint64_t> psi_mem_full_total_us;
  std::optional<std::uint64_t> major_faults_total;  // cumulative (/proc/vmstat pgmajfault)
};

// Every field absent when its file is missing or unreadable; walks every hwmon chip and thermal
// zone (hundreds of file opens on a Spark), so a loop uses HostProbe instead.
HostReading read_host_reading(const HostRoot& root);

}  // namespace sparkops::host
