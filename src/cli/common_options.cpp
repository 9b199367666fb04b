#include "cli/common_options.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "gpu/open_source.hpp"

namespace sparkops::cli {

Result<std::unique_ptr<GpuSource>> open_gpu_from_flags(const GpuFlags& flags,
                                                       const Config& config) {
  GpuOpenOptions options = gpu_open_options_from_environment();
  // 1 ms .. 10 min, checked where the value was set (config/config_bounds.cpp).
  options.call_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(config.get_duration("gpu.timeout"));
  if (!flags.backend.empty()) {  // the flag wins over SPARKOPS_GPU_BACKEND
    const auto choice = parse_gpu_backend_choice(flags.backend);
    if (!choice) {
      return fail(Errc::invalid_argument,
                  fmt::format("--gpu {}: expected auto, nvml, nvidia-smi or none", flags.backend));
    }
    options.choice = *choice;
  }
  return open_gpu_source(options);
}

bool gpu_source_named(const AppContext& ctx) {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  return (!ctx.gpu.backend.empty() && ctx.gpu.backend != "auto") || set("SPARKOPS_GPU_BACKEND") ||
         set("SPARKOPS_NVML_LIB");
}

Result<std::unique_ptr<GpuSource>> open_gpu_for(const AppContext& ctx) {
  if (!ctx.host_root().is_live() && !gpu_source_named(ctx)) {
    return make_null_gpu_source(GpuState::no_library,
                                "not read: --root names a captured tree, and this machine's GPU "
                                "says nothing about it (name a source: --gpu nvml|nvidia-smi)");
  }
  return open_gpu_from_flags(ctx.gpu, ctx.config);
}

GpuMemoryReading gpu_memory_for(const AppContext& ctx) {
  auto gpu = open_gpu_for(ctx);
  if (!gpu) return {};
  return read_gpu_memory(**gpu);
}

}  // namespace sparkops::cli
