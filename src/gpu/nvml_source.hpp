#pragma once
// GpuSource over NVML, loaded with dlopen from `library_path` (libnvidia-ml.so.1 or
// SPARKOPS_NVML_LIB; resolved by open_source.hpp). Never fails to construct: a missing library is
// state no_library, a failing nvmlInit is init_failed with NVML's error string, zero devices is
// no_devices. Units are converted here, once: mW -> microwatts, mJ -> microjoules,
// degrees C -> millicelsius, counter ns -> std::chrono::nanoseconds. NOT_SUPPORTED (and any other
// per-call error but GPU_IS_LOST) makes that one figure absent. GPU_IS_LOST turns the state to
// lost and snapshot() returns Errc::gpu_lost; the next snapshot() shuts NVML down, initialises it
// again and carries on when the GPU answers. nvmlShutdown runs on destruction.

#include <memory>
#include <string>

#include "gpu/gpu_source.hpp"

namespace sparkops::gpu {

std::unique_ptr<GpuSource> make_nvml_gpu_source(const std::string& library_path);

}  // namespace sparkops::gpu
