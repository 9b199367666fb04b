#pragma once
// Sampler: one tick = collect a Sample, format its rows, feed the throttle detector. The caller
// (cli/) owns the schedule, the files and the printing; tests drive it with a ManualClock.

#include <string>
#include <vector>

#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "sampling/collector.hpp"
#include "sampling/scheduler.hpp"
#include "sampling/throttle_detector.hpp"
#include "sampling/writers.hpp"

namespace sparkops::sampling {

struct TickResult {
  Sample sample;
  std::vector<std::string> rows;  // complete lines, one per GPU (see format_sample_rows)
  std::vector<ThrottleEvent> events;
};

class Sampler {
 public:
  // `collector` must outlive the sampler.
  Sampler(Collector& collector, SampleFormat format, DetectorConfig detector);
  TickResult tick(const Tick& tick);
  // Closes the open episodes when sampling stops.
  std::vector<ThrottleEvent> finish(SystemTime time) { return detector_.finish(time); }

 private:
  Collector& collector_;
  SampleFormat format_;
  ThrottleDetector detector_;
};

// The extended comment line's facts: hostname and kernel from the root, driver and device names
// from the GPU source (null: no GPU).
FileMeta make_file_meta(const host::HostRoot& root, const gpu::GpuSource* gpu, std::string version);

}  // namespace sparkops::sampling
