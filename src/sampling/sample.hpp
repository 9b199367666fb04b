#pragma once
// Sample: one tick of the sampler. Raw readings (cumulative counters as read) plus the deltas since
// the previous tick, which compute_deltas fills. Everything a machine may not provide is optional.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_reading.hpp"

namespace sparkops::sampling {

// Per-interval differences of the host counters; absent on the first tick, when either side is
// absent, or when a counter went backwards (reboot, captured tree swapped).
struct HostDeltas {
  std::optional<std::uint64_t> psi_mem_some_us;
  std::optional<std::uint64_t> psi_mem_full_us;
  std::optional<std::uint64_t> major_faults;
};

// Per-interval differences for one GPU (matched by index with the previous tick).
struct GpuDeltas {
  std::optional<std::uint64_t> energy_microjoules;
  gpu::ThrottleCounters throttle;  // time spent in each reason during the interval
};

struct GpuReading {
  gpu::GpuSnapshot snapshot;  // snapshot.index is the GPU index
  GpuDeltas deltas;
  // Sum of per-process GPU memory; absent when the process query is unsupported or no process
  // reported a size.
  std::optional<std::uint64_t> process_memory_bytes() const;
};

struct Sample {
  std::uint64_t tick = 0;  // k: scheduled at t0 + k·interval
  SystemTime wall_time{};  // stamp (UTC system clock)
  SteadyTime steady_time{};
  std::chrono::nanoseconds interval{};  // time since the previous tick (0 on the first)
  host::HostReading host;
  HostDeltas host_deltas;
  gpu::GpuState gpu_state = gpu::GpuState::no_library;
  std::string gpu_detail;          // one line when gpu_state is not ok
  std::vector<gpu::GpuDevice> devices;  // the devices the source knows (kept while lost)
  std::vector<GpuReading> gpus;    // one per device answering this tick; empty when lost
};

// Fills current.host_deltas, current.gpus[].deltas and current.interval from `previous`
// (nullptr on the first tick). Pure.
void compute_deltas(const Sample* previous, Sample& current);

}  // namespace sparkops::sampling
