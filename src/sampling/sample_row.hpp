#pragma once
// SampleRow: one row of a sample file, one GPU at one tick, in the file's units (C, W, J, MHz, %,
// s, bytes). The writers (writers.hpp) print it through the column table (sample_columns.hpp) and
// `analyze`'s reader (diagnose/thermal_log.hpp) parses the same table back into it, so a column is
// written, read and documented from one row of that table. Everything a file may lack is optional;
// numbers are doubles as the readers of a file take them (integers stay exact below 2^53).

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.hpp"
#include "sampling/sample.hpp"

namespace sparkops::sampling {

struct SampleRow {
  SystemTime time{};
  std::optional<std::int64_t> gpu_index;
  std::optional<double> gpu_temp_c;
  std::optional<double> gpu_margin_c;
  std::optional<double> power_w;
  std::optional<double> energy_delta_j;
  std::optional<double> sm_clock_mhz;
  std::optional<double> sm_clock_max_mhz;
  std::optional<double> gpu_util_pct;
  std::optional<std::int64_t> pstate;         // 0 for "P0"
  std::optional<std::uint64_t> reasons_mask;  // NVML clocks-event-reason bits
  // Seconds spent in each reason during the interval (diffs of NVML's cumulative counters).
  std::optional<double> throttle_sw_power_cap_s;
  std::optional<double> throttle_sync_boost_s;
  std::optional<double> throttle_sw_thermal_s;
  std::optional<double> throttle_hw_thermal_s;
  std::optional<double> throttle_hw_power_brake_s;
  std::optional<std::string> host_hottest_sensor;
  std::optional<double> host_hottest_c;
  std::optional<double> spbm_sys_total_w;
  std::optional<double> spbm_soc_pkg_w;
  std::optional<double> spbm_cpu_gpu_w;
  std::optional<double> spbm_gpu_w;
  std::optional<double> spbm_dc_input_w;
  std::optional<double> mem_total_bytes;
  std::optional<double> mem_free_bytes;
  std::optional<double> mem_available_bytes;
  std::optional<double> cached_bytes;
  std::optional<double> psi_mem_some_delta_us;
  std::optional<double> psi_mem_full_delta_us;
  std::optional<double> major_faults_delta;
  std::optional<double> gpu_process_memory_bytes;
};

// The row of `sample` for one GPU: `gpu` is its reading, or null for a known device that did not
// answer this tick and for the host-only row (then `index` is the device's index, or absent).
// The one place where kernel and NVML units (millidegrees, microwatts, nanoseconds) become the
// file's units.
SampleRow sample_row(const Sample& sample, const GpuReading* gpu, std::optional<unsigned> index);

}  // namespace sparkops::sampling
