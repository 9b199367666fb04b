#include "gpu/open_source.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "gpu/nvml_source.hpp"
#include "gpu/smi_source.hpp"
#include "gpu/subprocess.hpp"
#include "gpu/watchdog_source.hpp"

namespace sparkops::gpu {

std::optional<GpuBackendChoice> parse_gpu_backend_choice(std::string_view text) {
  if (text == "auto") return GpuBackendChoice::auto_detect;
  if (text == "nvml") return GpuBackendChoice::nvml;
  if (text == "nvidia-smi" || text == "smi") return GpuBackendChoice::smi;
  if (text == "none") return GpuBackendChoice::none;
  return std::nullopt;
}

GpuOpenOptions gpu_open_options_from_environment() {
  GpuOpenOptions o;
  if (const char* lib = std::getenv("SPARKOPS_NVML_LIB"); lib && *lib) o.nvml_library = lib;
  if (const char* path = std::getenv("PATH")) o.path_env = path;
  if (const char* choice = std::getenv("SPARKOPS_GPU_BACKEND"); choice && *choice) {
    o.choice = parse_gpu_backend_choice(choice).value_or(GpuBackendChoice::auto_detect);
  }
  return o;
}

namespace {

std::unique_ptr<GpuSource> open_smi(const GpuOpenOptions& options, std::string_view nvml_why) {
  const auto exe = find_on_path("nvidia-smi", options.path_env);
  if (!exe) {
    std::string why =
        nvml_why.empty() ? std::string("no nvidia-smi on PATH")
                         : fmt::format("no NVIDIA GPU driver: {}; no nvidia-smi on PATH", nvml_why);
    return make_null_gpu_source(GpuState::no_library, std::move(why));
  }
  SmiSourceOptions smi;
  smi.executable = *exe;
  // The child is killed after six watchdog timeouts (one minute by default): long enough that a
  // slow nvidia-smi is "hung" for a while before it is given up on, short enough to retry.
  smi.timeout = 6 * options.call_timeout;
  return make_watchdog_gpu_source([smi] { return make_smi_gpu_source(smi); },
                                  WatchdogOptions{"nvidia-smi", options.call_timeout});
}

std::unique_ptr<GpuSource> open_nvml(const std::string& library,
                                     std::chrono::milliseconds timeout) {
  return make_watchdog_gpu_source([library] { return make_nvml_gpu_source(library); },
                                  WatchdogOptions{"nvml", timeout});
}

}  // namespace

std::unique_ptr<GpuSource> open_gpu_source(const GpuOpenOptions& options) {
  const std::string library =
      options.nvml_library.empty() ? std::string(kDefaultNvmlLibrary) : options.nvml_library;
  switch (options.choice) {
    case GpuBackendChoice::none:
      return make_null_gpu_source(GpuState::no_library, "GPU reading disabled (backend none)");
    case GpuBackendChoice::nvml:
      return open_nvml(library, options.call_timeout);
    case GpuBackendChoice::smi:
      return open_smi(options, "");
    case GpuBackendChoice::auto_detect:
      break;
  }
  // A hung nvmlInit stays the answer: nvidia-smi talks to the same driver.
  auto nvml = open_nvml(library, options.call_timeout);
  if (nvml->state() != GpuState::no_library) return nvml;
  return open_smi(options, nvml->state_detail());
}

}  // namespace sparkops::gpu
