#pragma once
// The workload scanner: walks /proc through a HostRoot, classifies processes, groups each server
// with its engine/worker/runner children and each launcher with its workers, parses the group's
// cap, joins per-process GPU memory, flags orphans and decides which workloads are heavy.
//
// Robustness: a PID that exits between the /proc listing and its reads, and files other users'
// processes do not let us read (environ, smaps_rollup), are skipped and counted; they never fail
// the scan. Only an unlistable /proc is an Error.
//
// GPU PIDs: NVML and nvidia-smi report host PIDs. Inside a container (nested PID namespace, seen in
// /proc/self/status NSpid) those numbers do not name entries of our /proc, so no join is attempted
// and every GPU process is listed as outside this PID namespace. On the host, a GPU PID missing
// from /proc (it exited, or it lives in a namespace this /proc does not show) is listed the same
// way.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "config/pool_sections.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "workloads/caps.hpp"
#include "workloads/classify.hpp"

namespace sparkops::workloads {

// The [procs] heavy-job rules (defaults written once, in config/pool_sections.hpp).
using HeavyRules = config::HeavyRules;

struct ScanOptions {
  // Denominator of vLLM/SGLang fractions: the device total (GB10: MemTotal, docs/domain.md). 0:
  // unknown, fractions then give no claim.
  std::uint64_t device_total_bytes = 0;
  // The pool a run can use: total - overhead (host/pool.hpp). 0: unknown. "Near capacity" is a
  // share of the smaller of this and the device total: NVIDIA's 0.7 keeps 30 % of the memory for
  // everything else, and what the others can use is what the overhead leaves, so a capped server
  // claiming most of that pool is heavy however little it holds yet.
  std::uint64_t pool_bytes = 0;
  std::uint64_t ticks_per_second = 100;  // USER_HZ (sysconf(_SC_CLK_TCK))
  HeavyRules rules;
  // The memory a new run competes for is a discrete GPU's (workloads/coexistence.hpp
  // CoexistenceSpace, gpu_memory): a workload's size for the heavy rule is then what it holds on
  // the GPU (NVML's per-process memory) or may claim there, not its RSS, which lives in host
  // memory and takes nothing from the card. A CPU-only job is small there however large its RSS.
  // Set with coexistence.hpp scan_options_in, which also makes the device total and pool_bytes
  // the card's.
  bool sized_on_gpu = false;
};

struct WorkloadProcess {
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  Classification kind;
  std::string comm;
  std::vector<std::string> argv;
  std::optional<std::uint32_t> uid;
  std::optional<std::uint64_t> rss_bytes;
  std::optional<std::uint64_t> pss_bytes;  // absent when smaps_rollup is unreadable
  std::optional<std::uint64_t> swap_bytes;
  std::optional<std::uint64_t> gpu_bytes;  // absent when the GPU source does not list the PID
  std::optional<std::chrono::milliseconds> age;
  std::optional<std::int64_t> started_unix_seconds;
  std::uint64_t start_ticks = 0;  // /proc/PID/stat field 22: with the PID, names this process
  bool env_readable = false;
};

struct Workload {
  std::uint32_t pid = 0;  // the group's root process
  Classification kind;    // the root's classification
  CapInfo cap;
  std::optional<std::uint64_t> claim_bytes;  // what the cap lets it take (absent: no cap figure)
  std::vector<WorkloadProcess> processes;    // root first, then descendants by PID
  std::uint64_t rss_bytes = 0;
  std::uint64_t pss_bytes = 0;  // PSS where readable, else RSS for that process
  std::uint64_t gpu_bytes = 0;
  // host (PSS or RSS) + GPU: on GB10 cudaMalloc memory is not in RSS, on a discrete GPU it is on
  // the card; either way the two do not overlap.
  std::uint64_t actual_bytes = 0;
  bool orphan = false;  // a vLLM engine/worker whose API server is gone
  bool heavy = false;
  std::string heavy_reason;  // "uncapped, holds 30.2 GiB", "near capacity: claims 107.7 GiB"

  // max(claim, actual): what the workload may hold once it has grown to its cap.
  std::uint64_t reserved_bytes() const;
  bool is_trainer() const { return kind.engine == Engine::trainer; }
};

struct GpuProcessOutside {
  std::uint32_t pid = 0;
  std::optional<std::uint64_t> used_bytes;
  std::string name;
};

struct ScanStats {
  std::size_t pids_listed = 0;
  std::size_t pids_vanished = 0;     // listed, gone before their files were read
  std::size_t files_unreadable = 0;  // environ / smaps_rollup / status refused (other users)
};

struct WorkloadScan {
  std::vector<Workload> workloads;  // by root PID
  std::vector<GpuProcessOutside> gpu_outside;
  bool nested_pid_namespace = false;
  std::uint64_t device_total_bytes = 0;
  std::optional<std::chrono::milliseconds> uptime;
  ScanStats stats;
};

Result<WorkloadScan> scan_workloads(const host::HostRoot& root,
                                    const std::vector<gpu::GpuProcess>& gpu_processes,
                                    const ScanOptions& options);

// Decides `heavy`, `heavy_reason` and `orphan` from the workload's claim, its size (actual bytes;
// GPU bytes with options.sized_on_gpu) and cap (the scan calls it for every workload; `plan
// --beside` for the workloads it plans).
void judge_workload(Workload& w, const ScanOptions& options);

// The claim at which a workload is near capacity: near_capacity_fraction of the smaller of the
// device total and pool_bytes (0 when both are unknown). judge_workload and the caps `plan
// --beside` proposes both use it, so a proposed cap is never judged heavy.
double near_capacity_bytes(const ScanOptions& options);

// True when any trainer (launcher, worker or single process) is running: `flush` refuses then.
bool trainer_running(const WorkloadScan& scan);

// Flattens GPU snapshots into one list, summing a PID that appears on several devices.
std::vector<gpu::GpuProcess> gpu_processes_of(const std::vector<gpu::GpuSnapshot>& snapshots);

}  // namespace sparkops::workloads
