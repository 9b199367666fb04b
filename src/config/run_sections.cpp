#include "config/run_sections.hpp"

namespace sparkops::config {

SampleSettings sample_settings(const Config& config) {
  SampleSettings s;
  s.interval = config.get_duration("sample.interval");
  s.fsync_every = config.get_integer("sample.fsync_every");
  s.memory_buffer_rows = config.get_integer("sample.memory_buffer_rows");
  return s;
}

ServeSettings serve_settings(const Config& config) {
  ServeSettings s;
  s.listen = config.get_string("serve.listen");
  s.interval = config.get_duration("serve.interval");
  s.max_workloads = config.get_integer("serve.max_workloads");
  return s;
}

WatchSettings watch_settings(const Config& config) {
  WatchSettings s;
  s.max_log_bytes = config.get_bytes("watch.max_log_bytes");
  return s;
}

GpuSettings gpu_settings(const Config& config) {
  GpuSettings s;
  s.timeout = config.get_duration("gpu.timeout");
  return s;
}

}  // namespace sparkops::config
