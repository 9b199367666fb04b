// libFuzzer target: nvidia-smi --format=csv output (--query-gpu and --query-compute-apps).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/smi_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::vector<std::string> gpu_fields{"index",           "name",
                                                   "memory.total",    "memory.used",
                                                   "memory.free",     "utilization.gpu",
                                                   "temperature.gpu", "power.draw",
                                                   "clocks.sm",       "pstate"};
  static const std::vector<std::string> app_fields{"gpu_uuid", "pid", "process_name",
                                                   "used_memory"};
  (void)sparkops::gpu::parse_smi_csv(text, gpu_fields);
  (void)sparkops::gpu::parse_smi_query_gpu(text, gpu_fields);
  (void)sparkops::gpu::parse_smi_compute_apps(text, app_fields);
  return 0;
}
