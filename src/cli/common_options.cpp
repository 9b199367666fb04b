#include "cli/common_options.hpp"

#include <unistd.h>

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

std::uint64_t clock_ticks_per_second(const HostRoot& root) {
  const long hz = root.is_live() ? ::sysconf(_SC_CLK_TCK) : 100;
  return hz > 0 ? static_cast<std::uint64_t>(hz) : 100;
}

}  // namespace sparkops::cli
