// libFuzzer target: /proc/PID/status and /proc/PID/smaps_rollup.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "host/proc_pid.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sparkops::host::parse_proc_status(text);
  (void)sparkops::host::parse_smaps_rollup(text);
  return 0;
}
