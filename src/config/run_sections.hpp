#pragma once
// The [sample], [watch], [serve] and [gpu] config sections as typed values: the sampler's interval
// and its file's durability (sampling/appender.hpp, sampling/sample_run.hpp,
// watch/watch_session.hpp), how much of a job's output `watch` keeps, what an empty `sparkops
// serve` flag means (exporter/serve_session.hpp) and how long one GPU driver call may take
// (gpu/watchdog_source.hpp). The member initialisers below are
// the only place these defaults are written: the key table (config_keys.cpp) prints them as the
// keys' default text.

#include <chrono>
#include <cstdint>
#include <string>

#include "config/config.hpp"

namespace sparkops::config {

struct SampleSettings {
  // sample.interval: every 30-60 s for long runs (the skill's thermal sampler).
  std::chrono::nanoseconds interval = std::chrono::seconds{30};
  std::int64_t fsync_every = 10;             // sample.fsync_every: rows between fsyncs, 0 = never
  std::int64_t memory_buffer_rows = 100000;  // sample.memory_buffer_rows: kept while disk refuses
};

struct WatchSettings {
  // watch.max_log_bytes: the job's log (and its .times sidecar) stop growing here.
  std::uint64_t max_log_bytes = 8ULL << 30;
};

// serve.max_workloads: per-workload series `serve` exports at most, largest first.
inline constexpr std::int64_t kDefaultMaxWorkloadSeries = 32;

struct ServeSettings {
  std::string listen = "127.0.0.1:9877";                        // serve.listen
  std::chrono::nanoseconds interval = std::chrono::seconds{5};  // serve.interval
  std::int64_t max_workloads = kDefaultMaxWorkloadSeries;       // serve.max_workloads
};

struct GpuSettings {
  // gpu.timeout: the longest wait for one NVML or nvidia-smi call before the GPU is marked hung.
  std::chrono::nanoseconds timeout = std::chrono::seconds{10};
};

// The sample.* values in effect (defaults, files, flags); the range checks are the caller's.
SampleSettings sample_settings(const Config& config);
// The serve.* values in effect.
ServeSettings serve_settings(const Config& config);
// The watch.* values in effect.
WatchSettings watch_settings(const Config& config);
// The gpu.* values in effect.
GpuSettings gpu_settings(const Config& config);

}  // namespace sparkops::config
