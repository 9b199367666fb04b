#pragma once
// Choosing the GPU backend. open_gpu_source never fails: NVML first; nvidia-smi (found on PATH)
// when libnvidia-ml cannot be loaded; otherwise the null source, whose state_detail() is one line
// saying why. NVML that loads but fails to initialise is returned as is (state init_failed, with
// NVML's error string): nvidia-smi would fail the same way. Both backends run under the call
// watchdog (watchdog_source.hpp): nvmlInit or a reading that does not return within call_timeout
// makes the state hung instead of blocking the caller.

#include <chrono>
#include <memory>
#include <string>

#include "gpu/gpu_source.hpp"
#include "gpu/watchdog_source.hpp"

namespace sparkops::gpu {

enum class GpuBackendChoice { auto_detect, nvml, smi, none };

// "auto", "nvml", "nvidia-smi" (or "smi"), "none"; nullopt for anything else.
std::optional<GpuBackendChoice> parse_gpu_backend_choice(std::string_view text);

inline constexpr std::string_view kDefaultNvmlLibrary = "libnvidia-ml.so.1";

struct GpuOpenOptions {
  std::string nvml_library;  // empty: libnvidia-ml.so.1 (the dynamic loader's search)
  std::string path_env;      // PATH searched for nvidia-smi; empty: no nvidia-smi
  GpuBackendChoice choice = GpuBackendChoice::auto_detect;
  std::chrono::milliseconds call_timeout = kDefaultGpuCallTimeout;  // config gpu.timeout
};

// nvml_library from SPARKOPS_NVML_LIB, path_env from PATH, choice from SPARKOPS_GPU_BACKEND
// (auto when unset or unknown).
GpuOpenOptions gpu_open_options_from_environment();

std::unique_ptr<GpuSource> open_gpu_source(const GpuOpenOptions& options);

}  // namespace sparkops::gpu
