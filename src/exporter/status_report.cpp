#include "exporter/status_report.hpp"

#include <fmt/format.h>

#include "base/version.hpp"

namespace sparkops {

namespace {

void collect_gpu(GpuSource& gpu, StatusReport& report) {
  GpuStatus& g = report.gpu;
  g.backend = std::string(gpu.backend());
  g.driver_version = gpu.driver_version();
  g.devices = gpu.devices();
  if (auto snaps = gpu.snapshot()) {
    g.snapshots = std::move(*snaps);
  } else {
    report.notes.push_back(fmt::format("GPU: {}", snaps.error().detail));
  }
  // Read state after the snapshot: a device lost during it shows as lost now.
  g.state = gpu.state();
  g.detail = gpu.state_detail();
  for (const auto& snap : g.snapshots) {
    if (!snap.processes) continue;
    std::uint64_t sum = g.process_memory_bytes.value_or(0);
    for (const auto& p : *snap.processes) sum += p.used_bytes.value_or(0);
    g.process_memory_bytes = sum;
  }
}

}  // namespace

StatusReport collect_status(const HostRoot& root, GpuSource& gpu, const Clock& clock,
                            const StatusOptions& options) {
  StatusReport report;
  report.taken_at = clock.system_now();
  report.sparkops_version = std::string(kVersion);

  HostSnapshot host = read_host_snapshot(root);
  report.system = std::move(host.system);
  report.meminfo = host.meminfo;
  report.cgroup = host.cgroup;
  report.memory_pressure = host.psi_memory;
  report.vmstat = host.vmstat;
  report.hottest_sensor = std::move(host.hottest);
  report.spbm_rails = std::move(host.spbm_rails);
  report.spbm = std::move(host.spbm);
  report.notes = std::move(host.notes);

  if (host.meminfo) {
    if (auto pool = compute_pool(*host.meminfo, host.cgroup, options.pool)) {
      report.pool = *pool;
    } else {
      report.notes.push_back(pool.error().detail);
    }
  } else {
    report.notes.push_back(fmt::format("{}: not readable; pool figures unavailable",
                                       root.resolve("/proc/meminfo").string()));
  }

  collect_gpu(gpu, report);
  return report;
}

}  // namespace sparkops
