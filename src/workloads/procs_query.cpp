#include "workloads/procs_query.hpp"

#include <fmt/format.h>

#include "base/console.hpp"
#include "base/file_io.hpp"
#include "gpu/smi_parse.hpp"
#include "host/clock_ticks.hpp"

namespace sparkops::workloads {

Result<GpuProcessList> gpu_processes_from_smi_file(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return tl::unexpected(text.error());
  auto apps = gpu::parse_smi_compute_apps(*text, gpu::kSmiQueryAppsFields);
  if (!apps)
    return fail(Errc::invalid_argument, fmt::format("{}: {}", path.string(), apps.error().detail));
  GpuProcessList out;
  for (auto& a : *apps) out.processes.push_back(std::move(a.process));
  return out;
}

GpuProcessList gpu_processes_from(gpu::GpuSource& source) {
  GpuProcessList out;
  if (source.state() != gpu::GpuState::ok) {
    out.note = fmt::format("{}: {}", gpu::gpu_state_name(source.state()), source.state_detail());
    return out;
  }
  auto snaps = source.snapshot();
  if (!snaps) {
    out.note = snaps.error().detail;
    return out;
  }
  for (const auto& s : *snaps) {
    if (s.memory && !out.device_total_bytes) out.device_total_bytes = s.memory->total_bytes;
    if (!s.processes) out.note = "per-process GPU memory not reported by the driver";
  }
  out.processes = gpu_processes_of(*snaps);
  out.snapshots = std::move(*snaps);
  return out;
}

Result<ProcsAnswer> answer_procs(const host::HostRoot& root, const ProcsQuery& query) {
  ProcsAnswer a;
  ProcsReport& report = a.report;
  report.pool = query.pool;
  report.gpu_note = query.gpu.note;
  report.training_budget = host::training_budget(report.pool, query.device_memory);
  ScanOptions& options = a.scan;
  // vLLM's fraction is of the device total; on a unified-memory machine that is the pool
  // (MemTotal).
  options.device_total_bytes =
      query.gpu.device_total_bytes.value_or(report.pool ? report.pool->total_bytes : 0);
  if (report.pool) options.pool_bytes = host::pool_total_budget(*report.pool);
  options.ticks_per_second = host::clock_ticks_per_second(root);
  options.rules = query.rules;
  // The space the training budget comes from: a discrete GPU's memory (its workloads sized by
  // what they hold on the card), else the pool.
  const auto space = coexistence_space(report.pool, query.device_memory, query.gpu.snapshots);
  if (space) options = scan_options_in(options, *space);
  auto scan = scan_workloads(root, query.gpu.processes, options);
  if (!scan) return tl::unexpected(scan.error());
  report.scan = std::move(*scan);
  report.need_given = query.need_bytes.has_value();
  if (report.pool && space) {
    report.verdict =
        coexistence_verdict(report.scan, query.need_bytes.value_or(0), *space, query.coexistence);
  }
  a.space = space;
  return a;
}

int procs_exit_code(const ProcsReport& report) {
  return report.verdict ? coexistence_exit_code(*report.verdict, report.need_given) : kExitOk;
}

std::optional<std::string> beside_what_runs_note(const host::HostRoot& root,
                                                 const ProcsQuery& query) {
  auto a = answer_procs(root, query);
  if (!a || a->report.scan.workloads.empty() || !a->report.verdict) return std::nullopt;
  const auto& v = *a->report.verdict;
  return fmt::format("beside what runs ({}): {}", verdict_kind_name(v.kind), v.summary);
}

}  // namespace sparkops::workloads
