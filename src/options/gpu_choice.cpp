#include "options/gpu_choice.hpp"

#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "config/run_sections.hpp"
#include "gpu/open_source.hpp"
#include "options/domain_options.hpp"

namespace sparkops::options {

Result<std::unique_ptr<gpu::GpuSource>> open_gpu_from_flag(std::string_view gpu_flag,
                                                           const config::Config& config) {
  gpu::GpuOpenOptions options = gpu::gpu_open_options_from_environment();
  // 1 ms .. 10 min, checked where the value was set (config/config_bounds.cpp).
  options.call_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(config::gpu_settings(config).timeout);
  if (!gpu_flag.empty()) {  // the flag wins over SPARKOPS_GPU_BACKEND
    const auto choice = gpu::parse_gpu_backend_choice(gpu_flag);
    if (!choice) {
      return fail(Errc::invalid_argument,
                  fmt::format("--gpu {}: expected auto, nvml, nvidia-smi or none", gpu_flag));
    }
    options.choice = *choice;
  }
  return gpu::open_gpu_source(options);
}

bool gpu_source_named(std::string_view gpu_flag) {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  return (!gpu_flag.empty() && gpu_flag != "auto") || set("SPARKOPS_GPU_BACKEND") ||
         set("SPARKOPS_NVML_LIB");
}

Result<std::unique_ptr<gpu::GpuSource>> open_gpu_for(const host::HostRoot& root,
                                                     std::string_view gpu_flag,
                                                     const config::Config& config) {
  if (!root.is_live() && !gpu_source_named(gpu_flag)) {
    return gpu::make_null_gpu_source(
        gpu::GpuState::no_library,
        "not read: --root names a captured tree, and this machine's GPU "
        "says nothing about it (name a source: --gpu nvml|nvidia-smi)");
  }
  return open_gpu_from_flag(gpu_flag, config);
}

status::GpuMemoryReading gpu_memory_for(const host::HostRoot& root, std::string_view gpu_flag,
                                        const config::Config& config) {
  auto gpu = open_gpu_for(root, gpu_flag, config);
  if (!gpu) return {};
  return status::read_gpu_memory(**gpu);
}

Result<workloads::GpuProcessList> gpu_processes_for(const host::HostRoot& root,
                                                    std::string_view gpu_flag,
                                                    const config::Config& config,
                                                    const std::string& smi_file) {
  if (!smi_file.empty()) return workloads::gpu_processes_from_smi_file(smi_file);
  if (!root.is_live() && !gpu_source_named(gpu_flag)) {
    workloads::GpuProcessList none;
    none.note =
        "not read: --root names a captured tree (give its nvidia-smi output with --gpu-apps FILE)";
    return none;
  }
  auto source = open_gpu_for(root, gpu_flag, config);
  if (!source) return tl::unexpected(source.error());
  return workloads::gpu_processes_from(**source);
}

Result<StatusSource> status_source(const host::HostRoot& root, std::string_view gpu_flag,
                                   const config::Config& config) {
  auto gpu = open_gpu_for(root, gpu_flag, config);
  if (!gpu) return tl::unexpected(gpu.error());
  return StatusSource{root, std::move(*gpu), status_options_for(root, config)};
}

}  // namespace sparkops::options
