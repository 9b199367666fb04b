// libFuzzer target: /proc/PID/cmdline and /proc/PID/environ (NUL-separated) and /proc/PID/stat.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "host/proc_pid.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkops::host::parse_proc_cmdline(text);
  (void)sparkops::host::parse_proc_environ(text, {});
  const std::vector<std::string_view> prefixes{"CUDA_", "PYTORCH_"};
  (void)sparkops::host::parse_proc_environ(text, prefixes);
  (void)sparkops::host::parse_proc_stat(text);
  (void)sparkops::host::parse_pid_name(text);
  return 0;
}
