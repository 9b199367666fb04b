#include "status/status_report.hpp"

#include <fmt/format.h>

#include "base/units.hpp"
#include "base/version.hpp"
#include "workloads/coexistence.hpp"
#include "workloads/scan.hpp"

namespace sparkops::status {

namespace {

void collect_gpu(gpu::GpuSource& gpu, StatusReport& report) {
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

// The verdict in one sentence: an oversubscribed pool first (the claims exceed it whether or not a
// job is heavy), then who must stop before a trainer starts (the one-heavy-job rule), else how much
// room a new run has beside what is running (docs/domain.md; src/workloads/coexistence.hpp).
std::string coexistence_line(const workloads::CoexistenceVerdict& v) {
  const auto pids = [&] {
    std::vector<std::string> parts;
    for (const auto& s : v.stop)
      parts.push_back(fmt::format("PID {} ({}, {})", s.pid, s.label, s.reason));
    return fmt::format("{}", fmt::join(parts, ", then "));
  };
  const bool gpu = v.source == host::BudgetSource::gpu_memory;
  const std::string gpu_memory = fmt::format("GPU {}'s memory", v.gpu_index.value_or(0));
  if (v.oversubscribed_bytes > 0) {
    return fmt::format(
        "{} is oversubscribed by {}: the workloads claim {}, more than {}; stop or re-cap {} "
        "before starting a trainer",
        gpu ? gpu_memory : std::string("the pool"), format_bytes(v.oversubscribed_bytes),
        format_bytes(v.reserved_bytes), gpu ? "it holds" : "the pool after overhead", pids());
  }
  if (!v.stop.empty()) {
    return fmt::format("one heavy job at a time: stop {} before starting a trainer", pids());
  }
  if (gpu) {
    return fmt::format("a new run can take up to {} of {} beside what is running",
                       format_bytes(v.room_bytes), gpu_memory);
  }
  return fmt::format("a new run can take up to {} beside what is running",
                     format_bytes(v.room_bytes));
}

}  // namespace

std::optional<host::DeviceMemory> discrete_device_memory(
    const std::vector<gpu::GpuSnapshot>& snapshots) {
  for (const auto& s : snapshots) {
    if (s.memory && s.memory->total_bytes > 0) {
      return host::DeviceMemory{s.index, s.memory->total_bytes, s.memory->free_bytes};
    }
  }
  return std::nullopt;
}

GpuMemoryReading read_gpu_memory(gpu::GpuSource& gpu) {
  GpuMemoryReading r;
  if (gpu.state() != gpu::GpuState::ok) return r;
  auto snaps = gpu.snapshot();
  if (!snaps) return r;
  r.snapshots = std::move(*snaps);
  r.device = discrete_device_memory(r.snapshots);
  return r;
}

namespace {

void collect_workloads(const host::HostRoot& root, const StatusOptions& options,
                       StatusReport& report) {
  workloads::ScanOptions scan_options;
  scan_options.ticks_per_second = options.ticks_per_second;
  for (const auto& snap : report.gpu.snapshots) {
    if (snap.memory && scan_options.device_total_bytes == 0) {
      scan_options.device_total_bytes = snap.memory->total_bytes;
    }
  }
  // On a unified-memory GPU the device total is the pool (docs/domain.md: vLLM's fraction is of
  // it).
  if (scan_options.device_total_bytes == 0 && report.pool) {
    scan_options.device_total_bytes = report.pool->total_bytes;
  }
  if (report.pool) scan_options.pool_bytes = host::pool_total_budget(*report.pool);
  // The space a new run competes for: a discrete GPU's memory where the training budget is it
  // (its workloads are sized by what they hold on the card), else the pool.
  const std::optional<host::DeviceMemory> device =
      report.training_budget ? report.training_budget->device : std::nullopt;
  const auto space = workloads::coexistence_space(report.pool, device, report.gpu.snapshots);
  if (space) scan_options = workloads::scan_options_in(scan_options, *space);
  auto scan = workloads::scan_workloads(root, workloads::gpu_processes_of(report.gpu.snapshots),
                                        scan_options);
  if (!scan) {
    report.notes.push_back(fmt::format("workloads: {}", scan.error().detail));
    return;
  }
  std::vector<WorkloadLine> lines;
  for (const auto& w : scan->workloads) {
    WorkloadLine line;
    line.pid = w.pid;
    line.kind = std::string(workloads::engine_name(w.kind.engine));
    line.name = w.processes.empty() ? std::string() : w.processes.front().comm;
    line.claim_bytes = w.claim_bytes;
    line.actual_bytes = w.actual_bytes;
    line.heavy = w.heavy;
    line.cap = std::string(workloads::cap_state_name(w.cap.state));
    line.cap_text = w.cap.text;
    line.rss_bytes = w.rss_bytes;
    line.pss_bytes = w.pss_bytes;
    line.gpu_bytes = w.gpu_bytes;
    line.orphan = w.orphan;
    line.heavy_reason = w.heavy_reason;
    if (!w.processes.empty()) {
      const workloads::WorkloadProcess& root_process = w.processes.front();
      line.age = root_process.age;
      line.uid = root_process.uid;
      line.start_ticks = root_process.start_ticks;
    }
    lines.push_back(std::move(line));
  }
  report.workloads = std::move(lines);
  if (report.pool && space) {
    const workloads::CoexistenceVerdict verdict = workloads::coexistence_verdict(*scan, 0, *space);
    report.coexistence = coexistence_line(verdict);
    report.coexistence_stop_first = !verdict.stop.empty();
    report.coexistence_verdict = verdict;
  }
}

}  // namespace

StatusReport collect_status(const host::HostRoot& root, gpu::GpuSource& gpu, const Clock& clock,
                            const StatusOptions& options) {
  StatusReport report;
  report.taken_at = clock.system_now();
  report.sparkops_version = std::string(kVersion);

  host::HostSnapshot host = host::read_host_snapshot(root);
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
    if (auto pool = host::compute_pool(*host.meminfo, host.cgroup, options.pool)) {
      report.pool = *pool;
    } else {
      report.notes.push_back(pool.error().detail);
    }
  } else {
    report.notes.push_back(fmt::format("{}: not readable; pool figures unavailable",
                                       root.resolve("/proc/meminfo").string()));
  }

  collect_gpu(gpu, report);
  report.training_budget =
      host::training_budget(report.pool, discrete_device_memory(report.gpu.snapshots));
  if (options.scan_workloads) collect_workloads(root, options, report);
  return report;
}

}  // namespace sparkops::status
