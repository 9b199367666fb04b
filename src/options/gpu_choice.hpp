#pragma once
// The GPU source a command reads, and the status it shows from it. `gpu_flag` is the text of the
// global --gpu flag (auto|nvml|nvidia-smi|none; empty when not given).

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "config/config.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "status/status_report.hpp"
#include "workloads/procs_query.hpp"

namespace sparkops::options {

// Opens the GPU source the flag asks for (--gpu, else SPARKOPS_GPU_BACKEND, else auto; NVML path
// from SPARKOPS_NVML_LIB, nvidia-smi from PATH), every call under the gpu.timeout watchdog. Only an
// unknown --gpu value is an error; a missing GPU is a source in state no_library.
Result<std::unique_ptr<gpu::GpuSource>> open_gpu_from_flag(std::string_view gpu_flag,
                                                           const config::Config& config);

// Whether the user named a GPU source: --gpu nvml|nvidia-smi|none, SPARKOPS_GPU_BACKEND or
// SPARKOPS_NVML_LIB (how the tests pair a captured tree with the fake NVML or a fake nvidia-smi).
bool gpu_source_named(std::string_view gpu_flag);

// The GPU source for a command on `root`: open_gpu_from_flag, except that a captured --root tree
// never mixes in this machine's live GPU: without a source named (gpu_source_named) the GPU is
// "not read", and the note says why and how to name one.
Result<std::unique_ptr<gpu::GpuSource>> open_gpu_for(const host::HostRoot& root,
                                                     std::string_view gpu_flag,
                                                     const config::Config& config);

// The command's GPU source (open_gpu_for: a captured --root without a named source reads none)
// read once: a discrete GPU's memory (device: nullopt where memory is unified or no GPU answers)
// and the snapshots it came from. The plan's budget comes from the device when set
// (host/pool.hpp training_budget), and a --beside verdict sizes the running workloads on it from
// the snapshots.
status::GpuMemoryReading gpu_memory_for(const host::HostRoot& root, std::string_view gpu_flag,
                                        const config::Config& config);

// `procs`' GPU processes: from a captured `nvidia-smi --query-compute-apps` file (`smi_file`, when
// given), else from the GPU source (open_gpu_for). A captured tree (--root) with neither a file nor
// a named source gets no GPU figures: this machine's GPU says nothing about that one's processes.
Result<workloads::GpuProcessList> gpu_processes_for(const host::HostRoot& root,
                                                    std::string_view gpu_flag,
                                                    const config::Config& config,
                                                    const std::string& smi_file);

// What collect_status reads, the same for every command that shows the status (status, top,
// watch's pre-flight, serve): the root, its GPU source (open_gpu_for) and the status options
// (options/domain_options.hpp status_options_for).
struct StatusSource {
  host::HostRoot root;
  std::unique_ptr<gpu::GpuSource> gpu;
  status::StatusOptions options;
};

// The error is open_gpu_from_flag's (an unknown --gpu value).
Result<StatusSource> status_source(const host::HostRoot& root, std::string_view gpu_flag,
                                   const config::Config& config);

}  // namespace sparkops::options
