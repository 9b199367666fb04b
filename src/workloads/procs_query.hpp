#pragma once
// `sparkops procs` below the command line: what runs on the pool, joined with what each process
// holds on the GPU, and whether a job of a given need can start beside it. The caller brings the
// pool, the GPU's process list and the options from the config; this reads /proc and judges.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "host/pool.hpp"
#include "workloads/coexistence.hpp"
#include "workloads/procs_render.hpp"
#include "workloads/scan.hpp"

namespace sparkops::workloads {

struct GpuProcessList {
  std::vector<gpu::GpuProcess> processes;
  std::optional<std::uint64_t> device_total_bytes;  // the first device's memory total, when known
  std::string note;  // why per-process GPU memory is missing or partial; empty when complete
  std::vector<gpu::GpuSnapshot> snapshots;  // the reading they came from (empty: a file, or none)
};

// A captured `nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory
// --format=csv,noheader` file. An unreadable or malformed file is an error naming it.
Result<GpuProcessList> gpu_processes_from_smi_file(const std::filesystem::path& path);

// The live GPU's processes. A source that is not ok, or a reading that fails, gives no processes
// and says why in the note: procs still answers from /proc.
GpuProcessList gpu_processes_from(gpu::GpuSource& source);

struct ProcsQuery {
  std::optional<host::PoolView> pool;  // absent: /proc/meminfo unreadable, no verdict
  GpuProcessList gpu;
  std::optional<host::DeviceMemory>
      device_memory;                          // a discrete GPU's memory: the training budget's
  std::optional<std::uint64_t> need_bytes;    // --need / --plan: the verdict answers a question
  HeavyRules rules;
  CoexistenceOptions coexistence;
};

struct ProcsAnswer {
  ProcsReport report;
  ScanOptions scan;  // the options the scan used (device total, pool, USER_HZ, rules): --beside
                     // judges the planned jobs with the same ones
  std::optional<CoexistenceSpace> space;  // the space the verdict was judged in (none: no pool)
};

// Scans the workloads (an unreadable /proc is the error) and, with a pool, gives the verdict for
// the need (0 without one: the verdict then only reports what is held and oversubscribed) and the
// training budget (host/pool.hpp training_budget).
Result<ProcsAnswer> answer_procs(const host::HostRoot& root, const ProcsQuery& query);

// `plan`'s note beside what runs ("beside what runs (KIND): SUMMARY"): the verdict `procs --plan`
// gives for `query` (its pool and need), only when something runs; nullopt on a quiet pool or
// when /proc cannot be scanned.
std::optional<std::string> beside_what_runs_note(const host::HostRoot& root,
                                                 const ProcsQuery& query);

// README "Exit codes": coexistence_exit_code (workloads/coexistence.hpp) of the verdict, with a
// question when --need or --plan was given; 0 without a verdict.
int procs_exit_code(const ProcsReport& report);

}  // namespace sparkops::workloads
