#include "sampling/sample_row.hpp"

namespace sparkops::sampling {

namespace {

template <class T>
std::optional<double> number(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

std::optional<double> scaled(const auto& v, double divisor) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v) / divisor;
}

std::optional<double> seconds(const std::optional<std::chrono::nanoseconds>& d) {
  if (!d) return std::nullopt;
  return static_cast<double>(d->count()) / 1e9;
}

}  // namespace

SampleRow sample_row(const Sample& s, const GpuReading* gpu, std::optional<unsigned> index) {
  SampleRow r;
  r.time = s.wall_time;
  if (index) r.gpu_index = *index;
  if (gpu != nullptr) {
    const gpu::GpuSnapshot& g = gpu->snapshot;
    const GpuDeltas& d = gpu->deltas;
    r.gpu_temp_c = scaled(g.temp_millicelsius, 1000.0);
    r.gpu_margin_c = scaled(g.margin_temp_millicelsius, 1000.0);
    r.power_w = scaled(g.power_microwatts, 1e6);
    r.energy_delta_j = scaled(d.energy_microjoules, 1e6);
    r.sm_clock_mhz = number(g.sm_clock_mhz);
    r.sm_clock_max_mhz = number(g.sm_clock_max_mhz);
    r.gpu_util_pct = number(g.util_gpu_percent);
    if (g.pstate) r.pstate = *g.pstate;
    r.reasons_mask = g.clocks_event_reasons;
    r.throttle_sw_power_cap_s = seconds(d.throttle.sw_power_cap);
    r.throttle_sync_boost_s = seconds(d.throttle.sync_boost);
    r.throttle_sw_thermal_s = seconds(d.throttle.sw_thermal);
    r.throttle_hw_thermal_s = seconds(d.throttle.hw_thermal);
    r.throttle_hw_power_brake_s = seconds(d.throttle.hw_power_brake);
    r.gpu_process_memory_bytes = number(gpu->process_memory_bytes());
  }
  const host::HostReading& h = s.host;
  r.host_hottest_sensor = h.hottest_sensor;
  r.host_hottest_c = scaled(h.hottest_millicelsius, 1000.0);
  r.spbm_sys_total_w = scaled(h.spbm_sys_total_microwatts, 1e6);
  r.spbm_soc_pkg_w = scaled(h.spbm_soc_pkg_microwatts, 1e6);
  r.spbm_cpu_gpu_w = scaled(h.spbm_cpu_gpu_microwatts, 1e6);
  r.spbm_gpu_w = scaled(h.spbm_gpu_microwatts, 1e6);
  r.spbm_dc_input_w = scaled(h.spbm_dc_input_microwatts, 1e6);
  r.mem_total_bytes = number(h.mem_total_bytes);
  r.mem_free_bytes = number(h.mem_free_bytes);
  r.mem_available_bytes = number(h.mem_available_bytes);
  r.cached_bytes = number(h.cached_bytes);
  r.psi_mem_some_delta_us = number(s.host_deltas.psi_mem_some_us);
  r.psi_mem_full_delta_us = number(s.host_deltas.psi_mem_full_us);
  r.major_faults_delta = number(s.host_deltas.major_faults);
  return r;
}

}  // namespace sparkops::sampling
