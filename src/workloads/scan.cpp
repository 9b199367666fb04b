#include "workloads/scan.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "base/units.hpp"
#include "host/proc_pid.hpp"
#include "host/proc_times.hpp"

namespace sparkops::workloads {

namespace {

constexpr std::size_t kNoGroup = static_cast<std::size_t>(-1);
constexpr int kMaxDepth = 64;  // bounds the parent walk against a cycle in a hand-made tree

struct Entry {
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  std::uint64_t start_ticks = 0;
  std::string comm;
  std::vector<std::string> argv;
  std::optional<Classification> kind;
  std::size_t group = kNoGroup;  // index (into entries) of the group's root
  bool resolved = false;
};

// `entries` must be in ascending PID order (the scan's are: list_pids is sorted), so a PID's entry
// is found by binary search, without a hash map of every process.
class Grouper {
 public:
  explicit Grouper(std::vector<Entry>& entries) : entries_(entries) {}

  std::optional<std::size_t> index_of(std::uint32_t pid) const {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), pid,
                                     [](const Entry& e, std::uint32_t p) { return e.pid < p; });
    if (it == entries_.end() || it->pid != pid) return std::nullopt;
    return static_cast<std::size_t>(it - entries_.begin());
  }

  // Joins a process to its parent's group when the parent belongs to the same engine (a server's
  // engine core, an ollama runner), when the parent is a launcher (its workers), or when the
  // process is unclassified (a workload's multiprocessing child). Otherwise a classified process
  // roots its own group.
  std::size_t resolve(std::size_t i, int depth = 0) {
    Entry& e = entries_[i];
    if (e.resolved) return e.group;
    e.resolved = true;  // set first: a cycle in the parent links resolves to "no parent group"
    std::size_t parent_group = kNoGroup;
    const auto parent = e.pid == e.ppid ? std::nullopt : index_of(e.ppid);
    if (parent && depth < kMaxDepth) parent_group = resolve(*parent, depth + 1);
    const Entry* root = parent_group == kNoGroup ? nullptr : &entries_[parent_group];
    const Entry* direct = parent ? &entries_[*parent] : nullptr;
    if (!e.kind) {
      if (root != nullptr) {
        if (direct != nullptr && direct->kind && direct->kind->role == Role::launcher) {
          e.kind = classify_launcher_child(*direct->kind, e.argv);
        } else {
          e.kind = Classification{root->kind->engine, Role::child, root->kind->label + " child"};
        }
        e.group = parent_group;
      }
      return e.group;
    }
    if (root != nullptr) {
      const bool launcher_child = direct != nullptr && direct->kind &&
                                  direct->kind->role == Role::launcher &&
                                  e.kind->role != Role::launcher;
      if (launcher_child) {
        e.kind = classify_launcher_child(*direct->kind, e.argv);
        e.group = parent_group;
        return e.group;
      }
      if (root->kind->engine == e.kind->engine) {
        e.group = parent_group;
        return e.group;
      }
    }
    e.group = i;
    return e.group;
  }

 private:
  std::vector<Entry>& entries_;
};

WorkloadProcess read_member(const host::ProcDir& proc, const Entry& e, const ScanOptions& options,
                            const std::optional<std::chrono::milliseconds>& uptime,
                            const std::optional<std::int64_t>& btime, ScanStats& stats) {
  WorkloadProcess p;
  p.pid = e.pid;
  p.ppid = e.ppid;
  p.kind = *e.kind;
  p.comm = e.comm;
  p.argv = e.argv;
  if (auto st = host::read_proc_status(proc, e.pid)) {
    p.uid = st->real_uid;
    p.rss_bytes = st->vm_rss_bytes;
    p.swap_bytes = st->vm_swap_bytes;
  } else {
    ++stats.files_unreadable;
  }
  if (auto sm = host::read_smaps_rollup(proc, e.pid)) {
    p.pss_bytes = sm->pss_bytes;
  } else {
    ++stats.files_unreadable;
  }
  p.start_ticks = e.start_ticks;
  if (uptime) p.age = host::process_age(e.start_ticks, options.ticks_per_second, *uptime);
  if (btime && options.ticks_per_second > 0) {
    p.started_unix_seconds =
        *btime + static_cast<std::int64_t>(e.start_ticks / options.ticks_per_second);
  }
  return p;
}

}  // namespace

double near_capacity_bytes(const ScanOptions& options) {
  std::uint64_t total = options.device_total_bytes;
  if (options.pool_bytes > 0) {
    total = total > 0 ? std::min(total, options.pool_bytes) : options.pool_bytes;
  }
  return options.rules.near_capacity_fraction * static_cast<double>(total);
}

void judge_workload(Workload& w, const ScanOptions& options) {
  const auto& rules = options.rules;
  const double near_bytes = near_capacity_bytes(options);
  // What the workload holds in the memory a run competes for (ScanOptions::sized_on_gpu).
  const std::uint64_t held = options.sized_on_gpu ? w.gpu_bytes : w.actual_bytes;
  const std::uint64_t effective = std::max(w.claim_bytes.value_or(0), held);
  const bool near = near_bytes > 0 && static_cast<double>(effective) >= near_bytes;
  if (w.kind.engine == Engine::vllm &&
      (w.kind.role == Role::engine || w.kind.role == Role::worker) &&
      w.actual_bytes >= rules.orphan_min_bytes) {
    w.orphan = true;
  }
  if (near) {
    w.heavy = true;
    const bool by_claim = w.claim_bytes && *w.claim_bytes >= held;
    const std::string_view prefix =
        w.cap.state == CapState::uncapped ? "uncapped" : "near capacity";
    if (by_claim) {
      w.heavy_reason =
          fmt::format("{}: claims {} at {}", prefix, format_bytes(effective), w.cap.text);
    } else {
      w.heavy_reason = fmt::format("{}: holds {}", prefix, format_bytes(effective));
    }
  } else if (w.cap.state == CapState::uncapped && held >= rules.small_workload_bytes) {
    w.heavy = true;
    w.heavy_reason = options.sized_on_gpu
                         ? fmt::format("uncapped: holds {} on the GPU", format_bytes(held))
                         : fmt::format("uncapped: holds {}", format_bytes(held));
  }
  if (w.orphan) {
    w.heavy_reason = w.heavy_reason.empty() ? "orphan: API server gone"
                                            : "orphan (API server gone), " + w.heavy_reason;
  }
}

std::uint64_t Workload::reserved_bytes() const {
  return std::max(claim_bytes.value_or(0), actual_bytes);
}

Result<WorkloadScan> scan_workloads(const host::HostRoot& root,
                                    const std::vector<gpu::GpuProcess>& gpu_processes,
                                    const ScanOptions& options) {
  // /proc is listed and every PID's files are read relative to one descriptor (ProcDir).
  auto proc = host::ProcDir::open(root);
  if (!proc) return tl::unexpected(proc.error());
  auto pids = proc->list_pids();
  if (!pids) return tl::unexpected(pids.error());
  WorkloadScan scan;
  scan.device_total_bytes = options.device_total_bytes;
  scan.stats.pids_listed = pids->size();
  if (auto nested = host::read_in_nested_pid_namespace(root)) scan.nested_pid_namespace = *nested;
  if (auto up = host::read_proc_uptime(root)) scan.uptime = *up;
  std::optional<std::int64_t> btime;
  if (auto bt = host::read_proc_stat_btime(root)) btime = *bt;

  std::unordered_map<std::uint32_t, std::uint64_t> gpu_by_pid;
  std::unordered_map<std::uint32_t, const gpu::GpuProcess*> gpu_proc_by_pid;
  if (!scan.nested_pid_namespace) {
    for (const auto& g : gpu_processes) {
      gpu_proc_by_pid[g.pid] = &g;
      if (g.used_bytes) gpu_by_pid[g.pid] += *g.used_bytes;
    }
  }

  std::vector<Entry> entries;
  entries.reserve(pids->size());
  for (const auto pid : *pids) {
    auto stat = host::read_proc_stat(*proc, pid);
    if (!stat) {
      ++scan.stats.pids_vanished;
      continue;
    }
    // A kernel thread's cmdline is empty by definition: one file fewer for each of them.
    auto argv = (stat->flags & host::kProcFlagKernelThread) != 0
                    ? Result<std::vector<std::string>>(std::vector<std::string>{})
                    : host::read_proc_cmdline(*proc, pid);
    if (!argv) {
      ++scan.stats.pids_vanished;
      continue;
    }
    Entry e;
    e.pid = pid;
    e.ppid = stat->ppid;
    e.start_ticks = stat->start_ticks;
    e.comm = std::move(stat->comm);
    e.argv = std::move(*argv);
    e.kind = classify_process(e.comm, e.argv);
    if (!e.kind && gpu_proc_by_pid.count(pid) != 0) {
      e.kind = Classification{Engine::other, Role::other, "GPU process (" + e.comm + ")"};
    }
    entries.push_back(std::move(e));
  }

  Grouper grouper(entries);
  for (std::size_t i = 0; i < entries.size(); ++i) grouper.resolve(i);

  std::unordered_map<std::size_t, std::size_t> workload_of_root;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.group != i) continue;
    Workload w;
    w.pid = e.pid;
    w.kind = *e.kind;
    bool env_readable = false;
    host::EnvList env;
    if (auto got = host::read_proc_environ(*proc, e.pid, cap_env_prefixes())) {
      env = std::move(*got);
      env_readable = true;
    } else {
      ++scan.stats.files_unreadable;
    }
    w.cap = parse_cap(w.kind, e.argv, env, env_readable);
    w.claim_bytes = cap_claim_bytes(w.cap, options.device_total_bytes);
    WorkloadProcess p = read_member(*proc, e, options, scan.uptime, btime, scan.stats);
    p.env_readable = env_readable;
    w.processes.push_back(std::move(p));
    workload_of_root[i] = scan.workloads.size();
    scan.workloads.push_back(std::move(w));
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.group == kNoGroup || e.group == i) continue;
    Workload& w = scan.workloads[workload_of_root.at(e.group)];
    w.processes.push_back(read_member(*proc, e, options, scan.uptime, btime, scan.stats));
  }

  for (auto& w : scan.workloads) {
    for (auto& p : w.processes) {
      if (const auto it = gpu_by_pid.find(p.pid); it != gpu_by_pid.end()) p.gpu_bytes = it->second;
      const std::uint64_t host = p.pss_bytes.value_or(p.rss_bytes.value_or(0));
      w.rss_bytes += p.rss_bytes.value_or(0);
      w.pss_bytes += host;
      w.gpu_bytes += p.gpu_bytes.value_or(0);
    }
    w.actual_bytes = w.pss_bytes + w.gpu_bytes;
    judge_workload(w, options);
  }

  for (const auto& g : gpu_processes) {
    if (!scan.nested_pid_namespace && grouper.index_of(g.pid)) continue;
    scan.gpu_outside.push_back(GpuProcessOutside{g.pid, g.used_bytes, g.name});
  }
  std::sort(scan.gpu_outside.begin(), scan.gpu_outside.end(),
            [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return scan;
}

bool trainer_running(const WorkloadScan& scan) {
  return std::any_of(scan.workloads.begin(), scan.workloads.end(),
                     [](const Workload& w) { return w.is_trainer(); });
}

std::vector<gpu::GpuProcess> gpu_processes_of(const std::vector<gpu::GpuSnapshot>& snapshots) {
  std::vector<gpu::GpuProcess> out;
  for (const auto& snap : snapshots) {
    if (!snap.processes) continue;
    for (const auto& p : *snap.processes) {
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const gpu::GpuProcess& q) { return q.pid == p.pid; });
      if (it == out.end()) {
        out.push_back(p);
      } else if (p.used_bytes) {
        it->used_bytes = it->used_bytes.value_or(0) + *p.used_bytes;
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return out;
}

}  // namespace sparkops::workloads
