#pragma once
// Collector: reads the host (through HostRoot) and the GPUs (through GpuSource) into one Sample.
// Nothing here fails: a reader that errors leaves its fields absent. A GPU that is lost is retried
// with exponential back-off (1 s, 2 s, 4 s ... capped) on the steady clock; while it is out, the
// Sample says gpu_state lost and carries no GPU readings, so its columns print as absent. A GPU
// whose call is out past its watchdog (Errc::gpu_hung) makes the Sample say hung, with no
// readings and no back-off; the host half is read as on every tick.
// Not thread-safe (one sampler thread owns it, as it owns the GpuSource).

#include <chrono>
#include <cstdint>
#include <optional>

#include "base/clock.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_probe.hpp"
#include "host/host_root.hpp"
#include "sampling/sample.hpp"

namespace sparkops::sampling {

struct BackoffOptions {
  std::chrono::nanoseconds first = std::chrono::seconds{1};
  std::chrono::nanoseconds max = std::chrono::minutes{5};
};

class Collector {
 public:
  // `gpu` may be null (no GPU source at all); it must outlive the collector.
  Collector(const host::HostRoot& root, gpu::GpuSource* gpu, BackoffOptions backoff = {});

  // Reads one Sample stamped with `wall`, scheduled as tick `tick`, and fills its deltas against
  // the previous collect().
  Sample collect(std::uint64_t tick, SteadyTime steady, SystemTime wall);

  // Failed GPU snapshots in a row (0 when the GPU answers).
  unsigned gpu_failures() const { return gpu_failures_; }

 private:
  void collect_gpu(Sample& sample, SteadyTime steady);

  host::HostProbe host_;
  gpu::GpuSource* gpu_;
  BackoffOptions backoff_;
  unsigned gpu_failures_ = 0;
  std::optional<SteadyTime> gpu_retry_at_;
  std::string gpu_lost_detail_;
  std::optional<Sample> previous_;
};

}  // namespace sparkops::sampling
