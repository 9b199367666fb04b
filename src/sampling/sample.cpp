#include "sampling/sample.hpp"

namespace sparkops::sampling {

namespace {

std::optional<std::uint64_t> counter_delta(const std::optional<std::uint64_t>& before,
                                           const std::optional<std::uint64_t>& after) {
  if (!before || !after || *after < *before) return std::nullopt;
  return *after - *before;
}

std::optional<std::chrono::nanoseconds> duration_delta(
    const std::optional<std::chrono::nanoseconds>& before,
    const std::optional<std::chrono::nanoseconds>& after) {
  if (!before || !after || *after < *before) return std::nullopt;
  return *after - *before;
}

const GpuReading* find_gpu(const Sample& sample, unsigned index) {
  for (const auto& g : sample.gpus) {
    if (g.snapshot.index == index) return &g;
  }
  return nullptr;
}

}  // namespace

std::optional<std::uint64_t> GpuReading::process_memory_bytes() const {
  if (!snapshot.processes) return std::nullopt;
  std::optional<std::uint64_t> sum;
  for (const auto& p : *snapshot.processes) {
    if (p.used_bytes) sum = sum.value_or(0) + *p.used_bytes;
  }
  if (!sum && snapshot.processes->empty()) return 0;  // the query works and nothing runs
  return sum;
}

void compute_deltas(const Sample* previous, Sample& current) {
  current.host_deltas = {};
  current.interval = std::chrono::nanoseconds{0};
  for (auto& g : current.gpus) g.deltas = {};
  if (previous == nullptr) return;
  current.interval = current.steady_time - previous->steady_time;
  const host::HostReading& a = previous->host;
  const host::HostReading& b = current.host;
  current.host_deltas.psi_mem_some_us =
      counter_delta(a.psi_mem_some_total_us, b.psi_mem_some_total_us);
  current.host_deltas.psi_mem_full_us =
      counter_delta(a.psi_mem_full_total_us, b.psi_mem_full_total_us);
  current.host_deltas.major_faults = counter_delta(a.major_faults_total, b.major_faults_total);
  for (auto& g : current.gpus) {
    const GpuReading* before = find_gpu(*previous, g.snapshot.index);
    if (before == nullptr) continue;
    const gpu::GpuSnapshot& s0 = before->snapshot;
    const gpu::GpuSnapshot& s1 = g.snapshot;
    g.deltas.energy_microjoules = counter_delta(s0.energy_microjoules, s1.energy_microjoules);
    g.deltas.throttle.sw_power_cap =
        duration_delta(s0.counters.sw_power_cap, s1.counters.sw_power_cap);
    g.deltas.throttle.sync_boost = duration_delta(s0.counters.sync_boost, s1.counters.sync_boost);
    g.deltas.throttle.sw_thermal = duration_delta(s0.counters.sw_thermal, s1.counters.sw_thermal);
    g.deltas.throttle.hw_thermal = duration_delta(s0.counters.hw_thermal, s1.counters.hw_thermal);
    g.deltas.throttle.hw_power_brake =
        duration_delta(s0.counters.hw_power_brake, s1.counters.hw_power_brake);
  }
}

}  // namespace sparkops::sampling
