#include "sampling/sampler.hpp"

#include <utility>

#include "host/system_info.hpp"

namespace sparkops::sampling {

Sampler::Sampler(Collector& collector, SampleFormat format, DetectorConfig detector)
    : collector_(collector), format_(format), detector_(detector) {}

TickResult Sampler::tick(const Tick& tick) {
  TickResult result;
  result.sample = collector_.collect(tick.index, tick.steady, tick.wall);
  result.rows = format_sample_rows(format_, result.sample);
  result.events = detector_.feed(result.sample);
  return result;
}

FileMeta make_file_meta(const host::HostRoot& root, const gpu::GpuSource* gpu,
                        std::string version) {
  FileMeta meta;
  meta.version = std::move(version);
  if (auto info = host::read_system_info(root)) {
    meta.host = info->hostname.value_or("");
    meta.kernel = info->kernel_release.value_or("");
  }
  if (gpu != nullptr) {
    meta.driver = gpu->driver_version().value_or("");
    for (const gpu::GpuDevice& d : gpu->devices()) {
      if (meta.device.find(d.name) != std::string::npos) continue;
      if (!meta.device.empty()) meta.device += '+';
      meta.device += d.name;
    }
  }
  // Spaces separate the key=value fields: keep each value one token (device= is last and runs to
  // the end of the line, so "NVIDIA GB10" keeps its space).
  for (std::string* s : {&meta.host, &meta.kernel, &meta.driver}) {
    for (char& ch : *s) {
      if (ch == ' ' || ch == '\t') ch = '_';
    }
  }
  return meta;
}

}  // namespace sparkops::sampling
