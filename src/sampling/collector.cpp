#include "sampling/collector.hpp"

#include <algorithm>
#include <utility>

#include "host/hwmon.hpp"
#include "host/meminfo.hpp"
#include "host/pressure.hpp"
#include "host/sensors.hpp"
#include "host/thermal_zone.hpp"
#include "host/vmstat.hpp"

namespace sparkops {

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

Collector::Collector(const HostRoot& root, GpuSource* gpu, BackoffOptions backoff)
    : host_(root), gpu_(gpu), backoff_(backoff) {}

void Collector::collect_gpu(Sample& sample, SteadyTime steady) {
  if (gpu_ == nullptr) {
    sample.gpu_state = GpuState::no_library;
    return;
  }
  sample.devices = gpu_->devices();
  if (gpu_retry_at_ && steady < *gpu_retry_at_) {
    sample.gpu_state = GpuState::lost;
    sample.gpu_detail = gpu_lost_detail_;
    return;
  }
  auto snap = gpu_->snapshot();
  if (snap) {
    gpu_failures_ = 0;
    gpu_retry_at_.reset();
    sample.gpu_state = gpu_->state();
    sample.gpu_detail = gpu_->state_detail();
    if (sample.devices.empty()) sample.devices = gpu_->devices();
    sample.gpus.reserve(snap->size());
    for (auto& s : *snap) {
      GpuReading r;
      r.snapshot = std::move(s);
      sample.gpus.push_back(std::move(r));
    }
    return;
  }
  ++gpu_failures_;
  // A hung call (watchdog_source.hpp) is still out: asking again costs nothing and sees the
  // recovery on the first tick after it, so no back-off.
  if (snap.error().code == Errc::gpu_hung) {
    gpu_retry_at_.reset();
    sample.gpu_state = GpuState::hung;
    sample.gpu_detail = snap.error().detail;
    return;
  }
  const unsigned shift = std::min(gpu_failures_ - 1, 20U);
  const auto wait = std::min(backoff_.first * (std::int64_t{1} << shift), backoff_.max);
  gpu_retry_at_ = steady + wait;
  gpu_lost_detail_ = snap.error().detail;
  sample.gpu_state = GpuState::lost;
  sample.gpu_detail = gpu_lost_detail_;
}

Sample Collector::collect(std::uint64_t tick, SteadyTime steady, SystemTime wall) {
  Sample sample;
  sample.tick = tick;
  sample.steady_time = steady;
  sample.wall_time = wall;
  sample.host = host_.read();
  collect_gpu(sample, steady);
  compute_deltas(previous_ ? &*previous_ : nullptr, sample);
  previous_ = sample;
  return sample;
}

}  // namespace sparkops
