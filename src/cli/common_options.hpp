#pragma once
// Flags several subcommands share (status, sample, watch, serve, procs): the GPU source they name.
// Config plus machine into domain options: options/domain_options.hpp (included here for the
// commands that use both).

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "base/result.hpp"
#include "cli/app_context.hpp"
#include "gpu/gpu_source.hpp"
#include "host/host_root.hpp"
#include "options/domain_options.hpp"
#include "status/status_report.hpp"

namespace sparkops::cli {

// Opens the GPU source the flags ask for (--gpu, else SPARKOPS_GPU_BACKEND, else auto; NVML path
// from SPARKOPS_NVML_LIB, nvidia-smi from PATH), every call under the gpu.timeout watchdog. Only an
// unknown --gpu value is an error; a missing GPU is a source in state no_library.
Result<std::unique_ptr<GpuSource>> open_gpu_from_flags(const GpuFlags& flags, const Config& config);

// The GPU source for a command: open_gpu_from_flags, except that a captured --root tree never
// mixes in this machine's live GPU: without a source named explicitly (--gpu nvml|nvidia-smi,
// SPARKOPS_GPU_BACKEND, SPARKOPS_NVML_LIB: how the tests pair a tree with the fake NVML or a fake
// nvidia-smi) the GPU is "not read", and the note says why and how to name one.
Result<std::unique_ptr<GpuSource>> open_gpu_for(const AppContext& ctx);

// Whether the user named a GPU source (the rule above): --gpu nvml|nvidia-smi|none,
// SPARKOPS_GPU_BACKEND or SPARKOPS_NVML_LIB.
bool gpu_source_named(const AppContext& ctx);

// The command's GPU source read once (open_gpu_for: a captured --root without a named source reads
// none): a discrete GPU's memory (device: nullopt where memory is unified or no GPU answers) and
// the snapshots it came from. The plan's budget comes from the device when set (host/pool.hpp
// training_budget), and a --beside verdict sizes the running workloads on it from the snapshots.
GpuMemoryReading gpu_memory_for(const AppContext& ctx);

}  // namespace sparkops::cli
